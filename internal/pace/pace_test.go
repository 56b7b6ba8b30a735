package pace

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
)

// A second's worth of tokens: one a second, no burst to speak of.
var perSecond = Budget{Name: "chat.postMessage/C1", PerMinute: 60, Burst: 1}

type ran struct {
	mu  sync.Mutex
	ids []string
}

func (r *ran) job(key, group string, class int) Job {
	return Job{Key: key, Group: group, Class: class, Run: func() {
		r.mu.Lock()
		r.ids = append(r.ids, key)
		r.mu.Unlock()
	}}
}

func (r *ran) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids)
}

// memTaker is the store's Budget role as a Taker (what the mirror's
// adapter does), over the memory store.
type memTaker struct{ *store.Memory }

func (m memTaker) TakeTurn(ctx context.Context, b Budget, groups []Group, left []string, now time.Time, wait time.Duration) (string, bool, error) {
	tg := make([]store.TurnGroup, len(groups))
	for i, g := range groups {
		tg[i] = store.TurnGroup(g)
	}
	return m.Memory.TakeTurn(ctx, store.Turn{Bucket: asktype.Bucket(b), Groups: tg, Left: left, Now: now, Wait: wait})
}

func (m memTaker) Drain(ctx context.Context, b Budget, until time.Time) error {
	return m.Memory.Drain(ctx, asktype.Bucket(b), until)
}

func (m memTaker) Take(ctx context.Context, b Budget, now time.Time) (bool, error) {
	return m.Memory.Take(ctx, asktype.Bucket(b), now)
}

func setup(t *testing.T) (*clock.Fake, memTaker) {
	t.Helper()
	c := clock.NewFake(time.Unix(1700000000, 0))
	return c, memTaker{store.NewMemory(time.Hour, c)}
}

// seconds advances the fake clock one second at a time.
func seconds(c *clock.Fake, n int) {
	c.Advance(0)
	for range n {
		c.Advance(time.Second)
	}
}

