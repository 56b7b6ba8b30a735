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

// exerciseTransitions checks the ask's transitions: create, settle, expire, abort, late replies, refusals, retention and the state counts.
func exerciseTransitions(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("CreateIsIdempotentByCallID", func(t *testing.T) { checkCreateIsIdempotentByCallID(t, setup(t)) })
	t.Run("UnknownCallIsNotFound", func(t *testing.T) { checkUnknownCallIsNotFound(t, setup(t)) })
	t.Run("VersionsReadEachAsk", func(t *testing.T) { checkVersionsReadEachAsk(t, setup(t)) })
	t.Run("SettleHappensOnceUnderContention", func(t *testing.T) { checkSettleHappensOnceUnderContention(t, setup(t)) })
	t.Run("ExpireOnlyPastDeadlineAndOnce", func(t *testing.T) { checkExpireOnlyPastDeadlineAndOnce(t, setup(t)) })
	t.Run("ExpireRacesSettleOneWins", func(t *testing.T) { checkExpireRacesSettleOneWins(t, setup(t)) })
	t.Run("ContinueBeforeTheDeadline", func(t *testing.T) { checkContinueBeforeTheDeadline(t, setup(t)) })
	t.Run("Abort", func(t *testing.T) { checkAbort(t, setup(t)) })
	t.Run("LateReplyQueuesOnceUntilAcked", func(t *testing.T) { checkLateReplyQueuesOnceUntilAcked(t, setup(t)) })
	t.Run("RefuseEndsAnUntimedAskOnly", func(t *testing.T) { checkRefuseEndsAnUntimedAskOnly(t, setup(t)) })
	t.Run("CreateOfAnExistingCallIndexesNothing", func(t *testing.T) { checkCreateOfAnExistingCallIndexesNothing(t, setup(t)) })
	t.Run("AnswerAtOrPastTheDeadlineIsLate", func(t *testing.T) { checkAnswerAtOrPastTheDeadlineIsLate(t, setup(t)) })
	t.Run("ContinuedAsksExpireRetentionAfterTheirDeadline", func(t *testing.T) { checkContinuedAsksExpireRetentionAfterTheirDeadline(t, setup(t)) })
	t.Run("RetentionDropsSettledAndAbortedOnly", func(t *testing.T) { checkRetentionDropsSettledAndAbortedOnly(t, setup(t)) })
	t.Run("CountsByState", func(t *testing.T) { checkCountsByState(t, setup(t)) })
}

func checkCreateIsIdempotentByCallID(t *testing.T, s store.Store) {
	ctx := context.Background()
	first := newAsk("c1")
	first.Caller = "alice-laptop"
	a := mustCreate(t, s, first)
	if a.State != asktype.Open || a.Version < 1 || a.Seq == 0 || !a.Created.Equal(t0) || a.Caller != "alice-laptop" {
		t.Fatalf("created ask = %+v", a)
	}
	if got, err := s.Get(ctx, "c1"); err != nil || got.Caller != "alice-laptop" {
		t.Fatalf("Get: caller %q, %v; the ask belongs to its caller", got.Caller, err)
	}
	again := newAsk("c1")
	again.Caller = "mallory"
	again.Request = json.RawMessage(`{"other":true}`)
	cur, created, err := s.Create(ctx, again)
	if err != nil || created {
		t.Fatalf("second Create: created %v err %v", created, err)
	}
	if string(cur.Request) != string(a.Request) || cur.Seq != a.Seq || cur.Caller != "alice-laptop" {
		t.Fatalf("second Create returned %s seq %d, want the original", cur.Request, cur.Seq)
	}
}

func checkUnknownCallIsNotFound(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get: %v", err)
	}
	if _, err := s.Settle(ctx, "nope", json.RawMessage(`{}`), t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Settle: %v", err)
	}
	if _, err := s.Abort(ctx, "nope", t0, asktype.Withdrawn); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Abort: %v", err)
	}
	if _, err := s.SetMessage(ctx, "nope", asktype.MessageRef{Conversation: "C1", ID: "1.2"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetMessage: %v", err)
	}
	if _, err := s.MarkRendered(ctx, "nope", 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("MarkRendered: %v", err)
	}
}

func checkSettleHappensOnceUnderContention(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("c1"))
	const n = 50
	var wg sync.WaitGroup
	errs := make([]error, n)
	got := make([]*asktype.Ask, n)
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
		if got[i].State != asktype.Settled || string(got[i].Settlement) != want {
			t.Fatalf("caller %d saw %s %s, want the winner's %s", i, got[i].State, got[i].Settlement, want)
		}
	}
	a, _ := s.Get(ctx, "c1")
	if !a.SettledAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("SettledAt = %v", a.SettledAt)
	}
}

func checkExpireOnlyPastDeadlineAndOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("c1", time.Minute))
	if _, err := s.Expire(ctx, "c1", t0.Add(59*time.Second)); !errors.Is(err, store.ErrNotDue) {
		t.Fatalf("early Expire: %v", err)
	}
	a, err := s.Expire(ctx, "c1", t0.Add(time.Minute))
	if err != nil || a.State != asktype.Continued {
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
}

// checkContinueBeforeTheDeadline: the agent went on before its window
// closed; the ask continues now, its deadline becomes now, a late answer
// queues, and nothing else moves it twice.
func checkContinueBeforeTheDeadline(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("c1", time.Hour))
	at := t0.Add(10 * time.Second)
	a, err := s.Continue(ctx, "c1", at)
	if err != nil || a.State != asktype.Continued || !a.Deadline.Equal(at) {
		t.Fatalf("Continue: %+v %v", a, err)
	}
	if _, err := s.Continue(ctx, "c1", at); !errors.Is(err, store.ErrContinued) {
		t.Fatalf("second Continue: %v", err)
	}
	if _, err := s.Expire(ctx, "c1", t0.Add(2*time.Hour)); !errors.Is(err, store.ErrContinued) {
		t.Fatalf("Expire after Continue: %v", err)
	}
	if _, err := s.QueueReply(ctx, "c1", json.RawMessage(`{"answers":[]}`), at.Add(time.Second)); err != nil {
		t.Fatalf("QueueReply after Continue: %v", err)
	}
	mustCreate(t, s, newAsk("untimed"))
	if _, err := s.Continue(ctx, "untimed", at); !errors.Is(err, store.ErrNotDue) {
		t.Fatalf("Continue untimed: %v", err)
	}
	mustCreate(t, s, timed("settled", time.Hour))
	if _, err := s.Settle(ctx, "settled", json.RawMessage(`{}`), at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Continue(ctx, "settled", at); !errors.Is(err, store.ErrSettled) {
		t.Fatalf("Continue settled: %v", err)
	}
	mustCreate(t, s, timed("past", time.Second))
	if a, err := s.Continue(ctx, "past", t0.Add(time.Minute)); err != nil || !a.Deadline.Equal(t0.Add(time.Second)) {
		t.Fatalf("Continue past its deadline keeps the deadline: %+v %v", a, err)
	}
}

func checkExpireRacesSettleOneWins(t *testing.T, s store.Store) {
	ctx := context.Background()
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
}

func checkAbort(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("open"))
	a, err := s.Abort(ctx, "open", t0.Add(time.Second), asktype.Withdrawn)
	if err != nil || a.State != asktype.Aborted || !a.AbortedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("Abort open: %+v %v", a, err)
	}
	if _, err := s.Abort(ctx, "open", t0, asktype.Withdrawn); !errors.Is(err, store.ErrAborted) {
		t.Fatalf("second Abort: %v", err)
	}
	if _, err := s.Settle(ctx, "open", json.RawMessage(`{}`), t0); !errors.Is(err, store.ErrAborted) {
		t.Fatalf("Settle aborted: %v", err)
	}
	mustCreate(t, s, timed("cont", time.Second))
	if _, err := s.Expire(ctx, "cont", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abort(ctx, "cont", t0, asktype.Withdrawn); err != nil {
		t.Fatalf("Abort continued: %v", err)
	}
	mustCreate(t, s, newAsk("done"))
	if _, err := s.Settle(ctx, "done", json.RawMessage(`{}`), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abort(ctx, "done", t0, asktype.Withdrawn); !errors.Is(err, store.ErrSettled) {
		t.Fatalf("Abort settled: %v", err)
	}
}

func checkLateReplyQueuesOnceUntilAcked(t *testing.T, s store.Store) {
	ctx := context.Background()
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
	if err != nil || a.State != asktype.Continued || string(a.Reply) != `{"r":1}` || !a.ReplyAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("QueueReply: %+v %v", a, err)
	}
	a, err = s.QueueReply(ctx, "c1", json.RawMessage(`{"r":2}`), t0)
	if !errors.Is(err, store.ErrReplyQueued) || string(a.Reply) != `{"r":1}` {
		t.Fatalf("second QueueReply: %v, reply %s", err, a.Reply)
	}
	a, err = s.AckReply(ctx, "c1", t0.Add(3*time.Second))
	if err != nil || a.State != asktype.Settled || string(a.Settlement) != `{"r":1}` || !a.SettledAt.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("AckReply: %+v %v", a, err)
	}
	if _, err := s.AckReply(ctx, "c1", t0); !errors.Is(err, store.ErrSettled) {
		t.Fatalf("second AckReply: %v", err)
	}
}

