package clock

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Fake is a Clock that only moves when a test calls Advance. Advance fires
// every timer and ticker that came due, in due order, before it returns:
// channel timers get their value (buffered, never blocking), AfterFunc
// functions run in Advance's goroutine. Tests that need a goroutine to have
// armed its timer first wait with WaitTimers, never by sleeping.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	seq     int
	waits   []*fakeWait
	changed chan struct{} // closed and replaced whenever a timer is armed
}

// fakeWait is one armed timer or ticker.
type fakeWait struct {
	due    time.Time
	seq    int // arming order, to fire timers due together deterministically
	period time.Duration
	ch     chan time.Time
	fn     func()
}

// NewFake returns a Fake clock reading start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now implements Clock.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After implements Clock.
func (f *Fake) After(d time.Duration) <-chan time.Time { return f.NewTimer(d).C }

// NewTimer implements Clock. A timer of d <= 0 has fired already.
func (f *Fake) NewTimer(d time.Duration) *Timer {
	w := &fakeWait{ch: make(chan time.Time, 1)}
	f.arm(w, d)
	return &Timer{C: w.ch, stop: func() bool { return f.disarm(w) }}
}

// AfterFunc implements Clock. With d <= 0, fn runs at the next Advance
// (even Advance(0)).
func (f *Fake) AfterFunc(d time.Duration, fn func()) *Timer {
	w := &fakeWait{fn: fn}
	f.arm(w, d)
	return &Timer{stop: func() bool { return f.disarm(w) }}
}

// NewTicker implements Clock.
func (f *Fake) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic(fmt.Sprintf("clock: non-positive interval %v for NewTicker", d))
	}
	w := &fakeWait{ch: make(chan time.Time, 1), period: d}
	f.arm(w, d)
	return &Ticker{C: w.ch, stop: func() { f.disarm(w) }}
}

func (f *Fake) arm(w *fakeWait, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d <= 0 && w.ch != nil {
		w.ch <- f.now
		return
	}
	f.seq++
	w.due, w.seq = f.now.Add(d), f.seq
	f.waits = append(f.waits, w)
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Fake) disarm(w *fakeWait) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, x := range f.waits {
		if x == w {
			f.waits = append(f.waits[:i], f.waits[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock by d and fires everything due by then, in due
// order (arming order among equals). A ticker fires at most once per
// Advance, as a real ticker drops ticks for a slow receiver, and is re-armed
// for its next period after the new time.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	var due, keep []*fakeWait
	for _, w := range f.waits {
		if w.due.After(now) {
			keep = append(keep, w)
			continue
		}
		due = append(due, w)
		if w.period > 0 {
			keep = append(keep, w)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].due.Equal(due[j].due) {
			return due[i].due.Before(due[j].due)
		}
		return due[i].seq < due[j].seq
	})
	var funcs []func()
	for _, w := range due {
		if w.fn != nil {
			funcs = append(funcs, w.fn)
			continue
		}
		select {
		case w.ch <- now:
		default: // a tick nobody took yet: drop this one
		}
		if w.period > 0 {
			missed := now.Sub(w.due)/w.period + 1
			w.due = w.due.Add(missed * w.period)
		}
	}
	f.waits = keep
	f.mu.Unlock()
	for _, fn := range funcs {
		fn()
	}
}

// WaitTimers blocks until at least n one-shot timers (After, NewTimer,
// AfterFunc) are armed to fire exactly at due, or ctx ends. Tickers are not
// counted: polls are always armed, so they would say nothing about whether
// the goroutine a test waits for has got to its timer.
func (f *Fake) WaitTimers(ctx context.Context, due time.Time, n int) error {
	for {
		f.mu.Lock()
		found, changed := 0, f.changed
		var armed []time.Time
		for _, w := range f.waits {
			if w.period == 0 {
				armed = append(armed, w.due)
				if w.due.Equal(due) {
					found++
				}
			}
		}
		f.mu.Unlock()
		if found >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			sort.Slice(armed, func(i, j int) bool { return armed[i].Before(armed[j]) })
			return fmt.Errorf("clock: %d of %d timers armed for %s (armed: %v): %w",
				found, n, due.Format(time.StampMilli), armed, ctx.Err())
		}
	}
}
