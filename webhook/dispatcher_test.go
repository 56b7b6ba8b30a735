package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/webhook"
)

// stores are the stores the dispatcher runs over: each returns two
// replicas' views of one shared store, on the fake clock c.
func stores() map[string]func(t *testing.T, c clock.Clock) (store.Store, store.Store) {
	return map[string]func(t *testing.T, c clock.Clock) (store.Store, store.Store){
		"memory": func(t *testing.T, c clock.Clock) (store.Store, store.Store) {
			m := store.NewMemory(0, c)
			return m, m
		},
		"redis": func(t *testing.T, c clock.Clock) (store.Store, store.Store) {
			rdb, prefix := testredis.Client(t)
			var two [2]store.Store
			for i := range two {
				s, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix, Clock: c})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Stop(context.Background()) })
				two[i] = s
			}
			return two[0], two[1]
		},
	}
}

// each runs test once per store.
func each(t *testing.T, test func(t *testing.T, r *rig)) {
	for name, open := range stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := clock.NewFake(time.Now().Truncate(time.Second))
			a, b := open(t, c)
			r := &rig{t: t, c: c, st: a, other: b}
			r.rcv = newReceiver(t, c)
			test(t, r)
		})
	}
}

// rig is one test's fake clock, store (two replicas' views of it) and
// receiver.
type rig struct {
	t         *testing.T
	c         *clock.Fake
	st, other store.Store
	rcv       *receiver
}

// opts are a dispatcher's options in the tests: one endpoint at the
// receiver, a 3s lease, waits at their ceiling (no jitter: a test knows
// when each retry is due).
func (r *rig) opts(holder string) webhook.Options {
	return webhook.Options{Endpoints: []webhook.Endpoint{{Name: "audit", URL: r.rcv.srv.URL + "/hook"}}, Secret: secret, Holder: holder,
		Clock: r.c, Lease: 3 * time.Second, Jitter: func(d time.Duration) time.Duration { return d },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// start starts a dispatcher over st; it stops with the test.
func (r *rig) start(st webhook.Store, opts webhook.Options) *webhook.Dispatcher {
	r.t.Helper()
	d := webhook.New(st, opts)
	if err := d.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = d.Stop(context.Background()) })
	return d
}

// tick waits until n loops wait for a timer due in d, then moves the
// clock by d.
func (r *rig) tick(d time.Duration, n int) {
	r.t.Helper()
	r.armed(d, n)
	r.c.Advance(d)
}

// armed waits until n loops wait for a timer due in d.
func (r *rig) armed(d time.Duration, n int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.c.WaitTimers(ctx, r.c.Now().Add(d), n); err != nil {
		r.t.Fatal(err)
	}
}

// idle is a poll that finds nothing: the clock moves by a second, and the
// loops (n of them) are waiting for the next poll again, so what a test
// changes next is seen by that one, not by this.
func (r *rig) idle(n int) {
	r.t.Helper()
	r.tick(time.Second, n)
	r.armed(time.Second, n)
}

// ask stores a question and chains its trail, as a transition on any
// replica would be within moments.
func (r *rig) ask(id string) {
	r.t.Helper()
	createAsk(r.t, r.st, id, r.c.Now())
	r.chain()
}

func (r *rig) answer(id string) {
	r.t.Helper()
	if _, err := r.st.Settle(context.Background(), id, answerJSON("U0ALICE", "alice", "Yes"), r.c.Now()); err != nil {
		r.t.Fatal(err)
	}
	r.chain()
}

// chain makes the store chain what its transitions recorded (Redis
// chains in the background; a first page of Audit waits for it).
func (r *rig) chain() {
	r.t.Helper()
	if _, _, err := r.st.Audit(context.Background(), asktype.AuditQuery{Limit: 1}); err != nil {
		r.t.Fatal(err)
	}
}

// delivery is one request the receiver got.
type delivery struct {
	id, ts string
	body   webhook.Body
	raw    []byte
	header http.Header
	status int
	verify error
}

// receiver is an endpoint that verifies every request and answers with
// the statuses queued (200 once they run out), or stalls while slow.
type receiver struct {
	t      *testing.T
	c      *clock.Fake
	srv    *httptest.Server
	mu     sync.Mutex
	codes  []int
	slow   bool
	all    []delivery
	got    chan delivery
	moved  int // requests to where a redirect points
	answer string
}

