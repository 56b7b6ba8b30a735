package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// The waiters' safety net. Every change publishes a hint that wakes the
// waiters of its ask (store.Feed), and a replica whose change feed
// reconnects wakes all of its waiters; a wake-up lost anyway (a bug, as in
// issue 20) must cost a waiter a sweep or two, never its whole wait. One
// sweeper per Host does two checks each tick (Check):
//
//   - In this process, every waiter: the hub has heard of each change this
//     replica made, read or was told about by the feed (store.Feed.Heard).
//     A waiter that stays behind the version heard for two ticks in a row
//     lost its wake-up here (issue 20's kind: the hint arrived, the waiter
//     missed it) and is woken to read the store. No store read; a few
//     microseconds per thousand waiters.
//   - In the store, the next batch of waiters in turn: one round trip
//     (store.Reader.Versions) catches a change whose hint never reached this
//     process at all. A batch is SweepRate·Check asks at most, so a replica
//     reads at most SweepRate asks a second however many wait.
//
// So what sitting costs does not grow with the number of open asks (issue
// 31: a ticker and a store read per waiter made 10,000 idle asks cost
// hundreds of Redis reads a second). The sweeper runs only while someone
// waits.

// waiter is one waiting call's place in the sweep.
type waiter struct {
	callID  string
	known   atomic.Int64  // the version the waiter last read
	suspect atomic.Int64  // the version heard in this process last tick, if newer than known
	fresh   atomic.Bool   // the sweep saw a newer version in the store
	wake    chan struct{} // cap 1
}

// seen records the version the waiter read.
func (w *waiter) seen(ver int64) { w.known.Store(ver) }

// woken reports, after a wake, whether the waiter must read the store
// itself (the sweep found a change its hint never announced).
func (w *waiter) woken() bool { return w.fresh.Swap(false) }

func (w *waiter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// sweeper is a Host's safety net for all its waiters.
type sweeper struct {
	mu      sync.Mutex
	ws      []*waiter
	at      map[*waiter]int // index in ws
	cursor  int
	running bool
}

// park registers a waiter on callID that has read version known; done
// takes it out.
func (h *Host) park(callID string, known int64) (w *waiter, done func()) {
	w = &waiter{callID: callID, wake: make(chan struct{}, 1)}
	w.seen(known)
	s := &h.sweep
	s.mu.Lock()
	if s.at == nil {
		s.at = map[*waiter]int{}
	}
	s.at[w] = len(s.ws)
	s.ws = append(s.ws, w)
	if !s.running {
		s.running = true
		go h.sweepLoop()
	}
	s.mu.Unlock()
	return w, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		i, ok := s.at[w]
		if !ok {
			return
		}
		last := len(s.ws) - 1
		s.ws[i] = s.ws[last]
		s.at[s.ws[i]] = i
		s.ws = s.ws[:last]
		delete(s.at, w)
	}
}

// sweepBatch is the next batch to check, round robin: every waiter, or
// SweepRate·Check of them. ok is false once nobody waits: the loop ends
// (and park starts another).
func (h *Host) sweepBatch() (batch []*waiter, ok bool) {
	s := &h.sweep
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.ws)
	if n == 0 {
		s.running = false
		return nil, false
	}
	k := min(n, max(1, int(math.Ceil(h.sweepRate*h.check.Seconds()))))
	for range k {
		if s.cursor >= n {
			s.cursor = 0
		}
		batch = append(batch, s.ws[s.cursor])
		s.cursor++
	}
	return batch, true
}

// sweepTimeout bounds one batch's read.
const sweepTimeout = 10 * time.Second

func (h *Host) sweepLoop() {
	// A random first tick: replicas, and waiters parked together, do not
	// read in step.
	<-h.clock.After(time.Duration(rand.Int64N(int64(h.check))) + time.Millisecond)
	t := h.clock.NewTicker(h.check)
	defer t.Stop()
	for h.sweepOnce() {
		<-t.C
	}
}

// sweepOnce checks every waiter against what this process has heard and
// the next batch against the store (one round trip), and wakes those whose
// ask moved on; false once nobody waits.
func (h *Host) sweepOnce() bool {
	batch, ok := h.sweepBatch()
	if !ok {
		return false
	}
	h.sweepHeard()
	ids := make([]string, len(batch))
	for i, w := range batch {
		ids[i] = w.callID
	}
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	vs, err := h.store.Versions(ctx, ids)
	cancel()
	if err != nil {
		h.log.Debug("the waiters' safety sweep could not read versions", "asks", len(ids), "err", err)
		return true
	}
	for i, w := range batch {
		if vs[i] != w.known.Load() {
			h.log.Debug("a waiter's ask moved on before its wake-up; waking it", "callId", w.callID,
				"known", w.known.Load(), "stored", vs[i])
			w.fresh.Store(true)
			w.signal()
		}
	}
	return true
}

// sweepHeard wakes every waiter that has stayed behind the version this
// process heard of since the last tick. One tick's grace: a waiter woken
// by its hint a moment ago is still reading.
func (h *Host) sweepHeard() {
	s := &h.sweep
	s.mu.Lock()
	ws := append([]*waiter(nil), s.ws...)
	s.mu.Unlock()
	for _, w := range ws {
		heard, known := h.store.Heard(w.callID), w.known.Load()
		if heard <= known {
			w.suspect.Store(0)
			continue
		}
		if was := w.suspect.Swap(heard); was == 0 || was <= known {
			continue // behind since this tick only
		}
		h.log.Debug("a waiter stayed behind a change this process heard of; waking it", "callId", w.callID,
			"known", known, "heard", heard)
		w.suspect.Store(0)
		w.fresh.Store(true)
		w.signal()
	}
}