func TestLaneUrgentClassFirstThenFairBetweenSessions(t *testing.T) {
	c, st := setup(t)
	l := NewLane(st, perSecond, 100, c, nil)
	var r ran
	// One busy session asks five times, then two others once each; a
	// refresh (class 2) and an answered ask's update (class 0) come last.
	for i := range 5 {
		l.Add(r.job(fmt.Sprintf("busy-%d", i), "busy", 1))
	}
	l.Add(r.job("b-0", "b", 1))
	l.Add(r.job("c-0", "c", 1))
	l.Add(r.job("refresh", "c", 2))
	l.Add(r.job("answered", "busy", 0))
	seconds(c, 10)
	// busy's answered update went first; a turn is by the group, so busy
	// then waits behind b and c, who have had none.
	want := []string{"answered", "b-0", "c-0", "busy-0", "busy-1", "busy-2", "busy-3", "busy-4", "refresh"}
	// Nothing ran before the clock moved (the pump is a timer), so the
	// burst's token goes to the most urgent job too.
	if got := r.got(); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestLaneOrderWhenAllWaiting(t *testing.T) {
	c, st := setup(t)
	// Spend the burst first, so every job below waits for a token.
	if ok, _ := st.Take(t.Context(), perSecond, c.Now()); !ok {
		t.Fatal("no first token")
	}
	l := NewLane(st, perSecond, 100, c, nil)
	var r ran
	for i := range 3 {
		l.Add(r.job(fmt.Sprintf("busy-%d", i), "busy", 1))
	}
	l.Add(r.job("b-0", "b", 1))
	l.Add(r.job("refresh", "b", 2))
	l.Add(r.job("answered", "busy", 0))
	c.Advance(0)
	if got := r.got(); len(got) != 0 {
		t.Fatalf("ran %v with the budget spent", got)
	}
	seconds(c, 10)
	want := []string{"answered", "b-0", "busy-0", "busy-1", "busy-2", "refresh"}
	if got := r.got(); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestLanePacesToTheBudget(t *testing.T) {
	c, st := setup(t)
	l := NewLane(st, perSecond, 100, c, nil)
	var r ran
	for i := range 10 {
		l.Add(r.job(fmt.Sprint(i), "s", 1))
	}
	seconds(c, 4)
	// One token at the start (the burst) and one a second since.
	if n := len(r.got()); n != 5 {
		t.Fatalf("%d jobs ran in 4 s at one a second (burst 1), want 5", n)
	}
	if n, oldest := l.Depth(); n != 5 || oldest != 4*time.Second {
		t.Fatalf("depth %d, oldest %s; want 5 and 4s", n, oldest)
	}
}

func TestLanesShareTheBudgetAcrossReplicas(t *testing.T) {
	c, st := setup(t)
	// Two replicas, one store: one budget between them.
	one, two := NewLane(st, perSecond, 100, c, nil), NewLane(st, perSecond, 100, c, nil)
	var r1, r2 ran
	for i := range 10 {
		one.Add(r1.job(fmt.Sprint("one-", i), "s1", 1))
		two.Add(r2.job(fmt.Sprint("two-", i), "s2", 1))
	}
	seconds(c, 9)
	n1, n2 := len(r1.got()), len(r2.got())
	if n1+n2 != 10 {
		t.Fatalf("%d+%d jobs ran in 9 s on one budget of one a second (burst 1), want 10 in all", n1, n2)
	}
	seconds(c, 10)
	if n1, n2 := len(r1.got()), len(r2.got()); n1+n2 != 20 {
		t.Fatalf("%d+%d of 20 jobs ran in 19 s", n1, n2)
	}
}

func TestLaneCooldownAndBound(t *testing.T) {
	c, st := setup(t)
	l := NewLane(st, perSecond, 2, c, nil)
	var r ran
	l.Cooldown(c.Now().Add(3 * time.Second))
	if !l.Add(r.job("a", "s", 1)) || !l.Add(r.job("b", "s", 1)) {
		t.Fatal("refused below its bound")
	}
	if l.Add(r.job("c", "s", 1)) {
		t.Fatal("took a job past its bound")
	}
	if !l.Add(r.job("a", "s", 0)) {
		t.Fatal("a waiting key was refused when full: it coalesces")
	}
	if c, ok := l.ClassOf("a"); !ok || c != 0 || l.n != 2 {
		t.Fatalf("a in class %d (%v), %d waiting; want moved to 0, still 2", c, ok, l.n)
	}
	seconds(c, 2)
	if got := r.got(); len(got) != 0 {
		t.Fatalf("ran %v during the Retry-After", got)
	}
	// The bucket was drained until the Retry-After's end and refills from
	// then: one token a second.
	seconds(c, 2)
	if got := r.got(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("a second after the Retry-After ran %v, want a (moved up)", got)
	}
	seconds(c, 1)
	if got := r.got(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("two seconds after the Retry-After ran %v, want a then b", got)
	}
	if l.Waiting(Classes) {
		t.Fatal("jobs left")
	}
}

// Drop takes a waiting job out: it never runs, and the lane's depth falls.
func TestDrop(t *testing.T) {
	t.Parallel()
	c, st := setup(t)
	b := Budget{Name: "drop", PerMinute: 60, Burst: 1}
	if ok, _ := st.Take(t.Context(), b, c.Now()); !ok {
		t.Fatal("no first token")
	}
	l := NewLane(st, b, 10, c, nil)
	t.Cleanup(func() { l.Stop() })
	ran := make(chan string, 2)
	for _, k := range []string{"x", "y"} {
		l.Add(Job{Key: k, Group: k, Run: func() { ran <- k }})
	}
	l.Drop("x")
	l.Drop("nothing")
	if n, _ := l.Depth(); n != 1 {
		t.Fatalf("depth %d after a drop, want 1", n)
	}
	c.Advance(3 * time.Second)
	if k := <-ran; k != "y" {
		t.Fatalf("ran %s, want y", k)
	}
	select {
	case k := <-ran:
		t.Fatalf("the dropped job ran: %s", k)
	case <-time.After(50 * time.Millisecond):
	}
}

// A Retry-After one replica heard holds every replica's lane of the
// budget: the store's bucket is drained until then.
func TestCooldownIsShared(t *testing.T) {
	t.Parallel()
	c, st := setup(t)
	b := Budget{Name: "shared", PerMinute: 60, Burst: 1}
	one, two := NewLane(st, b, 10, c, nil), NewLane(st, b, 10, c, nil)
	t.Cleanup(func() { one.Stop() })
	t.Cleanup(func() { two.Stop() })
	one.Cooldown(c.Now().Add(10 * time.Second))
	ran := make(chan struct{}, 1)
	two.Add(Job{Key: "x", Group: "x", Run: func() { ran <- struct{}{} }})
	for range 9 {
		c.Advance(time.Second)
	}
	select {
	case <-ran:
		t.Fatal("the other replica's lane ran inside the Retry-After")
	case <-time.After(50 * time.Millisecond):
	}
	c.Advance(3 * time.Second)
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica's lane never ran after the Retry-After")
	}
}

// One replica's lane holds a burst of one session; half a second later the
// other replica's lane gets three small sessions. Turns are the shared
// budget's, so the small sessions are not served after the whole burst
// (before, the lane that started first won every token): every small job
// runs before the burst's fifth.
func TestTurnsAcrossReplicas(t *testing.T) {
	c, st := setup(t)
	one, two := NewLane(st, perSecond, 100, c, nil), NewLane(st, perSecond, 100, c, nil)
	var order []string
	var mu sync.Mutex
	job := func(key, group string) Job {
		return Job{Key: key, Group: group, Class: 1, Run: func() { mu.Lock(); order = append(order, key); mu.Unlock() }}
	}
	for i := range 24 {
		one.Add(job(fmt.Sprintf("busy-%02d", i), "busy"))
	}
	c.Advance(0)
	c.Advance(500 * time.Millisecond)
	for _, g := range []string{"s1", "s2", "s3"} {
		for i := range 4 {
			two.Add(job(fmt.Sprintf("%s-%d", g, i), g))
		}
	}
	for range 160 {
		c.Advance(250 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 36 {
		t.Fatalf("%d of 36 jobs ran in 40 s at one a second: %v", len(order), order)
	}
	busy, lastSmall, fifthBusy := 0, -1, -1
	for i, k := range order {
		if k[:4] == "busy" {
			if busy++; busy == 5 {
				fifthBusy = i
			}
		} else {
			lastSmall = i
		}
	}
	if lastSmall < 0 || fifthBusy < 0 || lastSmall > fifthBusy {
		t.Fatalf("order %v: the small sessions waited behind the burst", order)
	}
}
