package pager_test

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
	"github.com/askslack/askslack/internal/pagerfake"
	"github.com/askslack/askslack/pager"
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

// create stores an open ask of kind ("plan", "permission" or a question)
// asked at t0, its message posted.
func create(t *testing.T, st store.Store, id, kind string) *waterfall.Record {
	t.Helper()
	q := map[string]any{"id": "q1", "question": "Deploy build 1234 now?"}
	switch kind {
	case "permission":
		q["id"] = waterfall.PermissionQuestionID
	case "plan":
		q["intent"] = map[string]any{"kind": waterfall.IntentPlanReview}
	}
	req, _ := json.Marshal(map[string]any{"callId": id, "agent": map[string]any{"id": "agent-1", "sessionId": "sess-1"}, "questions": []any{q}})
	ctx := context.Background()
	if _, _, err := st.Create(ctx, &asktype.Ask{CallID: id, SessionID: "sess-1", Request: req, Created: t0, Caller: "ci"}); err != nil {
		t.Fatal(err)
	}
	a, err := st.SetMessage(ctx, id, asktype.MessageRef{Conversation: "C1", ID: "1.1"})
	if err != nil {
		t.Fatal(err)
	}
	return record(t, a)
}

func record(t *testing.T, a *asktype.Ask) *waterfall.Record {
	t.Helper()
	r, err := waterfall.Decode(a)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func settle(t *testing.T, st store.Store, id string) *waterfall.Record {
	t.Helper()
	a, err := st.Settle(context.Background(), id, json.RawMessage(`{}`), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return record(t, a)
}

// replica is one replica's Escalation over a shared store and fake.
func replica(t *testing.T, st store.Store, p pager.Pager, opts pager.EscalationOptions) *pager.Escalation {
	t.Helper()
	if opts.Retry == 0 {
		opts.Retry = time.Millisecond
	}
	e := pager.NewEscalation(st, p, opts)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	return e
}

func stop(t *testing.T, es ...*pager.Escalation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, e := range es {
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func waitFor(t *testing.T, f *pagerfake.Server, what string, pred func([]pagerfake.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitFor(ctx, pred); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

var nudge = waterfall.Nudge{Step: 3, Steps: 3, Waited: 105 * time.Minute}

// Two replicas: one pages (again is a no-op), both see the answer, one
// resolves.
func TestEscalationPagesOnceAndResolvesOnce(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, f := open(t), pagerfake.New(pagerfake.Options{RoutingKey: routingKey})
			defer f.Close()
			p := pager.NewPagerDuty(routingKey, fast(f, nil))
			a, b := replica(t, st, p, pager.EscalationOptions{}), replica(t, st, p, pager.EscalationOptions{})
			r := create(t, st, "c1", "plan")
			ctx := context.Background()
			for _, e := range []*pager.Escalation{a, a, b} { // the step again, and on another replica
				if err := e.Escalate(ctx, r, nudge); err != nil {
					t.Fatal(err)
				}
			}
			if n := f.Count("trigger", "askslack/c1"); n != 1 {
				t.Fatalf("%d triggers; want 1", n)
			}
			done := settle(t, st, "c1")
			var wg sync.WaitGroup
			for _, e := range []*pager.Escalation{a, b, a} {
				wg.Go(func() { e.Changed(done) })
			}
			wg.Wait()
			waitFor(t, f, "resolve", func(evs []pagerfake.Event) bool { return len(evs) >= 2 })
			stop(t, a, b)
			if n := f.Count("resolve", "askslack/c1"); n != 1 || len(f.Events()) != 2 {
				t.Fatalf("events %+v; want one trigger and one resolve", f.Events())
			}
			if f.Events()[0].Severity != "warning" {
				t.Fatalf("a plan's page is %q; want warning", f.Events()[0].Severity)
			}
		})
	}
}

func TestAnAskNeverPagedIsNotResolved(t *testing.T) {
	st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{})
	defer f.Close()
	e := replica(t, st, pager.NewPagerDuty(routingKey, fast(f, nil)), pager.EscalationOptions{})
	create(t, st, "c1", "")
	e.Changed(settle(t, st, "c1"))
	stop(t, e)
	if f.Requests() != 0 {
		t.Fatalf("%d requests for an ask never paged", f.Requests())
	}
}

func TestAContinuedAskIsNotPaged(t *testing.T) {
	st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{})
	defer f.Close()
	e := replica(t, st, pager.NewPagerDuty(routingKey, fast(f, nil)), pager.EscalationOptions{})
	r := create(t, st, "c1", "")
	r.Ask.State = asktype.Continued
	if err := e.Escalate(context.Background(), r, nudge); err != nil {
		t.Fatal(err)
	}
	stop(t, e)
	if f.Requests() != 0 {
		t.Fatalf("%d requests for a continued ask", f.Requests())
	}
}

// answering answers the ask in the store while the page is being opened,
// and has the replica that answered observe it then: before the marker.
type answering struct {
	pager.Pager
	t  *testing.T
	st store.Store
	e  **pager.Escalation
}

func (a answering) Open(ctx context.Context, inc pager.Incident) error {
	(*a.e).Changed(settle(a.t, a.st, "c1"))
	return a.Pager.Open(ctx, inc)
}

func TestAnAnswerWhilePagingResolvesThePage(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, f := open(t), pagerfake.New(pagerfake.Options{})
			defer f.Close()
			var e *pager.Escalation
			e = replica(t, st, answering{Pager: pager.NewPagerDuty(routingKey, fast(f, nil)), t: t, st: st, e: &e}, pager.EscalationOptions{})
			r := create(t, st, "c1", "")
			if err := e.Escalate(context.Background(), r, nudge); err != nil {
				t.Fatal(err)
			}
			waitFor(t, f, "resolve", func(evs []pagerfake.Event) bool { return len(evs) >= 2 })
			stop(t, e)
			if f.Count("trigger", "") != 1 || f.Count("resolve", "askslack/c1") != 1 || len(f.Events()) != 2 {
				t.Fatalf("events %+v; want the trigger, then its resolve", f.Events())
			}
		})
	}
}

