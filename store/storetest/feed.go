package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/askslack/askslack/store"
)

// exerciseFeed checks the change feed that wakes waiters.
func exerciseFeed(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("ChangesWakeWatchers", func(t *testing.T) { checkChangesWakeWatchers(t, setup(t)) })
}

func checkChangesWakeWatchers(t *testing.T, s store.Store) {
	ctx := context.Background()
	ch, stop := s.Changes("c1")
	defer stop()
	sch, sstop := s.SessionChanges("s1")
	defer sstop()
	mustCreate(t, s, newAsk("c1"))
	waitHint(t, ch)
	waitHint(t, sch)
	if _, err := s.Settle(ctx, "c1", json.RawMessage(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	waitHint(t, ch)
}
