package store

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
)

// Memory is the embedded in-process store: one replica, nothing survives a
// restart. It follows the same contract as Redis, transition for transition.
type Memory struct {
	retention time.Duration
	clock     clock.Clock

	mu   sync.Mutex
	seq  int64
	asks map[string]*memAsk
	// sessions and active index asks by session id (all, and open or
	// continued), as Redis does, so session reads and the cap check touch
	// only that session's asks.
	sessions map[string]map[string]struct{}
	active   map[string]map[string]struct{}
	leases   map[string]memLease // key: callID + "\x00" + name
	bucket   map[string]memBucket
	turns    map[string]*memTurns // by bucket name
	grace    map[string]time.Time // detached asks: when their grace ends
	reach    memReach             // memory_reach.go
	timers   memTimers            // timers.go
	trail    memTrail             // memory_audit.go
	rules    memRules             // rules.go
	tokens   memTokens            // memory_tokens.go
	installs map[string][]byte    // memory_installs.go
	lists    map[string]*memList  // memory_hooks.go
	hub      Hub
}

type memAsk struct {
	asktype.Ask
	expires time.Time // zero: kept until a terminal transition
	changed time.Time // when Version last rose
}

// NewMemory returns an empty store that drops settled and aborted asks after
// retention (DefaultRetention when zero). c times that expiry, the message
// bookkeeping and the audit trail's retention (real time when nil);
// transitions take their time as arguments.
func NewMemory(retention time.Duration, c clock.Clock, opts ...MemoryOption) *Memory {
	if retention <= 0 {
		retention = DefaultRetention
	}
	m := &Memory{retention: retention, clock: clock.OrReal(c), asks: map[string]*memAsk{}, leases: map[string]memLease{}, bucket: map[string]memBucket{}, grace: map[string]time.Time{},
		sessions: map[string]map[string]struct{}{}, active: map[string]map[string]struct{}{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

func (m *Memory) get(callID string) *memAsk {
	a := m.asks[callID]
	if a != nil && !a.expires.IsZero() && !m.clock.Now().Before(a.expires) {
		delete(m.asks, callID)
		setDel(m.sessions, a.SessionID, callID)
		setDel(m.active, a.SessionID, callID)
		return nil
	}
	return a
}

func setAdd(sets map[string]map[string]struct{}, key, id string) {
	if sets[key] == nil {
		sets[key] = map[string]struct{}{}
	}
	sets[key][id] = struct{}{}
}

func setDel(sets map[string]map[string]struct{}, key, id string) {
	delete(sets[key], id)
	if len(sets[key]) == 0 {
		delete(sets, key)
	}
}

func (m *Memory) changed(a *memAsk) {
	a.Version++
	a.changed = m.clock.Now()
	if a.SessionID != "" {
		if a.State.Active() {
			setAdd(m.active, a.SessionID, a.CallID)
		} else {
			setDel(m.active, a.SessionID, a.CallID)
		}
	}
	m.hub.Publish(AskTopic(a.CallID))
	if a.SessionID != "" {
		m.hub.Publish(SessionTopic(a.SessionID))
	}
}

// Ping implements Store.
func (m *Memory) Ping(context.Context) error { return nil }

func ids(as []*memAsk, limit int) []string {
	if limit > 0 && len(as) > limit {
		as = as[:limit]
	}
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.CallID
	}
	return out
}

// msTime keeps millisecond precision, as Redis does, so both stores return
// the same times.
func msTime(t time.Time) time.Time { return FromMillis(Millis(t)) }

// clone is a reader's copy of a stored ask. The byte slices and the
// message's copies are shared, not copied: the store never writes into
// them (a transition replaces them with its own copy of the caller's
// data, see owned), and readers must not either (Ask's contract). Copying
// them cost every read a few kB: most of what a read allocated.
func clone(a *asktype.Ask) *asktype.Ask {
	c := *a
	return &c
}

// owned is the store's own copy of what a caller hands it to keep: the
// caller may reuse its slices.
func owned(a *asktype.Ask) *asktype.Ask {
	c := *a
	c.Request = slices.Clone(a.Request)
	c.Settlement = slices.Clone(a.Settlement)
	c.Reply = slices.Clone(a.Reply)
	c.Message.Copies = slices.Clone(a.Message.Copies)
	return &c
}
