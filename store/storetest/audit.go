package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// exerciseAudit checks the audit trail one store keeps: every transition
// appends its event in the same step, one chain links them all, pages and
// filters read it back.
func exerciseAudit(t *testing.T, setup func(t *testing.T) store.Store) {
	t.Run("AuditRecordsEveryStepInOneChain", func(t *testing.T) { checkAuditRecordsEveryStep(t, setup(t)) })
	t.Run("AuditPagesWithACursor", func(t *testing.T) { checkAuditPages(t, setup(t)) })
	t.Run("AuditFiltersBySinceAndCallID", func(t *testing.T) { checkAuditFilters(t, setup(t)) })
	t.Run("AuditRetentionTrimsTheOldest", func(t *testing.T) { checkAuditRetention(t, setup(t)) })
	t.Run("AuditConcurrentTransitionsChainOnce", func(t *testing.T) { checkAuditConcurrent(t, setup(t)) })
	t.Run("AuditCallersThatGoAwayLoseNothing", func(t *testing.T) { checkAuditCancel(t, setup(t)) })
	t.Run("AuditRefusesABadCursor", func(t *testing.T) { checkAuditBadCursor(t, setup(t)) })
}

// AuditHarness is what the audit topics about several replicas and
// failures need beyond one fresh store (see ExerciseAuditShared).
type AuditHarness struct {
	// Shared returns two stores on one shared state: two replicas on one
	// Redis prefix, or the same Memory twice.
	Shared func(t *testing.T) (a, b store.Store)
	// Crashing returns a store whose chainer stops, as if killed, right
	// after the step named (once), and a healthy store on the same state.
	// nil when the store has no chainer (Memory).
	Crashing func(t *testing.T, step string) (crashing, healthy store.Store)
	// NoScript returns a store and a function that makes its server forget
	// its scripts (SCRIPT FLUSH). nil when the store has no script cache.
	NoScript func(t *testing.T) (s store.Store, flush func())
}

// Steps a Crashing store can stop after: the chain append ran, the outbox
// trim did not.
const StepAppended = "appended"

// ExerciseAuditShared runs the audit topics that need h.
func ExerciseAuditShared(t *testing.T, h AuditHarness) {
	t.Run("AuditTwoReplicasWriteOneChain", func(t *testing.T) {
		t.Parallel()
		a, b := h.Shared(t)
		checkAuditTwoReplicas(t, a, b)
	})
	t.Run("AuditChainerKilledBetweenAppendAndTrimDuplicatesNothing", func(t *testing.T) {
		t.Parallel()
		if h.Crashing == nil {
			t.Skip("this store has no chainer: each transition appends to the chain itself")
		}
		crashing, healthy := h.Crashing(t, StepAppended)
		checkAuditCrash(t, crashing, healthy)
	})
	t.Run("AuditNoScriptLosesNothing", func(t *testing.T) {
		t.Parallel()
		if h.NoScript == nil {
			t.Skip("this store has no script cache")
		}
		s, flush := h.NoScript(t)
		checkAuditNoScript(t, s, flush)
	})
}

// Trail reads the whole trail matching q, page by page, and checks that
// the chain holds together; it fails t otherwise.
func Trail(t testing.TB, s store.Store, q asktype.AuditQuery) []asktype.AuditEntry {
	t.Helper()
	var all []asktype.AuditEntry
	for range 10_000 {
		page, next, err := s.Audit(context.Background(), q)
		if err != nil {
			t.Fatalf("Audit(%+v): %v", q, err)
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		q.Cursor = next
	}
	if q.CallID == "" && q.Since.IsZero() {
		var v store.ChainVerifier
		for i := range all {
			if err := v.Next(&all[i]); err != nil {
				t.Fatalf("the chain breaks: %v\nentry: %+v", err, all[i])
			}
		}
	}
	return all
}

// events lists "callId:event" of entries, in order.
func events(es []asktype.AuditEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.CallID+":"+e.Event)
	}
	return out
}

// ofCall keeps the entries of one ask.
func ofCall(es []asktype.AuditEntry, callID string) []asktype.AuditEntry {
	var out []asktype.AuditEntry
	for _, e := range es {
		if e.CallID == callID {
			out = append(out, e)
		}
	}
	return out
}

func settlement(user string) json.RawMessage {
	return json.RawMessage(`{"answers":[{"id":"q1","selected":["Yes"]}],"respondent":{"userId":"` + user +
		`","userName":"` + user + `-name","at":"2027-01-15T08:00:00Z","surface":"slack"}}`)
}

