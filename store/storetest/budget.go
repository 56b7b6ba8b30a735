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
