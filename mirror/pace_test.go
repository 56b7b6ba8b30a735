package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// orderSurface records which asks were posted and updated, in order.
type orderSurface struct {
	*fakeSurface
	mu             sync.Mutex
	posted, update []string
}

func (o *orderSurface) Post(ctx context.Context, a *waterfall.Record) (asktype.MessageRef, error) {
	o.mu.Lock()
	o.posted = append(o.posted, a.CallID)
	o.mu.Unlock()
	return o.fakeSurface.Post(ctx, a)
}

func (o *orderSurface) Update(ctx context.Context, a *waterfall.Record) error {
	o.mu.Lock()
	o.update = append(o.update, a.CallID)
	o.mu.Unlock()
	return o.fakeSurface.Update(ctx, a)
}

func (o *orderSurface) calls() (posted, updated []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.posted), slices.Clone(o.update)
}

type paced struct {
	st  *store.Memory
	clk *clock.Fake
	s   *orderSurface
	m   *Mirror
}

// setupPaced is a mirror pacing at Slack's real rates on a fake clock:
// one post a second in channel C1 after a burst of two.
func setupPaced(t *testing.T) *paced {
	t.Helper()
	t.Parallel()
	clk := clock.NewFake(time.Unix(1700000000, 0))
	st := store.NewMemory(time.Hour, clk)
	s := &orderSurface{fakeSurface: newFakeSurface()}
	m := New(st, s, Options{Holder: "me", Clock: clk, RetryBase: time.Millisecond, ReconcileAfter: time.Hour,
		Pace: &Pace{Channel: func(*asktype.Ask) string { return "C1" }}})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	return &paced{st: st, clk: clk, s: s, m: m}
}

func (p *paced) create(t *testing.T, callID, session string, deadline time.Time) {
	t.Helper()
	_, _, err := p.st.Create(context.Background(), &asktype.Ask{CallID: callID, SessionID: session, Request: json.RawMessage(`{}`),
		Created: p.clk.Now(), Deadline: deadline})
	if err != nil {
		t.Fatal(err)
	}
}

// wait polls cond (the work runs on the mirror's workers) until it holds.
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened", what)
		}
		time.Sleep(2 * time.Millisecond) // workers run in real time
	}
}

func (p *paced) queued(t *testing.T, n int) {
	t.Helper()
	wait(t, "queued", func() bool { k, _ := p.m.QueueDepth(); return k == n })
}

func (p *paced) postedSet(t *testing.T, want ...string) {
	t.Helper()
	wait(t, "posted "+join(want), func() bool {
		got, _ := p.s.calls()
		return len(got) == len(want)
	})
	got, _ := p.s.calls()
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("posted %v, want %v", got, w)
	}
}

