package store

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Memory's Reader and Transitions (transitions.go): each state change
// under the one mutex, as Redis runs each in one script.

// Current implements Store: in one process every read is current.
func (m *Memory) Current(ctx context.Context, callID string) (*asktype.Ask, error) {
	return m.Get(ctx, callID)
}

// Create implements Store.
func (m *Memory) Create(_ context.Context, a *asktype.Ask) (*asktype.Ask, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.get(a.CallID); cur != nil {
		return clone(&cur.Ask), false, nil
	}
	if a.SessionID != "" && len(m.active[a.SessionID]) >= MaxSessionAsks {
		// Drop entries whose ask expired, then check again.
		for id := range m.active[a.SessionID] {
			m.get(id)
		}
		if len(m.active[a.SessionID]) >= MaxSessionAsks {
			return nil, false, ErrSessionFull
		}
	}
	m.seq++
	n := &memAsk{Ask: *owned(a)}
	n.Created, n.Deadline = msTime(a.Created), msTime(a.Deadline)
	n.Seq, n.State, n.Version, n.Rendered = m.seq, asktype.Open, 0, 0
	n.PostAttempt, n.Poster = time.Time{}, asktype.PostLease{}
	m.asks[a.CallID] = n
	if n.SessionID != "" {
		setAdd(m.sessions, n.SessionID, n.CallID)
	}
	m.changed(n)
	m.audit(n, n.Created, asktype.EventAsked, nil, AskedDetail(&n.Ask))
	out := clone(&n.Ask)
	if p := a.Poster; p.Holder != "" {
		m.leases[a.CallID+"\x00post"] = memLease{holder: p.Holder, until: msTime(p.Until)}
		n.PostAttempt = n.Created
		out.Poster = asktype.PostLease{Holder: p.Holder, Until: msTime(p.Until)}
	}
	return out, true, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, callID string) (*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.get(callID)
	if a == nil {
		return nil, ErrNotFound
	}
	return clone(&a.Ask), nil
}

// transition runs fn on the ask under the lock; fn returns a sentinel error
// to refuse, or nil after changing the ask.
func (m *Memory) transition(callID string, fn func(a *memAsk) error) (*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.get(callID)
	if a == nil {
		return nil, ErrNotFound
	}
	return m.transitionLocked(a, fn)
}

func (m *Memory) transitionLocked(a *memAsk, fn func(a *memAsk) error) (*asktype.Ask, error) {
	if err := fn(a); err != nil {
		return clone(&a.Ask), err
	}
	m.changed(a)
	return clone(&a.Ask), nil
}

// Settle implements Store.
func (m *Memory) Settle(_ context.Context, callID string, settlement json.RawMessage, at time.Time) (*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.get(callID)
	if a == nil {
		return nil, ErrNotFound
	}
	if a.State == asktype.Open && !a.Deadline.IsZero() && !at.Before(a.Deadline) {
		// Late: close the window as Expire would; the caller queues a reply.
		m.continued(a)
		m.changed(a)
		m.audit(a, at, asktype.EventContinued, nil, "the window closed: an answer came late")
		return clone(&a.Ask), ErrContinued
	}
	return m.transitionLocked(a, func(a *memAsk) error {
		if a.State != asktype.Open {
			return StateError(a.State)
		}
		a.State, a.Settlement, a.SettledAt = asktype.Settled, slices.Clone(settlement), msTime(at)
		a.expires = at.Add(m.retention)
		m.auditAnswer(a, at, asktype.EventAnswered, settlement)
		return nil
	})
}

// Expire implements Store.
func (m *Memory) Expire(_ context.Context, callID string, now time.Time) (*asktype.Ask, error) {
	return m.transition(callID, func(a *memAsk) error {
		if a.State != asktype.Open {
			return StateError(a.State)
		}
		if a.Deadline.IsZero() || now.Before(a.Deadline) {
			return ErrNotDue
		}
		m.continued(a)
		m.audit(a, now, asktype.EventContinued, nil, "the window closed")
		return nil
	})
}

// Continue implements Store.
func (m *Memory) Continue(_ context.Context, callID string, now time.Time) (*asktype.Ask, error) {
	return m.transition(callID, func(a *memAsk) error {
		if a.State != asktype.Open {
			return StateError(a.State)
		}
		if a.Deadline.IsZero() {
			return ErrNotDue
		}
		detail := "the window closed"
		if now.Before(a.Deadline) {
			a.Deadline, detail = msTime(now), ContinuedEarly
		}
		m.continued(a)
		m.audit(a, now, asktype.EventContinued, nil, detail)
		return nil
	})
}

// continued closes a timed ask's window; it is kept until retention after
// its deadline.
func (m *Memory) continued(a *memAsk) {
	a.State = asktype.Continued
	a.expires = a.Deadline.Add(m.retention)
}

// Abort implements Store.
func (m *Memory) Abort(ctx context.Context, callID string, at time.Time, why asktype.AbortReason) (*asktype.Ask, error) {
	return m.transition(callID, func(a *memAsk) error {
		if !a.State.Active() {
			return StateError(a.State)
		}
		a.State, a.AbortedAt, a.AbortReason = asktype.Aborted, msTime(at), why
		a.expires = at.Add(m.retention)
		ev, detail := AbortEvent(why, ActorOf(ctx))
		m.audit(a, at, ev, nil, detail)
		return nil
	})
}

// QueueReply implements Store.
func (m *Memory) QueueReply(_ context.Context, callID string, reply json.RawMessage, at time.Time) (*asktype.Ask, error) {
	return m.transition(callID, func(a *memAsk) error {
		if a.State != asktype.Continued {
			return StateError(a.State)
		}
		if a.Reply != nil {
			return ErrReplyQueued
		}
		a.Reply, a.ReplyAt = slices.Clone(reply), msTime(at)
		m.auditAnswer(a, at, asktype.EventQueued, reply)
		return nil
	})
}

// AckReply implements Store.
func (m *Memory) AckReply(_ context.Context, callID string, at time.Time) (*asktype.Ask, error) {
	return m.transition(callID, func(a *memAsk) error {
		if a.State != asktype.Continued {
			return StateError(a.State)
		}
		if a.Reply == nil {
			return ErrNoReply
		}
		a.State, a.Settlement, a.SettledAt = asktype.Settled, a.Reply, msTime(at)
		a.expires = at.Add(m.retention)
		m.audit(a, at, asktype.EventDelivered, nil, "")
		return nil
	})
}

// Counts implements Store.
func (m *Memory) Counts(context.Context) (Counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c Counts
	for id := range m.asks {
		if a := m.get(id); a != nil {
			switch a.State {
			case asktype.Open:
				c.Open++
				if !a.Deadline.IsZero() {
					c.TimedOpen++
				}
			case asktype.Continued:
				c.Continued++
			}
		}
	}
	return c, nil
}

// Versions implements Store.
func (m *Memory) Versions(_ context.Context, callIDs []string) ([]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int64, len(callIDs))
	for i, id := range callIDs {
		if a := m.get(id); a != nil {
			out[i] = a.Version
		}
	}
	return out, nil
}
