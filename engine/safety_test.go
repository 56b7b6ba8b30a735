package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
)

// countingStore counts the asks the sweep reads; deaf, it has heard of
// no change (as when a hint never reached this process).
type countingStore struct {
	*store.Memory
	read atomic.Int64
	deaf bool
}

func (c *countingStore) Heard(callID string) int64 {
	if c.deaf {
		return 0
	}
	return c.Memory.Heard(callID)
}

func (c *countingStore) Versions(ctx context.Context, ids []string) ([]int64, error) {
	c.read.Add(int64(len(ids)))
	return c.Memory.Versions(ctx, ids)
}

// What sitting costs does not grow with the waiters: with 10,000 parked
// waiters a minute of ticks (5 s each) reads SweepRate asks a second, with
// 10 two (each every tick), and a round robin reaches every waiter; a
// waiter whose ask moved on without a hint ever reaching this process is
// woken to read afresh.
func TestSweepCostIsBoundedAndWakesTheLost(t *testing.T) {
	c := clock.NewFake(time.Unix(1700000000, 0)) // the loop's ticks never come: the test steps
	st := &countingStore{Memory: store.NewMemory(time.Hour, c), deaf: true}
	h := NewHost(st, nil, HostOptions{Clock: c})
	ctx := context.Background()
	rate := func(n int) float64 {
		t.Helper()
		var done []func()
		for i := range n {
			_, unpark := h.park(fmt.Sprintf("sit-%d", i), 1)
			done = append(done, unpark)
		}
		before := st.read.Load()
		for range 12 {
			h.sweepOnce()
		}
		got := float64(st.read.Load()-before) / 60
		for _, d := range done {
			d()
		}
		return got
	}
	if r := rate(10000); r < 4 || r > 6 {
		t.Fatalf("10,000 waiters cost %.1f reads/s; want about 5", r)
	}
	if r := rate(10); r < 1.5 || r > 2.5 {
		t.Fatalf("10 waiters cost %.1f reads/s; want 2 (each every tick)", r)
	}

	// A waiter whose ask settled behind its back is woken to read afresh.
	a, _, err := st.Create(ctx, &asktype.Ask{CallID: "lost", Request: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	w, unpark := h.park("lost", a.Version)
	defer unpark()
	if _, err := st.Memory.Settle(ctx, "lost", []byte(`{}`), c.Now()); err != nil {
		t.Fatal(err)
	}
	for range 2 { // its turn comes
		h.sweepOnce()
	}
	select {
	case <-w.wake:
		if !w.woken() {
			t.Fatal("woken, but not told to read afresh")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the sweep never woke the waiter whose ask moved on")
	}
}

// A waiter that missed the hint this process heard (issue 20's kind) is
// woken on the second tick behind it, with no store read for it: one
// tick's grace lets a waiter woken a moment ago finish reading.
func TestSweepWakesAWaiterBehindWhatThisProcessHeard(t *testing.T) {
	c := clock.NewFake(time.Unix(1700000000, 0))
	st := &countingStore{Memory: store.NewMemory(time.Hour, c)}
	h := NewHost(st, nil, HostOptions{Clock: c, SweepRate: 0.001}) // the store batch: one ask a tick
	ctx := context.Background()
	for i := range 50 { // others waiting, so the store batch rarely reaches the one that matters
		_, unpark := h.park(fmt.Sprintf("sit-%d", i), 1)
		defer unpark()
	}
	a, _, err := st.Create(ctx, &asktype.Ask{CallID: "missed", Request: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	w, unpark := h.park("missed", a.Version)
	defer unpark()
	h.sweepOnce() // nothing heard yet: nobody suspect
	if _, err := st.Memory.Settle(ctx, "missed", []byte(`{}`), c.Now()); err != nil {
		t.Fatal(err)
	}
	// The hint came and went; the waiter never took it.
	select {
	case <-w.wake:
	default:
	}
	woken := func() bool {
		select {
		case <-w.wake:
			return true
		default:
			return false
		}
	}
	h.sweepOnce()
	if woken() && w.woken() {
		t.Fatal("woken on the first tick behind: a waiter woken by its hint a moment ago would read twice")
	}
	h.sweepOnce()
	if !woken() || !w.woken() {
		t.Fatal("a waiter two ticks behind the version this process heard was not woken to read afresh")
	}
	// Caught up, it is not suspect again.
	w.seen(a.Version + 1)
	for range 3 {
		h.sweepOnce()
	}
	if woken() && w.woken() {
		t.Fatal("a waiter that caught up was woken again")
	}
}
