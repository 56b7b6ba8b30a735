package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/askslack/askslack/store"
)

// exerciseBudget checks the token bucket replicas share.
func exerciseBudget(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("BudgetRefillsOverTime", func(t *testing.T) { checkBudgetRefillsOverTime(t, setup(t)) })
	t.Run("BudgetDrainedUntil", func(t *testing.T) { checkBudgetDrainedUntil(t, setup(t)) })
}

// A drained bucket gives no token before its end, then refills from it;
// draining less far does not shorten it.
func checkBudgetDrainedUntil(t *testing.T, s store.Store) {
	ctx := context.Background()
	b := store.Bucket{Name: "chat.postMessage/C1", PerMinute: 60, Burst: 3}
	take := func(at time.Time) bool {
		ok, err := s.Take(ctx, b, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := s.Drain(ctx, b, t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Drain(ctx, b, t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if take(t0) || take(t0.Add(9*time.Second)) || take(t0.Add(10*time.Second)) {
		t.Fatal("a token before the drain's end")
	}
	if !take(t0.Add(11*time.Second)) || take(t0.Add(11*time.Second)) {
		t.Fatal("after the drain, one second refills one token")
	}
	if !take(t0.Add(time.Hour)) || !take(t0.Add(time.Hour)) || !take(t0.Add(time.Hour)) || take(t0.Add(time.Hour)) {
		t.Fatal("refill must stop at the burst")
	}
}

func checkBudgetRefillsOverTime(t *testing.T, s store.Store) {
	ctx := context.Background()
	take := func(at time.Time) bool {
		ok, err := s.Take(ctx, store.Bucket{Name: "chat.update", PerMinute: 60, Burst: 3}, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := range 3 {
		if !take(t0) {
			t.Fatalf("token %d of the burst refused", i)
		}
	}
	if take(t0) {
		t.Fatal("took more than the burst")
	}
	if take(t0.Add(500 * time.Millisecond)) {
		t.Fatal("half a token is not a token")
	}
	if !take(t0.Add(time.Second)) {
		t.Fatal("no token after a second at 60/min")
	}
	if !take(t0.Add(time.Hour)) || !take(t0.Add(time.Hour)) || !take(t0.Add(time.Hour)) || take(t0.Add(time.Hour)) {
		t.Fatal("refill must stop at the burst")
	}
}