func checkAuditRecordsEveryStep(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := newAsk("c1")
	a.Caller, a.Kind, a.AgentID, a.AgentSession = "alice-laptop", "plan", "claude", "sess-9"
	mustCreate(t, s, a)
	if _, err := s.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, 0); err != nil {
		t.Fatal(err) // the same message again: not a new post
	}
	if _, err := s.Settle(ctx, "c1", settlement("U1"), t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Settle(ctx, "c1", settlement("U2"), t0.Add(2*time.Second)); !errors.Is(err, store.ErrSettled) {
		t.Fatal(err) // a lost race changes nothing and records nothing
	}

	mustCreate(t, s, timed("late", time.Minute))
	if _, err := s.Settle(ctx, "late", settlement("U3"), t0.Add(time.Minute)); !errors.Is(err, store.ErrContinued) {
		t.Fatalf("late Settle: %v", err)
	}
	if _, err := s.QueueReply(ctx, "late", settlement("U3"), t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AckReply(ctx, "late", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}

	mustCreate(t, s, timed("expired", time.Minute))
	if _, err := s.Expire(ctx, "expired", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, newAsk("gone"))
	if _, err := s.Abort(store.WithActor(ctx, "ops"), "gone", t0.Add(time.Second), asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, newAsk("left"))
	if _, err := s.Abort(ctx, "left", t0.Add(time.Second), asktype.Abandoned); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, newAsk("unshown"))
	if _, err := s.Refuse(ctx, "unshown", "C1", "channel_not_found", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, asktype.AuditEntry{At: t0.Add(3 * time.Second), CallID: "c1", Event: asktype.EventRefused, Caller: "ci",
		Respondent: &asktype.AuditRespondent{UserID: "U9", Surface: "slack"}, Detail: "not on the list"}); err != nil {
		t.Fatal(err)
	}

	all := Trail(t, s, asktype.AuditQuery{})
	want := map[string][]string{
		"c1":      {"c1:asked", "c1:posted", "c1:answered", "c1:refused"},
		"late":    {"late:asked", "late:continued", "late:queued", "late:delivered"},
		"expired": {"expired:asked", "expired:continued"},
		"gone":    {"gone:asked", "gone:withdrawn"},
		"left":    {"left:asked", "left:abandoned"},
		"unshown": {"unshown:asked", "unshown:withdrawn"},
	}
	n := 0
	for id, w := range want {
		n += len(w)
		if got := events(ofCall(all, id)); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("%s: events %v; want %v", id, got, w)
		}
	}
	if len(all) != n || all[0].Seq != 1 || all[0].Prev != "" {
		t.Fatalf("%d entries (want %d), first %+v", len(all), n, all[0])
	}
	c1 := ofCall(all, "c1")
	asked, answered := c1[0], c1[2]
	if asked.Caller != "alice-laptop" || asked.Agent == nil || *asked.Agent != (asktype.AuditAgent{ID: "claude", SessionID: "sess-9"}) ||
		asked.Detail != "plan" || !asked.At.Equal(t0) {
		t.Errorf("asked = %+v (agent %+v)", asked, asked.Agent)
	}
	if answered.Respondent == nil || *answered.Respondent != (asktype.AuditRespondent{UserID: "U1", UserName: "U1-name", Surface: "slack"}) ||
		answered.Caller != "alice-laptop" || !answered.At.Equal(t0.Add(time.Second)) {
		t.Errorf("answered = %+v (respondent %+v)", answered, answered.Respondent)
	}
	if c1[1].Detail != "channel C1 ts 1.1" {
		t.Errorf("posted detail %q", c1[1].Detail)
	}
	if r := c1[3]; r.Caller != "ci" || r.Respondent == nil || r.Respondent.UserID != "U9" || r.Detail != "not on the list" {
		t.Errorf("refused = %+v", r)
	}
	if q := ofCall(all, "late")[2]; q.Respondent == nil || q.Respondent.UserID != "U3" {
		t.Errorf("queued = %+v", q)
	}
	if g := ofCall(all, "gone")[1]; g.Detail != "by ops" {
		t.Errorf("withdrawn detail %q; want who withdrew it", g.Detail)
	}
	if u := ofCall(all, "unshown")[1]; u.Detail == "" {
		t.Errorf("a refused post says nothing: %+v", u)
	}
}

