package store

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/askslack/askslack/asktype"
)

// memList is one of Memory's Lists and when it is forgotten. Guarded by
// Memory.mu.
type memList struct {
	values []string
	until  time.Time
}

// AuditFrom implements AuditTail. A position is the seq of its entry, as
// Audit's cursor is.
func (m *Memory) AuditFrom(_ context.Context, pos string, limit int) ([]TrailEntry, error) {
	after := int64(0)
	if pos != "" {
		n, err := strconv.ParseInt(pos, 10, 64)
		if err != nil || n < 0 {
			return nil, ErrBadCursor
		}
		after = n
	}
	limit = PageSize(asktype.AuditQuery{Limit: limit})
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.trail.entries
	i := sort.Search(len(es), func(i int) bool { return es[i].Seq > after })
	out := make([]TrailEntry, 0, min(limit, len(es)-i))
	for ; i < len(es) && len(out) < limit; i++ {
		out = append(out, TrailEntry{AuditEntry: cloneEntry(&es[i]), Pos: strconv.FormatInt(es[i].Seq, 10)})
	}
	return out, nil
}

// AuditEnd implements AuditTail: every event is in the chain as soon as its
// transition returns.
func (m *Memory) AuditEnd(context.Context) (string, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.trail.headSeq == 0 {
		return "", 0, nil
	}
	return strconv.FormatInt(m.trail.headSeq, 10), m.trail.headSeq, nil
}

// list returns the list at key unless it expired (dropping it then); the
// caller holds m.mu.
func (m *Memory) list(key string, now time.Time) *memList {
	l := m.lists[key]
	if l != nil && !now.Before(l.until) {
		delete(m.lists, key)
		return nil
	}
	return l
}

// ListPush implements Lists.
func (m *Memory) ListPush(_ context.Context, key, value string, max int, ttl time.Duration, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.list(key, now)
	if l == nil {
		if m.lists == nil {
			m.lists = map[string]*memList{}
		}
		l = &memList{}
		m.lists[key] = l
	}
	l.values = append(l.values, value)
	if max > 0 && len(l.values) > max {
		l.values = slices.Clone(l.values[len(l.values)-max:])
	}
	l.until = now.Add(ttl)
	return nil
}

// ListRange implements Lists.
func (m *Memory) ListRange(_ context.Context, key string, limit int, now time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.list(key, now)
	if l == nil {
		return nil, nil
	}
	vs := l.values
	if limit > 0 && len(vs) > limit {
		vs = vs[:limit]
	}
	return slices.Clone(vs), nil
}

// ListRemove implements Lists.
func (m *Memory) ListRemove(_ context.Context, key, value string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.list(key, now)
	if l == nil {
		return false, nil
	}
	i := slices.Index(l.values, value)
	if i < 0 {
		return false, nil
	}
	l.values = slices.Delete(l.values, i, i+1)
	return true, nil
}
