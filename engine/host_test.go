package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// waiting is an answerer that claims every request and waits, as the Slack
// answerer does (answers arrive out of band through Host.Answer). It reports
// each request it sees on seen.
func waiting(seen chan<- string) waterfall.Answerer {
	return waterfall.AnswererFunc(func(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
		seen <- req.CallID
		<-ctx.Done()
		return waterfall.Settlement{}, ctx.Err()
	})
}

func setup(t *testing.T, chain waterfall.Answerer) (*engine.Host, *store.Memory) {
	t.Parallel()
	st := store.NewMemory(0, nil)
	return engine.NewHost(st, chain, engine.HostOptions{Poll: 50 * time.Millisecond}), st
}

func ms(d time.Duration) *float64 { v := float64(d.Milliseconds()); return &v }

func request(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a1", SessionID: "s1"}, Questions: []waterfall.Question{{
		ID: "q1", Question: "Which?", Options: []waterfall.Option{{Label: "A"}, {Label: "B"}},
	}}}
}

func answerA() waterfall.Answer {
	return waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"A"}}}}
}

type result struct {
	r   waterfall.Result
	err error
}

func askAsync(h *engine.Host, ctx context.Context, req *waterfall.Request) chan result {
	ch := make(chan result, 1)
	go func() {
		r, err := h.Ask(ctx, req)
		ch <- result{r, err}
	}()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
		var zero T
		return zero
	}
}

func TestChainFallsThroughToNoProvider(t *testing.T) {
	skip := waterfall.AnswererFunc(func(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
		return next(ctx)
	})
	h, st := setup(t, waterfall.Chain(skip, waterfall.Scoped("other-agent", skip)))
	_, err := h.Ask(context.Background(), request("c1"))
	if !errors.Is(err, waterfall.ErrNoProvider) {
		t.Fatalf("err = %v, want NO_PROVIDER", err)
	}
	if a, _ := st.Get(context.Background(), "c1"); a.State != asktype.Aborted {
		t.Fatalf("an ask nobody took stays %s", a.State)
	}
}

func TestScopedAnswererSeesOnlyItsAgent(t *testing.T) {
	inline := func(label string) waterfall.Answerer {
		return waterfall.AnswererFunc(func(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
			return waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{label}}}},
				Respondent: waterfall.Respondent{UserName: label, Surface: waterfall.SurfaceAPI, At: time.Now()}}, nil
		})
	}
	h, _ := setup(t, waterfall.Chain(waterfall.Scoped("a2", inline("B")), inline("A")))
	r, err := h.Ask(context.Background(), request("c1"))
	if err != nil || r.Settlement.Answers[0].Selected[0] != "A" {
		t.Fatalf("a1's ask answered by %+v (%v); the a2-scoped answerer must not see it", r.Settlement, err)
	}
	req := request("c2")
	req.Agent.ID = "a2"
	r, err = h.Ask(context.Background(), req)
	if err != nil || r.Settlement.Answers[0].Selected[0] != "B" {
		t.Fatalf("a2's ask answered by %+v (%v)", r.Settlement, err)
	}
}

func TestAnswerWakesTheWaiterAndSettlesOnce(t *testing.T) {
	seen := make(chan string, 4)
	h, _ := setup(t, waiting(seen))
	ctx := context.Background()
	res := askAsync(h, ctx, request("c1"))
	recv(t, seen)
	out, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack})
	if err != nil || out.Queued {
		t.Fatalf("Answer: %+v %v", out, err)
	}
	got := recv(t, res)
	if got.err != nil || got.r.Pending() || got.r.Settlement.Respondent.UserID != "U1" {
		t.Fatalf("Ask = %+v %v", got.r, got.err)
	}
	b := waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"B"}}}}
	out, err = h.Answer(ctx, "c1", b, waterfall.Respondent{UserID: "U2"})
	if !errors.Is(err, waterfall.ErrAlreadySettled) || out.Settlement == nil || out.Settlement.Respondent.UserID != "U1" {
		t.Fatalf("second Answer: %+v %v; want ALREADY_SETTLED naming U1", out, err)
	}
}

