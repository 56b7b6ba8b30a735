package clock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/clock"
)

var t0 = time.UnixMilli(1_800_000_000_000)

func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimers(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	a, b := c.NewTimer(2*time.Second), c.After(time.Second)
	stopped := c.NewTimer(time.Second)
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop: want true once, then false")
	}
	c.Advance(999 * time.Millisecond)
	if _, ok := fired(b); ok {
		t.Fatal("a 1s timer fired after 999ms")
	}
	c.Advance(time.Millisecond)
	if v, ok := fired(b); !ok || !v.Equal(t0.Add(time.Second)) {
		t.Fatalf("1s timer: %v %v", v, ok)
	}
	if _, ok := fired(stopped.C); ok {
		t.Fatal("a stopped timer fired")
	}
	c.Advance(time.Hour)
	if _, ok := fired(a.C); !ok {
		t.Fatal("2s timer did not fire")
	}
	if a.Stop() {
		t.Fatal("Stop of a fired timer reported true")
	}
	if _, ok := fired(c.After(0)); !ok {
		t.Fatal("After(0) has not fired")
	}
}

func TestFakeAfterFuncRunsInDueOrder(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	var got []int
	c.AfterFunc(3*time.Second, func() { got = append(got, 3) })
	c.AfterFunc(time.Second, func() { got = append(got, 1) })
	c.AfterFunc(time.Second, func() { got = append(got, 2) }) // same due: arming order
	c.AfterFunc(0, func() { got = append(got, 0) })
	c.AfterFunc(time.Minute, func() { got = append(got, 60) }).Stop()
	c.Advance(5 * time.Second)
	if len(got) != 4 || got[0] != 0 || got[1] != 1 || got[2] != 2 || got[3] != 3 {
		t.Fatalf("order %v; want [0 1 2 3]", got)
	}
}

func TestFakeTickerDropsTicksAndRearms(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	tk := c.NewTicker(time.Second)
	c.Advance(10 * time.Second) // one tick, nine dropped
	if _, ok := fired(tk.C); !ok {
		t.Fatal("no tick")
	}
	if _, ok := fired(tk.C); ok {
		t.Fatal("a second tick from one Advance")
	}
	c.Advance(500 * time.Millisecond) // next tick is at 11s
	if _, ok := fired(tk.C); ok {
		t.Fatal("ticked between periods")
	}
	c.Advance(500 * time.Millisecond)
	if v, ok := fired(tk.C); !ok || !v.Equal(t0.Add(11*time.Second)) {
		t.Fatalf("tick at 11s: %v %v", v, ok)
	}
	tk.Stop()
	c.Advance(time.Hour)
	if _, ok := fired(tk.C); ok {
		t.Fatal("a stopped ticker ticked")
	}
}

func TestFakeWaitTimers(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	c.NewTicker(time.Second) // tickers never count
	armed := make(chan (<-chan time.Time))
	go func() { armed <- c.After(time.Second) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitTimers(ctx, t0.Add(time.Second), 1); err != nil {
		t.Fatal(err)
	}
	ch := <-armed
	c.Advance(time.Second)
	if _, ok := fired(ch); !ok {
		t.Fatal("timer did not fire")
	}
	short, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := c.WaitTimers(short, t0.Add(time.Hour), 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitTimers with nothing armed: %v", err)
	}
}

func TestWithTimeout(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(t0)
	ctx, cancel := clock.WithTimeout(context.Background(), c, time.Minute)
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(t0.Add(time.Minute)) {
		t.Fatalf("deadline %v %v", d, ok)
	}
	c.Advance(59 * time.Second)
	if ctx.Err() != nil {
		t.Fatal("ended early")
	}
	c.Advance(time.Second)
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v; want DeadlineExceeded", ctx.Err())
	}

	ctx2, cancel2 := clock.WithTimeout(context.Background(), c, time.Minute)
	cancel2()
	c.Advance(time.Hour)
	if !errors.Is(ctx2.Err(), context.Canceled) {
		t.Fatalf("cancelled first: Err %v; want Canceled", ctx2.Err())
	}

	ctx3, cancel3 := clock.WithTimeout(context.Background(), c, 0)
	defer cancel3()
	if !errors.Is(ctx3.Err(), context.DeadlineExceeded) {
		t.Fatalf("zero timeout: Err %v", ctx3.Err())
	}

	ctx4, cancel4 := clock.WithTimeout(context.Background(), clock.OrReal(nil), time.Hour)
	defer cancel4()
	if _, ok := ctx4.Deadline(); !ok || ctx4.Err() != nil {
		t.Fatal("real WithTimeout")
	}
}