func checkAuditPages(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := range 7 {
		if err := s.Append(ctx, asktype.AuditEntry{At: t0.Add(time.Duration(i) * time.Second), Event: asktype.EventRefused, Detail: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	q := asktype.AuditQuery{Limit: 3}
	pages := 0
	for {
		page, next, err := s.Audit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, e := range page {
			got = append(got, e.Detail)
		}
		if next == "" {
			break
		}
		if len(page) != 3 {
			t.Fatalf("a page of %d with a next cursor", len(page))
		}
		q.Cursor = next
	}
	if fmt.Sprint(got) != "[0 1 2 3 4 5 6]" || pages != 3 {
		t.Fatalf("pages read %v in %d pages", got, pages)
	}
	// A cursor from the last full page reads on once more entries came.
	page, next, _ := s.Audit(ctx, asktype.AuditQuery{Limit: 7})
	if len(page) != 7 || next != "" {
		t.Fatalf("a page holding everything: %d entries, next %q", len(page), next)
	}
	_ = s.Append(ctx, asktype.AuditEntry{At: t0.Add(time.Minute), Event: asktype.EventRefused, Detail: "7"})
	page, _, _ = s.Audit(ctx, asktype.AuditQuery{Limit: 6})
	page2, _, err := s.Audit(ctx, asktype.AuditQuery{Cursor: cursorAfter(t, s, 6)})
	if err != nil || len(page) != 6 || len(page2) != 2 || page2[1].Detail != "7" || page2[0].Seq != 7 {
		t.Fatalf("after a new entry: %v %v %v", events(page), page2, err)
	}
}

// cursorAfter returns the cursor of a page that ended with the n-th entry.
func cursorAfter(t *testing.T, s store.Store, n int) string {
	t.Helper()
	_, next, err := s.Audit(context.Background(), asktype.AuditQuery{Limit: n})
	if err != nil || next == "" {
		t.Fatalf("no cursor after %d entries: %v", n, err)
	}
	return next
}

func checkAuditFilters(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("a"))
	b := newAsk("b")
	b.Created = t0.Add(time.Hour)
	mustCreate(t, s, b)
	if _, err := s.Settle(ctx, "a", settlement("U1"), t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := events(Trail(t, s, asktype.AuditQuery{CallID: "a"})); fmt.Sprint(got) != "[a:asked a:answered]" {
		t.Errorf("callId a: %v", got)
	}
	if got := events(Trail(t, s, asktype.AuditQuery{Since: t0.Add(30 * time.Minute)})); fmt.Sprint(got) != "[b:asked a:answered]" {
		t.Errorf("since 30m: %v", got)
	}
	if got := events(Trail(t, s, asktype.AuditQuery{Since: t0.Add(30 * time.Minute), CallID: "b", Limit: 1})); fmt.Sprint(got) != "[b:asked]" {
		t.Errorf("since 30m, callId b: %v", got)
	}
	if got := Trail(t, s, asktype.AuditQuery{CallID: "nope"}); len(got) != 0 {
		t.Errorf("an unknown call id: %v", events(got))
	}
}

func checkAuditRetention(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now()
	for _, at := range []time.Time{now.Add(-store.DefaultAuditRetention - 48*time.Hour), now.Add(-store.DefaultAuditRetention - time.Hour), now} {
		if err := s.Append(ctx, asktype.AuditEntry{At: at, Event: asktype.EventRefused, Detail: at.Format(time.RFC3339)}); err != nil {
			t.Fatal(err)
		}
	}
	all := Trail(t, s, asktype.AuditQuery{})
	if len(all) != 1 || all[0].Seq != 3 || all[0].Prev == "" {
		t.Fatalf("after retention: %+v; want only seq 3, still linked to what was trimmed", all)
	}
}

func checkAuditConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	const asks, clicks = 20, 5
	var wg sync.WaitGroup
	for i := range asks {
		wg.Go(func() {
			id := fmt.Sprintf("c%d", i)
			mustCreate(t, s, newAsk(id))
			var cw sync.WaitGroup
			for j := range clicks {
				cw.Go(func() { _, _ = s.Settle(ctx, id, settlement(fmt.Sprint("U", j)), t0.Add(time.Second)) })
			}
			cw.Go(func() {
				_ = s.Append(ctx, asktype.AuditEntry{At: t0, CallID: id, Event: asktype.EventRefused, Detail: "no"})
			})
			cw.Wait()
		})
	}
	wg.Wait()
	all := Trail(t, s, asktype.AuditQuery{})
	if len(all) != asks*3 {
		t.Fatalf("%d entries; want %d (asked, answered and refused per ask)", len(all), asks*3)
	}
	for i := range asks {
		got := events(ofCall(all, fmt.Sprintf("c%d", i)))
		if len(got) != 3 || got[0] != fmt.Sprintf("c%d:asked", i) {
			t.Errorf("c%d: %v", i, got)
		}
	}
}

// A transition whose caller goes away while it runs either happens with its
// event or not at all.
func checkAuditCancel(t *testing.T, s store.Store) {
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("c%d", i)
			mustCreate(t, s, newAsk(id))
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				time.Sleep(time.Duration(rand.IntN(400)) * time.Microsecond) // a caller going away at a random moment
				cancel()
			}()
			_, _ = s.Settle(ctx, id, settlement("U1"), t0.Add(time.Second))
			cancel()
		})
	}
	wg.Wait()
	all := Trail(t, s, asktype.AuditQuery{})
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		a, err := s.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := "[" + id + ":asked]"
		if a.State == asktype.Settled {
			want = "[" + id + ":asked " + id + ":answered]"
		}
		if got := events(ofCall(all, id)); fmt.Sprint(got) != want {
			t.Errorf("%s is %s; its events %v, want %s", id, a.State, got, want)
		}
	}
}

