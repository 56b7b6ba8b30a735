package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseMessages checks the bookkeeping of each ask's chat message: where it is, what it shows, and which messages lag their ask.
func exerciseMessages(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("PostBeginsUnderALeaseAndFinishesInOne", func(t *testing.T) { checkPostBeginsUnderALeaseAndFinishesInOne(t, setup(t)) })
	t.Run("CreateTakesThePostLeaseForItsPoster", func(t *testing.T) { checkCreateTakesThePostLease(t, setup(t)) })
	t.Run("AbandonPostForgetsTheAttempt", func(t *testing.T) { checkAbandonPostForgetsTheAttempt(t, setup(t)) })
	t.Run("FinishPostLeavesAChangedAskBehind", func(t *testing.T) { checkFinishPostLeavesAChangedAskBehind(t, setup(t)) })
	t.Run("AdoptedFillsOnlyAnEmptyRecord", func(t *testing.T) { checkAdoptedFillsOnlyAnEmptyRecord(t, setup(t)) })
	t.Run("AnotherMessageIsKeptBesideTheRecordedOne", func(t *testing.T) { checkAnotherMessageIsKeptBesideTheRecordedOne(t, setup(t)) })
	t.Run("PostReplyAfterAdoptChangesNothing", func(t *testing.T) { checkPostReplyAfterAdoptChangesNothing(t, setup(t)) })
	t.Run("MessageAndRenderedVersion", func(t *testing.T) { checkMessageAndRenderedVersion(t, setup(t)) })
	t.Run("StaleListsMessagesBehindTheirAsk", func(t *testing.T) { checkStaleListsMessagesBehindTheirAsk(t, setup(t)) })
	t.Run("StaleListsUnpostedAsksAndPrunesHopelessOnes", func(t *testing.T) { checkStaleListsUnpostedAsksAndPrunesHopelessOnes(t, setup(t)) })
	t.Run("StaleWindowMovesPastEntriesItHandedOut", func(t *testing.T) { checkStaleWindowMovesPastEntriesItHandedOut(t, setup(t)) })
}

func checkMessageAndRenderedVersion(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := mustCreate(t, s, newAsk("c1"))
	b, err := s.SetMessage(ctx, "c1", asktype.MessageRef{Surface: "teams", Conversation: "C1", ID: "1700000000.000100", Thread: "T1"})
	if err != nil || b.Version <= a.Version {
		t.Fatalf("SetMessage: %+v %v", b, err)
	}
	// Every part of a surface-neutral reference reads back as written.
	if got, _ := s.Get(ctx, "c1"); got.Message.Surface != "teams" || got.Message.Conversation != "C1" ||
		got.Message.ID != "1700000000.000100" || got.Message.Thread != "T1" {
		t.Fatalf("message read back = %+v", got.Message)
	}
	if up, err := s.MarkRendered(ctx, "c1", b.Version); err != nil || !up {
		t.Fatalf("MarkRendered(latest) = %v, %v; want caught up", up, err)
	}
	if up, err := s.MarkRendered(ctx, "c1", b.Version-1); err != nil || up {
		t.Fatalf("MarkRendered(older) = %v, %v; want not caught up", up, err)
	}
	c, _ := s.Get(ctx, "c1")
	if c.Rendered != b.Version {
		t.Fatalf("Rendered = %d, want %d (never lowered)", c.Rendered, b.Version)
	}
}

func checkStaleListsMessagesBehindTheirAsk(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("c1"))
	a, err := s.SetMessage(ctx, "c1", asktype.MessageRef{Conversation: "C1", ID: "1.1"})
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
	if _, err := s.MarkRendered(ctx, "c1", a.Version); err != nil {
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
}