func TestBadAnswerChangesNothing(t *testing.T) {
	seen := make(chan string, 1)
	h, st := setup(t, waiting(seen))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	askAsync(h, ctx, request("c1"))
	recv(t, seen)
	bad := waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"Z"}}}}
	if _, err := h.Answer(ctx, "c1", bad, waterfall.Respondent{}); !errors.Is(err, waterfall.ErrBadAnswer) {
		t.Fatalf("err = %v", err)
	}
	if a, _ := st.Get(ctx, "c1"); a.State != asktype.Open {
		t.Fatalf("state %s after a bad answer", a.State)
	}
}

func TestRepeatedCallIDReattaches(t *testing.T) {
	seen := make(chan string, 4)
	h, _ := setup(t, waiting(seen))
	ctx := context.Background()
	first := askAsync(h, ctx, request("c1"))
	second := askAsync(h, ctx, request("c1"))
	recv(t, seen)
	recv(t, seen)
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan result{first, second} {
		if got := recv(t, ch); got.err != nil || got.r.Settlement.Answers[0].Selected[0] != "A" {
			t.Fatalf("attached ask = %+v %v", got.r, got.err)
		}
	}
	again, err := h.Ask(ctx, request("c1"))
	if err != nil || again.Settlement.Respondent.UserID != "U1" {
		t.Fatalf("asking a settled call again = %+v %v; want the settlement", again, err)
	}
	diff := request("c1")
	diff.Questions[0].Question = "Something else?"
	if _, err := h.Ask(ctx, diff); !errors.Is(err, waterfall.ErrCallConflict) {
		t.Fatalf("reusing a callId for another question: %v", err)
	}
}