func checkRefuseEndsAnUntimedAskOnly(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("untimed"))
	mustCreate(t, s, timed("timed", time.Minute))
	a, err := s.Refuse(ctx, "untimed", "C1", "channel_not_found", t0.Add(time.Second))
	if err != nil || a.State != asktype.Aborted || a.AbortReason != asktype.NoMessage || a.Message.Refused != "channel_not_found" || !a.AbortedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("Refuse(untimed) = %+v, %v; want aborted for want of a message", a, err)
	}
	b, err := s.Refuse(ctx, "timed", "C1", "channel_not_found", t0)
	if err != nil || b.State != asktype.Open || b.Message.Refused != "channel_not_found" {
		t.Fatalf("Refuse(timed) = %+v, %v; want it open until its deadline", b, err)
	}
	if _, err := s.Refuse(ctx, "nope", "C1", "x", t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Refuse(missing) = %v", err)
	}
}

func checkCreateOfAnExistingCallIndexesNothing(t *testing.T, s store.Store) {
	ctx := context.Background()
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
}

func checkAnswerAtOrPastTheDeadlineIsLate(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("intime", time.Minute))
	a, err := s.Settle(ctx, "intime", json.RawMessage(`{}`), t0.Add(time.Minute-time.Millisecond))
	if err != nil || a.State != asktype.Settled {
		t.Fatalf("Settle a millisecond before the deadline: %+v %v", a, err)
	}
	// Nobody expired "late" (its waiter died): the answer at the deadline
	// closes the window itself and is refused as continued.
	for _, at := range []time.Duration{time.Minute, time.Hour} {
		id := fmt.Sprintf("late%d", at/time.Second)
		c := mustCreate(t, s, timed(id, time.Minute))
		a, err := s.Settle(ctx, id, json.RawMessage(`{"late":true}`), t0.Add(at))
		if !errors.Is(err, store.ErrContinued) || a == nil || a.State != asktype.Continued || a.Version <= c.Version || a.Settlement != nil {
			t.Fatalf("Settle at deadline+%v = %+v, %v; want ErrContinued with the continued ask", at-time.Minute, a, err)
		}
		if got, _ := s.Get(ctx, id); got.State != asktype.Continued {
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
}

func checkContinuedAsksExpireRetentionAfterTheirDeadline(t *testing.T, s store.Store) {
	ctx := context.Background()
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
	if a, err := s.Get(ctx, "recent"); err != nil || a.State != asktype.Continued {
		t.Fatalf("recent continued ask: %+v %v", a, err)
	}
}

func checkRetentionDropsSettledAndAbortedOnly(t *testing.T, s store.Store) {
	ctx := context.Background()
	long := time.Now().Add(-30 * 24 * time.Hour)
	for _, id := range []string{"settled", "aborted", "open"} {
		a := newAsk(id)
		a.Created = long
		mustCreate(t, s, a)
	}
	if _, err := s.Settle(ctx, "settled", json.RawMessage(`{}`), long); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abort(ctx, "aborted", long, asktype.Withdrawn); err != nil {
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
}

func checkCountsByState(t *testing.T, s store.Store) {
	ctx := context.Background()
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
	if _, err := s.Abort(ctx, "x1", t0, asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	c, err := s.Counts(ctx)
	if err != nil || c != (store.Counts{Open: 3, Continued: 1, TimedOpen: 2}) {
		t.Fatalf("Counts = %+v, %v; want 3 open (2 timed), 1 continued", c, err)
	}
}

// Versions reads every ask's version at once, 0 for one that is gone.
func checkVersionsReadEachAsk(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := mustCreate(t, s, newAsk("v1"))
	b := mustCreate(t, s, newAsk("v2"))
	moved, err := s.Settle(ctx, "v2", json.RawMessage(`{}`), t0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Versions(ctx, []string{"v1", "gone", "v2"})
	if err != nil || len(got) != 3 || got[0] != a.Version || got[1] != 0 || got[2] != moved.Version || moved.Version <= b.Version {
		t.Fatalf("Versions = %v, %v; want [%d 0 %d]", got, err, a.Version, moved.Version)
	}
	if got, err := s.Versions(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("Versions(none) = %v, %v", got, err)
	}
}
