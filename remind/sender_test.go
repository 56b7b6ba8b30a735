package remind_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/waterfall"
)

var t0 = time.UnixMilli(1_800_000_000_000)

func stores() map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return store.NewMemory(0, nil) },
		"redis": func(t *testing.T) store.Store {
			rdb, prefix := testredis.Client(t)
			s, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

// nudges records the reminders sent; fail makes the next sends fail.
type nudges struct {
	mu   sync.Mutex
	sent []string // "callId#step" or "callId#step!" for the escalation
	fail []error
}

var errRefused = errors.New("message_not_found")

func (n *nudges) Remind(_ context.Context, a *waterfall.Record, nd waterfall.Nudge) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.fail) > 0 {
		err := n.fail[0]
		n.fail = n.fail[1:]
		return err
	}
	s := fmt.Sprintf("%s#%d", a.CallID, nd.Step)
	if nd.Escalate != nil {
		s += "!" + nd.Escalate[0]
	}
	n.sent = append(n.sent, s)
	return nil
}

func (n *nudges) Refusal(err error) string {
	if errors.Is(err, errRefused) {
		return err.Error()
	}
	return ""
}

func sentList(n *nudges) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.sent...)
}

func (n *nudges) got() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return fmt.Sprint(n.sent)
}

var sched = remind.Schedule{After: []time.Duration{15 * time.Minute, time.Hour}, Escalate: []string{"S0ONCALL"}}

// posted creates an open ask at t0 whose message is out, and arms it.
func posted(t *testing.T, st store.Store, id string) {
	t.Helper()
	ctx := context.Background()
	a, _, err := st.Create(ctx, &asktype.Ask{CallID: id, SessionID: "s1", Request: json.RawMessage(`{}`), Created: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetMessage(ctx, id, asktype.MessageRef{Conversation: "C1", ID: "1.1"}); err != nil {
		t.Fatal(err)
	}
	if err := sched.Armer(st).Arm(ctx, rec(t, a)); err != nil {
		t.Fatal(err)
	}
}

// rig is one test's store, clock, recorder and keeper.
type rig struct {
	st store.Store
	c  *clock.Fake
	n  *nudges
	k  *remind.Sender
}

// inEachStore runs test on a memory store and, with REDIS_URL, on Redis,
// with a keeper on sched and opts.
func inEachStore(t *testing.T, opts remind.Options, test func(t *testing.T, r rig)) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := opts
			o.Clock = clock.NewFake(t0)
			r := rig{st: open(t), c: o.Clock.(*clock.Fake), n: &nudges{}}
			r.k = remind.New(r.st, r.n, sched, o)
			test(t, r)
		})
	}
}

// at runs one sweep of k at t0+d.
func at(c *clock.Fake, k *remind.Sender, d time.Duration) {
	c.Advance(t0.Add(d).Sub(c.Now()))
	k.Sweep(context.Background())
}

func TestRemindersFireOnScheduleThenEscalateOnce(t *testing.T) {
	inEachStore(t, remind.Options{}, func(t *testing.T, r rig) {
		st, c, n, k := r.st, r.c, r.n, r.k
		posted(t, st, "c1")
		for _, step := range []struct {
			at   time.Duration
			want string
		}{
			{14 * time.Minute, "[]"},
			{15 * time.Minute, "[c1#1]"},
			{59 * time.Minute, "[c1#1]"},
			{time.Hour + time.Second, "[c1#1 c1#2]"},
			{105 * time.Minute, "[c1#1 c1#2 c1#3!S0ONCALL]"}, // one more gap (45m) after the last
			{10 * time.Hour, "[c1#1 c1#2 c1#3!S0ONCALL]"},    // and never again
		} {
			at(c, k, step.at)
			if got := n.got(); got != step.want {
				t.Fatalf("at +%s: sent %s; want %s", step.at, got, step.want)
			}
		}
	})
}