func checkStaleListsUnpostedAsksAndPrunesHopelessOnes(t *testing.T, s store.Store) {
	ctx := context.Background()
	// An active ask never posted must be posted; one refused for good,
	// or ended before anyone tried, can never be shown and is pruned; one
	// ended after an attempt whose outcome is unknown may have a message.
	for _, id := range []string{"unposted", "refused", "endedUntried", "endedTried"} {
		mustCreate(t, s, newAsk(id))
	}
	if _, err := s.SetMessage(ctx, "refused", asktype.MessageRef{Conversation: "C1", Refused: "channel_not_found"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginPost(ctx, "endedTried", store.Hold{Holder: "me", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginPost(ctx, "endedTried", store.Hold{Holder: "me", TTL: time.Minute, Now: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"endedUntried", "endedTried"} {
		if _, err := s.Abort(ctx, id, t0, asktype.Abandoned); err != nil {
			t.Fatal(err)
		}
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
	if !a.PostAttempt.Equal(t0) || a.AbortReason != asktype.Abandoned {
		t.Fatalf("PostAttempt %v (want the first attempt %v), AbortReason %q", a.PostAttempt, t0, a.AbortReason)
	}
	r, _ := s.Get(ctx, "refused")
	if r.Message.Refused != "channel_not_found" || r.Message.Posted() {
		t.Fatalf("refused message = %+v", r.Message)
	}
}

func checkStaleWindowMovesPastEntriesItHandedOut(t *testing.T, s store.Store) {
	ctx := context.Background()
	// Messages whose update keeps failing (deleted in Slack, say) must
	// not hold the oldest-N window forever.
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(t, s, newAsk(id))
		if _, err := s.SetMessage(ctx, id, asktype.MessageRef{Conversation: "C1", ID: "1." + id}); err != nil {
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
}

// checkCreateTakesThePostLease: Create with a Poster is Create then that
// poster's BeginPost, in one: the lease is held, the attempt recorded for
// whoever posts next, and the record returned is the ask before it.
func checkCreateTakesThePostLease(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := newAsk("c1")
	a.Poster = asktype.PostLease{Holder: "me", Until: t0.Add(time.Minute)}
	cur := mustCreate(t, s, a)
	if cur.Poster != a.Poster || !cur.PostAttempt.IsZero() || cur.Message.Posted() || string(cur.Request) != string(a.Request) {
		t.Fatalf("Create with a poster returned %+v; want the new ask with Poster %+v and no earlier attempt", cur, a.Poster)
	}
	if got, err := s.Get(ctx, "c1"); err != nil || got.Poster != (asktype.PostLease{}) || !got.PostAttempt.Equal(t0) {
		t.Fatalf("Get after Create with a poster = %+v, %v; want the attempt recorded at creation and no Poster", got, err)
	}
	held, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0.Add(time.Second)})
	if !errors.Is(err, store.ErrHeld) {
		t.Fatalf("BeginPost by another holder under Create's lease = %v; want ErrHeld", err)
	}
	if held == nil || held.Poster.Holder != "me" || !held.Poster.Until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("ErrHeld's ask = %+v; want its Poster naming the lease (me until %v), to try again as it ends", held, t0.Add(time.Minute))
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0.Add(time.Minute)}); err != nil {
		t.Fatalf("BeginPost once Create's lease ran out = %v", err)
	}
	// A call id that exists: nothing taken, nothing recorded, no Poster.
	again := newAsk("c1")
	again.Poster = asktype.PostLease{Holder: "third", Until: t0.Add(time.Hour)}
	if cur, created, err := s.Create(ctx, again); err != nil || created || cur.Poster != (asktype.PostLease{}) {
		t.Fatalf("Create of an existing call id with a poster = %+v, %v, %v", cur, created, err)
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "fourth", TTL: time.Minute, Now: t0.Add(2 * time.Minute)}); err != nil {
		t.Fatalf("a re-Create took the lease: %v", err)
	}
	// Without a Poster, Create takes nothing.
	mustCreate(t, s, newAsk("c2"))
	if b, err := s.BeginPost(ctx, "c2", store.Hold{Holder: "other", TTL: time.Minute, Now: t0}); err != nil || !b.PostAttempt.IsZero() {
		t.Fatalf("BeginPost after a plain Create = %+v, %v; want the lease and no earlier attempt", b, err)
	}
}

// A post the surface said it did not make (a rate limit) is abandoned:
// the lease is free and the next BeginPost sees no earlier attempt, so it
// posts without looking for one. Only the lease's holder can abandon.
func checkAbandonPostForgetsTheAttempt(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("c1"))
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "me", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.AbandonPost(ctx, "c1", "other"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "c1"); !got.PostAttempt.Equal(t0) {
		t.Fatalf("another holder's AbandonPost forgot the attempt: %+v", got.PostAttempt)
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0}); !errors.Is(err, store.ErrHeld) {
		t.Fatalf("another holder's AbandonPost freed the lease: %v", err)
	}
	if err := s.AbandonPost(ctx, "c1", "me"); err != nil {
		t.Fatal(err)
	}
	b, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0.Add(time.Second)})
	if err != nil || !b.PostAttempt.IsZero() {
		t.Fatalf("BeginPost after AbandonPost = %+v, %v; want the lease and no earlier attempt", b, err)
	}
	if got, _ := s.Get(ctx, "c1"); !got.PostAttempt.Equal(t0.Add(time.Second)) {
		t.Fatalf("the new attempt was not recorded: %v", got.PostAttempt)
	}
	if err := s.AbandonPost(ctx, "missing", "me"); err != nil {
		t.Fatalf("AbandonPost of a missing ask: %v", err)
	}
}