func newReceiver(t *testing.T, c *clock.Fake) *receiver {
	rc := &receiver{t: t, c: c, got: make(chan delivery, 100)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", rc.serve)
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.moved++
		rc.mu.Unlock()
	})
	rc.srv = httptest.NewServer(mux)
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	d := delivery{id: r.Header.Get(webhook.HeaderStdID), ts: r.Header.Get(webhook.HeaderStdTimestamp), raw: raw, header: r.Header.Clone(), status: http.StatusOK,
		verify: webhook.Verify(secret, r.Header, raw, rc.c.Now(), 0)}
	// The deprecated set, sent beside it, verifies alone, with the same id
	// and timestamp.
	if err := webhook.Verify(secret, legacyOnly(r.Header), raw, rc.c.Now(), 0); err != nil || r.Header.Get(webhook.HeaderID) != d.id ||
		r.Header.Get(webhook.HeaderTimestamp) != d.ts {
		d.verify = errors.Join(d.verify, fmt.Errorf("the deprecated headers: %v (id %q, timestamp %q)", err, r.Header.Get(webhook.HeaderID), r.Header.Get(webhook.HeaderTimestamp)))
	}
	_ = json.Unmarshal(raw, &d.body)
	rc.mu.Lock()
	slow := rc.slow
	if len(rc.codes) > 0 {
		d.status, rc.codes = rc.codes[0], rc.codes[1:]
	}
	rc.mu.Unlock()
	if slow {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		d.status = 0
	}
	rc.mu.Lock()
	rc.all = append(rc.all, d)
	rc.mu.Unlock()
	rc.got <- d
	if d.status == http.StatusFound {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
		return
	}
	if d.status != 0 {
		rc.mu.Lock()
		answer := rc.answer
		rc.mu.Unlock()
		w.WriteHeader(d.status)
		_, _ = io.WriteString(w, answer)
	}
}

func (rc *receiver) fail(codes ...int) {
	rc.mu.Lock()
	rc.codes = append(rc.codes, codes...)
	rc.mu.Unlock()
}

// next waits for the next request.
func (rc *receiver) next() delivery {
	rc.t.Helper()
	select {
	case d := <-rc.got:
		if d.verify != nil {
			rc.t.Errorf("a delivery that does not verify: %v", d.verify)
		}
		return d
	case <-time.After(10 * time.Second):
		rc.t.Fatal("no delivery within 10s")
		return delivery{}
	}
}

// quiet checks that no request arrives for a moment.
func (rc *receiver) quiet() {
	rc.t.Helper()
	select {
	case d := <-rc.got:
		rc.t.Fatalf("an unexpected delivery: %s %s", d.body.Type, d.body.CallID)
	case <-time.After(100 * time.Millisecond):
	}
}

func status(t *testing.T, d *webhook.Dispatcher) webhook.Status {
	t.Helper()
	ss, err := d.Status(context.Background())
	if err != nil || len(ss) != 1 {
		t.Fatalf("Status: %v %v", ss, err)
	}
	return ss[0]
}

