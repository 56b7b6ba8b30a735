package store

import "github.com/askslack/askslack/asktype"

// The Hub also remembers, for every ask someone is subscribed to, the newest
// record this process has seen (a transition's result or a read) and the
// newest version any replica has announced on the change feed. While no
// newer version has been announced, that record is current as far as the
// feed can tell, and a woken waiter need not read the store again: one
// transition then costs its waiters nothing. A record is kept only while
// the ask has subscribers, so memory follows the waiters.

// A record that reaches Record after a newer version was announced (a
// read or transition racing another replica's change) must not become
// current, even when nobody watched the ask at the announcement: the Hub
// remembers the newest announced version of recent asks too, two
// generations of seenGen entries, a few MB at most.
const seenGen = 1 << 15

// watch is what the Hub knows of one subscribed ask.
type watch struct {
	subs     int          // subscribers of the ask's topic
	rec      *asktype.Ask // newest record seen, nil when unknown
	seen     int64        // newest version announced or seen
	woken    int64        // newest version the subscribers were woken for
	inflight int          // transitions of this process in flight (Begin)
	deferred bool         // an announcement waits for them to end
}

// Record remembers a (a transition's result or a fresh read) as its ask's
// newest record, if anyone watches the ask and a is at least as new as
// anything announced. It wakes nobody.
func (h *Hub) Record(a *asktype.Ask) {
	if a == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.saw(a.CallID, a.Version)
	w := h.watches[a.CallID]
	if w == nil || a.Version < w.seen || (w.rec != nil && w.rec.Version >= a.Version) {
		return
	}
	w.rec, w.seen = a, a.Version
}

// saw notes that version ver of callID exists; the caller holds h.mu.
func (h *Hub) saw(callID string, ver int64) {
	if h.seen == nil || len(h.seen) >= seenGen {
		h.seenOld, h.seen = h.seen, make(map[string]int64, 1024)
	}
	h.seen[callID] = max(h.seen[callID], h.seenOld[callID], ver)
}

// seenOf is the newest version of callID noted recently.
func (h *Hub) seenOf(callID string) int64 {
	return max(h.seen[callID], h.seenOld[callID])
}

// Changed records a transition this process made and wakes the subscribers
// of the ask and of its session at once, without waiting for the feed.
func (h *Hub) Changed(a *asktype.Ask) {
	h.Record(a)
	h.mu.Lock()
	if w := h.watches[a.CallID]; w != nil {
		w.woken = max(w.woken, a.Version)
	}
	h.mu.Unlock()
	h.Publish(AskTopic(a.CallID))
	if a.SessionID != "" {
		h.Publish(SessionTopic(a.SessionID))
	}
}

// Announce is a change of callID to version ver reported by the change feed
// (made by any replica, this one included). It wakes the ask's subscribers
// unless they were already woken for that version (this process made the
// change and woke them itself, in Changed); an older remembered record
// stops being current. A record that only reached Record (a read, or a
// transition of this process that found the change already made) woke
// nobody, so it does not stand in for the wake. While a transition of this
// process on the ask is in flight (Begin), the wake waits for it: the
// feed's echo of that very transition usually arrives before the
// transition's own reply, and a waiter woken then would read the store for
// what the reply brings a moment later.
func (h *Hub) Announce(callID string, ver int64) {
	h.mu.Lock()
	h.saw(callID, ver)
	w := h.watches[callID]
	if w != nil {
		w.seen = max(w.seen, ver)
		if w.woken >= ver {
			h.mu.Unlock()
			return
		}
		if w.inflight > 0 {
			w.deferred = true
			h.mu.Unlock()
			return
		}
		w.woken = ver
	}
	h.mu.Unlock()
	h.Publish(AskTopic(callID))
}

// Begin marks a transition of callID in flight from this process; the
// returned end must be called once its result was handed to Changed or
// Record (or it failed). An announcement held back meanwhile wakes the
// subscribers then, unless the result was handed to Changed (which woke
// them for it). A result handed only to Record wakes them here: it may be
// another replica's change (a losing answer's reply carries the winner's
// record), which the held-back announcement was for.
func (h *Hub) Begin(callID string) (end func()) {
	h.mu.Lock()
	w := h.watches[callID]
	if w != nil {
		w.inflight++
	}
	h.mu.Unlock()
	if w == nil {
		return func() {}
	}
	return func() {
		h.mu.Lock()
		w.inflight--
		wake := w.inflight == 0 && w.deferred && w.woken < w.seen
		if w.inflight == 0 {
			w.deferred = false
		}
		if wake {
			w.woken = w.seen
		}
		h.mu.Unlock()
		if wake {
			h.Publish(AskTopic(callID))
		}
	}
}

// Heard is the newest version of callID this process has heard of: a
// transition's result, a read, or an announcement on the change feed from
// any replica; 0 when it has heard of none lately. A waiter that has read
// an older version and stays unwoken has lost a wake-up here, in this
// process (the waiters' safety sweep checks that without a store read).
func (h *Hub) Heard(callID string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.seenOf(callID)
	if w := h.watches[callID]; w != nil {
		v = max(v, w.seen)
	}
	return v
}

// Latest returns a copy of the newest record of callID this process has
// seen, when it has one and no newer version was announced since. Only
// asks with subscribers are remembered.
func (h *Hub) Latest(callID string) (*asktype.Ask, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.watches[callID]
	if w == nil || w.rec == nil || w.rec.Version < w.seen {
		return nil, false
	}
	c := *w.rec
	return &c, true
}

// Forget drops every remembered record (the change feed reconnected: what
// was announced meanwhile is lost) and wakes every subscriber to re-read.
func (h *Hub) Forget() {
	h.mu.Lock()
	for _, w := range h.watches {
		w.rec = nil
	}
	h.mu.Unlock()
	h.PublishAll()
}

// watchAdd and watchDone count the subscribers of an ask topic; the caller
// holds h.mu.
func (h *Hub) watchAdd(topic string) {
	id, ok := askOf(topic)
	if !ok {
		return
	}
	if h.watches == nil {
		h.watches = make(map[string]*watch)
	}
	w := h.watches[id]
	if w == nil {
		seen := h.seenOf(id) // the subscriber reads after subscribing: it sees this much
		w = &watch{seen: seen, woken: seen}
		h.watches[id] = w
	}
	w.subs++
}

func (h *Hub) watchDone(topic string) {
	id, ok := askOf(topic)
	if !ok {
		return
	}
	if w := h.watches[id]; w != nil {
		if w.subs--; w.subs <= 0 {
			delete(h.watches, id)
		}
	}
}

// askOf returns the call id of an ask topic.
func askOf(topic string) (string, bool) {
	if len(topic) > 2 && topic[:2] == "a:" {
		return topic[2:], true
	}
	return "", false
}
