package slackbot

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store"
)

// topLevel lists the top-level messages of channel (a session's parent
// lines, and questions outside threads).
func topLevel(fake *slackfake.Server, channel string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range fake.Messages() {
		if m.Channel == channel && m.ThreadTS == "" {
			out = append(out, m)
		}
	}
	return out
}

// retried is a as the mirror hands it to a later attempt: an earlier one
// was made.
func retried(a *asktype.Ask) *asktype.Ask {
	b := *a
	b.PostAttempt = b.Created
	return &b
}

// flakyBook fails the first write of a session's thread: before storing
// it (lost=false), or after (lost=true: stored, but the answer was lost).
type flakyBook struct {
	ThreadBook
	mu     sync.Mutex
	lost   bool
	failed bool
}

func (k *flakyBook) Remember(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error) {
	k.mu.Lock()
	fail := value != "" && !k.failed
	k.failed = k.failed || fail
	k.mu.Unlock()
	if fail {
		if k.lost {
			_, _ = k.ThreadBook.Remember(ctx, key, value, ttl, now)
		}
		return "", errors.New("connection reset")
	}
	return k.ThreadBook.Remember(ctx, key, value, ttl, now)
}

// A session's parent line left behind by an attempt that failed after
// posting it (its answer lost, or the thread not recorded) is used by the
// next attempt, not left bare beside a second one; and the session's first
// question is broadcast to the channel however the attempts went.
func TestSessionParentIsNotLeftBare(t *testing.T) {
	for name, fail := range map[string]func(fake *slackfake.Server) ThreadBook{
		"parent answer lost":           func(fake *slackfake.Server) ThreadBook { fake.DropNext("chat.postMessage", 1); return nil },
		"thread not recorded":          func(*slackfake.Server) ThreadBook { return &flakyBook{} },
		"thread recorded, answer lost": func(*slackfake.Server) ThreadBook { return &flakyBook{lost: true} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, api := fakeInC1(t)
			st := testStore(t)
			var keeper ThreadBook = st
			if k := fail(fake); k != nil {
				k.(*flakyBook).ThreadBook = st
				keeper = k
			}
			s := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: keeper})
			ctx := context.Background()
			a := threadedAsk(t, st, "bare-1", "sess-bare")
			// The attempt recovers at once when it can (a lost answer is
			// looked up); otherwise the mirror's next attempt does.
			ref, err := s.Post(ctx, rec(t, a))
			if err != nil {
				if ref, err = s.Post(ctx, rec(t, retried(a))); err != nil {
					t.Fatal(err)
				}
			}
			if top := topLevel(fake, "C1"); len(top) != 1 || top[0].TS != ref.Thread {
				t.Fatalf("%d top-level messages; want one parent line, the question's thread %s", len(top), ref.Thread)
			}
			if q, _ := fake.Message("C1", ref.ID); !q.Broadcast {
				t.Fatal("the session's first question was not broadcast to the channel")
			}
		})
	}
}

// A losing replica's parent line whose delete failed is deleted later, by
// the next question of the session.
func TestLosingParentIsDeletedLater(t *testing.T) {
	t.Parallel()
	fake, api := fakeInC1(t)
	st := testStore(t)
	k := &racedBook{ThreadBook: st, other: func() string {
		_, ts, err := api.PostMessage("C1", slack.MsgOptionText("the other replica's parent", false))
		if err != nil {
			t.Error(err)
		}
		return ts
	}}
	s := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: k})
	ctx := context.Background()
	fake.FailNext("chat.delete", 5, "internal_error", 0) // every retry of the call
	if _, err := s.Post(ctx, rec(t, threadedAsk(t, st, "lose-1", "sess-lose"))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Post(ctx, rec(t, threadedAsk(t, st, "lose-2", "sess-lose"))); err != nil {
		t.Fatal(err)
	}
	if top := topLevel(fake, "C1"); len(top) != 1 {
		t.Fatalf("%d top-level messages; want the loser's parent deleted by the next post", len(top))
	}
}

// At the boundary where the store forgets a session's thread, a question
// whose post went into the old thread just before (its answer lost) is
// found there afterwards, not posted a second time; and replicas posting
// after it agree on one new thread.
func TestThreadBoundaryFindAndAgree(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clockNow := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	fake, api := reviewFake(t, clockNow)
	st := store.NewMemory(0, nil)
	r1 := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: st, Now: clockNow,
		Chat: &lossyChat{Chat: apiChat{api}, n: 2}})
	r2 := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: st, Now: clockNow})
	ctx := context.Background()
	first, err := r1.Post(ctx, rec(t, reviewAsk(t, st, "edge-1", "", "", "sess-edge")))
	if err != nil {
		t.Fatal(err)
	}
	advance(threadTTL - 30*time.Second)
	since := clockNow()
	late := reviewAsk(t, st, "edge-2", "", "", "sess-edge")
	if _, err := r1.Post(ctx, rec(t, late)); err == nil {
		t.Fatal("want the lost answer to fail the post")
	}
	advance(time.Minute) // the store forgets the first thread
	found, ok, err := r2.Find(ctx, rec(t, late), since)
	if err != nil || !ok || found.Thread != first.Thread {
		t.Fatalf("Find after the boundary = %+v %v %v; want the question in the old thread %s", found, ok, err, first.Thread)
	}
	p1, err := r1.Post(ctx, rec(t, reviewAsk(t, st, "edge-3", "", "", "sess-edge")))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := r2.Post(ctx, rec(t, reviewAsk(t, st, "edge-4", "", "", "sess-edge")))
	if err != nil {
		t.Fatal(err)
	}
	if p1.Thread == first.Thread || p1.Thread != p2.Thread {
		t.Fatalf("after the boundary the replicas post in threads %s and %s (old %s); want one new thread", p1.Thread, p2.Thread, first.Thread)
	}
	_ = fake
}