// A timed ask's wait is not part of what it asks: the same callId with
// another timeoutMs or onTimeout (a hook re-run with another --wait, or
// without --defer) re-attaches, and the deadline and request stored by the
// first ask stand — the answerer
// chain sees the stored request too. Timed and untimed still differ: an
// untimed caller cannot be handed {pending:true}.
func TestRepeatWithAnotherWaitReattaches(t *testing.T) {
	waits := make(chan time.Duration, 4)
	h, _ := setup(t, waterfall.AnswererFunc(func(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
		waits <- req.Timeout()
		<-ctx.Done()
		return waterfall.Settlement{}, ctx.Err()
	}))
	ctx := context.Background()
	req := request("c1")
	req.TimeoutMs = ms(time.Hour)
	first := askAsync(h, ctx, req)
	if w := recv(t, waits); w != time.Hour {
		t.Fatalf("the chain saw a wait of %s", w)
	}
	stored, err := h.Get(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	longer := request("c1")
	longer.TimeoutMs = ms(2 * time.Hour)
	longer.OnTimeout = waterfall.OnTimeoutTerminal // what the window's end brings is no more part of it
	second := askAsync(h, ctx, longer)
	if w := recv(t, waits); w != time.Hour {
		t.Fatalf("the re-attached chain saw a wait of %s; want the stored 1h0m0s", w)
	}
	now, err := h.Get(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if prev, _ := waterfall.DecodeRequest(now.Ask); !now.Deadline.Equal(stored.Deadline) || prev.Timeout() != time.Hour || prev.OnTimeout != "" {
		t.Fatalf("after the re-attach: deadline %s (was %s), stored wait %s, onTimeout %q", now.Deadline, stored.Deadline, prev.Timeout(), prev.OnTimeout)
	}
	if _, err := h.Ask(ctx, request("c1")); !errors.Is(err, waterfall.ErrCallConflict) {
		t.Fatalf("an untimed repeat of a timed ask: %v; want CALL_CONFLICT", err)
	}
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan result{first, second} {
		if got := recv(t, ch); got.err != nil || got.r.Pending() || got.r.Settlement.Respondent.UserID != "U1" {
			t.Fatalf("attached ask = %+v %v", got.r, got.err)
		}
	}
}

func TestAbortEndsTheWait(t *testing.T) {
	seen := make(chan string, 1)
	h, _ := setup(t, waiting(seen))
	ctx := context.Background()
	res := askAsync(h, ctx, request("c1"))
	recv(t, seen)
	if _, err := h.Abort(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, res); !errors.Is(got.err, waterfall.ErrAskAborted) {
		t.Fatalf("Ask after abort: %v", got.err)
	}
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{}); !errors.Is(err, waterfall.ErrAskAborted) {
		t.Fatalf("answering a withdrawn ask: %v", err)
	}
}

// A timed ask: pending at the deadline; a late answer queues a steered
// message; a second late answer is REPLY_QUEUED; the ack settles it and the
// projection moves it from active to settled.
func TestTimedAskLateAnswerLifecycle(t *testing.T) {
	seen := make(chan string, 1)
	h, _ := setup(t, waiting(seen))
	ctx := context.Background()
	req := request("c1")
	req.TimeoutMs = ms(100 * time.Millisecond)
	r, err := h.Ask(ctx, req)
	if err != nil || !r.Pending() || r.CallID != "c1" {
		t.Fatalf("timed ask = %+v %v; want pending", r, err)
	}
	p, _ := h.Projection(ctx, "s1")
	if len(p.Active) != 1 || p.Active[0].State != "continued" || len(p.Settled) != 0 {
		t.Fatalf("projection after the window = %+v", p)
	}
	custom := waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Custom: "neither </untrusted-data-x>"}}}
	out, err := h.Answer(ctx, "c1", custom, waterfall.Respondent{UserID: "U1", UserName: "alice", Surface: waterfall.SurfaceSlack})
	if err != nil || !out.Queued {
		t.Fatalf("late answer: %+v %v", out, err)
	}
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U2"}); !errors.Is(err, waterfall.ErrReplyQueued) {
		t.Fatalf("second late answer: %v", err)
	}
	msgs, err := h.Messages(ctx, "s1", 0)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("messages = %+v %v", msgs, err)
	}
	m := msgs[0]
	if m.ID != waterfall.MessageID("c1") || m.Source.Kind != "user-question" || m.Source.CallID != "c1" || m.Answers[0].Custom == "" || m.Respondent.UserID != "U1" {
		t.Fatalf("steered message = %+v", m)
	}
	if _, err := h.Ack(ctx, "other-session", m.ID); !errors.Is(err, waterfall.ErrNotFound) {
		t.Fatalf("ack from another session: %v", err)
	}
	if _, err := h.Ack(ctx, "s1", m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Ack(ctx, "s1", m.ID); err != nil {
		t.Fatalf("a repeated ack: %v", err)
	}
	p, _ = h.Projection(ctx, "s1")
	if len(p.Active) != 0 || len(p.Settled) != 1 || p.Settled[0].CallID != "c1" || p.Settled[0].Answers[0].Custom == "" {
		t.Fatalf("projection after ack = %+v", p)
	}
	if msgs, _ := h.Messages(ctx, "s1", 0); len(msgs) != 0 {
		t.Fatalf("admitted message still queued: %+v", msgs)
	}
}

func TestMessagesLongPollWakesOnLateAnswer(t *testing.T) {
	seen := make(chan string, 1)
	h, _ := setup(t, waiting(seen))
	ctx := context.Background()
	req := request("c1")
	req.TimeoutMs = ms(50 * time.Millisecond)
	if r, err := h.Ask(ctx, req); err != nil || !r.Pending() {
		t.Fatal(r, err)
	}
	got := make(chan []waterfall.SteeredMessage, 1)
	go func() {
		msgs, _ := h.Messages(ctx, "s1", 10*time.Second)
		got <- msgs
	}()
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	if msgs := recv(t, got); len(msgs) != 1 {
		t.Fatalf("long poll returned %v", msgs)
	}
}

