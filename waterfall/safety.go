package waterfall

import (
	"time"

	"github.com/askslack/askslack/internal/clock"
)

// safety is a waiter's net under the change hints: one ticker that fires
// every Check, and says on which ticks the waiter should read the store
// itself (every Poll) rather than the ask as this replica last saw it.
// Every waiter also reads once right after it subscribes, so a change made
// between the read and the subscription is never missed either.
type safety struct {
	t     *clock.Ticker
	clock clock.Clock
	poll  time.Duration
	last  time.Time
}

func (h *Host) safety() *safety {
	return &safety{t: h.clock.NewTicker(h.check), clock: h.clock, poll: h.poll, last: h.clock.Now()}
}

// C fires every Check.
func (s *safety) C() <-chan time.Time { return s.t.C }

// fresh reports whether this tick is one to read the store afresh.
func (s *safety) fresh() bool {
	now := s.clock.Now()
	if now.Sub(s.last) < s.poll {
		return false
	}
	s.last = now
	return true
}

func (s *safety) Stop() { s.t.Stop() }
