package store

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Memory's Messages (messages.go): the message of each ask, its post lease
// and attempt, and the stale asks derived from the records.

// auditPosted records that ref shows a for the first time (a new ts).
func (m *Memory) auditPosted(a *memAsk, ref asktype.MessageRef) {
	if ref.ID != "" && ref.ID != a.Message.ID {
		m.audit(a, m.clock.Now(), asktype.EventPosted, nil, PostedDetail(ref))
	}
}

// SetMessage implements Store.
func (m *Memory) SetMessage(_ context.Context, callID string, ref asktype.MessageRef) (*asktype.Ask, error) {
	return m.transition(callID, func(a *memAsk) error {
		m.auditPosted(a, ref)
		a.Message = ownedRef(ref)
		return nil
	})
}

// Refuse implements Store.
func (m *Memory) Refuse(_ context.Context, callID, channel, why string, at time.Time) (*asktype.Ask, error) {
	return m.transition(callID, func(a *memAsk) error {
		a.Message = asktype.MessageRef{Conversation: channel, Refused: why}
		ends := a.State == asktype.Open && a.Deadline.IsZero()
		if ends {
			a.State, a.AbortedAt, a.AbortReason = asktype.Aborted, msTime(at), asktype.NoMessage
			a.expires = at.Add(m.retention)
		}
		ev, detail := RefusedPostDetail(why, ends)
		m.audit(a, at, ev, nil, detail)
		return nil
	})
}

// MarkRendered implements Store.
func (m *Memory) MarkRendered(_ context.Context, callID string, ver int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.get(callID)
	if a == nil {
		return false, ErrNotFound
	}
	a.Rendered = max(a.Rendered, ver)
	return ver >= a.Version, nil
}

// Stale implements Store.
func (m *Memory) Stale(_ context.Context, before time.Time, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*memAsk
	back := m.clock.Now()
	for id, a := range m.asks {
		if m.get(id) == nil {
			continue
		}
		if !a.changed.Before(back) {
			back = a.changed.Add(time.Nanosecond)
		}
		if a.Rendered < a.Version && !a.changed.After(before) && a.NeedsMessageWork() {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].changed.Before(out[j].changed) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	// Handed-out entries move to the back, as in Redis: one that cannot be
	// fixed must not hold the window.
	for i, a := range out {
		a.changed = back.Add(time.Duration(i) * time.Nanosecond)
	}
	return ids(out, limit), nil
}

// Handoff implements Store: the asks sort first in Stale.
func (m *Memory) Handoff(_ context.Context, callIDs []string) error {
	m.mu.Lock()
	for _, id := range callIDs {
		if a := m.get(id); a != nil {
			a.changed = time.Time{}
		}
	}
	m.mu.Unlock()
	m.hub.Publish(HandoffTopic)
	return nil
}

// HandedOff implements Store.
func (m *Memory) HandedOff() (<-chan struct{}, func()) { return m.hub.Subscribe(HandoffTopic) }

// ownedRef is the store's own copy of a message ref.
// sameRef reports whether a recorded message is ref, copies and all.
func sameRef(a, ref asktype.MessageRef) bool {
	return a.Refused == "" && ref.Refused == "" && a.Surface == ref.Surface && a.Conversation == ref.Conversation &&
		a.ID == ref.ID && a.Thread == ref.Thread && slices.EqualFunc(a.Copies, ref.Copies, sameRef)
}

func ownedRef(ref asktype.MessageRef) asktype.MessageRef {
	ref.Copies = slices.Clone(ref.Copies)
	return ref
}

// BeginPost implements Store.
func (m *Memory) BeginPost(_ context.Context, callID string, h Hold) (*asktype.Ask, error) {
	holder, ttl, now := h.Holder, h.TTL, h.Now
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.get(callID)
	if a == nil {
		return nil, ErrNotFound
	}
	k := callID + "\x00post"
	if l, ok := m.leases[k]; ok && l.holder != holder && now.Before(l.until) {
		held := clone(&a.Ask)
		held.Poster = asktype.PostLease{Holder: l.holder, Until: l.until}
		return held, ErrHeld
	}
	m.leases[k] = memLease{holder: holder, until: now.Add(ttl)}
	before := clone(&a.Ask)
	if !a.Message.Posted() && a.Message.Refused == "" && a.State.Active() && a.PostAttempt.IsZero() {
		a.PostAttempt = msTime(now)
	}
	return before, nil
}

// AbandonPost implements Store.
func (m *Memory) AbandonPost(_ context.Context, callID, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := callID + "\x00post"
	if l, ok := m.leases[k]; !ok || l.holder != holder {
		return nil
	}
	delete(m.leases, k)
	if a := m.get(callID); a != nil {
		a.PostAttempt = time.Time{}
	}
	return nil
}

// FinishPost implements Store.
func (m *Memory) FinishPost(_ context.Context, callID, holder string, ref asktype.MessageRef, shown int64) (*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.get(callID)
	if a == nil {
		return nil, ErrNotFound
	}
	k := callID + "\x00post"
	if a.Message.Posted() && ref.ID != "" && (a.Message.Conversation != ref.Conversation || a.Message.ID != ref.ID) {
		// Another message of the ask than the one recorded: never written
		// over it, but kept beside it, so every render reaches both.
		if kept, ok := a.Message.Keeping(ref); ok {
			m.auditPosted(a, ref)
			a.Message = kept
			m.changed(a)
		}
		if l, ok := m.leases[k]; ok && l.holder == holder {
			delete(m.leases, k)
		}
		return clone(&a.Ask), nil
	}
	if holder == asktype.Adopted && a.Message.Posted() {
		return clone(&a.Ask), nil
	}
	if sameRef(a.Message, ref) {
		// Recorded already (adopted from a click): only the lease goes,
		// and when the adoption is all that happened since the version
		// posted, the message shows the latest.
		if shown > 0 && a.Version == shown+1 {
			a.Rendered = max(a.Rendered, a.Version)
		}
		if l, ok := m.leases[k]; ok && l.holder == holder {
			delete(m.leases, k)
		}
		return clone(&a.Ask), nil
	}
	m.auditPosted(a, ref)
	a.Message = ownedRef(ref)
	m.changed(a)
	if shown > 0 && a.Version == shown+1 {
		a.Rendered = a.Version
	}
	if l, ok := m.leases[k]; ok && l.holder == holder {
		delete(m.leases, k)
	}
	return clone(&a.Ask), nil
}
