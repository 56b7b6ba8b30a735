package slacklimits

import (
	"testing"
	"time"
)

type fakeNow struct{ t time.Time }

func (f *fakeNow) now() time.Time          { return f.t }
func (f *fakeNow) advance(d time.Duration) { f.t = f.t.Add(d) }
func newClock() *fakeNow                   { return &fakeNow{t: time.Unix(1700000000, 0)} }
func allowN(l *Limiter, method, ch string, n int) (ok int) {
	for range n {
		if _, y := l.Allow(method, ch); y {
			ok++
		}
	}
	return ok
}

func TestPostMessagePerChannelBurstThenOnePerSecond(t *testing.T) {
	c := newClock()
	l := New(Slack(), 1, c.now)
	if got := allowN(l, "chat.postMessage", "C1", 10); got != PostMessage.Burst {
		t.Fatalf("a burst of 10 posts into one channel: %d allowed, want the burst %d", got, PostMessage.Burst)
	}
	ra, ok := l.Allow("chat.postMessage", "C1")
	if ok || ra != 1 {
		t.Fatalf("over the limit: ok=%v Retry-After=%d, want refused with 1", ok, ra)
	}
	// Another channel has its own budget.
	if got := allowN(l, "chat.postMessage", "C2", 1); got != 1 {
		t.Fatal("a post into another channel was refused")
	}
	c.advance(time.Second)
	if got := allowN(l, "chat.postMessage", "C1", 5); got != 1 {
		t.Fatalf("one second later: %d posts allowed, want 1", got)
	}
	if n := l.Limited()["chat.postMessage"]; n != 7+1+4 {
		t.Fatalf("refused posts counted %d, want 12", n)
	}
}

func TestTier3RetryAfterInSlackSeconds(t *testing.T) {
	c := newClock()
	l := New(Slack(), 1, c.now)
	if got := allowN(l, "chat.update", "", 50); got != Tier3.Burst {
		t.Fatalf("burst of updates: %d allowed, want %d", got, Tier3.Burst)
	}
	// 50 a minute: the next token is 1.2 s away, and Slack says whole seconds.
	if ra, ok := l.Allow("chat.update", ""); ok || ra != 2 {
		t.Fatalf("Retry-After %d ok=%v, want 2 and refused", ra, ok)
	}
	c.advance(1200 * time.Millisecond)
	if _, ok := l.Allow("chat.update", ""); !ok {
		t.Fatal("a token 1.2 s later was refused")
	}
	if _, ok := l.Allow("auth.test", ""); !ok {
		t.Fatal("a method without a limit was refused")
	}
}

func TestScaleRunsTheMinuteFaster(t *testing.T) {
	c := newClock()
	l := New(Slack(), 20, c.now)
	allowN(l, "chat.postMessage", "C1", PostMessage.Burst)
	if _, ok := l.Allow("chat.postMessage", "C1"); ok {
		t.Fatal("past the burst at ×20 was allowed")
	}
	c.advance(49 * time.Millisecond)
	if _, ok := l.Allow("chat.postMessage", "C1"); ok {
		t.Fatal("49 ms later at ×20 (one post per 50 ms) was allowed")
	}
	c.advance(time.Millisecond)
	if _, ok := l.Allow("chat.postMessage", "C1"); !ok {
		t.Fatal("50 ms later at ×20 was refused")
	}
}