func TestARefusedPageIsGivenUp(t *testing.T) {
	st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{RoutingKey: routingKey})
	defer f.Close()
	e := replica(t, st, pager.NewPagerDuty("wrong-key", fast(f, nil)), pager.EscalationOptions{})
	r := create(t, st, "c1", "")
	if err := e.Escalate(context.Background(), r, nudge); err != nil {
		t.Fatalf("a refused page: %v; want it given up (nil)", err)
	}
	e.Changed(settle(t, st, "c1"))
	stop(t, e)
	if f.Requests() != 1 {
		t.Fatalf("%d requests; want the one refused trigger and no resolve", f.Requests())
	}
}

func TestAFailingPageIsTriedAgainThenGivenUp(t *testing.T) {
	st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{})
	defer f.Close()
	opts := fast(f, nil)
	opts.Attempts = 1
	e := replica(t, st, pager.NewPagerDuty(routingKey, opts), pager.EscalationOptions{Tries: 2})
	r := create(t, st, "c1", "")
	f.Fail(500, 500, 500)
	ctx := context.Background()
	for i, want := range []bool{true, true, false} {
		if err := e.Escalate(ctx, r, nudge); (err != nil) != want {
			t.Fatalf("step %d: %v; want an error %v", i+1, err, want)
		}
	}
	if f.Requests() != 2 {
		t.Fatalf("%d requests; want 2 tries", f.Requests())
	}
}

func TestAFailedResolveIsRetried(t *testing.T) {
	st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{})
	defer f.Close()
	opts := fast(f, nil)
	opts.Attempts = 1
	e := replica(t, st, pager.NewPagerDuty(routingKey, opts), pager.EscalationOptions{Retries: 3})
	r := create(t, st, "c1", "")
	if err := e.Escalate(context.Background(), r, nudge); err != nil {
		t.Fatal(err)
	}
	f.Fail(500, 503)
	e.Changed(settle(t, st, "c1"))
	waitFor(t, f, "resolve", func(evs []pagerfake.Event) bool { return len(evs) >= 2 })
	stop(t, e)
	if f.Requests() != 4 || f.Count("resolve", "askslack/c1") != 1 {
		t.Fatalf("%d requests, events %+v; want 2 failed resolves, then one", f.Requests(), f.Events())
	}
}

// flaky fails its store calls while fail is set.
type flaky struct {
	store.Store
	mu   sync.Mutex
	fail int
}

var errStore = errors.New("store unreachable")

func (f *flaky) Forget(ctx context.Context, key string, now time.Time) (string, error) {
	f.mu.Lock()
	if f.fail > 0 {
		f.fail--
		f.mu.Unlock()
		return "", errStore
	}
	f.mu.Unlock()
	return f.Store.Forget(ctx, key, now)
}

func TestAStoreErrorWhileResolvingIsRetried(t *testing.T) {
	st, f := &flaky{Store: store.NewMemory(0, nil)}, pagerfake.New(pagerfake.Options{})
	defer f.Close()
	e := replica(t, st, pager.NewPagerDuty(routingKey, fast(f, nil)), pager.EscalationOptions{})
	if err := e.Escalate(context.Background(), create(t, st, "c1", "permission"), nudge); err != nil {
		t.Fatal(err)
	}
	stop(t, e) // its look after the marker is done
	e = replica(t, st, pager.NewPagerDuty(routingKey, fast(f, nil)), pager.EscalationOptions{})
	st.mu.Lock()
	st.fail = 2
	st.mu.Unlock()
	e.Changed(settle(t, st, "c1"))
	waitFor(t, f, "resolve", func(evs []pagerfake.Event) bool { return len(evs) >= 2 })
	if ev := f.Events()[0]; ev.Severity != "error" || ev.Details["caller"] != "ci" || ev.Details["agent"] != "agent-1" || ev.Details["session"] != "sess-1" {
		t.Fatalf("a permission's page: %+v", ev)
	}
}

