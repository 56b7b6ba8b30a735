package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/askslack/askslack/store"
)

// exerciseLeases checks who holds what: timed waits coming due, leases, and the graces of dropped callers.
func exerciseLeases(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("DueListsOpenTimedAsksByDeadline", func(t *testing.T) { checkDueListsOpenTimedAsksByDeadline(t, setup(t)) })
	t.Run("LeasesExcludeOthersUntilExpiryOrRelease", func(t *testing.T) { checkLeasesExcludeOthersUntilExpiryOrRelease(t, setup(t)) })
	t.Run("ClaimWaitsTakesOpenTimedWaitsInABatch", func(t *testing.T) { checkClaimWaitsTakesOpenTimedWaitsInABatch(t, setup(t)) })
	t.Run("GracesAreListedOnceTheyEnd", func(t *testing.T) { checkGracesAreListedOnceTheyEnd(t, setup(t)) })
}

func checkDueListsOpenTimedAsksByDeadline(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("late", 3*time.Second))
	mustCreate(t, s, timed("soon", time.Second))
	mustCreate(t, s, timed("done", time.Second))
	mustCreate(t, s, newAsk("untimed"))
	if _, err := s.Settle(ctx, "done", json.RawMessage(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	due, err := s.Due(ctx, t0.Add(2*time.Second), 10)
	if err != nil || fmt.Sprint(due) != "[soon]" {
		t.Fatalf("Due = %v %v", due, err)
	}
	due, _ = s.Due(ctx, t0.Add(3*time.Second), 10)
	if fmt.Sprint(due) != "[soon late]" {
		t.Fatalf("Due = %v", due)
	}
}

func checkLeasesExcludeOthersUntilExpiryOrRelease(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("c1", time.Hour))
	if free, _ := s.Unclaimed(ctx, t0, 10); fmt.Sprint(free) != "[c1]" {
		t.Fatalf("Unclaimed before any claim = %v", free)
	}
	if h, err := s.Acquire(ctx, "c1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r1", TTL: 10 * time.Second, Now: t0}}); err != nil || h != "r1" {
		t.Fatalf("Acquire: %s %v", h, err)
	}
	if h, err := s.Acquire(ctx, "c1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r2", TTL: 10 * time.Second, Now: t0.Add(5 * time.Second)}}); !errors.Is(err, store.ErrHeld) || h != "r1" {
		t.Fatalf("Acquire by r2 while held: %s %v", h, err)
	}
	if free, _ := s.Unclaimed(ctx, t0.Add(5*time.Second), 10); len(free) != 0 {
		t.Fatalf("Unclaimed while held = %v", free)
	}
	if at, err := s.NextLapse(ctx, t0.Add(5*time.Second)); err != nil || !at.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("NextLapse while held = %v, %v; want the lease's end", at, err)
	}
	// Renewal by the holder extends the lease.
	if _, err := s.Acquire(ctx, "c1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r1", TTL: 10 * time.Second, Now: t0.Add(8 * time.Second)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, "c1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r2", TTL: 10 * time.Second, Now: t0.Add(12 * time.Second)}}); !errors.Is(err, store.ErrHeld) {
		t.Fatalf("renewed lease taken: %v", err)
	}
	if free, _ := s.Unclaimed(ctx, t0.Add(18*time.Second), 10); fmt.Sprint(free) != "[c1]" {
		t.Fatalf("Unclaimed after lease end = %v", free)
	}
	if at, err := s.NextLapse(ctx, t0.Add(18*time.Second)); err != nil || !at.IsZero() {
		t.Fatalf("NextLapse after every lease ran out = %v, %v; want none", at, err)
	}
	if h, err := s.Acquire(ctx, "c1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r2", TTL: 10 * time.Second, Now: t0.Add(18 * time.Second)}}); err != nil || h != "r2" {
		t.Fatalf("takeover: %s %v", h, err)
	}
	if err := s.Release(ctx, "c1", store.LeaseWait, "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, "c1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r1", TTL: time.Second, Now: t0.Add(19 * time.Second)}}); !errors.Is(err, store.ErrHeld) {
		t.Fatalf("release by a non-holder freed the lease: %v", err)
	}
	released, stopReleased := s.Released()
	defer stopReleased()
	if err := s.Release(ctx, "c1", store.LeaseWait, "r2"); err != nil {
		t.Fatal(err)
	}
	waitHint(t, released)
	if free, _ := s.Unclaimed(ctx, t0.Add(19*time.Second), 10); fmt.Sprint(free) != "[c1]" {
		t.Fatalf("Unclaimed after release = %v", free)
	}
	if _, err := s.Settle(ctx, "c1", json.RawMessage(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	if free, _ := s.Unclaimed(ctx, t0.Add(time.Hour), 10); len(free) != 0 {
		t.Fatalf("a settled ask is still offered for claiming: %v", free)
	}
}

func checkGracesAreListedOnceTheyEnd(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i, id := range []string{"a", "b", "c"} {
		if err := s.StartGrace(ctx, id, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.StartGrace(ctx, "c", t0.Add(time.Hour)); err != nil { // a second drop moves the grace
		t.Fatal(err)
	}
	got, err := s.EndedGraces(ctx, t0.Add(time.Second), 10)
	if err != nil || fmt.Sprint(got) != "[a b]" {
		t.Fatalf("EndedGraces = %v, %v; want [a b] in grace order", got, err)
	}
	if got, _ := s.EndedGraces(ctx, t0.Add(time.Second), 1); fmt.Sprint(got) != "[a]" {
		t.Fatalf("EndedGraces(limit 1) = %v", got)
	}
	if err := s.EndGrace(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.EndedGraces(ctx, t0.Add(2*time.Hour), 10); fmt.Sprint(got) != "[b c]" {
		t.Fatalf("after EndGrace: %v", got)
	}
}

func checkClaimWaitsTakesOpenTimedWaitsInABatch(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("w1", time.Hour))
	mustCreate(t, s, timed("w2", time.Hour))
	mustCreate(t, s, newAsk("untimed"))
	mustCreate(t, s, timed("done", time.Hour))
	if _, err := s.Settle(ctx, "done", json.RawMessage(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, "w2", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r2", TTL: 10 * time.Second, Now: t0}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClaimWaits(ctx, []string{"w1", "w2", "untimed", "done", "gone"}, store.Hold{Holder: "r1", TTL: 10 * time.Second, Now: t0.Add(time.Second)})
	if err != nil || len(got) != 5 {
		t.Fatalf("ClaimWaits = %+v, %v", got, err)
	}
	w1, w2 := got[0], got[1]
	if !w1.Open || !w1.Held || w1.Holder != "r1" || w1.Prev != "" || !w1.Deadline.Equal(t0.Add(time.Hour)) || !w1.Created.Equal(t0) {
		t.Fatalf("fresh claim = %+v", w1)
	}
	if !w2.Open || w2.Held || w2.Holder != "r2" {
		t.Fatalf("claim of a wait r2 holds = %+v", w2)
	}
	for _, c := range got[2:] {
		if c.Open || c.Held {
			t.Fatalf("claimed what is no open timed wait: %+v", c)
		}
	}
	if free, _ := s.Unclaimed(ctx, t0.Add(5*time.Second), 10); len(free) != 0 {
		t.Fatalf("Unclaimed after the batch = %v", free)
	}
	// r2's lease lapses: r1 takes it over, and learns from whom.
	got, err = s.ClaimWaits(ctx, []string{"w1", "w2"}, store.Hold{Holder: "r1", TTL: 10 * time.Second, Now: t0.Add(11 * time.Second)})
	if err != nil || !got[0].Held || got[0].Prev != "" || !got[1].Held || got[1].Prev != "r2" {
		t.Fatalf("renewal and takeover = %+v, %v", got, err)
	}
	if h, err := s.Acquire(ctx, "w2", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "r2", TTL: 10 * time.Second, Now: t0.Add(12 * time.Second)}}); !errors.Is(err, store.ErrHeld) || h != "r1" {
		t.Fatalf("the taken-over lease: %s %v", h, err)
	}
}
