// Package clock is askslack's one time source. Everything that decides by
// the time — deadlines, leases, the re-attach grace, retention, countdown
// milestones, retry backoff of the message mirror, and every poll that
// re-reads the store — takes a Clock, so a test moves time by hand (Fake)
// instead of sleeping.
//
// What is deliberately not on a Clock: I/O budgets (a context timeout
// around one network call), latency measurements for metrics, and the
// command-line clients' own waits. Those bound or measure real work.
//
// The package is a stdlib-only leaf; every layer may import it.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time and makes timers. Implementations must be safe for
// concurrent use.
type Clock interface {
	Now() time.Time
	// After is NewTimer(d).C; prefer NewTimer when the wait may be
	// abandoned, so the timer can be stopped.
	After(d time.Duration) <-chan time.Time
	// NewTimer fires once, d from now.
	NewTimer(d time.Duration) *Timer
	// NewTicker fires every d (d > 0); like time.Ticker it drops ticks
	// for a slow receiver.
	NewTicker(d time.Duration) *Ticker
	// AfterFunc calls f in its own goroutine (Real) or from Advance (Fake)
	// once d has passed, unless the timer is stopped first.
	AfterFunc(d time.Duration, f func()) *Timer
}

// Timer is a one-shot timer from a Clock; like time.Timer.
type Timer struct {
	C    <-chan time.Time
	stop func() bool
}

// Stop prevents the timer from firing; it reports whether it did.
func (t *Timer) Stop() bool { return t.stop() }

// Ticker is a periodic timer from a Clock; like time.Ticker.
type Ticker struct {
	C    <-chan time.Time
	stop func()
}

// Stop turns the ticker off; no more ticks are sent.
func (t *Ticker) Stop() { t.stop() }

// Real is the wall clock.
var Real Clock = real{}

// OrReal returns c, or Real when c is nil: every options struct's nil
// Clock means real time.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

type real struct{}

func (real) Now() time.Time                         { return time.Now() }
func (real) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (real) NewTimer(d time.Duration) *Timer {
	t := time.NewTimer(d)
	return &Timer{C: t.C, stop: t.Stop}
}

func (real) NewTicker(d time.Duration) *Ticker {
	t := time.NewTicker(d)
	return &Ticker{C: t.C, stop: t.Stop}
}

func (real) AfterFunc(d time.Duration, f func()) *Timer {
	t := time.AfterFunc(d, f)
	return &Timer{stop: t.Stop}
}

// WithTimeout is context.WithTimeout on c's time: the context ends with
// context.DeadlineExceeded when c reaches now+d, or earlier with its
// parent. On Real it is context.WithTimeout.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := c.(real); ok {
		return context.WithTimeout(parent, d)
	}
	inner, cancel := context.WithCancel(parent)
	ctx := &timeoutCtx{Context: inner, deadline: c.Now().Add(d)}
	if d <= 0 {
		ctx.err = context.DeadlineExceeded
		cancel()
		return ctx, cancel
	}
	t := c.AfterFunc(d, func() {
		ctx.mu.Lock()
		if inner.Err() == nil {
			ctx.err = context.DeadlineExceeded
		}
		ctx.mu.Unlock()
		cancel()
	})
	return ctx, func() { t.Stop(); cancel() }
}

// timeoutCtx is a context a Clock's timer ends: its Err is
// DeadlineExceeded once the timer fired first, as for context.WithTimeout.
type timeoutCtx struct {
	context.Context
	deadline time.Time
	mu       sync.Mutex
	err      error
}

func (c *timeoutCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *timeoutCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return c.Context.Err()
}
