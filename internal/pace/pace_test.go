package pace

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

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

func setup(t *testing.T) (*clock.Fake, *store.Memory) {
	t.Helper()
	c := clock.NewFake(time.Unix(1700000000, 0))
	return c, store.NewMemory(time.Hour, c)
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
	want := []string{"answered", "busy-0", "b-0", "c-0", "busy-1", "busy-2", "busy-3", "busy-4", "refresh"}
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
	want := []string{"answered", "busy-0", "b-0", "busy-1", "busy-2", "refresh"}
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
	// Which replica wins a token is a race (the fake clock fires the
	// first-armed timer first); fairness between sessions is each lane's.
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
	c := clock.NewFake(time.Unix(1700000000, 0))
	st := store.NewMemory(time.Hour, c)
	b := Budget{Name: "drop", PerMinute: 60, Burst: 1}
	if ok, _ := st.Take(t.Context(), b, c.Now()); !ok {
		t.Fatal("no first token")
	}
	l := NewLane(st, b, 10, c, nil)
	t.Cleanup(l.Stop)
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
	c := clock.NewFake(time.Unix(1700000000, 0))
	st := store.NewMemory(time.Hour, c)
	b := Budget{Name: "shared", PerMinute: 60, Burst: 1}
	one, two := NewLane(st, b, 10, c, nil), NewLane(st, b, 10, c, nil)
	t.Cleanup(one.Stop)
	t.Cleanup(two.Stop)
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