// A new endpoint starts from now; each event comes once, signed, its body
// as documented; a receiver failing three times gets the same event (same
// id, same body) after 1s, 2s and 4s, freshly signed each time, and then
// the events after it in order.
func TestDispatcherRetriesWithBackoffThenDelivers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, r *rig) {
		r.ask("before") // history: not sent to a new endpoint
		d := r.start(r.st, r.opts("r1"))
		r.idle(1)
		r.rcv.quiet()

		r.ask("a1")
		r.rcv.fail(500, 503, 404)
		r.tick(time.Second, 1)
		first := r.rcv.next()
		if first.status != 500 || first.body.Type != "ask.created" || first.body.CallID != "a1" || first.id != first.body.ID ||
			first.header.Get("Content-Type") != "application/json" {
			t.Fatalf("first attempt: %+v", first)
		}
		r.answer("a1") // comes after a1's creation, whatever it takes
		for _, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			r.tick(wait, 1) // the retry is armed exactly one backoff later
			again := r.rcv.next()
			// The same webhook-id (Standard Webhooks' idempotency key), the
			// same body, freshly signed.
			if again.id != first.id || string(again.raw) != string(first.raw) || again.ts == first.ts ||
				again.header.Get(webhook.HeaderStdSignature) == first.header.Get(webhook.HeaderStdSignature) {
				t.Fatalf("retry after %s: id %s, ts %s, body %s; want id %s, a new timestamp and signature, the same body", wait, again.id, again.ts, again.raw, first.id)
			}
		}
		answered := r.rcv.next()
		if answered.body.Type != "ask.answered" || answered.body.CallID != "a1" || answered.body.Ask == nil ||
			answered.body.Ask.Answers[0].Selected[0] != "Yes" || answered.body.Respondent.UserName != "alice" {
			t.Fatalf("then ask.answered: %s", answered.raw)
		}
		r.tick(time.Second, 1)
		r.rcv.quiet()
		s := status(t, d)
		if !s.Started || s.Behind != 0 || s.Lag != 0 || s.Attempts != 0 || s.LastOK.IsZero() || !strings.Contains(s.LastError, "HTTP 404") || s.Holder != "r1" {
			t.Fatalf("status %+v", s)
		}
		if n := len(r.rcv.all); n != 5 {
			t.Fatalf("%d requests; want 4 attempts at ask.created and one ask.answered", n)
		}
	})
}

// A receiver down for more than a day: the event is dead-lettered, the
// cursor moves on, later events are delivered; redelivering the dead
// letter sends it again with the same id and body.
func TestDispatcherDeadLettersAfterADayAndRedelivers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, r *rig) {
		d := r.start(r.st, r.opts("r1"))
		r.idle(1)
		r.ask("down")
		r.rcv.mu.Lock()
		r.rcv.answer = "no route"
		r.rcv.mu.Unlock()
		r.rcv.fail(404, 404, 404)
		r.tick(time.Second, 1)
		first := r.rcv.next()
		r.armed(time.Second, 1)
		if s := status(t, d); s.Attempts != 1 || s.Behind != 1 || s.Lag != time.Second || s.NextAttempt.IsZero() {
			t.Fatalf("status while failing: %+v", s)
		}
		r.tick(time.Second, 1)
		r.rcv.next()
		// A day passes; the receiver still fails: the next attempt is the last.
		r.armed(2*time.Second, 1)
		r.c.Advance(25 * time.Hour)
		r.rcv.next()
		r.tick(time.Second, 1) // caught up: polling again
		dead, err := d.DeadLetters(context.Background(), "audit")
		if err != nil || len(dead) != 1 || dead[0].ID != first.id || dead[0].Attempts != 3 || !strings.Contains(dead[0].LastError, "HTTP 404: no route") ||
			string(dead[0].Body) != string(first.raw) {
			t.Fatalf("dead letters %+v, %v", dead, err)
		}
		if s := status(t, d); s.Dead != 1 || s.Behind != 0 || s.Attempts != 0 {
			t.Fatalf("status after the dead letter: %+v", s)
		}

		r.ask("later")
		r.tick(time.Second, 1)
		if got := r.rcv.next(); got.body.CallID != "later" || got.status != 200 {
			t.Fatalf("the next event: %+v", got)
		}
		if _, err := d.Redeliver(context.Background(), "audit", []string{"wh_nope"}); err == nil {
			t.Fatal("redelivering an unknown id")
		}
		if n, err := d.Redeliver(context.Background(), "audit", []string{first.id}); err != nil || n != 1 {
			t.Fatalf("Redeliver = %d, %v", n, err)
		}
		again := r.rcv.next() // at once: the redelivery kicks the loop
		if again.id != first.id || string(again.raw) != string(first.raw) || again.status != 200 {
			t.Fatalf("redelivered %+v", again)
		}
		r.tick(time.Second, 1)
		r.rcv.quiet()
		if s := status(t, d); s.Dead != 0 || s.Redeliveries != 0 {
			t.Fatalf("status after the redelivery: %+v", s)
		}
		if n, err := d.Redeliver(context.Background(), "audit", nil); err != nil || n != 0 {
			t.Fatalf("redelivering all of nothing: %d, %v", n, err)
		}
	})
}