func join(s []string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestPacedPostsAreFairBetweenSessions(t *testing.T) {
	p := setupPaced(t)
	// A busy session asks four times, then another session once.
	for i, id := range []string{"busy-0", "busy-1", "busy-2", "busy-3"} {
		p.create(t, id, "busy", time.Time{})
		p.m.Kick(id)
		p.queued(t, i+1) // one at a time: the workers would race
	}
	p.create(t, "other-0", "other", time.Time{})
	p.m.Kick("other-0")
	p.queued(t, 5)
	p.clk.Advance(0) // the burst: two posts
	p.postedSet(t, "busy-0", "other-0")
	p.clk.Advance(time.Second)
	p.postedSet(t, "busy-0", "other-0", "busy-1")
	p.clk.Advance(time.Second)
	p.postedSet(t, "busy-0", "other-0", "busy-1", "busy-2")
	if n, oldest := p.m.QueueDepth(); n != 1 || oldest != 2*time.Second {
		t.Fatalf("queue %d, oldest %s; want 1 and 2s", n, oldest)
	}
}

// A timed ask whose window closes while its question waits in the lane
// keeps waiting, behind the open ones, and is posted closed with no look
// for an earlier post: its job never ran. Asks created with this mirror's
// post lease (the usual way) record an attempt at creation, which must not
// read as "posted, outcome unknown" (that would post at once, tokenless,
// after a conversations.history look: the bench's 429s at ×5).
func TestPacedWindowClosingWhileQueuedIsPostedClosedAfterOpenOnes(t *testing.T) {
	t.Run("created plain", func(t *testing.T) { checkWindowClosingWhileQueued(t, false) })
	t.Run("created with the post lease", func(t *testing.T) { checkWindowClosingWhileQueued(t, true) })
}

func checkWindowClosingWhileQueued(t *testing.T, leased bool) {
	p := setupPaced(t)
	// Spend the channel's budget so everything below waits.
	for range postBurst {
		p.st.Take(context.Background(), asktype.Bucket{Name: "chat.postMessage/C1", PerMinute: postPerMinute, Burst: postBurst}, p.clk.Now())
	}
	if leased {
		a, _, err := p.st.Create(context.Background(), &asktype.Ask{CallID: "timed", SessionID: "s1", Request: json.RawMessage(`{}`),
			Created: p.clk.Now(), Deadline: p.clk.Now().Add(500 * time.Millisecond), Poster: p.m.PostLease(p.clk.Now())})
		if err != nil {
			t.Fatal(err)
		}
		p.m.Changed(rec(t, a))
	} else {
		p.create(t, "timed", "s1", p.clk.Now().Add(500*time.Millisecond))
		p.m.Kick("timed")
	}
	p.queued(t, 1)
	p.create(t, "open", "s2", time.Time{})
	p.m.Kick("open")
	p.queued(t, 2)
	// The window closes while the question waits for its turn.
	p.clk.Advance(600 * time.Millisecond)
	closed, err := p.st.Expire(context.Background(), "timed", p.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	p.m.Changed(rec(t, closed))
	wait(t, "the closed ask queued after open ones", func() bool {
		c, ok := p.m.pacer.postLane("C1").ClassOf("timed")
		return ok && c == postClosed
	})
	p.clk.Advance(time.Second) // one token: the open ask first
	p.postedSet(t, "open")
	p.clk.Advance(time.Second)
	p.postedSet(t, "open", "timed")
	a, err := p.st.Get(context.Background(), "timed")
	if err != nil {
		t.Fatal(err)
	}
	wait(t, "rendered", func() bool {
		a, _ = p.st.Get(context.Background(), "timed")
		return a.Rendered >= a.Version
	})
	if a.State != asktype.Continued || !a.Message.Posted() {
		t.Fatalf("timed ask %s posted=%v; want its closed window shown", a.State, a.Message.Posted())
	}
	if posts, finds, _ := p.s.stats(); posts != 2 || finds != 0 {
		t.Fatalf("%d posts and %d finds, want 2 and 0", posts, finds)
	}
}

func TestPacedAnsweredUpdatesGoFirstAndRefreshesAreDropped(t *testing.T) {
	p := setupPaced(t)
	for _, id := range []string{"a", "b", "c"} {
		p.create(t, id, id, time.Time{})
		p.m.Kick(id)
	}
	p.queued(t, 3)
	p.clk.Advance(0)
	p.clk.Advance(time.Second)
	p.postedSet(t, "a", "b", "c")
	wait(t, "all shown", func() bool {
		for _, id := range []string{"a", "b", "c"} {
			if a, err := p.st.Get(context.Background(), id); err != nil || !caughtUp(a) {
				return false
			}
		}
		return true
	})
	// Spend the update budget, then answer a and b and refresh c's countdown.
	for range updateBurst {
		p.st.Take(context.Background(), asktype.Bucket{Name: "chat.update", PerMinute: updatePerMinute, Burst: updateBurst}, p.clk.Now())
	}
	for _, id := range []string{"a", "b"} {
		s, err := p.st.Settle(context.Background(), id, json.RawMessage(`{}`), p.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		p.m.Changed(rec(t, s))
	}
	p.queued(t, 2)
	c, _ := p.st.Get(context.Background(), "c")
	p.m.Tick(rec(t, c))
	p.clk.Advance(3 * time.Second) // tokens for both answers (1.2 s each)
	wait(t, "answers shown", func() bool { _, u := p.s.calls(); return len(u) >= 2 })
	p.clk.Advance(5 * time.Second)
	wait(t, "queue drained", func() bool { n, _ := p.m.QueueDepth(); return n == 0 })
	_, updated := p.s.calls()
	slices.Sort(updated)
	if !slices.Equal(updated, []string{"a", "b"}) {
		t.Fatalf("updated %v; want the answered a and b, and c's refresh dropped while they waited", updated)
	}
}

// replySurface says asks in free have an unmetered way to their message
// (Slack: a click's response_url).
type replySurface struct {
	*orderSurface
	free map[string]bool // by message id
}

func (r *replySurface) Unmetered(ref asktype.MessageRef) bool { return r.free[ref.ID] }

// An update the surface can send unmetered goes at once, even with the
// update budget spent and nothing granted, and leaves the lane (its token
// would go unused); another ask's waits its token.
func TestPacedUnmeteredUpdateSkipsTheLane(t *testing.T) {
	p := setupPaced(t)
	rs := &replySurface{orderSurface: p.s, free: map[string]bool{}}
	p.m.surface = rs
	for _, id := range []string{"a", "b"} {
		p.create(t, id, id, time.Time{})
		p.m.Kick(id)
	}
	p.queued(t, 2)
	p.clk.Advance(0)
	p.postedSet(t, "a", "b")
	wait(t, "both shown", func() bool {
		for _, id := range []string{"a", "b"} {
			if a, err := p.st.Get(context.Background(), id); err != nil || !caughtUp(a) {
				return false
			}
		}
		return true
	})
	for range updateBurst {
		p.st.Take(context.Background(), asktype.Bucket{Name: "chat.update", PerMinute: updatePerMinute, Burst: updateBurst}, p.clk.Now())
	}
	settled := map[string]*asktype.Ask{}
	for _, id := range []string{"a", "b"} {
		s, err := p.st.Settle(context.Background(), id, json.RawMessage(`{}`), p.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		settled[id] = s
		p.m.Changed(rec(t, s))
	}
	p.queued(t, 2)
	// A click's response_url arrives for a's message: its update goes now.
	rs.free[settled["a"].Message.ID] = true
	p.m.Changed(rec(t, settled["a"]))
	wait(t, "a's update sent with no token", func() bool { _, u := p.s.calls(); return slices.Contains(u, "a") })
	p.queued(t, 1) // b waits for a token
	if _, u := p.s.calls(); slices.Contains(u, "b") {
		t.Fatalf("b updated without a token: %v", u)
	}
	p.clk.Advance(3 * time.Second)
	wait(t, "b's update after its token", func() bool { _, u := p.s.calls(); return slices.Contains(u, "b") })
}

// Asks created with this mirror's post lease that queue behind many others
// are posted without looking for an earlier post, however long they wait:
// the lease and the attempt Create recorded are given back when they
// join a long queue. Before, every question posted past half the lease
// (15 s) cost a Find (on Slack, conversations.history, Tier 3).
func TestPacedLongQueueOfLeasedAsksPostsWithoutFind(t *testing.T) {
	p := setupPaced(t)
	const n = 20
	for i := range n {
		id := fmt.Sprintf("q%02d", i)
		a, _, err := p.st.Create(context.Background(), &asktype.Ask{CallID: id, SessionID: id, Request: json.RawMessage(`{}`),
			Created: p.clk.Now(), Poster: p.m.PostLease(p.clk.Now())})
		if err != nil {
			t.Fatal(err)
		}
		p.m.Changed(rec(t, a))
		p.queued(t, i+1) // one at a time: the depth decides who gives the lease back
	}
	// One post a second after a burst of two, each given time to happen
	// before the clock moves on (as on a real clock).
	posted := func(k int) { wait(t, "posted", func() bool { posts, _, _ := p.s.stats(); return posts >= k }) }
	p.clk.Advance(0)
	posted(postBurst)
	for k := postBurst + 1; k <= n; k++ {
		p.clk.Advance(time.Second)
		posted(k)
	}
	if posts, finds, _ := p.s.stats(); posts != n || finds != 0 {
		t.Fatalf("%d posts, %d finds; want %d and 0", posts, finds, n)
	}
}
