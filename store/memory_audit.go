package store

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/askslack/askslack/asktype"
)

var _ Store = (*Memory)(nil)

// DefaultMemoryAuditEntries bounds Memory's audit ring: the oldest entries
// go when it is full, as they go when retention ends.
const DefaultMemoryAuditEntries = 100_000

// MemoryOption configures NewMemory.
type MemoryOption func(*Memory)

// WithAudit sets how long Memory keeps audit entries (0: the default,
// DefaultAuditRetention) and how many at most (0: DefaultMemoryAuditEntries).
func WithAudit(retention time.Duration, entries int) MemoryOption {
	return func(m *Memory) {
		if retention > 0 {
			m.trail.retention = retention
		}
		if entries > 0 {
			m.trail.max = entries
		}
	}
}

// memTrail is Memory's audit chain: entries in seq order, the oldest
// dropped when retention ends or more than max are kept, and the head (the
// last entry's seq and hash) kept apart so trimming never restarts the
// chain. Guarded by Memory.mu.
type memTrail struct {
	retention time.Duration
	max       int
	entries   []asktype.AuditEntry
	headSeq   int64
	headHash  string
}

// appendLocked links e after the head and stores it, dropping what is past
// retention (by now) or over max. Dropping reslices the front; append
// copies only the kept entries when it grows the array, so the memory held
// stays within twice max.
func (t *memTrail) appendLocked(e asktype.AuditEntry, now time.Time) {
	if t.max <= 0 {
		t.max = DefaultMemoryAuditEntries
	}
	if t.retention <= 0 {
		t.retention = DefaultAuditRetention
	}
	Link(&e, t.headSeq, t.headHash)
	t.headSeq, t.headHash = e.Seq, e.Hash
	t.entries = append(t.entries, e)
	drop := max(0, len(t.entries)-t.max)
	cut := now.Add(-t.retention)
	for drop < len(t.entries) && t.entries[drop].At.Before(cut) {
		drop++
	}
	if drop > 0 {
		clear(t.entries[:drop])
		t.entries = t.entries[drop:]
	}
}

// audit records one event of a, under m.mu, in the critical section of the
// transition it belongs to.
func (m *Memory) audit(a *memAsk, at time.Time, event string, who *asktype.AuditRespondent, detail string) {
	e := asktype.AuditEntry{At: at, CallID: a.CallID, Event: event, Caller: a.Caller, Respondent: who, Detail: detail}
	if a.AgentID != "" || a.AgentSession != "" {
		e.Agent = &asktype.AuditAgent{ID: a.AgentID, SessionID: a.AgentSession}
	}
	m.trail.appendLocked(e, m.clock.Now())
}

// auditAnswer records who answered, from the settlement or reply JSON.
func (m *Memory) auditAnswer(a *memAsk, at time.Time, event string, raw json.RawMessage) {
	who, detail := AuditRespondentOf(raw)
	m.audit(a, at, event, who, detail)
}

// Append implements Audit.
func (m *Memory) Append(_ context.Context, e asktype.AuditEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.trail.appendLocked(e, m.clock.Now())
	return nil
}

// Audit implements Audit. The cursor is the seq of the page's last entry.
func (m *Memory) Audit(_ context.Context, q asktype.AuditQuery) ([]asktype.AuditEntry, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.trail.entries
	after := int64(0)
	if q.Cursor != "" {
		n, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil {
			return nil, "", ErrBadCursor
		}
		after = n
	}
	i := sort.Search(len(es), func(i int) bool { return es[i].Seq > after })
	limit := PageSize(q)
	out := []asktype.AuditEntry{}
	for ; i < len(es); i++ {
		e := &es[i]
		if !Matches(q, e) {
			continue
		}
		if len(out) == limit {
			return out, strconv.FormatInt(out[len(out)-1].Seq, 10), nil
		}
		out = append(out, cloneEntry(e))
	}
	return out, "", nil
}

func cloneEntry(e *asktype.AuditEntry) asktype.AuditEntry {
	c := *e
	if e.Agent != nil {
		a := *e.Agent
		c.Agent = &a
	}
	if e.Respondent != nil {
		r := *e.Respondent
		c.Respondent = &r
	}
	return c
}
