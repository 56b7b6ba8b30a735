package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseBudget checks the token bucket replicas share.
func exerciseBudget(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("BudgetRefillsOverTime", func(t *testing.T) { checkBudgetRefillsOverTime(t, setup(t)) })
	t.Run("BudgetDrainedUntil", func(t *testing.T) { checkBudgetDrainedUntil(t, setup(t)) })
	t.Run("TurnsAreFairAcrossCallers", func(t *testing.T) { checkTurnsAreFairAcrossCallers(t, setup(t)) })
}

// Two callers (replicas) share a bucket: one holds a busy group, the other
// three small ones. Tokens go round the four groups whichever caller asks
// first; a token free for another caller's group is left to it; a group
// that stops renewing its registration loses its turn after Wait.
func checkTurnsAreFairAcrossCallers(t *testing.T, s store.Store) {
	ctx := context.Background()
	b := asktype.Bucket{Name: "chat.postMessage/CFAIR", PerMinute: 60, Burst: 1}
	wait := 3 * time.Second
	turn := func(at time.Time, groups ...string) (string, bool) {
		t.Helper()
		var tg []store.TurnGroup
		for _, g := range groups {
			tg = append(tg, store.TurnGroup{Name: g, Class: 1})
		}
		g, free, err := s.TakeTurn(ctx, store.Turn{Bucket: b, Groups: tg, Now: at, Wait: wait})
		if err != nil {
			t.Fatal(err)
		}
		return g, free
	}
	// Both register at t0; the busy caller always asks first.
	if g, _ := turn(t0, "busy"); g != "busy" {
		t.Fatalf("the first token went to %q; want busy (the only group waiting)", g)
	}
	turn(t0, "s1", "s2", "s3") // no token left: registers them
	var order []string
	for i := 1; i <= 8; i++ {
		at := t0.Add(time.Duration(i) * time.Second) // one token a second
		g, free := turn(at, "busy")
		if g == "" {
			if !free {
				t.Fatalf("at +%ds no token was free", i)
			}
			g, _ = turn(at, "s1", "s2", "s3")
		} else {
			turn(at, "s1", "s2", "s3") // renews its registration
		}
		if g == "" {
			t.Fatalf("at +%ds the free token went to nobody", i)
		}
		order = append(order, g)
	}
	if want := []string{"s1", "s2", "s3", "busy", "s1", "s2", "s3", "busy"}; !slices.Equal(order, want) {
		t.Fatalf("tokens went to %v; want the groups in turn %v", order, want)
	}
	// s1..s3 stop asking: once their registrations end, busy gets every token.
	at := t0.Add(8*time.Second + wait + time.Second)
	for i := range 3 {
		if g, _ := turn(at.Add(time.Duration(i)*time.Second), "busy"); g != "busy" {
			t.Fatalf("after the small groups left, token %d went to %q", i, g)
		}
	}
	// A more urgent class goes first, whoever was served last: s9 waits
	// (never served) in class 2; busy, just served, asks in class 0.
	at = at.Add(10 * time.Second)
	if g, _ := turn(at, "busy"); g != "busy" {
		t.Fatalf("busy alone got %q", g)
	}
	if g, _, err := s.TakeTurn(ctx, store.Turn{Bucket: b, Groups: []store.TurnGroup{{Name: "s9", Class: 2}}, Now: at, Wait: wait}); err != nil || g != "" {
		t.Fatalf("s9 got %q (%v) with the bucket spent", g, err)
	}
	if g, _, err := s.TakeTurn(ctx, store.Turn{Bucket: b, Groups: []store.TurnGroup{{Name: "busy", Class: 0}}, Now: at.Add(time.Second), Wait: wait}); err != nil || g != "busy" {
		t.Fatalf("the urgent class's group got %q (%v); want busy before s9, never served but less urgent", g, err)
	}
}

// A drained bucket gives no token before its end, then refills from it;
// draining less far does not shorten it.
func checkBudgetDrainedUntil(t *testing.T, s store.Store) {
	ctx := context.Background()
	b := asktype.Bucket{Name: "chat.postMessage/C1", PerMinute: 60, Burst: 3}
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
	if got := takes(take, t0.Add(time.Hour), 4); !slices.Equal(got, []bool{true, true, true, false}) {
		t.Fatalf("refill must stop at the burst: four takes an hour on = %v", got)
	}
}

func checkBudgetRefillsOverTime(t *testing.T, s store.Store) {
	ctx := context.Background()
	take := func(at time.Time) bool {
		ok, err := s.Take(ctx, asktype.Bucket{Name: "chat.update", PerMinute: 60, Burst: 3}, at)
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
	if got := takes(take, t0.Add(time.Hour), 4); !slices.Equal(got, []bool{true, true, true, false}) {
		t.Fatalf("refill must stop at the burst: four takes an hour on = %v", got)
	}
}

// takes takes n tokens at at, one after the other, and says which it got.
func takes(take func(time.Time) bool, at time.Time, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = take(at)
	}
	return out
}