func checkAuditBadCursor(t *testing.T, s store.Store) {
	if _, _, err := s.Audit(context.Background(), asktype.AuditQuery{Cursor: "not a cursor"}); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("Audit with a bad cursor: %v", err)
	}
}

func checkAuditTwoReplicas(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	const n = 30
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("c%d", i)
			one, other := a, b
			if i%2 == 1 {
				one, other = b, a
			}
			mustCreate(t, one, newAsk(id))
			_, _ = other.Settle(ctx, id, settlement("U1"), t0.Add(time.Second))
			_ = one.Append(ctx, asktype.AuditEntry{At: t0, CallID: id, Event: asktype.EventRefused})
		})
	}
	wg.Wait()
	fromA, fromB := Trail(t, a, asktype.AuditQuery{}), Trail(t, b, asktype.AuditQuery{})
	if len(fromA) != 3*n || fmt.Sprint(events(fromA)) != fmt.Sprint(events(fromB)) {
		t.Fatalf("replica a reads %d entries, b %d; want the same %d", len(fromA), len(fromB), 3*n)
	}
	for i := range fromA {
		if fromA[i].Hash != fromB[i].Hash {
			t.Fatalf("the replicas read different chains at seq %d", fromA[i].Seq)
		}
	}
}

func checkAuditCrash(t *testing.T, crashing, healthy store.Store) {
	ctx := context.Background()
	for i := range 5 {
		mustCreate(t, crashing, newAsk(fmt.Sprintf("c%d", i)))
	}
	// The crashing store's chainer appends these and dies before it trims
	// the asks' outboxes; the healthy one takes over.
	_, _, _ = crashing.Audit(ctx, asktype.AuditQuery{})
	for i := range 5 {
		if _, err := healthy.Settle(ctx, fmt.Sprintf("c%d", i), settlement("U1"), t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	all := Trail(t, healthy, asktype.AuditQuery{})
	if len(all) != 10 {
		t.Fatalf("%d entries; want 10, each once: %v", len(all), events(all))
	}
	for i := range 5 {
		id := fmt.Sprintf("c%d", i)
		if got := events(ofCall(all, id)); fmt.Sprint(got) != "["+id+":asked "+id+":answered]" {
			t.Errorf("%s: %v", id, got)
		}
	}
}

func checkAuditNoScript(t *testing.T, s store.Store, flush func()) {
	ctx := context.Background()
	for i := range 6 {
		id := fmt.Sprintf("c%d", i)
		flush()
		mustCreate(t, s, timed(id, time.Minute))
		flush()
		if _, err := s.FinishPost(ctx, id, "me", asktype.MessageRef{Conversation: "C1", ID: "1." + id}, 0); err != nil {
			t.Fatal(err)
		}
		flush()
		if i%2 == 0 {
			if _, err := s.Settle(ctx, id, settlement("U1"), t0.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.Expire(ctx, id, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		flush()
	}
	all := Trail(t, s, asktype.AuditQuery{})
	if len(all) != 18 {
		t.Fatalf("%d entries after script flushes; want 18: %v", len(all), events(all))
	}
}