func TestStopResolvesWhatIsQueued(t *testing.T) {
	st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{})
	defer f.Close()
	e := replica(t, st, pager.NewPagerDuty(routingKey, fast(f, nil)), pager.EscalationOptions{Workers: 1})
	ctx := context.Background()
	var ended []*waterfall.Record
	for i := range 10 {
		id := fmt.Sprintf("c%d", i)
		if err := e.Escalate(ctx, create(t, st, id, ""), nudge); err != nil {
			t.Fatal(err)
		}
		ended = append(ended, settle(t, st, id))
	}
	for _, r := range ended {
		e.Changed(r)
	}
	stop(t, e)
	if n := f.Count("resolve", ""); n != 10 {
		t.Fatalf("%d resolves after Stop; want every one queued", n)
	}
	e.Changed(ended[0]) // after Stop: dropped, not blocked
}

func TestLinksAndSeverityOverride(t *testing.T) {
	st, f := store.NewMemory(0, nil), pagerfake.New(pagerfake.Options{})
	defer f.Close()
	links := func(_ context.Context, r *waterfall.Record) []pager.Link {
		return []pager.Link{{Href: "https://askslack.example/app/asks/" + r.CallID, Text: "Answer page"}}
	}
	e := replica(t, st, pager.NewPagerDuty(routingKey, fast(f, nil)), pager.EscalationOptions{Links: links, Severity: pager.Critical})
	if err := e.Escalate(context.Background(), create(t, st, "c1", ""), nudge); err != nil {
		t.Fatal(err)
	}
	ev := f.Events()[0]
	if ev.Severity != "critical" || len(ev.Links) != 1 || ev.Links[0] != "https://askslack.example/app/asks/c1" ||
		ev.Summary != "Deploy build 1234 now?" || ev.Details["waited"] != "1h45m0s" || ev.Details["kind"] != "question" {
		t.Fatalf("page: %+v", ev)
	}
}

// With reminders: the escalation step pages once across replicas sweeping
// together (remind's claim), with nobody to mention in Slack; the answer
// resolves it once.
func TestRemindersPageAtTheEscalationStep(t *testing.T) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, c, f := open(t), clock.NewFake(t0), pagerfake.New(pagerfake.Options{})
			defer f.Close()
			sched := remind.Schedule{After: []time.Duration{15 * time.Minute, time.Hour}}
			n := &slack{}
			var senders []*remind.Sender
			var escs []*pager.Escalation
			for range 3 { // swept by hand below, not started: their Escalations are
				e := replica(t, st, pager.NewPagerDuty(routingKey, fast(f, nil)), pager.EscalationOptions{Clock: c})
				k := remind.New(st, n, sched, remind.Options{Clock: c})
				k.EscalateTo(e)
				senders, escs = append(senders, k), append(escs, e)
			}
			ctx := context.Background()
			create(t, st, "c1", "")
			if err := sched.Armer(st).Arm(ctx, record(t, mustGet(t, st, "c1"))); err != nil {
				t.Fatal(err)
			}
			sweep := func(d time.Duration) {
				c.Advance(t0.Add(d).Sub(c.Now()))
				var wg sync.WaitGroup
				for _, k := range senders {
					wg.Go(func() { k.Sweep(ctx) })
				}
				wg.Wait()
			}
			sweep(15 * time.Minute)
			sweep(time.Hour)
			sweep(104 * time.Minute)
			if f.Requests() != 0 || n.count() != 2 {
				t.Fatalf("before the escalation: %d pages, %d reminders", f.Requests(), n.count())
			}
			sweep(105 * time.Minute)
			sweep(3 * time.Hour)
			if f.Count("trigger", "askslack/c1") != 1 || n.count() != 2 {
				t.Fatalf("after the escalation: events %+v, %d Slack messages; want one page and no mention", f.Events(), n.count())
			}
			done := settle(t, st, "c1")
			for _, e := range escs {
				e.Changed(done)
			}
			waitFor(t, f, "resolve", func(evs []pagerfake.Event) bool { return len(evs) >= 2 })
			for _, k := range senders {
				if err := k.Stop(ctx); err != nil { // never started: stops its Escalation
					t.Fatal(err)
				}
			}
			if len(f.Events()) != 2 {
				t.Fatalf("events %+v; want one trigger and one resolve", f.Events())
			}
		})
	}
}

func mustGet(t *testing.T, st store.Store, id string) *asktype.Ask {
	t.Helper()
	a, err := st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// slack counts the reminders remind sends.
type slack struct {
	mu sync.Mutex
	n  int
}

func (s *slack) Remind(context.Context, *waterfall.Record, waterfall.Nudge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return nil
}

func (s *slack) Refusal(error) string { return "" }

func (s *slack) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