func TestProjectionOrdersSettledBySettlement(t *testing.T) {
	seen := make(chan string, 8)
	h, _ := setup(t, waiting(seen))
	ctx := context.Background()
	var results []chan result
	for i := range 3 {
		req := request(fmt.Sprintf("c%d", i))
		req.TimeoutMs = ms(time.Hour)
		results = append(results, askAsync(h, ctx, req))
		recv(t, seen)
	}
	untimed := askAsync(h, ctx, request("untimed"))
	recv(t, seen)
	for _, id := range []string{"c2", "c0"} {
		if _, err := h.Answer(ctx, id, answerA(), waterfall.Respondent{UserID: "U1"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // settlement times are kept to the millisecond
	}
	p, _ := h.Projection(ctx, "s1")
	if len(p.Active) != 1 || p.Active[0].CallID != "c1" {
		t.Fatalf("active = %+v", p.Active)
	}
	if len(p.Settled) != 2 || p.Settled[0].CallID != "c2" || p.Settled[1].CallID != "c0" {
		t.Fatalf("settled = %+v; want c2 then c0, and no untimed call", p.Settled)
	}
	_ = results
	_ = untimed
}

// An answerer that claims with ErrClaimed returns at once; the Host keeps
// waiting and the answer arrives through Answer. It is not NO_PROVIDER.
func TestClaimedAskWaitsForAnswer(t *testing.T) {
	claimed := make(chan string, 1)
	h, _ := setup(t, waterfall.AnswererFunc(func(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
		claimed <- req.CallID
		return waterfall.Settlement{}, waterfall.ErrClaimed
	}))
	ctx := context.Background()
	res := askAsync(h, ctx, request("c1"))
	recv(t, claimed)
	select {
	case got := <-res:
		t.Fatalf("the ask ended when its answerer claimed it: %+v %v", got.r, got.err)
	default:
	}
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack}); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, res); got.err != nil || got.r.Pending() {
		t.Fatalf("Ask = %+v %v", got.r, got.err)
	}
}

// Host.Record reads each stage of a timed ask's life as its phase, through
// the store's own transitions.
func TestRecordFollowsTheLifecycle(t *testing.T) {
	h, _ := setup(t, waiting(make(chan string, 4)))
	ctx := context.Background()
	phase := func(callID string, want waterfall.Phase) *waterfall.Record {
		t.Helper()
		r, err := h.Get(ctx, callID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Phase != want || r.Ask.CallID != callID || r.Request.CallID != callID {
			t.Fatalf("%s: phase %v (ask %+v), want %v", callID, r.Phase, r.Ask, want)
		}
		return r
	}
	timed := request("late")
	timed.TimeoutMs = ms(50 * time.Millisecond)
	if _, err := h.Open(ctx, timed); err != nil {
		t.Fatal(err)
	}
	phase("late", waterfall.PhaseOpen)
	if r, err := h.Ask(ctx, timed); err != nil || !r.Pending() {
		t.Fatalf("re-attach = %+v %v; want pending", r, err)
	}
	phase("late", waterfall.PhaseContinued)
	if _, err := h.Answer(ctx, "late", answerA(), waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack}); err != nil {
		t.Fatal(err)
	}
	if r := phase("late", waterfall.PhaseQueued); r.Answered() == nil || r.Answered().Respondent.UserID != "U1" {
		t.Fatalf("queued reply shows %+v", r.Answered())
	}
	if _, err := h.Ack(ctx, "s1", waterfall.MessageID("late")); err != nil {
		t.Fatal(err)
	}
	if r := phase("late", waterfall.PhaseDelivered); r.Settlement == nil || r.Settlement.Answers[0].Selected[0] != "A" {
		t.Fatalf("delivered answer = %+v", r.Settlement)
	}

	if _, err := h.Open(ctx, request("now")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Answer(ctx, "now", answerA(), waterfall.Respondent{UserID: "U2"}); err != nil {
		t.Fatal(err)
	}
	phase("now", waterfall.PhaseSettled)

	if _, err := h.Open(ctx, request("gone")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Abort(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if r := phase("gone", waterfall.PhaseAborted); r.Abandoned() || r.Answered() != nil {
		t.Fatalf("withdrawn ask = %+v", r)
	}
	if _, err := h.Get(ctx, "never"); !errors.Is(err, waterfall.ErrNotFound) {
		t.Fatalf("record of an unknown ask: %v", err)
	}
}

// observed records what a Host tells its observers.
type observed struct{ got chan string }

func (o observed) Changed(a *waterfall.Record) {
	o.got <- fmt.Sprintf("%s %s v%d", a.CallID, a.State, a.Version)
}

// Observers hear of a re-attach to an active ask (its message may never
// have been posted), not of one to an ended ask.
func TestObserversHearOfCreatesAndReattaches(t *testing.T) {
	h, _ := setup(t, waterfall.AnswererFunc(func(ctx context.Context, _ *waterfall.Request, _ waterfall.Next) (waterfall.Settlement, error) {
		return waterfall.Settlement{}, waterfall.ErrClaimed
	}))
	o := observed{got: make(chan string, 16)}
	h.Observe(o)
	ctx := context.Background()
	if _, err := h.Open(ctx, request("c1")); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, o.got); got != "c1 open v1" {
		t.Fatalf("on create observers heard %q", got)
	}
	if _, err := h.Open(ctx, request("c1")); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, o.got); got != "c1 open v1" {
		t.Fatalf("on re-attach observers heard %q", got)
	}
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, o.got); got != "c1 settled v2" {
		t.Fatalf("on answer observers heard %q", got)
	}
	if _, err := h.Open(ctx, request("c1")); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-o.got:
		t.Fatalf("a re-attach to an answered ask told observers %q", got)
	default:
	}
}

