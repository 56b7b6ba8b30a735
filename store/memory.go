package store

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
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
	lists    map[string]*memList  // memory_hooks.go
	hub      Hub
}

type memAsk struct {
	asktype.Ask
	expires time.Time // zero: kept until a terminal transition
	changed time.Time // when Version last rose
}

type memBucket struct {
	tokens float64
	at     time.Time
}

// memTurns are TakeTurn's groups of one bucket: who waits until when and
// in which class, and when each was last served.
type memTurns struct {
	waiting map[string]time.Time
	class   map[string]int
	served  map[string]time.Time
}

type memLease struct {
	holder string
	until  time.Time
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

// StateError is the sentinel for a transition refused because the ask is
// in state s.
func StateError(s asktype.State) error {
	switch s {
	case asktype.Settled:
		return ErrSettled
	case asktype.Aborted:
		return ErrAborted
	case asktype.Continued:
		return ErrContinued
	default:
		return ErrOpen
	}
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

// auditPosted records that ref shows a for the first time (a new ts).
func (m *Memory) auditPosted(a *memAsk, ref asktype.MessageRef) {
	if ref.ID != "" && ref.ID != a.Message.ID {
		m.audit(a, m.clock.Now(), asktype.EventPosted, nil, PostedDetail(ref))
	}
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

// Session implements Store.
func (m *Memory) Session(_ context.Context, sessionID string) ([]*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*asktype.Ask
	for id := range m.sessions[sessionID] {
		if a := m.get(id); a != nil && a.SessionID == sessionID {
			out = append(out, clone(&a.Ask))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// Replies implements Store.
func (m *Memory) Replies(_ context.Context, sessionID string) ([]*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*asktype.Ask
	for id := range m.active[sessionID] {
		if a := m.get(id); a != nil && a.SessionID == sessionID && a.State == asktype.Continued && a.Reply != nil {
			out = append(out, clone(&a.Ask))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ReplyAt.Equal(out[j].ReplyAt) {
			return out[i].ReplyAt.Before(out[j].ReplyAt)
		}
		return out[i].Seq < out[j].Seq
	})
	return out, nil
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

// Released implements Store.
func (m *Memory) Released() (<-chan struct{}, func()) { return m.hub.Subscribe(ReleasedTopic) }

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

// Take implements Store.
func (m *Memory) Take(_ context.Context, bk asktype.Bucket, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.refill(bk, now)
	took := b.tokens >= 1
	if took {
		b.tokens--
	}
	m.bucket[bk.Name] = b
	return took, nil
}

// refill is bucket bk's tokens brought up to now (stored); the caller holds
// m.mu.
func (m *Memory) refill(bk asktype.Bucket, now time.Time) memBucket {
	b, ok := m.bucket[bk.Name]
	if !ok {
		b = memBucket{tokens: float64(bk.Burst), at: now}
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(float64(bk.Burst), b.tokens+el.Minutes()*float64(bk.PerMinute))
		b.at = now
	}
	m.bucket[bk.Name] = b
	return b
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

// TakeTurn implements Store.
func (m *Memory) TakeTurn(_ context.Context, t Turn) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.turns == nil {
		m.turns = map[string]*memTurns{}
	}
	tu := m.turns[t.Bucket.Name]
	if tu == nil {
		tu = &memTurns{waiting: map[string]time.Time{}, class: map[string]int{}, served: map[string]time.Time{}}
		m.turns[t.Bucket.Name] = tu
	}
	for _, g := range t.Left {
		delete(tu.waiting, g)
		delete(tu.class, g)
	}
	mine := map[string]bool{}
	for _, g := range t.Groups {
		tu.waiting[g.Name], tu.class[g.Name], mine[g.Name] = t.Now.Add(t.Wait), g.Class, true
	}
	due := ""
	for g, until := range tu.waiting {
		if !until.After(t.Now) {
			delete(tu.waiting, g)
			delete(tu.class, g)
			continue
		}
		c, dc := tu.class[g], tu.class[due]
		if due == "" || c < dc || c == dc && (tu.served[g].Before(tu.served[due]) || tu.served[g].Equal(tu.served[due]) && g < due) {
			due = g
		}
	}
	for g, at := range tu.served {
		if t.Now.Sub(at) > turnMemory {
			delete(tu.served, g)
		}
	}
	b := m.refill(t.Bucket, t.Now)
	if b.tokens < 1 {
		return "", false, nil
	}
	if due == "" || !mine[due] {
		return "", true, nil
	}
	b.tokens--
	m.bucket[t.Bucket.Name] = b
	tu.served[due] = t.Now
	return due, true, nil
}

// turnMemory is how long TakeTurn remembers when a group was served.
const turnMemory = time.Hour

// Drain implements Store.
func (m *Memory) Drain(_ context.Context, bk asktype.Bucket, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bucket[bk.Name]
	m.bucket[bk.Name] = memBucket{tokens: 0, at: later(b.at, until)}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Changes implements Store.
func (m *Memory) Changes(callID string) (<-chan struct{}, func()) {
	return m.hub.Subscribe(AskTopic(callID))
}

// Heard implements Feed: in one process every change is heard as it is
// made (the hint is published in the same critical section).
func (m *Memory) Heard(callID string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a := m.get(callID); a != nil {
		return a.Version
	}
	return 0
}

// SessionChanges implements Store.
func (m *Memory) SessionChanges(sessionID string) (<-chan struct{}, func()) {
	return m.hub.Subscribe(SessionTopic(sessionID))
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
