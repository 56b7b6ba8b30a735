package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseReach checks what /askslack, App Home and event delivery read.
func exerciseReach(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("ActiveNewestFirst", func(t *testing.T) { checkActiveNewestFirst(t, setup(t)) })
	t.Run("OnceIsOnce", func(t *testing.T) { checkOnceIsOnce(t, setup(t)) })
	t.Run("VisitorsRecentFirst", func(t *testing.T) { checkVisitorsRecentFirst(t, setup(t)) })
}

func checkActiveNewestFirst(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, id := range []string{"a1", "a2", "a3", "a4"} {
		a := timed(id, time.Minute)
		a.SessionID = "s-" + id // across sessions
		mustCreate(t, s, a)
	}
	if _, err := s.Settle(ctx, "a2", []byte(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Expire(ctx, "a3", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Active(ctx, 10)
	if err != nil || !slices.Equal(callIDs(got), []string{"a4", "a3", "a1"}) {
		t.Fatalf("Active = %v, %v; want [a4 a3 a1] (continued counts, settled not)", callIDs(got), err)
	}
	if got[1].State != asktype.Continued || got[0].Request == nil {
		t.Fatalf("records not read back: %+v", got[1])
	}
	got, err = s.Active(ctx, 2)
	if err != nil || !slices.Equal(callIDs(got), []string{"a4", "a3"}) {
		t.Fatalf("Active(2) = %v, %v", callIDs(got), err)
	}
}

func checkOnceIsOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	first, err := s.Once(ctx, "Ev1", time.Hour, t0)
	again, err2 := s.Once(ctx, "Ev1", time.Hour, t0.Add(time.Second))
	other, err3 := s.Once(ctx, "Ev2", time.Hour, t0)
	if err != nil || err2 != nil || err3 != nil || !first || again || !other {
		t.Fatalf("Once: first %v again %v other %v (%v %v %v)", first, again, other, err, err2, err3)
	}
}

func checkVisitorsRecentFirst(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i, u := range []string{"U1", "U2", "U3", "U1"} {
		if err := s.Visit(ctx, u, t0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Visitors(ctx, t0.Add(time.Minute), 10)
	if err != nil || !slices.Equal(got, []string{"U1", "U3", "U2"}) {
		t.Fatalf("Visitors = %v, %v; want [U1 U3 U2]", got, err)
	}
	got, err = s.Visitors(ctx, t0.Add(2*time.Minute), 1)
	if err != nil || !slices.Equal(got, []string{"U1"}) {
		t.Fatalf("Visitors(limit 1) = %v, %v", got, err)
	}
}
