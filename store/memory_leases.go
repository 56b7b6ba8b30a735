package store

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Memory's Leases, Waits and Graces (leases.go).

type memLease struct {
	holder string
	until  time.Time
}

// Due implements Store.
func (m *Memory) Due(_ context.Context, until time.Time, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var due []*memAsk
	for _, a := range m.asks {
		if a.State == asktype.Open && !a.Deadline.IsZero() && !a.Deadline.After(until) {
			due = append(due, a)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].Deadline.Before(due[j].Deadline) })
	return ids(due, limit), nil
}

// Acquire implements Store.
func (m *Memory) Acquire(_ context.Context, callID string, c Claim) (string, error) {
	name, holder, ttl, now := c.Name, c.Holder, c.TTL, c.Now
	m.mu.Lock()
	defer m.mu.Unlock()
	k := callID + "\x00" + name
	if l, ok := m.leases[k]; ok && l.holder != holder && now.Before(l.until) {
		return l.holder, ErrHeld
	}
	m.leases[k] = memLease{holder: holder, until: now.Add(ttl)}
	return holder, nil
}

// ClaimWaits implements Store.
func (m *Memory) ClaimWaits(_ context.Context, ids []string, h Hold) ([]WaitClaim, error) {
	holder, ttl, now := h.Holder, h.TTL, h.Now
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]WaitClaim, len(ids))
	for i, id := range ids {
		out[i] = WaitClaim{CallID: id}
		a := m.get(id)
		if a == nil || a.State != asktype.Open || a.Deadline.IsZero() {
			continue
		}
		out[i].Open, out[i].Deadline, out[i].Created = true, a.Deadline, a.Created
		k := id + "\x00" + LeaseWait
		if l, ok := m.leases[k]; ok && l.holder != holder {
			if now.Before(l.until) {
				out[i].Holder = l.holder
				continue
			}
			out[i].Prev = l.holder
		}
		m.leases[k] = memLease{holder: holder, until: now.Add(ttl)}
		out[i].Held, out[i].Holder = true, holder
	}
	return out, nil
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, callID, name, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := callID + "\x00" + name
	if l, ok := m.leases[k]; ok && l.holder == holder {
		delete(m.leases, k)
		if a := m.get(callID); name == LeaseWait && a != nil && a.State == asktype.Open && !a.Deadline.IsZero() {
			m.hub.Publish(ReleasedTopic) // letting go of an ended wait wakes nobody
		}
	}
	return nil
}

// Unclaimed implements Store.
func (m *Memory) Unclaimed(_ context.Context, now time.Time, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var free []*memAsk
	for id, a := range m.asks {
		if a.State != asktype.Open || a.Deadline.IsZero() {
			continue
		}
		if l, ok := m.leases[id+"\x00"+LeaseWait]; ok && now.Before(l.until) {
			continue
		}
		free = append(free, a)
	}
	sort.Slice(free, func(i, j int) bool { return free[i].Deadline.Before(free[j].Deadline) })
	return ids(free, limit), nil
}

// NextLapse implements Store.
func (m *Memory) NextLapse(_ context.Context, after time.Time) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var next time.Time
	for id, a := range m.asks {
		if a.State != asktype.Open || a.Deadline.IsZero() {
			continue
		}
		if l, ok := m.leases[id+"\x00"+LeaseWait]; ok && l.until.After(after) && (next.IsZero() || l.until.Before(next)) {
			next = l.until
		}
	}
	return next, nil
}

// StartGrace implements Store.
func (m *Memory) StartGrace(_ context.Context, callID string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grace[callID] = until
	return nil
}

// EndedGraces implements Store.
func (m *Memory) EndedGraces(_ context.Context, now time.Time, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for id, until := range m.grace {
		if !until.After(now) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return m.grace[a].Compare(m.grace[b]) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// EndGrace implements Store.
func (m *Memory) EndGrace(_ context.Context, callID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.grace, callID)
	return nil
}
