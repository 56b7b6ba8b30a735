package hostapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/waterfall"
)

// fakeClock is the deployment's clock, moved by hand.
type fakeClock struct{ *clock.Fake }

func newFakeClock() *fakeClock {
	return &fakeClock{clock.NewFake(time.Now().Truncate(time.Millisecond))}
}

// waitTimer waits until somebody waits for the clock to reach due.
func (c *fakeClock) waitTimer(t *testing.T, due time.Time) {
	t.Helper()
	c.waitTimers(t, due, 1)
}

// waitTimers waits until n timers wait for the clock to reach due.
func (c *fakeClock) waitTimers(t *testing.T, due time.Time, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitTimers(ctx, due, n); err != nil {
		t.Fatal(err)
	}
}

// events records what the servers report: ask outcomes, grace ends, marks.
type events struct {
	asks  chan string
	grace chan string // "callId outcome"
}

type recMetrics struct{ ev *events }

func (m recMetrics) Ask(outcome string, _ time.Duration) { m.ev.asks <- outcome }

// spyLeases reports every attach mark a server makes.
type spyLeases struct {
	hostapi.Leases
	marks chan time.Time
}

func (l spyLeases) Acquire(ctx context.Context, callID string, c store.Claim) (string, error) {
	cur, err := l.Leases.Acquire(ctx, callID, c)
	if c.Name == "attach" && c.Holder == "attached" {
		select {
		case l.marks <- c.Now:
		default:
		}
	}
	return cur, err
}

// replica is one server of a shared deployment.
type replica struct {
	host  *engine.Host
	srv   *hostapi.Server
	http  *httptest.Server
	ev    *events
	marks chan time.Time
}

type deployment struct {
	t     *testing.T
	store interface {
		engine.Store
		hostapi.Leases
	}
	clock *fakeClock
	grace time.Duration
	seen  chan string
	// park is the replicas' ParkAfter: off (-1) unless a test parks.
	park time.Duration
}

// newDeployment gives a test a store of its own (Redis under its own key
// prefix when REDIS_URL is set, else memory) that its replicas share.
func newDeployment(t *testing.T, grace time.Duration) *deployment {
	t.Helper()
	d := &deployment{t: t, clock: newFakeClock(), grace: grace, seen: make(chan string, 16), park: -1}
	if os.Getenv("REDIS_URL") != "" {
		rdb, prefix := testredis.Client(t)
		r, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Stop(context.Background()) })
		d.store = r
	} else {
		d.store = store.NewMemory(0, nil)
	}
	return d
}

// waiting claims every ask and waits, as the Slack answerer does.
func (d *deployment) waiting() waterfall.Answerer {
	return waterfall.AnswererFunc(func(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
		d.seen <- req.CallID
		<-ctx.Done()
		return waterfall.Settlement{}, ctx.Err()
	})
}

func (d *deployment) replica() *replica { return d.replicaWith(false) }

