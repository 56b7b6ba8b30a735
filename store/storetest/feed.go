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
	t.Run("HeardFollowsChanges", func(t *testing.T) { checkHeardFollowsChanges(t, setup(t)) })
}

// Heard, the waiters' sweep's local check, knows at least the version a
// transition of this process returned, watched or not; nothing of an ask it
// never heard of.
func checkHeardFollowsChanges(t *testing.T, s store.Store) {
	ctx := context.Background()
	if v := s.Heard("never"); v != 0 {
		t.Fatalf("Heard of an unknown ask = %d; want 0", v)
	}
	ch, stop := s.Changes("watched")
	defer stop()
	for _, id := range []string{"watched", "unwatched"} {
		a := mustCreate(t, s, newAsk(id))
		if v := s.Heard(id); v < a.Version {
			t.Fatalf("%s: Heard after Create = %d; want at least %d", id, v, a.Version)
		}
		b, err := s.Settle(ctx, id, json.RawMessage(`{}`), t0)
		if err != nil {
			t.Fatal(err)
		}
		if v := s.Heard(id); v < b.Version {
			t.Fatalf("%s: Heard after Settle = %d; want at least %d", id, v, b.Version)
		}
	}
	waitHint(t, ch)
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
