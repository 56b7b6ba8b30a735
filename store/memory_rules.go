package store

import (
	"context"
	"sort"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Memory's Rules (rules.go).

// memRules is Memory's part of Rules; guarded by Memory.mu. Times are kept
// in milliseconds, as Redis keeps them.
type memRules struct {
	seq    int64
	live   map[int64]asktype.Rule
	recent []asktype.RecentAsk // newest last
}

// NoteAsk implements Rules.
func (m *Memory) NoteAsk(_ context.Context, a asktype.RecentAsk) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a.At = msTime(a.At)
	m.rules.recent = append(m.rules.recent, a)
	if n := len(m.rules.recent); n > MaxRecentAsks {
		m.rules.recent = append([]asktype.RecentAsk(nil), m.rules.recent[n-MaxRecentAsks:]...)
	}
	return nil
}

// RecentAsks implements Rules.
func (m *Memory) RecentAsks(_ context.Context, limit int) ([]asktype.RecentAsk, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []asktype.RecentAsk{}
	for i := len(m.rules.recent) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, m.rules.recent[i])
	}
	return out, nil
}

// prune drops rules whose time ran out.
func (r *memRules) prune(now time.Time) {
	for id, x := range r.live {
		if !x.Live(now) {
			delete(r.live, id)
		}
	}
}

// AddRule implements Rules.
func (m *Memory) AddRule(_ context.Context, r asktype.Rule, now time.Time) (asktype.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rules.live == nil {
		m.rules.live = map[int64]asktype.Rule{}
	}
	m.rules.prune(now)
	if len(m.rules.live) >= MaxRules {
		return asktype.Rule{}, ErrTooManyRules
	}
	m.rules.seq++
	r.ID, r.Uses, r.LastUsed = m.rules.seq, 0, time.Time{}
	r.Granted, r.Until = msTime(r.Granted), msTime(r.Until)
	m.rules.live[r.ID] = r
	return r, nil
}

// LiveRules implements Rules.
func (m *Memory) LiveRules(_ context.Context, now time.Time) ([]asktype.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules.prune(now)
	out := make([]asktype.Rule, 0, len(m.rules.live))
	for _, r := range m.rules.live {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RevokeRule implements Rules.
func (m *Memory) RevokeRule(_ context.Context, id int64, now time.Time) (asktype.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules.prune(now)
	r, ok := m.rules.live[id]
	if !ok {
		return asktype.Rule{}, ErrNotFound
	}
	delete(m.rules.live, id)
	return r, nil
}

// UseRule implements Rules.
func (m *Memory) UseRule(_ context.Context, id int64, now time.Time) (asktype.Rule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rules.prune(now)
	r, ok := m.rules.live[id]
	if !ok {
		return asktype.Rule{}, ErrNotFound
	}
	r.Uses++
	r.LastUsed = msTime(now)
	m.rules.live[id] = r
	return r, nil
}