func checkPostBeginsUnderALeaseAndFinishesInOne(t *testing.T, s store.Store) {
	ctx := context.Background()
	created := mustCreate(t, s, newAsk("c1"))
	a, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "me", TTL: time.Minute, Now: t0})
	if err != nil || !a.PostAttempt.IsZero() || a.Version != created.Version {
		t.Fatalf("first BeginPost = %+v, %v; want the ask as it was, with no earlier attempt", a, err)
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0}); !errors.Is(err, store.ErrHeld) {
		t.Fatalf("BeginPost by another holder under the lease = %v; want ErrHeld", err)
	}
	again, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "me", TTL: time.Minute, Now: t0.Add(time.Second)})
	if err != nil || !again.PostAttempt.Equal(t0) {
		t.Fatalf("second BeginPost = %+v, %v; want the first attempt (%v) recorded", again, err, t0)
	}
	done, err := s.FinishPost(ctx, "c1", "me", asktype.MessageRef{Surface: "teams", Conversation: "C1", ID: "1.1"}, again.Version)
	if err != nil || done.Message.ID != "1.1" || done.Message.Surface != "teams" || done.Rendered != done.Version {
		t.Fatalf("FinishPost = %+v, %v; want the message recorded and rendered", done, err)
	}
	if got, _ := s.Stale(ctx, time.Now().Add(time.Hour), 10); len(got) != 0 {
		t.Fatalf("a caught-up post is stale: %v", got)
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatalf("the post lease was not released: %v", err)
	}
	if _, err := s.BeginPost(ctx, "nope", store.Hold{Holder: "me", TTL: time.Minute, Now: t0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("BeginPost(missing) = %v", err)
	}
	mustCreate(t, s, newAsk("gone"))
	if _, err := s.Abort(ctx, "gone", t0, asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginPost(ctx, "gone", store.Hold{Holder: "me", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if g, _ := s.Get(ctx, "gone"); !g.PostAttempt.IsZero() {
		t.Fatal("an ended ask got a post attempt recorded")
	}
}

func checkFinishPostLeavesAChangedAskBehind(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("c1"))
	a, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "me", TTL: time.Minute, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Settle(ctx, "c1", json.RawMessage(`{}`), t0); err != nil { // answered while posting
		t.Fatal(err)
	}
	done, err := s.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, a.Version)
	if err != nil || done.Rendered >= done.Version {
		t.Fatalf("FinishPost = %+v, %v; the message shows an older state and must stay behind", done, err)
	}
	adopted, err := s.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, 0)
	if err != nil || adopted.Rendered >= adopted.Version {
		t.Fatalf("FinishPost(shown 0) = %+v, %v; an adopted message's content is unknown", adopted, err)
	}
}

// adoptWhilePosting creates c1, takes its post lease for "poster" and
// adopts ref from a click, as before the post's reply: FinishPost's result.
func adoptWhilePosting(t *testing.T, s store.Store, ref asktype.MessageRef) (*asktype.Ask, error) {
	t.Helper()
	mustCreate(t, s, newAsk("c1"))
	if _, err := s.BeginPost(context.Background(), "c1", store.Hold{Holder: "poster", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatal(err)
	}
	return s.FinishPost(context.Background(), "c1", asktype.Adopted, ref, 0)
}

// A message adopted from a click before its post's reply is recorded
// while none is (the lease stays the poster's); the post's own record,
// with its DM copies, then stands, and a later adoption changes nothing.
func checkAdoptedFillsOnlyAnEmptyRecord(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, err := adoptWhilePosting(t, s, asktype.MessageRef{Conversation: "C1", ID: "1.1"})
	if err != nil || a.Message.ID != "1.1" || a.Rendered >= a.Version {
		t.Fatalf("adopting into an empty record = %+v, %v; want it recorded, not rendered", a, err)
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0}); !errors.Is(err, store.ErrHeld) {
		t.Fatalf("adopting released the poster's lease: %v", err)
	}
	posted := asktype.MessageRef{Conversation: "C1", ID: "1.1", Copies: []asktype.MessageRef{{Conversation: "D1", ID: "2.2"}}}
	b, err := s.FinishPost(ctx, "c1", "poster", posted, 0)
	if err != nil || len(b.Message.Copies) != 1 {
		t.Fatalf("the post's own record = %+v, %v; want its copies", b, err)
	}
	c, err := s.FinishPost(ctx, "c1", asktype.Adopted, asktype.MessageRef{Conversation: "C1", ID: "1.1"}, 0)
	if err != nil || c.Message.ID != "1.1" || len(c.Message.Copies) != 1 || c.Version != b.Version {
		t.Fatalf("adopting the recorded message again = %+v, %v; want nothing changed", c, err)
	}
}