// noRelease is a store a killed replica leaves behind: its lease is never
// given back, it lapses.
type noRelease struct{ store.Store }

func (noRelease) Release(context.Context, string, string, string) error { return nil }

// Two replicas: only the lease holder delivers, each event once; when the
// holder dies its lease lapses and the other goes on from its cursor,
// losing nothing and doubling nothing.
func TestDispatcherTwoReplicasDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, r *rig) {
		d1 := r.start(noRelease{r.st}, r.opts("r1"))
		r.tick(time.Second, 1) // r1 holds the lease
		r.start(r.other, r.opts("r2"))
		for i := range 3 {
			r.ask("x" + string(rune('a'+i)))
		}
		got := map[string]int{}
		r.tick(time.Second, 2) // r1 sends the three at once, r2 finds the lease held
		for range 3 {
			got[r.rcv.next().body.CallID]++
		}
		r.idle(2) // r1 has renewed its lease: it holds until 3s from now
		r.rcv.quiet()
		if err := d1.Stop(context.Background()); err != nil { // killed: the lease stays until it lapses
			t.Fatal(err)
		}
		r.ask("xd")
		r.ask("xe")
		r.tick(time.Second, 1) // r1's lease, renewed just before it died, holds 3s
		r.tick(time.Second, 1)
		r.rcv.quiet()
		r.tick(time.Second, 1) // and lapses: r2 takes over from r1's cursor
		for range 2 {
			got[r.rcv.next().body.CallID]++
		}
		r.tick(time.Second, 1)
		r.rcv.quiet()
		for _, id := range []string{"xa", "xb", "xc", "xd", "xe"} {
			if got[id] != 1 {
				t.Errorf("%s delivered %d times; want once (all: %v)", id, got[id], got)
			}
		}
		for _, x := range r.rcv.all {
			if x.status != 200 {
				t.Errorf("a failed attempt: %+v", x)
			}
		}
	})
}

// A receiver slower than the timeout fails the attempt (retried); one
// that answers with a redirect fails it too, and the redirect is not
// followed.
func TestDispatcherTimeoutAndRedirectFail(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, r *rig) {
		o := r.opts("r1")
		o.Timeout = 200 * time.Millisecond
		d := r.start(r.st, o)
		r.idle(1)
		r.ask("slow")
		r.rcv.mu.Lock()
		r.rcv.slow = true
		r.rcv.mu.Unlock()
		r.tick(time.Second, 1)
		first := r.rcv.next()
		r.armed(time.Second, 1)
		if s := status(t, d); !strings.Contains(s.LastError, "no answer within 200ms") || s.Attempts != 1 {
			t.Fatalf("after a timeout: %+v", s)
		}
		r.rcv.mu.Lock()
		r.rcv.slow = false
		r.rcv.mu.Unlock()
		r.rcv.fail(http.StatusFound)
		r.tick(time.Second, 1)
		r.rcv.next()
		r.armed(2*time.Second, 1)
		if s := status(t, d); !strings.Contains(s.LastError, "HTTP 302 (a redirect") || s.Attempts != 2 {
			t.Fatalf("after a redirect: %+v", s)
		}
		r.tick(2*time.Second, 1)
		if got := r.rcv.next(); got.id != first.id || got.status != 200 {
			t.Fatalf("the third attempt: %+v", got)
		}
		r.rcv.mu.Lock()
		moved := r.rcv.moved
		r.rcv.mu.Unlock()
		if moved != 0 {
			t.Fatalf("the redirect was followed %d times", moved)
		}
	})
}

// ASKSLACK_WEBHOOK_EVENTS: only the types asked for are sent; the rest
// move the cursor.
func TestDispatcherSendsOnlyTheEventsAskedFor(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, r *rig) {
		o := r.opts("r1")
		o.Events = []string{webhook.AskAnswered}
		d := r.start(r.st, o)
		r.idle(1)
		r.ask("f1")
		r.answer("f1")
		r.tick(time.Second, 1)
		if got := r.rcv.next(); got.body.Type != "ask.answered" {
			t.Fatalf("sent %s", got.body.Type)
		}
		r.tick(time.Second, 1)
		r.rcv.quiet()
		if s := status(t, d); s.Behind != 0 {
			t.Fatalf("status %+v", s)
		}
	})
}