func TestRemindersStopWhenAnswered(t *testing.T) {
	inEachStore(t, remind.Options{}, func(t *testing.T, r rig) {
		st, c, n, k := r.st, r.c, r.n, r.k
		posted(t, st, "answered")
		posted(t, st, "withdrawn")
		posted(t, st, "waiting")
		at(c, k, 15*time.Minute)
		ctx := context.Background()
		if _, err := st.Settle(ctx, "answered", json.RawMessage(`{}`), c.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Abort(ctx, "withdrawn", c.Now(), asktype.Withdrawn); err != nil {
			t.Fatal(err)
		}
		at(c, k, 2*time.Hour)
		if got := n.got(); got != "[answered#1 waiting#1 withdrawn#1 waiting#3!S0ONCALL]" {
			t.Fatalf("sent %s; want nothing after the answer and the withdrawal", got)
		}
		if left, _ := st.Fired(ctx, "remind", t0.Add(48*time.Hour), 10); len(left) != 0 {
			t.Fatalf("timers left behind: %v", left)
		}
	})
}

func TestReminderAfterAnOutageSendsOnlyTheLatestStep(t *testing.T) {
	inEachStore(t, remind.Options{}, func(t *testing.T, r rig) {
		st, c, n, k := r.st, r.c, r.n, r.k
		posted(t, st, "c1")
		at(c, k, 70*time.Minute) // nobody swept at +15m
		if got := n.got(); got != "[c1#2]" {
			t.Fatalf("sent %s; want only the step due now", got)
		}
	})
}

func TestReplicasSendEachReminderOnce(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, c, n := open(t), clock.NewFake(t0), &nudges{}
			var ks []*remind.Sender
			for range 4 {
				ks = append(ks, remind.New(st, n, sched, remind.Options{Clock: c}))
			}
			for i := range 20 {
				posted(t, st, fmt.Sprintf("c%02d", i))
			}
			// The shared budget (a burst of 10) lets half through at once;
			// the rest follow as it refills, each sent by one replica.
			for _, d := range []time.Duration{15 * time.Minute, 16 * time.Minute} {
				c.Advance(t0.Add(d).Sub(c.Now()))
				var wg sync.WaitGroup
				for _, k := range ks {
					wg.Add(1)
					go func() { defer wg.Done(); k.Sweep(context.Background()) }()
				}
				wg.Wait()
				if d == 15*time.Minute {
					if got := len(sentList(n)); got != 10 {
						t.Fatalf("first round sent %d; want the budget's burst of 10", got)
					}
				}
			}
			n.mu.Lock()
			defer n.mu.Unlock()
			seen := map[string]int{}
			for _, s := range n.sent {
				seen[s]++
			}
			if len(n.sent) != 20 || len(seen) != 20 {
				t.Fatalf("4 replicas sent %d reminders (%d distinct) for 20 asks; want each once", len(n.sent), len(seen))
			}
		})
	}
}

func TestAFailedReminderIsRetriedAfterTheLeaseAndARefusedOneSkipped(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, c, n := open(t), clock.NewFake(t0), &nudges{fail: []error{errors.New("connection reset")}}
			k := remind.New(st, n, sched, remind.Options{Clock: c, Lease: time.Minute})
			posted(t, st, "c1")
			at(c, k, 15*time.Minute)
			at(c, k, 15*time.Minute+30*time.Second) // still leased to the failed attempt
			if got := n.got(); got != "[]" {
				t.Fatalf("sent %s during the lease", got)
			}
			at(c, k, 16*time.Minute)
			if got := n.got(); got != "[c1#1]" {
				t.Fatalf("sent %s; want the failed reminder sent after the lease", got)
			}
			n.mu.Lock()
			n.fail = []error{errRefused}
			n.mu.Unlock()
			at(c, k, time.Hour)
			at(c, k, time.Hour+2*time.Minute)
			at(c, k, 105*time.Minute)
			if got := n.got(); got != "[c1#1 c1#3!S0ONCALL]" {
				t.Fatalf("sent %s; want the refused reminder skipped, not retried, and the escalation on time", got)
			}
		})
	}
}

func TestRemindersWaitForTheMessage(t *testing.T) {
	st, c, n := store.NewMemory(0, nil), clock.NewFake(t0), &nudges{}
	k := remind.New(st, n, sched, remind.Options{Clock: c})
	ctx := context.Background()
	a, _, _ := st.Create(ctx, &asktype.Ask{CallID: "c1", SessionID: "s1", Request: json.RawMessage(`{}`), Created: t0})
	if err := sched.Armer(st).Arm(ctx, rec(t, a)); err != nil {
		t.Fatal(err)
	}
	at(c, k, 15*time.Minute)
	if got := n.got(); got != "[]" {
		t.Fatalf("reminded about a question not posted yet: %s", got)
	}
	if _, err := st.SetMessage(ctx, "c1", asktype.MessageRef{Conversation: "C1", ID: "1.1"}); err != nil {
		t.Fatal(err)
	}
	at(c, k, 16*time.Minute)
	if got := n.got(); got != "[c1#1]" {
		t.Fatalf("sent %s once the message was out", got)
	}
}

func TestParseOffsets(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"15m", " 1h"}, "[15m0s 1h0m0s] <nil>"},
		{nil, "[] <nil>"},
		{[]string{"1h", "15m"}, `[] "15m" does not come after 1h0m0s: list the offsets in ascending order`},
		{[]string{"soon"}, `[] "soon" is not a duration such as 15m or 1h`},
		{[]string{"10ms"}, `[] "10ms" is under a second`},
	} {
		got, err := remind.ParseOffsets(tc.in)
		if s := fmt.Sprint(got, " ", err); s != tc.want {
			t.Errorf("ParseOffsets(%q) = %s; want %s", tc.in, s, tc.want)
		}
	}
	if err := (remind.Schedule{Escalate: []string{"S1"}}).Validate(); !errors.Is(err, remind.ErrEscalateAlone) {
		t.Errorf("escalation without reminders: %v", err)
	}
}
