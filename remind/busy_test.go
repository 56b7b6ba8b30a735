package remind_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/pace"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// busyChannel is one channel's queue of posts at Slack's pace (a post a
// second, a burst of 2): the real pace.Lane over the store's shared
// budget, on the test's clock. Questions wait in it; reminders take their
// turns at its front, as remind.Turner.
type busyChannel struct{ lane *pace.Lane }

func (b busyChannel) Turn(r *waterfall.Record, _ waterfall.Nudge, key string, run func()) bool {
	return b.lane.Add(pace.Job{Key: key, Group: r.SessionID, Class: 0, Run: run})
}

func (b busyChannel) Forgo(_ *waterfall.Record, _ waterfall.Nudge, key string) { b.lane.Drop(key) }

// budgets is the store's Budget role as the lane's pace.Taker (as the
// mirror wires it).
type budgets struct{ st store.Budget }

func (b budgets) TakeTurn(ctx context.Context, bk pace.Budget, groups []pace.Group, left []string, now time.Time, wait time.Duration) (string, bool, error) {
	gs := make([]store.TurnGroup, len(groups))
	for i, g := range groups {
		gs[i] = store.TurnGroup(g)
	}
	return b.st.TakeTurn(ctx, store.Turn{Bucket: asktype.Bucket(bk), Groups: gs, Left: left, Now: now, Wait: wait})
}

func (b budgets) Drain(ctx context.Context, bk pace.Budget, until time.Time) error {
	return b.st.Drain(ctx, asktype.Bucket(bk), until)
}

// ladder records when each reminder and page came, on the test's clock.
type ladder struct {
	c        *clock.Fake
	mu       sync.Mutex
	sent     map[string][]sentStep // by callId
	paged    map[string][]time.Duration
	unposted map[string]int
}

type sentStep struct {
	step int
	at   time.Duration // since t0
}

func newLadder(c *clock.Fake) *ladder {
	return &ladder{c: c, sent: map[string][]sentStep{}, paged: map[string][]time.Duration{}, unposted: map[string]int{}}
}

// Remind implements remind.Nudger: the post is made when called (its
// turn holds the channel's token).
func (l *ladder) Remind(_ context.Context, r *waterfall.Record, n waterfall.Nudge) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent[r.CallID] = append(l.sent[r.CallID], sentStep{n.Step, l.c.Now().Sub(t0)})
	return nil
}

func (l *ladder) Refusal(error) string { return "" }

// Escalate implements remind.Escalator: the page.
func (l *ladder) Escalate(_ context.Context, r *waterfall.Record, n waterfall.Nudge) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paged[r.CallID] = append(l.paged[r.CallID], l.c.Now().Sub(t0))
	l.unposted[r.CallID] = n.Unposted
	return nil
}

