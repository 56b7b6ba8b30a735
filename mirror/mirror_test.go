package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// fakeSurface is a chat surface in memory: it records every message and
// fails, refuses or loses answers on request.
type fakeSurface struct {
	mu       sync.Mutex
	messages map[string]int64 // ts → version shown
	byCall   map[string]string
	posts    int
	finds    int
	// failNext fails the next calls (no effect); loseNext posts but
	// reports an error; limitNext rate-limits the next posts (no effect,
	// RetryAfter); refuse refuses every post for good.
	failNext, loseNext, limitNext int
	refuse                        string
	changed                       chan struct{}
}

var (
	errTransient = errors.New("surface: try again")
	errLimited   = errors.New("surface: rate limited")
)

func newFakeSurface() *fakeSurface {
	return &fakeSurface{messages: map[string]int64{}, byCall: map[string]string{}, changed: make(chan struct{}, 1000)}
}

func (f *fakeSurface) note() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *fakeSurface) Post(_ context.Context, a *waterfall.Record) (asktype.MessageRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.note()
	f.posts++
	switch {
	case f.refuse != "":
		return asktype.MessageRef{Conversation: "C1"}, errors.New(f.refuse)
	case f.failNext > 0:
		f.failNext--
		return asktype.MessageRef{}, errTransient
	case f.limitNext > 0:
		f.limitNext--
		return asktype.MessageRef{}, errLimited
	}
	ts := fmt.Sprintf("%d.000000", len(f.messages)+1)
	f.messages[ts] = a.Version
	f.byCall[a.CallID] = ts
	if f.loseNext > 0 {
		f.loseNext--
		return asktype.MessageRef{}, errTransient
	}
	return asktype.MessageRef{Conversation: "C1", ID: ts}, nil
}

func (f *fakeSurface) Update(_ context.Context, a *waterfall.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.note()
	if f.failNext > 0 {
		f.failNext--
		return errTransient
	}
	f.messages[a.Message.ID] = a.Version
	return nil
}

func (f *fakeSurface) Find(_ context.Context, a *waterfall.Record, _ time.Time) (asktype.MessageRef, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finds++
	ts, ok := f.byCall[a.CallID]
	return asktype.MessageRef{Conversation: "C1", ID: ts}, ok, nil
}

func (f *fakeSurface) Refusal(err error) string {
	if errors.Is(err, errTransient) || errors.Is(err, errLimited) {
		return ""
	}
	return err.Error()
}

func (f *fakeSurface) RetryAfter(err error) time.Duration {
	if errors.Is(err, errLimited) {
		return time.Millisecond
	}
	return 0
}

func (f *fakeSurface) stats() (posts, finds, msgs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.posts, f.finds, len(f.messages)
}

type bundle struct {
	st      *store.Memory
	surface *fakeSurface
	m       *Mirror
}

func setup(t *testing.T) *bundle {
	t.Helper()
	t.Parallel()
	st := store.NewMemory(0, nil)
	s := newFakeSurface()
	m := New(st, s, Options{Holder: "me", RetryBase: time.Millisecond, ReconcileAfter: time.Minute})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	return &bundle{st: st, surface: s, m: m}
}

