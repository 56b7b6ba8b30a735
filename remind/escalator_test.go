package remind_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// escalations records the Escalator's calls; fail makes the next ones
// fail. It has a lifecycle, to see the Sender run it.
type escalations struct {
	mu      sync.Mutex
	got     []string // "callId#step/steps"
	fail    []error
	started int
	stopped int
}

func (e *escalations) Escalate(_ context.Context, r *waterfall.Record, n waterfall.Nudge) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, fmt.Sprintf("%s#%d/%d", r.CallID, n.Step, n.Steps))
	if len(e.fail) > 0 {
		err := e.fail[0]
		e.fail = e.fail[1:]
		return err
	}
	return nil
}

func (e *escalations) Start(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.started++
	return nil
}

func (e *escalations) Stop(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped++
	return nil
}

func (e *escalations) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return fmt.Sprint(e.got)
}

// An Escalator alone (nobody to mention) gives the schedule its
// escalation step: it acts once, one interval after the last reminder,
// and Slack gets nothing more.
func TestAnEscalatorAloneActsAtTheEscalationStep(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, c, n, e := open(t), clock.NewFake(t0), &nudges{}, &escalations{}
			k := remind.New(st, n, remind.Schedule{After: sched.After}, remind.Options{Clock: c})
			k.EscalateTo(e)
			posted(t, st, "c1")
			for _, step := range []struct {
				at         time.Duration
				slack, esc string
			}{
				{time.Hour + time.Second, "[c1#2]", "[]"},
				{104 * time.Minute, "[c1#2]", "[]"},
				{105 * time.Minute, "[c1#2]", "[c1#3/3]"},
				{10 * time.Hour, "[c1#2]", "[c1#3/3]"},
			} {
				at(c, k, step.at)
				if n.got() != step.slack || e.String() != step.esc {
					t.Fatalf("at +%s: Slack %s, escalator %s; want %s and %s", step.at, n.got(), e, step.slack, step.esc)
				}
			}
		})
	}
}

// A failed Escalator leaves the step for after the lease, without its
// Slack mention; a failed mention does not hold the Escalator back.
func TestTheEscalatorAndTheMentionAreEachRetried(t *testing.T) {
	st, c, n := store.NewMemory(0, nil), clock.NewFake(t0), &nudges{}
	e := &escalations{fail: []error{errors.New("pager down")}}
	k := remind.New(st, n, sched, remind.Options{Clock: c, Lease: time.Minute})
	k.EscalateTo(e)
	posted(t, st, "c1")
	at(c, k, 105*time.Minute)
	if n.got() != "[c1#3!S0ONCALL]" || e.String() != "[c1#3/3]" {
		t.Fatalf("Slack %s, escalator %s", n.got(), e)
	}
	at(c, k, 106*time.Minute+time.Second)
	if n.got() != "[c1#3!S0ONCALL]" || e.String() != "[c1#3/3 c1#3/3]" {
		t.Fatalf("after the lease: Slack %s, escalator %s; want the Escalator alone again", n.got(), e)
	}
	at(c, k, 110*time.Minute)
	if e.String() != "[c1#3/3 c1#3/3]" {
		t.Fatalf("escalated again after it worked: %s", e)
	}

	// The other way round: Slack fails, the Escalator acts at once.
	posted(t, st, "c2") // created at t0 too: its steps are all overdue, the latest is the escalation
	n.mu.Lock()
	n.fail = []error{errors.New("connection reset")}
	n.mu.Unlock()
	at(c, k, 111*time.Minute)
	if n.got() != "[c1#3!S0ONCALL]" || e.String() != "[c1#3/3 c1#3/3 c2#3/3]" {
		t.Fatalf("Slack failing: Slack %s, escalator %s", n.got(), e)
	}
	at(c, k, 112*time.Minute+time.Second)
	if n.got() != "[c1#3!S0ONCALL c2#3!S0ONCALL]" {
		t.Fatalf("the mention after the lease: %s", n.got())
	}
}

func TestTheSenderRunsTheEscalator(t *testing.T) {
	st, e := store.NewMemory(0, nil), &escalations{}
	k := remind.New(st, &nudges{}, sched, remind.Options{})
	k.EscalateTo(e)
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := k.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = k.Stop(context.Background())
	if e.started != 1 || e.stopped != 1 {
		t.Fatalf("started %d, stopped %d; want once each", e.started, e.stopped)
	}
}

func TestAnAnsweredAskIsNotEscalated(t *testing.T) {
	st, c, e := store.NewMemory(0, nil), clock.NewFake(t0), &escalations{}
	k := remind.New(st, &nudges{}, sched, remind.Options{Clock: c})
	k.EscalateTo(e)
	posted(t, st, "c1")
	if _, err := st.Settle(context.Background(), "c1", json.RawMessage(`{}`), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	at(c, k, 105*time.Minute)
	if e.String() != "[]" {
		t.Fatalf("escalated an answered ask: %s", e)
	}
}
