// Package storetest is the conformance suite every store.Store passes.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/store"
)

// Factory returns a fresh, empty store for one test.
type Factory func(t *testing.T) store.Store

var t0 = time.UnixMilli(1_800_000_000_000)

func newAsk(id string) *store.Ask {
	return &store.Ask{CallID: id, SessionID: "s1", Request: json.RawMessage(`{"callId":"` + id + `"}`), Created: t0}
}

func timed(id string, d time.Duration) *store.Ask {
	a := newAsk(id)
	a.Deadline = t0.Add(d)
	return a
}

func mustCreate(t *testing.T, s store.Store, a *store.Ask) *store.Ask {
	t.Helper()
	cur, created, err := s.Create(context.Background(), a)
	if err != nil || !created {
		t.Fatalf("Create(%s) = created %v, err %v", a.CallID, created, err)
	}
	return cur
}

// Exercise runs the suite.
func Exercise(t *testing.T, newStore Factory) {
	ctx := context.Background()
	setup := func(t *testing.T) store.Store {
		t.Parallel()
		return newStore(t)
	}

	t.Run("CreateIsIdempotentByCallID", func(t *testing.T) {
		s := setup(t)
		a := mustCreate(t, s, newAsk("c1"))
		if a.State != store.Open || a.Version < 1 || a.Seq == 0 || !a.Created.Equal(t0) {
			t.Fatalf("created ask = %+v", a)
		}
		again := newAsk("c1")
		again.Request = json.RawMessage(`{"other":true}`)
		cur, created, err := s.Create(ctx, again)
		if err != nil || created {
			t.Fatalf("second Create: created %v err %v", created, err)
		}
		if string(cur.Request) != string(a.Request) || cur.Seq != a.Seq {
			t.Fatalf("second Create returned %s seq %d, want the original", cur.Request, cur.Seq)
		}
	})

	t.Run("UnknownCallIsNotFound", func(t *testing.T) {
		s := setup(t)
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get: %v", err)
		}
		if _, err := s.Settle(ctx, "nope", json.RawMessage(`{}`), t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Settle: %v", err)
		}
		if _, err := s.Abort(ctx, "nope", t0, store.Withdrawn); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Abort: %v", err)
		}
		if _, err := s.SetMessage(ctx, "nope", store.MessageRef{Channel: "C1", TS: "1.2"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("SetMessage: %v", err)
		}
		if err := s.MarkRendered(ctx, "nope", 3); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("MarkRendered: %v", err)
		}
	})

	t.Run("SettleHappensOnceUnderContention", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, newAsk("c1"))
		const n = 50
		var wg sync.WaitGroup
		errs := make([]error, n)
		got := make([]*store.Ask, n)
		for i := range n {
			wg.Go(func() {
				got[i], errs[i] = s.Settle(ctx, "c1", json.RawMessage(fmt.Sprintf(`{"by":%d}`, i)), t0.Add(time.Second))
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("settled twice: %d and %d", winner, i)
				}
				winner = i
			case !errors.Is(err, store.ErrSettled):
				t.Fatalf("loser %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("nobody settled")
		}
		want := fmt.Sprintf(`{"by":%d}`, winner)
		for i := range n {
			if got[i].State != store.Settled || string(got[i].Settlement) != want {
				t.Fatalf("caller %d saw %s %s, want the winner's %s", i, got[i].State, got[i].Settlement, want)
			}
		}
		a, _ := s.Get(ctx, "c1")
		if !a.SettledAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("SettledAt = %v", a.SettledAt)
		}
	})

	t.Run("ExpireOnlyPastDeadlineAndOnce", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, timed("c1", time.Minute))
		if _, err := s.Expire(ctx, "c1", t0.Add(59*time.Second)); !errors.Is(err, store.ErrNotDue) {
			t.Fatalf("early Expire: %v", err)
		}
		a, err := s.Expire(ctx, "c1", t0.Add(time.Minute))
		if err != nil || a.State != store.Continued {
			t.Fatalf("Expire: %v %v", a, err)
		}
		if _, err := s.Expire(ctx, "c1", t0.Add(2*time.Minute)); !errors.Is(err, store.ErrContinued) {
			t.Fatalf("second Expire: %v", err)
		}
		if _, err := s.Settle(ctx, "c1", json.RawMessage(`{}`), t0); !errors.Is(err, store.ErrContinued) {
			t.Fatalf("Settle on continued: %v", err)
		}
		mustCreate(t, s, newAsk("untimed"))
		if _, err := s.Expire(ctx, "untimed", t0.Add(1000*time.Hour)); !errors.Is(err, store.ErrNotDue) {
			t.Fatalf("Expire untimed: %v", err)
		}
	})

	t.Run("ExpireRacesSettleOneWins", func(t *testing.T) {
		s := setup(t)
		for i := range 20 {
			id := fmt.Sprintf("c%d", i)
			mustCreate(t, s, timed(id, time.Second))
			var wg sync.WaitGroup
			var eErr, sErr error
			wg.Go(func() { _, eErr = s.Expire(ctx, id, t0.Add(time.Second)) })
			// Expire runs at the deadline, the answer arrives just before it.
			wg.Go(func() { _, sErr = s.Settle(ctx, id, json.RawMessage(`{}`), t0.Add(time.Second-time.Millisecond)) })
			wg.Wait()
			if (eErr == nil) == (sErr == nil) {
				t.Fatalf("%s: expire err %v, settle err %v: exactly one must win", id, eErr, sErr)
			}
		}
	})

	t.Run("Abort", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, newAsk("open"))
		a, err := s.Abort(ctx, "open", t0.Add(time.Second), store.Withdrawn)
		if err != nil || a.State != store.Aborted || !a.AbortedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("Abort open: %+v %v", a, err)
		}
		if _, err := s.Abort(ctx, "open", t0, store.Withdrawn); !errors.Is(err, store.ErrAborted) {
			t.Fatalf("second Abort: %v", err)
		}
		if _, err := s.Settle(ctx, "open", json.RawMessage(`{}`), t0); !errors.Is(err, store.ErrAborted) {
			t.Fatalf("Settle aborted: %v", err)
		}
		mustCreate(t, s, timed("cont", time.Second))
		if _, err := s.Expire(ctx, "cont", t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Abort(ctx, "cont", t0, store.Withdrawn); err != nil {
			t.Fatalf("Abort continued: %v", err)
		}
		mustCreate(t, s, newAsk("done"))
		if _, err := s.Settle(ctx, "done", json.RawMessage(`{}`), t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Abort(ctx, "done", t0, store.Withdrawn); !errors.Is(err, store.ErrSettled) {
			t.Fatalf("Abort settled: %v", err)
		}
	})

	t.Run("LateReplyQueuesOnceUntilAcked", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, timed("c1", time.Second))
		if _, err := s.QueueReply(ctx, "c1", json.RawMessage(`{"r":1}`), t0); !errors.Is(err, store.ErrOpen) {
			t.Fatalf("QueueReply on open: %v", err)
		}
		if _, err := s.AckReply(ctx, "c1", t0); !errors.Is(err, store.ErrOpen) {
			t.Fatalf("AckReply on open: %v", err)
		}
		if _, err := s.Expire(ctx, "c1", t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AckReply(ctx, "c1", t0); !errors.Is(err, store.ErrNoReply) {
			t.Fatalf("AckReply without reply: %v", err)
		}
		a, err := s.QueueReply(ctx, "c1", json.RawMessage(`{"r":1}`), t0.Add(2*time.Second))
		if err != nil || a.State != store.Continued || string(a.Reply) != `{"r":1}` || !a.ReplyAt.Equal(t0.Add(2*time.Second)) {
			t.Fatalf("QueueReply: %+v %v", a, err)
		}
		a, err = s.QueueReply(ctx, "c1", json.RawMessage(`{"r":2}`), t0)
		if !errors.Is(err, store.ErrReplyQueued) || string(a.Reply) != `{"r":1}` {
			t.Fatalf("second QueueReply: %v, reply %s", err, a.Reply)
		}
		a, err = s.AckReply(ctx, "c1", t0.Add(3*time.Second))
		if err != nil || a.State != store.Settled || string(a.Settlement) != `{"r":1}` || !a.SettledAt.Equal(t0.Add(3*time.Second)) {
			t.Fatalf("AckReply: %+v %v", a, err)
		}
		if _, err := s.AckReply(ctx, "c1", t0); !errors.Is(err, store.ErrSettled) {
			t.Fatalf("second AckReply: %v", err)
		}
	})

	t.Run("MessageAndRenderedVersion", func(t *testing.T) {
		s := setup(t)
		a := mustCreate(t, s, newAsk("c1"))
		b, err := s.SetMessage(ctx, "c1", store.MessageRef{Channel: "C1", TS: "1700000000.000100"})
		if err != nil || b.Message.TS != "1700000000.000100" || b.Version <= a.Version {
			t.Fatalf("SetMessage: %+v %v", b, err)
		}
		if err := s.MarkRendered(ctx, "c1", b.Version); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkRendered(ctx, "c1", b.Version-1); err != nil {
			t.Fatal(err)
		}
		c, _ := s.Get(ctx, "c1")
		if c.Rendered != b.Version {
			t.Fatalf("Rendered = %d, want %d (never lowered)", c.Rendered, b.Version)
		}
	})

	t.Run("StaleListsMessagesBehindTheirAsk", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, newAsk("c1"))
		a, err := s.SetMessage(ctx, "c1", store.MessageRef{Channel: "C1", TS: "1.1"})
		if err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute)
		if got, _ := s.Stale(ctx, later, 10); fmt.Sprint(got) != "[c1]" {
			t.Fatalf("Stale = %v; want the posted ask not yet marked rendered", got)
		}
		if got, _ := s.Stale(ctx, time.Now().Add(-time.Hour), 10); len(got) != 0 {
			t.Fatalf("Stale before the change = %v", got)
		}
		if err := s.MarkRendered(ctx, "c1", a.Version); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Stale(ctx, later, 10); len(got) != 0 {
			t.Fatalf("Stale after catching up = %v", got)
		}
		if _, err := s.Settle(ctx, "c1", json.RawMessage(`{}`), t0); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Stale(ctx, later, 10); fmt.Sprint(got) != "[c1]" {
			t.Fatalf("Stale after settling = %v", got)
		}
	})

	t.Run("StaleListsUnpostedAsksAndPrunesHopelessOnes", func(t *testing.T) {
		s := setup(t)
		// An active ask never posted must be posted; one refused for good,
		// or ended before anyone tried, can never be shown and is pruned; one
		// ended after an attempt whose outcome is unknown may have a message.
		for _, id := range []string{"unposted", "refused", "endedUntried", "endedTried"} {
			mustCreate(t, s, newAsk(id))
		}
		if _, err := s.SetMessage(ctx, "refused", store.MessageRef{Channel: "C1", Refused: "channel_not_found"}); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkPosting(ctx, "endedTried", t0); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkPosting(ctx, "endedTried", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"endedUntried", "endedTried"} {
			if _, err := s.Abort(ctx, id, t0, store.Abandoned); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.MarkPosting(ctx, "missing", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("MarkPosting(missing) = %v", err)
		}
		later := time.Now().Add(time.Minute)
		got, err := s.Stale(ctx, later, 10)
		slices.Sort(got)
		if err != nil || fmt.Sprint(got) != "[endedTried unposted]" {
			t.Fatalf("Stale = %v, %v; want the unposted active ask and the ended one that may have a message", got, err)
		}
		// Pruned entries stay out of the window: a limit of 2 still finds both.
		if got, _ := s.Stale(ctx, later, 2); len(got) != 2 {
			t.Fatalf("Stale(limit 2) = %v", got)
		}
		a, _ := s.Get(ctx, "endedTried")
		if !a.PostAttempt.Equal(t0) || a.AbortReason != store.Abandoned {
			t.Fatalf("PostAttempt %v (want the first attempt %v), AbortReason %q", a.PostAttempt, t0, a.AbortReason)
		}
		r, _ := s.Get(ctx, "refused")
		if r.Message.Refused != "channel_not_found" || r.Message.Posted() {
			t.Fatalf("refused message = %+v", r.Message)
		}
	})

	t.Run("SessionListsAsksInCreationOrder", func(t *testing.T) {
		s := setup(t)
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
	})

	t.Run("RetentionDropsSettledAndAbortedOnly", func(t *testing.T) {
		s := setup(t)
		long := time.Now().Add(-30 * 24 * time.Hour)
		for _, id := range []string{"settled", "aborted", "open"} {
			a := newAsk(id)
			a.Created = long
			mustCreate(t, s, a)
		}
		if _, err := s.Settle(ctx, "settled", json.RawMessage(`{}`), long); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Abort(ctx, "aborted", long, store.Withdrawn); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"settled", "aborted"} {
			if _, err := s.Get(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s ask kept past retention: %v", id, err)
			}
		}
		if _, err := s.Get(ctx, "open"); err != nil {
			t.Fatalf("an open ask must never expire: %v", err)
		}
		got, _ := s.Session(ctx, "s1")
		if len(got) != 1 || got[0].CallID != "open" {
			t.Fatalf("Session after retention = %v", got)
		}
	})

	t.Run("DueListsOpenTimedAsksByDeadline", func(t *testing.T) {
		s := setup(t)
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
	})

	t.Run("LeasesExcludeOthersUntilExpiryOrRelease", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, timed("c1", time.Hour))
		if free, _ := s.Unclaimed(ctx, t0, 10); fmt.Sprint(free) != "[c1]" {
			t.Fatalf("Unclaimed before any claim = %v", free)
		}
		if h, err := s.Acquire(ctx, "c1", store.LeaseWait, "r1", 10*time.Second, t0); err != nil || h != "r1" {
			t.Fatalf("Acquire: %s %v", h, err)
		}
		if h, err := s.Acquire(ctx, "c1", store.LeaseWait, "r2", 10*time.Second, t0.Add(5*time.Second)); !errors.Is(err, store.ErrHeld) || h != "r1" {
			t.Fatalf("Acquire by r2 while held: %s %v", h, err)
		}
		if free, _ := s.Unclaimed(ctx, t0.Add(5*time.Second), 10); len(free) != 0 {
			t.Fatalf("Unclaimed while held = %v", free)
		}
		// Renewal by the holder extends the lease.
		if _, err := s.Acquire(ctx, "c1", store.LeaseWait, "r1", 10*time.Second, t0.Add(8*time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Acquire(ctx, "c1", store.LeaseWait, "r2", 10*time.Second, t0.Add(12*time.Second)); !errors.Is(err, store.ErrHeld) {
			t.Fatalf("renewed lease taken: %v", err)
		}
		if free, _ := s.Unclaimed(ctx, t0.Add(18*time.Second), 10); fmt.Sprint(free) != "[c1]" {
			t.Fatalf("Unclaimed after lease end = %v", free)
		}
		if h, err := s.Acquire(ctx, "c1", store.LeaseWait, "r2", 10*time.Second, t0.Add(18*time.Second)); err != nil || h != "r2" {
			t.Fatalf("takeover: %s %v", h, err)
		}
		if err := s.Release(ctx, "c1", store.LeaseWait, "r1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Acquire(ctx, "c1", store.LeaseWait, "r1", time.Second, t0.Add(19*time.Second)); !errors.Is(err, store.ErrHeld) {
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
	})

	t.Run("DetachedAsksAreListedOnceTheirGraceEnds", func(t *testing.T) {
		s := setup(t)
		for i, id := range []string{"a", "b", "c"} {
			if err := s.Detach(ctx, id, t0.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Detach(ctx, "c", t0.Add(time.Hour)); err != nil { // a second drop moves the grace
			t.Fatal(err)
		}
		got, err := s.Detached(ctx, t0.Add(time.Second), 10)
		if err != nil || fmt.Sprint(got) != "[a b]" {
			t.Fatalf("Detached = %v, %v; want [a b] in grace order", got, err)
		}
		if got, _ := s.Detached(ctx, t0.Add(time.Second), 1); fmt.Sprint(got) != "[a]" {
			t.Fatalf("Detached(limit 1) = %v", got)
		}
		if err := s.Undetach(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Detached(ctx, t0.Add(2*time.Hour), 10); fmt.Sprint(got) != "[b c]" {
			t.Fatalf("after Undetach: %v", got)
		}
	})

	t.Run("RefuseEndsAnUntimedAskOnly", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, newAsk("untimed"))
		mustCreate(t, s, timed("timed", time.Minute))
		a, err := s.Refuse(ctx, "untimed", "C1", "channel_not_found", t0.Add(time.Second))
		if err != nil || a.State != store.Aborted || a.AbortReason != store.NoMessage || a.Message.Refused != "channel_not_found" || !a.AbortedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("Refuse(untimed) = %+v, %v; want aborted for want of a message", a, err)
		}
		b, err := s.Refuse(ctx, "timed", "C1", "channel_not_found", t0)
		if err != nil || b.State != store.Open || b.Message.Refused != "channel_not_found" {
			t.Fatalf("Refuse(timed) = %+v, %v; want it open until its deadline", b, err)
		}
		if _, err := s.Refuse(ctx, "nope", "C1", "x", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Refuse(missing) = %v", err)
		}
	})

	t.Run("CountsByState", func(t *testing.T) {
		s := setup(t)
		for _, id := range []string{"o1", "o2", "c1", "s1", "x1"} {
			mustCreate(t, s, timed(id, time.Second))
		}
		mustCreate(t, s, newAsk("untimed"))
		if _, err := s.Expire(ctx, "c1", t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Settle(ctx, "s1", json.RawMessage(`{}`), t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Abort(ctx, "x1", t0, store.Withdrawn); err != nil {
			t.Fatal(err)
		}
		c, err := s.Counts(ctx)
		if err != nil || c != (store.Counts{Open: 3, Continued: 1, TimedOpen: 2}) {
			t.Fatalf("Counts = %+v, %v; want 3 open (2 timed), 1 continued", c, err)
		}
	})

	t.Run("BudgetRefillsOverTime", func(t *testing.T) {
		s := setup(t)
		take := func(at time.Time) bool {
			ok, err := s.Take(ctx, "chat.update", 60, 3, at)
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
	})

	t.Run("CreateOfAnExistingCallIndexesNothing", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, newAsk("c1")) // untimed, session s1
		// The same callId re-sent by another session, now with a timeout:
		// CALL_CONFLICT upstream; the store must not file it anywhere.
		again := timed("c1", time.Minute)
		again.SessionID = "s2"
		cur, created, err := s.Create(ctx, again)
		if err != nil || created || cur.SessionID != "s1" || !cur.Deadline.IsZero() {
			t.Fatalf("second Create = %+v created %v err %v; want the original untimed s1 ask", cur, created, err)
		}
		if got, _ := s.Session(ctx, "s2"); len(got) != 0 {
			t.Fatalf("Session(s2) = %v; another session's ask leaked into it", callIDs(got))
		}
		if got, _ := s.Session(ctx, "s1"); fmt.Sprint(callIDs(got)) != "[c1]" {
			t.Fatalf("Session(s1) = %v", callIDs(got))
		}
		if due, _ := s.Due(ctx, t0.Add(time.Hour), 10); len(due) != 0 {
			t.Fatalf("Due = %v; an untimed ask was filed as a timed wait", due)
		}
		if free, _ := s.Unclaimed(ctx, t0.Add(time.Hour), 10); len(free) != 0 {
			t.Fatalf("Unclaimed = %v; an untimed ask was offered as a timed wait", free)
		}
		if c, _ := s.Counts(ctx); c != (store.Counts{Open: 1}) {
			t.Fatalf("Counts = %+v; want one untimed open ask", c)
		}
	})

	t.Run("AnswerAtOrPastTheDeadlineIsLate", func(t *testing.T) {
		s := setup(t)
		mustCreate(t, s, timed("intime", time.Minute))
		a, err := s.Settle(ctx, "intime", json.RawMessage(`{}`), t0.Add(time.Minute-time.Millisecond))
		if err != nil || a.State != store.Settled {
			t.Fatalf("Settle a millisecond before the deadline: %+v %v", a, err)
		}
		// Nobody expired "late" (its waiter died): the answer at the deadline
		// closes the window itself and is refused as continued.
		for _, at := range []time.Duration{time.Minute, time.Hour} {
			id := fmt.Sprintf("late%d", at/time.Second)
			c := mustCreate(t, s, timed(id, time.Minute))
			a, err := s.Settle(ctx, id, json.RawMessage(`{"late":true}`), t0.Add(at))
			if !errors.Is(err, store.ErrContinued) || a == nil || a.State != store.Continued || a.Version <= c.Version || a.Settlement != nil {
				t.Fatalf("Settle at deadline+%v = %+v, %v; want ErrContinued with the continued ask", at-time.Minute, a, err)
			}
			if got, _ := s.Get(ctx, id); got.State != store.Continued {
				t.Fatalf("stored state %s", got.State)
			}
			if _, err := s.QueueReply(ctx, id, json.RawMessage(`{"r":1}`), t0.Add(at)); err != nil {
				t.Fatalf("QueueReply after a late settle: %v", err)
			}
		}
		if due, _ := s.Due(ctx, t0.Add(2*time.Hour), 10); len(due) != 0 {
			t.Fatalf("Due = %v; continued asks are no longer timed waits", due)
		}
		if c, _ := s.Counts(ctx); c != (store.Counts{Continued: 2}) {
			t.Fatalf("Counts = %+v", c)
		}
		mustCreate(t, s, newAsk("untimed"))
		if _, err := s.Settle(ctx, "untimed", json.RawMessage(`{}`), t0.Add(1000*time.Hour)); err != nil {
			t.Fatalf("an untimed ask is never late: %v", err)
		}
	})

	t.Run("ContinuedAsksExpireRetentionAfterTheirDeadline", func(t *testing.T) {
		s := setup(t)
		long := time.Now().Add(-30 * 24 * time.Hour)
		for _, id := range []string{"expired", "answeredLate", "recent"} {
			a := timed(id, time.Minute)
			a.Created, a.Deadline = long, long.Add(time.Minute)
			if id == "recent" {
				a.Created, a.Deadline = time.Now(), time.Now().Add(time.Minute)
			}
			mustCreate(t, s, a)
		}
		if _, err := s.Expire(ctx, "expired", long.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Settle(ctx, "answeredLate", json.RawMessage(`{}`), long.Add(time.Hour)); !errors.Is(err, store.ErrContinued) {
			t.Fatal(err)
		}
		if _, err := s.Expire(ctx, "recent", time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"expired", "answeredLate"} {
			if a, err := s.Get(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s: continued ask kept past deadline+retention: %+v %v", id, a, err)
			}
		}
		if a, err := s.Get(ctx, "recent"); err != nil || a.State != store.Continued {
			t.Fatalf("recent continued ask: %+v %v", a, err)
		}
	})

	t.Run("RepliesListsOnlyTheSessionsQueuedReplies", func(t *testing.T) {
		s := setup(t)
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
		if _, err := s.Abort(ctx, "withdrawn", t0.Add(3*time.Second), store.Withdrawn); err != nil {
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
	})

	t.Run("SessionCapsActiveAsks", func(t *testing.T) {
		s := setup(t)
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
	})

	t.Run("StaleWindowMovesPastEntriesItHandedOut", func(t *testing.T) {
		s := setup(t)
		// Messages whose update keeps failing (deleted in Slack, say) must
		// not hold the oldest-N window forever.
		for _, id := range []string{"a", "b", "c"} {
			mustCreate(t, s, newAsk(id))
			if _, err := s.SetMessage(ctx, id, store.MessageRef{Channel: "C1", TS: "1." + id}); err != nil {
				t.Fatal(err)
			}
		}
		later := time.Now().Add(time.Minute)
		seen := map[string]bool{}
		for range 2 {
			got, err := s.Stale(ctx, later, 2)
			if err != nil || len(got) != 2 {
				t.Fatalf("Stale = %v, %v", got, err)
			}
			for _, id := range got {
				seen[id] = true
			}
		}
		if len(seen) != 3 {
			t.Fatalf("two rounds of Stale(limit 2) handed out %v; the third message starves", seen)
		}
	})

	t.Run("ChangesWakeWatchers", func(t *testing.T) {
		s := setup(t)
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
	})
}

func callIDs(as []*store.Ask) []string {
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