// A burst of questions spends their channel's posting budget, and each
// ask's reminders and page still keep to the configured ladder (issue 43,
// item 2): a reminder waits only for its turn at the front of the
// channel's queue and is posted on its rung (at or after its offset,
// before the next step), never after its page; the page comes at its due
// time whether or not the reminders could be posted, and counts those
// that were not (dropped). Driven on a fake clock: each round moves it
// 100 ms, lets the lane hand out the tokens due and sweeps.
func TestABusyChannelKeepsEachAsksLadder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		asks    int
		after   []time.Duration
		allSent bool // the channel has room for every reminder on its rung
	}{
		{"three asks at 6s,12s", 3, []time.Duration{6 * time.Second, 12 * time.Second}, true},
		{"four asks at 2s", 4, []time.Duration{2 * time.Second}, false},
		{"ten asks at 6s,12s", 10, []time.Duration{6 * time.Second, 12 * time.Second}, false},
	} {
		for name, open := range stores() {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := open(t), clock.NewFake(t0)
				lane := pace.NewLane(budgets{st}, pace.Budget{Name: "chat.postMessage/C1", PerMinute: 60, Burst: 2}, 1000, c, nil)
				t.Cleanup(func() { lane.Stop() })
				l := newLadder(c)
				sched := remind.Schedule{After: tc.after}
				k := remind.New(st, l, sched, remind.Options{Clock: c, Turns: busyChannel{lane}})
				k.EscalateTo(l)
				n := len(tc.after)
				pageAt := tc.after[n-1] + tc.after[n-1]
				if n > 1 {
					pageAt = 2*tc.after[n-1] - tc.after[n-2]
				}

				// The burst: every question at once, each waiting for its
				// post's turn in the channel (after any reminder).
				var ids []string
				for i := range tc.asks {
					id := fmt.Sprintf("busy-%02d", i)
					ids = append(ids, id)
					a, _, err := st.Create(ctx, &asktype.Ask{CallID: id, SessionID: "s1", Request: json.RawMessage(`{"questions":[{"question":"Deploy?"}]}`), Created: t0})
					if err != nil {
						t.Fatal(err)
					}
					if err := sched.Armer(st).Arm(ctx, rec(t, a)); err != nil {
						t.Fatal(err)
					}
					lane.Add(pace.Job{Key: id, Group: "s1", Class: 1, Run: func() {
						if _, err := st.SetMessage(ctx, id, asktype.MessageRef{Conversation: "C1", ID: fmt.Sprintf("1.%d", i)}); err != nil {
							t.Error(err)
						}
					}})
				}
				const round = 100 * time.Millisecond
				c.Advance(0) // the lane posts what its burst allows
				for c.Now().Before(t0.Add(pageAt + 3*time.Second)) {
					k.Sweep(ctx)
					c.Advance(0) // a reminder the sweep queued gets a token now if one is there
					k.Flush()
					c.Advance(round)
					k.Flush()
				}

				l.mu.Lock()
				defer l.mu.Unlock()
				for _, id := range ids {
					sent, paged := l.sent[id], l.paged[id]
					t.Logf("%s: reminders %v, paged at %v (due %s), %d unposted", id, sent, paged, pageAt, l.unposted[id])
					if len(paged) != 1 || paged[0] < pageAt || paged[0] > pageAt+2*time.Second {
						t.Errorf("%s: paged at %v; want once, within 2s of %s", id, paged, pageAt)
						continue
					}
					last := 0
					for _, s := range sent {
						next := pageAt
						if s.step < n {
							next = tc.after[s.step]
						}
						if s.step <= last || s.step > n || s.at < tc.after[s.step-1] || s.at >= next {
							t.Errorf("%s: reminder %d at %s; want each step once, in order, from %s and before %s", id, s.step, s.at, tc.after[min(s.step, n)-1], next)
						}
						last = s.step
					}
					if l.unposted[id] != n-last {
						t.Errorf("%s: the page says %d reminders were not posted; %d were not (of %d)", id, l.unposted[id], n-last, n)
					}
					if tc.allSent && len(sent) != n {
						t.Errorf("%s: %d reminders sent; want all %d", id, len(sent), n)
					}
				}
			})
		}
	}
}

func (s sentStep) String() string { return fmt.Sprintf("#%d@%s", s.step, s.at) }

// The sweep wakes when the earliest step is due, not up to a tick later:
// a page due between two ticks goes at its time.
func TestTheSweepWakesWhenAStepIsDue(t *testing.T) {
	st, c := store.NewMemory(0, nil), clock.NewFake(t0)
	l := newLadder(c)
	sched := remind.Schedule{After: []time.Duration{15 * time.Minute, time.Hour}}
	k := remind.New(st, l, sched, remind.Options{Clock: c}) // a tick of 10s
	k.EscalateTo(l)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	created := t0.Add(3 * time.Second) // its steps fall between ticks
	a, _, err := st.Create(ctx, &asktype.Ask{CallID: "c1", SessionID: "s1", Request: json.RawMessage(`{}`), Created: created})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetMessage(ctx, "c1", asktype.MessageRef{Conversation: "C1", ID: "1.1"}); err != nil {
		t.Fatal(err)
	}
	if err := sched.Armer(st).Arm(ctx, rec(t, a)); err != nil {
		t.Fatal(err)
	}
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = k.Stop(context.Background()) }()
	// Tick by tick up to a tick before each step, then the wake-up must be
	// armed at the step's own time.
	for _, step := range []time.Duration{15 * time.Minute, time.Hour, 105 * time.Minute} {
		due := created.Add(step)
		for c.Now().Before(due.Add(-10 * time.Second)) {
			next := c.Now().Add(10 * time.Second)
			if err := c.WaitTimers(ctx, next, 1); err != nil {
				t.Fatalf("waiting for the sweep's tick at %s: %v", next.Sub(t0), err)
			}
			c.Advance(10 * time.Second)
		}
		if err := c.WaitTimers(ctx, due, 1); err != nil {
			t.Fatalf("the sweep does not wake at the step due at +%s: %v", due.Sub(t0), err)
		}
		c.Advance(due.Sub(c.Now()))
	}
	if err := c.WaitTimers(ctx, created.Add(105*time.Minute+10*time.Second), 1); err != nil {
		t.Fatal(err) // the sweep after the page went round
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	got := fmt.Sprint(l.sent["c1"], " ", l.paged["c1"])
	if want := "[#1@15m3s #2@1h0m3s] [1h45m3s]"; got != want {
		t.Fatalf("reminders and page at %s; want %s, each at its time", got, want)
	}
}