// replicaWith is replica; with durable, graces are kept in the shared
// store and swept by every replica.
func (d *deployment) replicaWith(durable bool) *replica {
	ev := &events{asks: make(chan string, 16), grace: make(chan string, 16)}
	marks := make(chan time.Time, 64)
	host := engine.NewHost(d.store, d.waiting(), engine.HostOptions{Clock: d.clock, Poll: 50 * time.Millisecond})
	opts := hostapi.Options{
		Leases: spyLeases{Leases: d.store, marks: marks}, Grace: d.grace, Clock: d.clock, Metrics: recMetrics{ev},
		OnGraceEnd: func(callID, outcome string) { ev.grace <- callID + " " + outcome },
		ParkAfter:  d.park,
	}
	if durable {
		opts.Graces = d.store.(hostapi.Graces)
	}
	srv := started(d.t, hostapi.NewServer(host, opts))
	hs := httptest.NewServer(srv)
	d.t.Cleanup(hs.Close)
	return &replica{host: host, srv: srv, http: hs, ev: ev, marks: marks}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// pending is a blocking POST /v1/asks in flight.
type pending struct {
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	body   string
	header http.Header
	closed bool // the response said Connection: close
	err    error
}

func (r *replica) post(t *testing.T, body string, hdr ...string) *pending {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pending{cancel: cancel, done: make(chan struct{})}
	req, err := http.NewRequestWithContext(ctx, "POST", r.http.URL+"/v1/asks", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	go func() {
		defer close(p.done)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			p.err = err
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		p.code, p.body, p.header, p.closed = resp.StatusCode, string(b), resp.Header, resp.Close
	}()
	t.Cleanup(cancel)
	return p
}

func (p *pending) wait(t *testing.T) (int, string) {
	t.Helper()
	recv(t, p.done, "the ask to return")
	if p.err != nil {
		t.Fatalf("ask: %v", p.err)
	}
	return p.code, p.body
}

func (r *replica) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, r.http.URL+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (r *replica) state(t *testing.T, callID string) hostapi.Status {
	t.Helper()
	code, body := r.call(t, "GET", "/v1/asks/"+callID, "")
	var st hostapi.Status
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("GET %s: %d %s", callID, code, body)
	}
	return st
}

func askBody(callID string, timeout time.Duration) string {
	req := map[string]any{"callId": callID, "agent": map[string]string{"id": "a", "sessionId": "s"},
		"questions": []map[string]any{{"id": "q", "question": "?", "options": []map[string]string{{"label": "A"}, {"label": "B"}}}}}
	if timeout > 0 {
		req["timeoutMs"] = timeout.Milliseconds()
	}
	b, _ := json.Marshal(req)
	return string(b)
}

const answerBody = `{"answers":[{"id":"q","selected":["A"]}]}`

// drop closes a blocking ask's connection and waits until the server has
// seen it go and started the grace.
func (d *deployment) drop(t *testing.T, r *replica, p *pending) time.Time {
	t.Helper()
	p.cancel()
	<-p.done
	if got := recv(t, r.ev.asks, "the server to notice the dropped ask"); got != "detached" {
		t.Fatalf("a dropped blocking ask ended as %q; want detached (it must wait the grace, not withdraw)", got)
	}
	at := d.clock.Now()
	d.clock.waitTimer(t, at.Add(d.grace))
	return at
}

func abortReason(t *testing.T, st interface {
	Get(context.Context, string) (*asktype.Ask, error)
}, callID string) asktype.AbortReason {
	t.Helper()
	a, err := st.Get(context.Background(), callID)
	if err != nil {
		t.Fatal(err)
	}
	return a.AbortReason
}

// A dropped blocking ask stays open for the grace, then is withdrawn as
// abandoned; a late re-attach learns why.
func TestDroppedAskIsWithdrawnAfterTheGrace(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a := d.replica()
	p := a.post(t, askBody("g1", 0))
	recv(t, d.seen, "the chain to run")
	d.drop(t, a, p)
	if st := a.state(t, "g1"); st.State != "open" {
		t.Fatalf("right after the drop the ask is %s; want open", st.State)
	}
	d.clock.Advance(d.grace - time.Millisecond)
	if st := a.state(t, "g1"); st.State != "open" {
		t.Fatalf("before the grace ended the ask is %s", st.State)
	}
	d.clock.Advance(time.Millisecond)
	if got := recv(t, a.ev.grace, "the grace to end"); got != "g1 withdrawn" {
		t.Fatalf("grace ended %q; want withdrawn", got)
	}
	if st := a.state(t, "g1"); st.State != "aborted" {
		t.Fatalf("after the grace the ask is %s; want aborted", st.State)
	}
	if why := abortReason(t, d.store, "g1"); why != asktype.Abandoned {
		t.Fatalf("abort reason %q; want abandoned", why)
	}
	code, body := a.post(t, askBody("g1", 0)).wait(t)
	if code != 409 || !strings.Contains(body, waterfall.CodeAskAborted) || !strings.Contains(body, "did not re-attach") {
		t.Fatalf("re-attach after the grace: %d %s", code, body)
	}
}

// The replica that saw the drop dies before the grace ends: another
// replica finds the grace in the store and withdraws the ask.
func TestDroppedAskIsWithdrawnWhenItsReplicaDied(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a, b := d.replicaWith(true), d.replicaWith(true)
	p := a.post(t, askBody("g1", 0))
	recv(t, d.seen, "the chain to run")
	at := d.drop(t, a, p)
	a.http.Close()
	_ = a.srv.Stop(context.Background())    // the replica is gone, and its grace timer with it
	d.clock.waitTimer(t, at.Add(d.grace/2)) // b's sweep
	d.clock.Advance(d.grace / 2)
	d.clock.waitTimer(t, at.Add(d.grace)) // b sweeps again: not yet due
	if st := b.state(t, "g1"); st.State != "open" {
		t.Fatalf("before the grace ended the ask is %s", st.State)
	}
	d.clock.Advance(d.grace / 2)
	if got := recv(t, b.ev.grace, "the surviving replica to decide the grace"); got != "g1 withdrawn" {
		t.Fatalf("grace ended %q; want withdrawn", got)
	}
	if why := abortReason(t, d.store, "g1"); why != asktype.Abandoned {
		t.Fatalf("abort reason %q; want abandoned", why)
	}
	if left, _ := d.store.(hostapi.Graces).EndedGraces(context.Background(), d.clock.Now().Add(time.Hour), 10); len(left) != 0 {
		t.Fatalf("decided graces left in the store: %v", left)
	}
}

// A re-attach on another replica just before the grace ends keeps the ask;
// the answer reaches the new waiter.
func TestReattachOnAnotherReplicaJustBeforeTheGraceEnds(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a, b := d.replica(), d.replica()
	p := a.post(t, askBody("g2", 0))
	recv(t, d.seen, "the chain to run")
	d.drop(t, a, p)
	d.clock.Advance(d.grace - time.Millisecond)
	again := b.post(t, askBody("g2", 0))
	recv(t, d.seen, "the re-attached chain to run")
	d.clock.Advance(time.Millisecond)
	if got := recv(t, a.ev.grace, "the grace to end"); got != "g2 attached" {
		t.Fatalf("grace ended %q; want attached (somebody re-attached on another replica)", got)
	}
	if code, body := b.call(t, "POST", "/v1/asks/g2/answer", answerBody); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	code, body := again.wait(t)
	if code != 200 || !strings.Contains(body, `"selected":["A"]`) {
		t.Fatalf("the re-attached waiter got %d %s", code, body)
	}
}

// Two waiters of one ask on two replicas: one going away withdraws nothing
// while the other stays; when the other goes too, its grace withdraws it.
func TestTwoWaitersOneDrops(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a, b := d.replica(), d.replica()
	p1 := a.post(t, askBody("g3", 0))
	recv(t, d.seen, "the first chain")
	recv(t, a.marks, "the first mark")
	p2 := b.post(t, askBody("g3", 0))
	recv(t, d.seen, "the second chain")
	recv(t, b.marks, "the second mark")
	start := d.clock.Now()
	d.drop(t, a, p1)
	// The staying waiter renews its mark every grace/3 (each replica runs
	// one renewal loop: wait for both to be armed before moving time).
	for i := 1; i <= 2; i++ {
		d.clock.waitTimers(t, start.Add(time.Duration(i)*d.grace/3), 2)
		d.clock.Advance(d.grace / 3)
		recv(t, b.marks, "the staying waiter's renewal")
	}
	d.clock.Advance(d.grace / 3)
	if got := recv(t, a.ev.grace, "the first grace to end"); got != "g3 attached" {
		t.Fatalf("first grace ended %q while a waiter is attached on the other replica", got)
	}
	if st := a.state(t, "g3"); st.State != "open" {
		t.Fatalf("ask %s while a waiter is attached", st.State)
	}
	d.drop(t, b, p2)
	// The first replica checks again one grace after its first check: both
	// graces end at the same moment, and exactly one withdraws.
	d.clock.waitTimers(t, start.Add(2*d.grace), 2)
	d.clock.Advance(d.grace)
	var outcomes []string
	for len(outcomes) < 2 {
		select {
		case g := <-a.ev.grace:
			outcomes = append(outcomes, g)
		case g := <-b.ev.grace:
			outcomes = append(outcomes, g)
		case <-time.After(10 * time.Second):
			t.Fatalf("graces ended %v", outcomes)
		}
	}
	sort.Strings(outcomes)
	if outcomes[1] != "g3 withdrawn" || outcomes[0] == "g3 withdrawn" {
		t.Fatalf("graces ended %v; want exactly one withdrawal", outcomes)
	}
	if why := abortReason(t, d.store, "g3"); why != asktype.Abandoned {
		t.Fatalf("abort reason %q", why)
	}
}

// A timed ask dropped before its window closes is not withdrawn when the
// window closed during the grace: whoever comes back gets pending.
func TestDroppedTimedAskReturnsPendingAfterItsWindow(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a := d.replica()
	p := a.post(t, askBody("g4", 10*time.Second))
	recv(t, d.seen, "the chain")
	d.drop(t, a, p)
	d.clock.Advance(d.grace)
	if got := recv(t, a.ev.grace, "the grace to end"); got != "g4 ended" {
		t.Fatalf("grace ended %q; want ended (the window closed first)", got)
	}
	code, body := a.post(t, askBody("g4", 10*time.Second)).wait(t)
	if code != 200 || !strings.Contains(body, `"pending":true`) {
		t.Fatalf("re-attach after the window: %d %s", code, body)
	}
}

// DELETE still withdraws at once.
func TestDeleteWithdrawsAtOnce(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a := d.replica()
	p := a.post(t, askBody("g5", 0))
	recv(t, d.seen, "the chain")
	if code, body := a.call(t, "DELETE", "/v1/asks/g5", ""); code != 200 || !strings.Contains(body, `"aborted"`) {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, body := p.wait(t); code != 409 || !strings.Contains(body, waterfall.CodeAskAborted) {
		t.Fatalf("the waiter got %d %s", code, body)
	}
	if why := abortReason(t, d.store, "g5"); why != asktype.Withdrawn {
		t.Fatalf("abort reason %q", why)
	}
}

// Prefer: respond-async answers 202 at once, runs the chain with nobody
// waiting, and a long poll sees the answer; no grace withdraws it.
func TestRespondAsync(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a := d.replica()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", a.http.URL+"/v1/asks", strings.NewReader(askBody("g6", 0)))
	req.Header.Set("Prefer", "respond-async")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st hostapi.Status
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if resp.StatusCode != 202 || resp.Header.Get("Location") != "/v1/asks/g6" || st.State != "open" || st.CallID != "g6" {
		t.Fatalf("async ask: %d Location=%q %+v", resp.StatusCode, resp.Header.Get("Location"), st)
	}
	recv(t, d.seen, "the chain to run with nobody waiting")
	// A blocking waiter that comes and goes does not end an async ask.
	p := a.post(t, askBody("g6", 0))
	recv(t, d.seen, "the blocking chain")
	p.cancel()
	<-p.done
	recv(t, a.ev.asks, "the drop")
	d.clock.Advance(d.grace)
	// No grace timer runs for an async ask; the ask is still open.
	select {
	case g := <-a.ev.grace:
		t.Fatalf("a grace ran for an async ask: %s", g)
	default:
	}
	if st := a.state(t, "g6"); st.State != "open" {
		t.Fatalf("async ask %s after a waiter came and went", st.State)
	}
	seenVersion := a.state(t, "g6").Version
	poll := make(chan hostapi.Status, 1)
	go func() {
		c := &hostapi.Client{BaseURL: a.http.URL}
		s, _ := c.WaitChange(context.Background(), "g6", seenVersion, 10*time.Second)
		poll <- s
	}()
	if code, body := a.call(t, "POST", "/v1/asks/g6/answer", answerBody); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	got := recv(t, poll, "the long poll")
	if got.State != "settled" || len(got.Answers) != 1 {
		t.Fatalf("long poll saw %+v", got)
	}
}

// GET ?waitMs waits for a change in any state, not only while open.
func TestLongPollWaitsInAnyState(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	a := d.replica()
	p := a.post(t, askBody("g7", 10*time.Second))
	recv(t, d.seen, "the chain")
	d.clock.waitTimer(t, d.clock.Now().Add(10*time.Second))
	d.clock.Advance(10 * time.Second)
	if code, body := p.wait(t); code != 200 || !strings.Contains(body, `"pending":true`) {
		t.Fatalf("timed ask: %d %s", code, body)
	}
	<-a.ev.asks
	// Continued and unchanged: the poll must still be waiting when the
	// caller gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c := &hostapi.Client{BaseURL: a.http.URL}
	st, err := c.Get(ctx, "g7", 10*time.Second)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GET ?waitMs on an unchanged continued ask returned at once: %+v %v", st, err)
	}
	// With the version the caller saw, a change already made returns at once.
	before := a.state(t, "g7")
	if code, body := a.call(t, "POST", "/v1/asks/g7/answer", answerBody); code != 200 {
		t.Fatalf("late answer: %d %s", code, body)
	}
	code, body := a.call(t, "GET", "/v1/asks/g7?waitMs=10000&version="+itoa(before.Version), "")
	if code != 200 || !strings.Contains(body, `"reply"`) {
		t.Fatalf("poll from a seen version: %d %s", code, body)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(bytes.TrimSpace(b)) }

// With graces in the store, a waiter nobody dropped writes no attach mark
// (an open ask costs the store nothing for being waited on), while a
// re-attach on another replica just before a running grace ends marks at
// once and keeps the ask.
func TestDurableAttachMarksOnlyWhileAGraceRuns(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, 30*time.Second)
	start := d.clock.Now()
	a, b := d.replicaWith(true), d.replicaWith(true)
	d.clock.waitTimers(t, start.Add(d.grace/3), 2) // both know no grace runs
	p := a.post(t, askBody("g6", 0))
	recv(t, d.seen, "the chain to run")
	ctx := context.Background()
	if _, err := d.store.Acquire(ctx, "g6", store.Claim{Name: "attach", Hold: store.Hold{Holder: "probe", TTL: time.Second, Now: d.clock.Now()}}); err != nil {
		t.Fatalf("an attached waiter with no grace running marked the ask: %v", err)
	}
	if err := d.store.Release(ctx, "g6", "attach", "probe"); err != nil {
		t.Fatal(err)
	}
	d.drop(t, a, p)
	// b's renewal learns of the grace at its first tick.
	d.clock.Advance(d.grace / 3)
	d.clock.waitTimers(t, start.Add(2*d.grace/3), 2)
	d.clock.Advance(d.grace - d.grace/3 - time.Millisecond)
	again := b.post(t, askBody("g6", 0))
	recv(t, d.seen, "the re-attached chain to run")
	d.clock.Advance(time.Millisecond)
	if got := recv(t, a.ev.grace, "the grace to end"); got != "g6 attached" {
		t.Fatalf("grace ended %q; want attached (somebody re-attached on another replica)", got)
	}
	if code, body := b.call(t, "POST", "/v1/asks/g6/answer", answerBody); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	if code, body := again.wait(t); code != 200 || !strings.Contains(body, `"selected":["A"]`) {
		t.Fatalf("the re-attached waiter got %d %s", code, body)
	}
}