func (b *bundle) create(t *testing.T, callID string) *asktype.Ask {
	t.Helper()
	a, _, err := b.st.Create(context.Background(), &asktype.Ask{CallID: callID, Request: json.RawMessage(`{}`), Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// until waits for cond, re-checking whenever the surface is called.
func (b *bundle) until(t *testing.T, what string, cond func(a *asktype.Ask) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		a, err := b.st.Get(context.Background(), "c1")
		if err == nil && cond(a) {
			return
		}
		select {
		case <-b.surface.changed:
		case <-time.After(5 * time.Millisecond): // store-only changes wake nobody here
		case <-deadline:
			t.Fatalf("%s: never happened (ask %+v)", what, a)
		}
	}
}

func caughtUp(a *asktype.Ask) bool { return a.Message.Posted() && a.Rendered >= a.Version }

func TestPostsThenFollowsTheAsk(t *testing.T) {
	b := setup(t)
	b.create(t, "c1")
	b.m.Kick("c1")
	b.until(t, "posted", caughtUp)
	if _, err := b.st.Settle(context.Background(), "c1", json.RawMessage(`{}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	b.m.Kick("c1")
	b.until(t, "updated to settled", func(a *asktype.Ask) bool { return a.State == asktype.Settled && caughtUp(a) })
	if posts, _, msgs := b.surface.stats(); posts != 1 || msgs != 1 {
		t.Fatalf("%d posts, %d messages; want 1 and 1", posts, msgs)
	}
}

func TestTransientFailuresAreRetried(t *testing.T) {
	b := setup(t)
	b.surface.failNext = 3
	b.create(t, "c1")
	b.m.Kick("c1")
	b.until(t, "posted after failures", caughtUp)
}

// What a failed post leaves decides whether its retry looks for it first
// (Find; on Slack a conversations.history call): a rate-limited post made
// nothing, so its retry posts at once; a post that failed otherwise may
// have posted, so its retry looks first; a post whose answer was lost is
// found and adopted, not posted twice.
func TestFailedPostsAreRetriedAndFoundOnlyWhenTheyMayExist(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		set                func(f *fakeSurface)
		posts, finds, msgs int
	}{
		{"rate limited twice", func(f *fakeSurface) { f.limitNext = 2 }, 3, 0, 1},
		{"failed once", func(f *fakeSurface) { f.failNext = 1 }, 2, 1, 1},
		{"answer lost", func(f *fakeSurface) { f.loseNext = 1 }, 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			tc.set(b.surface)
			b.create(t, "c1")
			b.m.Kick("c1")
			b.until(t, "posted", caughtUp)
			if posts, finds, msgs := b.surface.stats(); posts != tc.posts || finds != tc.finds || msgs != tc.msgs {
				t.Fatalf("posts %d finds %d messages %d; want %d, %d, %d", posts, finds, msgs, tc.posts, tc.finds, tc.msgs)
			}
		})
	}
}

func TestRefusalIsRecordedAndNotRetried(t *testing.T) {
	b := setup(t)
	b.surface.refuse = "channel_not_found"
	b.create(t, "c1")
	b.m.Kick("c1")
	b.until(t, "refusal recorded", func(a *asktype.Ask) bool { return a.Message.Refused == "channel_not_found" })
	b.m.Sweep(context.Background(), time.Now().Add(time.Hour))
	_ = b.m.Stop(context.Background())
	if posts, _, _ := b.surface.stats(); posts != 1 {
		t.Fatalf("%d posts; a refusal for good is not retried", posts)
	}
	if got, _ := b.st.Stale(context.Background(), time.Now().Add(time.Hour), 10); len(got) != 0 {
		t.Fatalf("refused ask still stale: %v", got)
	}
}

// The post lease keeps two replicas from posting the same ask at once.
func TestPostLeaseKeepsOtherReplicasOut(t *testing.T) {
	b := setup(t)
	b.create(t, "c1")
	ctx := context.Background()
	if _, err := b.st.Acquire(ctx, "c1", store.Claim{Name: leasePost, Hold: store.Hold{Holder: "other-replica", TTL: postLease, Now: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	b.m.sync(ctx, "c1", false, 0)
	if posts, _, _ := b.surface.stats(); posts != 0 {
		t.Fatalf("posted %d times while another replica held the post lease", posts)
	}
}

// An ask created by a replica that died before posting is posted by any
// replica's sweep.
func TestSweepPostsWhatNobodyPosted(t *testing.T) {
	b := setup(t)
	b.create(t, "c1")
	b.m.Sweep(context.Background(), time.Now().Add(time.Second))
	b.until(t, "posted by the sweep", caughtUp)
}

// An ask that ended before anyone tried to post it is never posted.
func TestEndedUnpostedAskIsNotPosted(t *testing.T) {
	b := setup(t)
	b.create(t, "c1")
	if _, err := b.st.Abort(context.Background(), "c1", time.Now(), asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	b.m.Kick("c1")
	_ = b.m.Stop(context.Background())
	if posts, _, _ := b.surface.stats(); posts != 0 {
		t.Fatalf("%d posts of a withdrawn, never-shown ask", posts)
	}
}

// Start and Stop: Stop is safe twice and before Start; Start after Stop
// does nothing.
func TestServiceShape(t *testing.T) {
	t.Parallel()
	m := New(store.NewMemory(0, nil), newFakeSurface(), Options{})
	ctx := context.Background()
	if err := m.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	m2 := New(store.NewMemory(0, nil), newFakeSurface(), Options{})
	if err := m2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m2.Start(ctx); err == nil {
		t.Fatal("started twice")
	}
	if err := m2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// countingGets counts the mirror's reads of asks.
type countingGets struct {
	*store.Memory
	gets atomic.Int32
}

func (c *countingGets) Get(ctx context.Context, id string) (*asktype.Ask, error) {
	c.gets.Add(1)
	return c.Memory.Get(ctx, id)
}

// A transition's record reaches the message without a read; a render that
// a newer change overtook (another replica changed the ask meanwhile) is
// noticed when it is marked, and the message is rendered again.
func TestChangedRendersTheRecordAndCatchesUpWithNewerOnes(t *testing.T) {
	b := setup(t)
	st := &countingGets{Memory: b.st}
	m := New(st, b.surface, Options{Holder: "me", RetryBase: time.Millisecond, ReconcileAfter: time.Minute})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	b.create(t, "c1")
	m.Kick("c1")
	b.until(t, "posted", caughtUp)
	ctx := context.Background()
	settled, err := b.st.Settle(ctx, "c1", json.RawMessage(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	before := st.gets.Load()
	m.Changed(rec(t, settled))
	b.until(t, "settled shown", func(a *asktype.Ask) bool { return a.State == asktype.Settled && caughtUp(a) })
	if n := st.gets.Load() - before; n != 0 {
		t.Fatalf("the mirror read the ask %d times to render a record it was handed", n)
	}
	// An older record handed in after a newer change: rendered, found
	// behind when marked, and the newer version rendered after it.
	stale := *settled
	if _, err := b.st.SetMessage(ctx, "c1", settled.Message); err != nil { // another change, as another replica's
		t.Fatal(err)
	}
	m.Changed(rec(t, &stale))
	b.until(t, "newest shown", func(a *asktype.Ask) bool {
		b.surface.mu.Lock()
		shown := b.surface.messages[a.Message.ID]
		b.surface.mu.Unlock()
		return caughtUp(a) && shown == a.Version
	})
}

// countingBegins counts the mirror's BeginPost round trips.
type countingBegins struct {
	*store.Memory
	begins atomic.Int32
}

func (c *countingBegins) BeginPost(ctx context.Context, id string, h store.Hold) (*asktype.Ask, error) {
	c.begins.Add(1)
	return c.Memory.BeginPost(ctx, id, h)
}

// An ask created with this mirror's post lease (waterfall.Poster) is posted
// without taking the lease again; one whose lease is someone else's, or
// nearly spent by the time the job runs, goes through BeginPost, which
// keeps others out and finds what an earlier attempt may have posted.
func TestCreatedWithTheLeasePostsWithoutBeginPost(t *testing.T) {
	b := setup(t)
	st := &countingBegins{Memory: b.st}
	m := New(st, b.surface, Options{Holder: "me", RetryBase: time.Millisecond, ReconcileAfter: time.Minute})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	ctx := context.Background()
	create := func(id string, lease asktype.PostLease) *asktype.Ask {
		a, _, err := b.st.Create(ctx, &asktype.Ask{CallID: id, Request: json.RawMessage(`{}`), Created: time.Now(), Poster: lease})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	m.Changed(rec(t, create("c1", m.PostLease(time.Now()))))
	b.until(t, "posted", caughtUp)
	if n := st.begins.Load(); n != 0 {
		t.Fatalf("%d BeginPost round trips for an ask created with the mirror's lease", n)
	}
	if posts, finds, _ := b.surface.stats(); posts != 1 || finds != 0 {
		t.Fatalf("posts %d finds %d; want 1 post and no search", posts, finds)
	}

	// Another replica created it (and holds the lease): not posted here.
	create("c2", asktype.PostLease{Holder: "other-replica", Until: time.Now().Add(postLease)})
	m.sync(ctx, "c2", false, 0)
	if posts, _, _ := b.surface.stats(); posts != 1 {
		t.Fatalf("posted an ask whose post lease another replica took at creation (%d posts)", posts)
	}

	// Our lease, but the job ran so late that little of it is left: the
	// lease is taken again first, and the attempt Create recorded makes
	// the mirror look for an earlier post before posting.
	late := create("c3", asktype.PostLease{Holder: "me#late", Until: time.Now().Add(time.Second)})
	before := st.begins.Load()
	m.Changed(rec(t, late))
	deadline := time.After(10 * time.Second)
	for {
		if a, _ := b.st.Get(ctx, "c3"); a != nil && caughtUp(a) {
			break
		}
		select {
		case <-b.surface.changed:
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			t.Fatal("the late job never posted")
		}
	}
	if n := st.begins.Load() - before; n != 1 {
		t.Fatalf("%d BeginPost round trips for a nearly spent lease; want 1", n)
	}
	if posts, finds, _ := b.surface.stats(); posts != 2 || finds != 1 {
		t.Fatalf("posts %d finds %d; want the late ask searched for, then posted once", posts, finds)
	}
}

// An ask created with the mirror's lease that ends before its post job
// runs is never posted, not searched for (the attempt Create recorded was
// never made), and its lease is given back.
func TestCreatedWithTheLeaseThenEndedIsNotPostedOrSearched(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	created, _, err := b.st.Create(ctx, &asktype.Ask{CallID: "c1", Request: json.RawMessage(`{}`), Created: time.Now(),
		Poster: b.m.PostLease(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	aborted, err := b.st.Abort(ctx, "c1", time.Now(), asktype.Withdrawn)
	if err != nil {
		t.Fatal(err)
	}
	// Both transitions reach the mirror before its job runs.
	b.m.keepFresh(created.CallID, created.Poster)
	b.m.remember(aborted)
	b.m.sync(ctx, "c1", false, 0)
	if posts, finds, _ := b.surface.stats(); posts != 0 || finds != 0 {
		t.Fatalf("posts %d finds %d for an ask withdrawn before its post job ran; want none", posts, finds)
	}
	if a, _ := b.st.Get(ctx, "c1"); a.Rendered != a.Version {
		t.Fatalf("the withdrawn ask is left stale: %+v", a)
	}
	if _, err := b.st.Acquire(ctx, "c1", store.Claim{Name: leasePost, Hold: store.Hold{Holder: "other-replica", TTL: postLease, Now: time.Now()}}); err != nil {
		t.Fatalf("the post lease Create took was not given back: %v", err)
	}
}

// setupStill is setup on a fake clock that the test never moves: retries
// wait for good, and a post lease taken now stays held.
func setupStill(t *testing.T) (*bundle, *clock.Fake) {
	t.Helper()
	t.Parallel()
	clk := clock.NewFake(time.Now())
	st := store.NewMemory(0, nil)
	s := newFakeSurface()
	m := New(st, s, Options{Holder: "me", Clock: clk, RetryBase: time.Millisecond, ReconcileAfter: time.Minute})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	return &bundle{st: st, surface: s, m: m}, clk
}

// deadPoster makes an ask as a replica that then died would leave it:
// created with that replica's post lease (for a whole lease yet), its post
// stored by the surface if landed, and the message never recorded.
func (b *bundle) deadPoster(t *testing.T, callID string, landed bool) *asktype.Ask {
	t.Helper()
	ctx := context.Background()
	now := b.m.clock.Now()
	created, _, err := b.st.Create(ctx, &asktype.Ask{CallID: callID, Request: json.RawMessage(`{}`), Created: now,
		Poster: asktype.PostLease{Holder: "dead-replica", Until: now.Add(postLease)}})
	if err != nil {
		t.Fatal(err)
	}
	if landed {
		if _, err := b.surface.Post(ctx, rec(t, created)); err != nil {
			t.Fatal(err)
		}
	}
	return created
}

// An ask that ends while its post's outcome is unknown (a replica died
// between the surface storing its post and recording it; its post lease
// runs for a while yet) is looked up and its message brought up to date
// by the replica that sees it, without waiting for the dead lease and
// without posting.
func TestEndedWhilePostOutcomeUnknownIsFoundUnderAnotherLease(t *testing.T) {
	b, clk := setupStill(t)
	m := b.m
	ctx := context.Background()
	b.deadPoster(t, "c1", true)
	settled, err := b.st.Settle(ctx, "c1", json.RawMessage(`{}`), clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	m.Changed(rec(t, settled))
	b.until(t, "the dead replica's message found and shows the answer", func(a *asktype.Ask) bool {
		b.surface.mu.Lock()
		shown := b.surface.messages[a.Message.ID]
		b.surface.mu.Unlock()
		return caughtUp(a) && shown == a.Version
	})
	if posts, finds, msgs := b.surface.stats(); posts != 1 || finds == 0 || msgs != 1 {
		t.Fatalf("posts %d finds %d messages %d; want the one post found, never posted again", posts, finds, msgs)
	}
}

// The look-up may find nothing yet (the dead replica's post not stored, or
// not listed, so far): nothing is posted for the ended ask, it stays on
// the stale index, and a later look finds the message.
func TestEndedWhilePostOutcomeUnknownLooksAgainWhenNothingIsFound(t *testing.T) {
	b, clk := setupStill(t)
	m := b.m
	ctx := context.Background()
	created := b.deadPoster(t, "c1", false)
	if _, err := b.st.Abort(ctx, "c1", clk.Now(), asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	m.sync(ctx, "c1", false, 0)
	if posts, finds, _ := b.surface.stats(); posts != 0 || finds != 1 {
		t.Fatalf("posts %d finds %d; want one look and no post of a withdrawn ask", posts, finds)
	}
	if got, _ := b.st.Stale(ctx, time.Now().Add(time.Hour), 10); len(got) != 1 {
		t.Fatalf("stale index %v; nothing found yet must not drop the ask", got)
	}
	// The dead replica's post lands after all; the sweep looks again.
	if _, err := b.surface.Post(ctx, rec(t, created)); err != nil {
		t.Fatal(err)
	}
	m.Sweep(ctx, time.Now().Add(time.Hour))
	b.until(t, "the late post found and shows the withdrawal", func(a *asktype.Ask) bool {
		b.surface.mu.Lock()
		shown := b.surface.messages[a.Message.ID]
		b.surface.mu.Unlock()
		return caughtUp(a) && shown == a.Version
	})
	if posts, _, msgs := b.surface.stats(); posts != 1 || msgs != 1 {
		t.Fatalf("posts %d messages %d; want only the dead replica's post", posts, msgs)
	}
}

// A replica that finds an ask's post lease held by another (which then
// dies) tries again as that lease ends, not a whole lease later: a killed
// replica's questions were posted up to a minute late.
func TestHeldPostIsTriedAgainAsTheLeaseEnds(t *testing.T) {
	b, clk := setupStill(t)
	ctx := context.Background()
	b.deadPoster(t, "c1", false) // its lease runs postLease from now
	clk.Advance(postLease - 10*time.Second)
	b.m.sync(ctx, "c1", false, 0) // ErrHeld: 10 s of the lease left
	if posts, _, _ := b.surface.stats(); posts != 0 {
		t.Fatalf("posted %d times under another replica's lease", posts)
	}
	// The retry is armed on the fake clock before sync returns: for the
	// lease's end and a quarter second (before: a whole lease, 30 s).
	clk.Advance(10*time.Second + 500*time.Millisecond)
	b.until(t, "posted once the dead replica's lease ended", caughtUp)
	if posts, _, msgs := b.surface.stats(); posts != 1 || msgs != 1 {
		t.Fatalf("posts %d messages %d; want one", posts, msgs)
	}
}