// deaf is a store whose change hints never arrive: every wake-up is lost.
type deaf struct{ *store.Memory }

func (deaf) Changes(string) (<-chan struct{}, func())        { return nil, func() {} }
func (deaf) SessionChanges(string) (<-chan struct{}, func()) { return nil, func() {} }

// A lost wake-up costs a waiter the safety net's Check, never its whole
// wait: with every hint lost and the store's Poll an hour away, the blocking
// agent, the long-poller of its status and the session's long-poller all
// see the answer that was settled behind their backs (issue 20).
func TestLostWakeUpsCostAWaiterOneCheck(t *testing.T) {
	t.Parallel()
	st := deaf{store.NewMemory(0, nil)}
	seen := make(chan string, 4)
	h := engine.NewHost(st, waiting(seen), engine.HostOptions{Poll: time.Hour, Check: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	asked := askAsync(h, ctx, request("c1"))
	recv(t, seen)
	cur, err := h.Get(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan *waterfall.Record, 1)
	go func() {
		a, _ := h.WaitChange(ctx, "c1", cur.Version)
		changed <- a
	}()
	raw := []byte(`{"answers":[{"id":"q1","selected":["A"]}]}`)
	if _, err := st.Memory.Settle(ctx, "c1", raw, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, asked); r.err != nil || r.r.Pending() {
		t.Fatalf("the blocking agent got %+v, %v", r.r, r.err)
	}
	if a := recv(t, changed); a == nil || a.State != asktype.Settled {
		t.Fatalf("the status long-poll got %+v", a)
	}

	// A late answer queued behind the session long-poller's back.
	timed := request("c2")
	timed.TimeoutMs = ms(time.Hour)
	if _, err := h.Open(ctx, timed); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Memory.Expire(ctx, "c2", time.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	msgs := make(chan int, 1)
	go func() {
		m, _ := h.Messages(ctx, "s1", time.Minute)
		msgs <- len(m)
	}()
	if _, err := st.Memory.QueueReply(ctx, "c2", []byte(`{"callId":"c2"}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := recv(t, msgs); n != 1 {
		t.Fatalf("the session long-poll got %d messages, want 1", n)
	}
}