// A message other than the one recorded — the ask posted twice, or a
// click from a message the record did not know — is never written over
// the recorded one: it is kept among its copies, with a new version (the
// message is behind, and the stale index lists it), so every render
// reaches it; kept already, it changes nothing.
func checkAnotherMessageIsKeptBesideTheRecordedOne(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("c1"))
	dm := asktype.MessageRef{Conversation: "D1", ID: "2.2"}
	first, err := s.FinishPost(ctx, "c1", "poster", asktype.MessageRef{Surface: "slack", Conversation: "C1", ID: "1.1", Copies: []asktype.MessageRef{dm}}, 1)
	if err != nil || first.Rendered < first.Version {
		t.Fatalf("first post = %+v, %v", first, err)
	}
	for _, holder := range []string{"poster-2", asktype.Adopted} {
		ref := asktype.MessageRef{Surface: "slack", Conversation: "C1", ID: "3.3." + holder, Thread: "0.5"}
		before, _ := s.Get(ctx, "c1")
		a, err := s.FinishPost(ctx, "c1", holder, ref, before.Version)
		if err != nil {
			t.Fatal(err)
		}
		if a.Message.ID != "1.1" || a.Message.Conversation != "C1" || !a.Message.Shows("D1", "2.2") || !a.Message.Shows("C1", ref.ID) {
			t.Fatalf("%s: a second message = %+v; want the first recorded, the DM copy and the second among its copies", holder, a.Message)
		}
		var kept asktype.MessageRef
		for _, c := range a.Message.Copies {
			if c.ID == ref.ID {
				kept = c
			}
		}
		if kept.Thread != "0.5" || kept.Surface != "slack" {
			t.Fatalf("%s: the second message kept as %+v; want its thread and surface", holder, kept)
		}
		if a.Version <= before.Version || a.Rendered >= a.Version {
			t.Fatalf("%s: a second message = version %d rendered %d (was %d); want a new version, behind", holder, a.Version, a.Rendered, before.Version)
		}
		ids, err := s.Stale(ctx, time.Now().Add(time.Hour), 10)
		if err != nil || !slices.Contains(ids, "c1") {
			t.Fatalf("%s: stale = %v, %v; want the ask listed", holder, ids, err)
		}
		if _, err := s.MarkRendered(ctx, "c1", a.Version); err != nil {
			t.Fatal(err)
		}
		again, err := s.FinishPost(ctx, "c1", holder, ref, 0)
		if err != nil || again.Version != a.Version || len(again.Message.Copies) != len(a.Message.Copies) {
			t.Fatalf("%s: the second message again = %+v, %v; want nothing changed", holder, again, err)
		}
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatalf("keeping a second message kept its poster's lease: %v", err)
	}
}

// The post's reply naming the message a click adopted already changes
// nothing but the lease: no new version, so the message, rendered through
// the click since, is not behind (before, every such click cost a second
// render of an unchanged message).
func checkPostReplyAfterAdoptChangesNothing(t *testing.T, s store.Store) {
	ctx := context.Background()
	ref := asktype.MessageRef{Conversation: "C1", ID: "1.1"}
	a, err := adoptWhilePosting(t, s, ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.FinishPost(ctx, "c1", "poster", ref, a.Version-1)
	if err != nil || b.Version != a.Version || b.Rendered < b.Version || b.Message.ID != "1.1" {
		t.Fatalf("the post's reply after the click = %+v, %v; want version %d, rendered (the adoption is all that happened since the post), nothing changed", b, err, a.Version)
	}
	if _, err := s.BeginPost(ctx, "c1", store.Hold{Holder: "other", TTL: time.Minute, Now: t0}); err != nil {
		t.Fatalf("the post's reply kept its lease: %v", err)
	}
	// A reply that knows more (a DM copy) is recorded, and the copy is behind.
	c, err := s.FinishPost(ctx, "c1", "other", asktype.MessageRef{Conversation: "C1", ID: "1.1", Copies: []asktype.MessageRef{{Conversation: "D1", ID: "2.2"}}}, 1)
	if err != nil || c.Version == b.Version || len(c.Message.Copies) != 1 || c.Rendered >= c.Version {
		t.Fatalf("a reply with a copy = %+v, %v; want a new version, not rendered", c, err)
	}
}
