// Package storetest is the conformance suite every store.Store passes.
package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// Factory returns a fresh, empty store for one test.
type Factory func(t *testing.T) store.Store

var t0 = time.UnixMilli(1_800_000_000_000)

func newAsk(id string) *asktype.Ask {
	return &asktype.Ask{CallID: id, SessionID: "s1", Request: json.RawMessage(`{"callId":"` + id + `"}`), Created: t0}
}

func timed(id string, d time.Duration) *asktype.Ask {
	a := newAsk(id)
	a.Deadline = t0.Add(d)
	return a
}

func mustCreate(t *testing.T, s store.Store, a *asktype.Ask) *asktype.Ask {
	t.Helper()
	cur, created, err := s.Create(context.Background(), a)
	if err != nil || !created {
		t.Fatalf("Create(%s) = created %v, err %v", a.CallID, created, err)
	}
	return cur
}

// Exercise runs the suite.
func Exercise(t *testing.T, newStore Factory) {
	setup := func(t *testing.T) store.Store {
		t.Parallel()
		return newStore(t)
	}
	exerciseTransitions(t, setup)
	exerciseMessages(t, setup)
	exerciseSessions(t, setup)
	exerciseLeases(t, setup)
	exerciseBudget(t, setup)
	exerciseFeed(t, setup)
	exerciseReach(t, setup)
	exerciseTimers(t, setup)
	exerciseAudit(t, setup)
	exerciseRules(t, setup)
	exerciseTokens(t, setup)
	exerciseInstalls(t, setup)
	exerciseHooks(t, setup)
}

func callIDs(as []*asktype.Ask) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.CallID)
	}
	return out
}

func waitHint(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no change hint within 5s")
	}
}
