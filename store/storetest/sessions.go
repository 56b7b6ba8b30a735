package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseSessions checks what a session reads: its asks, its queued replies, and the cap on its active asks.
func exerciseSessions(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("SessionListsAsksInCreationOrder", func(t *testing.T) { checkSessionListsAsksInCreationOrder(t, setup(t)) })
	t.Run("RepliesListsOnlyTheSessionsQueuedReplies", func(t *testing.T) { checkRepliesListsOnlyTheSessionsQueuedReplies(t, setup(t)) })
	t.Run("SessionCapsActiveAsks", func(t *testing.T) { checkSessionCapsActiveAsks(t, setup(t)) })
}

func checkSessionListsAsksInCreationOrder(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, id := range []string{"b", "a", "c"} {
		mustCreate(t, s, newAsk(id))
	}
	other := newAsk("x")
	other.SessionID = "s2"
	mustCreate(t, s, other)
	if _, err := s.Settle(ctx, "a", json.RawMessage(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	got, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range got {
		ids = append(ids, a.CallID+":"+string(a.State))
	}
	if fmt.Sprint(ids) != "[b:open a:settled c:open]" {
		t.Fatalf("Session = %v", ids)
	}
}

func checkRepliesListsOnlyTheSessionsQueuedReplies(t *testing.T, s store.Store) {
	ctx := context.Background()
	cont := func(id, sid string, reply bool) {
		a := timed(id, time.Second)
		a.SessionID = sid
		mustCreate(t, s, a)
		if _, err := s.Expire(ctx, id, t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if reply {
			if _, err := s.QueueReply(ctx, id, json.RawMessage(`{"r":"`+id+`"}`), t0.Add(2*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cont("acked", "s1", true)
	cont("waiting", "s1", true)
	cont("noReply", "s1", false)
	cont("withdrawn", "s1", true)
	cont("other", "s2", true)
	mustCreate(t, s, timed("open", time.Hour))
	if _, err := s.AckReply(ctx, "acked", t0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abort(ctx, "withdrawn", t0.Add(3*time.Second), asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	got, err := s.Replies(ctx, "s1")
	if err != nil || fmt.Sprint(callIDs(got)) != "[waiting]" || string(got[0].Reply) != `{"r":"waiting"}` {
		t.Fatalf("Replies(s1) = %v, %v; want only the unacknowledged reply", callIDs(got), err)
	}
	if got, _ := s.Replies(ctx, "s2"); fmt.Sprint(callIDs(got)) != "[other]" {
		t.Fatalf("Replies(s2) = %v", callIDs(got))
	}
	if got, _ := s.Replies(ctx, "nobody"); len(got) != 0 {
		t.Fatalf("Replies(nobody) = %v", callIDs(got))
	}
}

func checkSessionCapsActiveAsks(t *testing.T, s store.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, store.MaxSessionAsks)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < store.MaxSessionAsks; i += 8 {
				if _, _, err := s.Create(ctx, newAsk(fmt.Sprintf("c%d", i))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Create below the cap: %v", err)
	}
	if _, _, err := s.Create(ctx, newAsk("one-too-many")); !errors.Is(err, store.ErrSessionFull) {
		t.Fatalf("Create past the cap: %v; want ErrSessionFull", err)
	}
	// Re-attaching to an existing ask still works; other sessions are unaffected.
	if cur, created, err := s.Create(ctx, newAsk("c7")); err != nil || created || cur.CallID != "c7" {
		t.Fatalf("re-Create of an existing ask in a full session: %v %v", created, err)
	}
	other := newAsk("elsewhere")
	other.SessionID = "s2"
	mustCreate(t, s, other)
	// Ended asks make room.
	if _, err := s.Settle(ctx, "c1", json.RawMessage(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, newAsk("room-again"))
}
