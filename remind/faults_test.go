package remind_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// slowNudger takes `slow` of (fake) time per send, like a Slack call that
// is slow or times out, and runs during() while sending callID `hook`.
type slowNudger struct {
	c      *clock.Fake
	slow   time.Duration
	hook   string
	during func()
	sent   []string
}

func (s *slowNudger) Remind(_ context.Context, a *waterfall.Record, n waterfall.Nudge) error {
	s.c.Advance(s.slow)
	if a.CallID == s.hook && s.during != nil {
		f := s.during
		s.during = nil
		f()
	}
	s.sent = append(s.sent, a.CallID)
	return nil
}
func (s *slowNudger) Refusal(error) string { return "" }

// A claim's lease runs from when the reminder is claimed, not from when the
// sweep began: after slow sends, a later reminder claimed with a lease
// already run out would be sent by another replica too.
func TestSlowSendsDoNotLetAnotherReplicaSendTwice(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			st, c := open(t), clock.NewFake(t0)
			n := &slowNudger{c: c, slow: 31 * time.Second} // 2 sends > the 1m lease
			a := remind.New(st, n, sched, remind.Options{Clock: c, Lease: time.Minute})
			b := remind.New(st, n, sched, remind.Options{Clock: c, Lease: time.Minute})
			posted(t, st, "c1")
			posted(t, st, "c2")
			posted(t, st, "c3")
			n.hook = "c3"
			n.during = func() { b.Sweep(context.Background()) } // replica B's tick while A sends c3
			c.Advance(15 * time.Minute)
			a.Sweep(context.Background())
			seen := map[string]int{}
			for _, id := range n.sent {
				seen[id]++
			}
			for id, k := range seen {
				if k != 1 {
					t.Errorf("%s reminded %d times at step 1 (sent %v)", id, k, n.sent)
				}
			}
		})
	}
}

// answeringStore settles the ask while the keeper takes the budget: an answer
// arriving between fire's Get and the send.
type answeringStore struct {
	store.Store
	id string
}

func (s answeringStore) Take(ctx context.Context, b asktype.Bucket, now time.Time) (bool, error) {
	if _, err := s.Store.Settle(ctx, s.id, []byte(`{}`), now); err != nil {
		return false, err
	}
	return s.Store.Take(ctx, b, now)
}

func TestNoReminderForAnAskAnsweredBeforeTheSend(t *testing.T) {
	st, c, n := store.NewMemory(0, nil), clock.NewFake(t0), &nudges{}
	posted(t, st, "c1")
	k := remind.New(answeringStore{st, "c1"}, n, sched, remind.Options{Clock: c})
	c.Advance(15 * time.Minute)
	k.Sweep(context.Background())
	if got := n.got(); got != "[]" {
		t.Fatalf("sent %s for an ask answered before the send", got)
	}
}

// lostMove fails the timer move that follows a send (the second Move of
// an ask: the first is the claim), as a store that fails right then does.
type lostMove struct {
	store.Store
	mu    sync.Mutex
	moves int
	lose  int // which Move fails (1-based)
}

func (s *lostMove) Move(ctx context.Context, timer, callID string, from, to time.Time) (bool, error) {
	s.mu.Lock()
	s.moves++
	lose := s.moves == s.lose
	s.mu.Unlock()
	if lose {
		return false, errors.New("connection reset")
	}
	return s.Store.Move(ctx, timer, callID, from, to)
}

// A reminder Slack took (or refused for good) is not sent again when the
// timer move after it failed: the step is recorded as done, and the next
// step still comes on time.
func TestAReminderIsNotSentAgainWhenItsTimerMoveFailed(t *testing.T) {
	for name, open := range stores() {
		for _, refused := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/refused=%t", name, refused), func(t *testing.T) {
				t.Parallel()
				st, c, n := &lostMove{Store: open(t), lose: 2}, clock.NewFake(t0), &calls{}
				if refused {
					n.fail = []error{errRefused}
				}
				k := remind.New(st, n, sched, remind.Options{Clock: c, Lease: time.Minute})
				posted(t, st.Store, "c1")
				at(c, k, 15*time.Minute)        // claimed, sent (or refused), move lost
				at(c, k, 17*time.Minute)        // the lease ran out
				at(c, k, time.Hour+time.Second) // the next step
				want := "[c1#1 c1#2]"
				if refused {
					want = "[c1#1! c1#2]"
				}
				if got := n.got(); got != want {
					t.Fatalf("Slack was asked for %s; want %s (step 1 once, then step 2 on time)", got, want)
				}
			})
		}
	}
}

// calls records every Remind call, refused ones marked "!".
type calls struct {
	mu   sync.Mutex
	log  []string
	fail []error
}

func (n *calls) Remind(_ context.Context, a *waterfall.Record, nd waterfall.Nudge) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := fmt.Sprintf("%s#%d", a.CallID, nd.Step)
	if len(n.fail) > 0 {
		err := n.fail[0]
		n.fail = n.fail[1:]
		n.log = append(n.log, s+"!")
		return err
	}
	n.log = append(n.log, s)
	return nil
}

func (n *calls) Refusal(err error) string {
	if errors.Is(err, errRefused) {
		return err.Error()
	}
	return ""
}

func (n *calls) got() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return fmt.Sprint(n.log)
}
