package waterfall

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
)

// countingStore counts the asks the sweep reads.
type countingStore struct {
	*store.Memory
	read atomic.Int64
}

func (c *countingStore) Versions(ctx context.Context, ids []string) ([]int64, error) {
	c.read.Add(int64(len(ids)))
	return c.Memory.Versions(ctx, ids)
}

// What sitting costs does not grow with the waiters: with 10,000 parked
// waiters a minute of ticks (5 s each) reads SweepRate asks a second, with
// 10 two (each every tick), and a round robin reaches every waiter; a
// waiter whose ask moved on without a hint is woken to read afresh.
func TestSweepCostIsBoundedAndWakesTheLost(t *testing.T) {
	c := clock.NewFake(time.Unix(1700000000, 0)) // the loop's ticks never come: the test steps
	st := &countingStore{Memory: store.NewMemory(time.Hour, c)}
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
	if r := rate(10000); r < 7 || r > 9 {
		t.Fatalf("10,000 waiters cost %.1f reads/s; want about 8", r)
	}
	if r := rate(10); r < 1.5 || r > 2.5 {
		t.Fatalf("10 waiters cost %.1f reads/s; want 2 (each every tick)", r)
	}

	// A waiter whose ask settled behind its back is woken to read afresh.
	a, _, err := st.Create(ctx, &store.Ask{CallID: "lost", Request: []byte(`{}`)})
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
