package hostapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// parkingDeployment parks blocking asks after a minute of waiting.
func parkingDeployment(t *testing.T) *deployment {
	d := newDeployment(t, 30*time.Second)
	d.park = time.Minute
	return d
}

// parkAsk posts a blocking ask and waits until it is parked: its wait in
// the handler ended and the parked waiter re-attached (the chain runs
// again).
func (d *deployment) parkAsk(t *testing.T, r *replica, body string) *pending {
	t.Helper()
	start := d.clock.Now()
	p := r.post(t, body)
	recv(t, d.seen, "the chain to run")
	d.clock.waitTimer(t, start.Add(d.park))
	d.clock.Advance(d.park)
	recv(t, d.seen, "the parked waiter to re-attach")
	return p
}

// A parked ask still gets its answer, on the connection it came on, which
// then closes.
func TestParkedAskGetsItsAnswer(t *testing.T) {
	t.Parallel()
	d := parkingDeployment(t)
	a := d.replica()
	p := d.parkAsk(t, a, askBody("p1", 0))
	if code, body := a.call(t, "POST", "/v1/asks/p1/answer", answerBody); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	code, body := p.wait(t)
	if code != 200 || !strings.Contains(body, `"selected":["A"]`) {
		t.Fatalf("parked ask returned %d %s", code, body)
	}
	if p.header.Get("Content-Type") != "application/json" || !p.closed {
		t.Fatalf("headers %v; want JSON and Connection: close", p.header)
	}
	if got := recv(t, a.ev.asks, "the outcome"); got != "answered" {
		t.Fatalf("outcome %q", got)
	}
}

// A parked timed ask returns pending when its window closes.
func TestParkedTimedAskReturnsPending(t *testing.T) {
	t.Parallel()
	d := parkingDeployment(t)
	a := d.replica()
	start := d.clock.Now()
	p := d.parkAsk(t, a, askBody("p2", 5*time.Minute))
	d.clock.waitTimer(t, start.Add(5*time.Minute))
	d.clock.Advance(4 * time.Minute)
	code, body := p.wait(t)
	if code != 200 || !strings.Contains(body, `"pending":true`) {
		t.Fatalf("parked timed ask returned %d %s", code, body)
	}
}

// A parked ask whose caller hangs up is not withdrawn: it waits the grace
// and a re-attach gets the answer.
func TestParkedCallerHangsUpAndReattaches(t *testing.T) {
	t.Parallel()
	d := parkingDeployment(t)
	a := d.replica()
	p := d.parkAsk(t, a, askBody("p3", 0))
	// The parked waiter looks every few seconds whether its caller is
	// still there.
	p.cancel()
	<-p.done
	// One loop looks at every parked connection each probe period; the
	// hang-up may reach the socket only after a look or two.
	for tries := 0; ; tries++ {
		if tries == 50 {
			t.Fatal("the parked ask did not notice its caller hung up")
		}
		d.clock.Advance(3 * time.Second)
		select {
		case got := <-a.ev.asks:
			if got != "detached" {
				t.Fatalf("a parked ask whose caller hung up ended as %q; want detached", got)
			}
		case <-time.After(200 * time.Millisecond):
			continue
		}
		break
	}
	if st := a.state(t, "p3"); st.State != "open" {
		t.Fatalf("after the parked caller hung up the ask is %s; want open (grace)", st.State)
	}
	again := a.post(t, askBody("p3", 0))
	recv(t, d.seen, "the re-attach")
	if code, body := a.call(t, "POST", "/v1/asks/p3/answer", answerBody); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	if code, body := again.wait(t); code != 200 || !strings.Contains(body, `"selected":["A"]`) {
		t.Fatalf("re-attached ask returned %d %s", code, body)
	}
}

// Draining answers a parked ask 503 with Retry-After, and the question
// stays open for the caller to re-attach elsewhere.
func TestDrainAnswersParkedAsks(t *testing.T) {
	t.Parallel()
	d := parkingDeployment(t)
	a := d.replica()
	p := d.parkAsk(t, a, askBody("p4", 0))
	a.srv.Drain()
	code, body := p.wait(t)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, waterfall.CodeUnavailable) || p.header.Get("Retry-After") != "1" {
		t.Fatalf("drained parked ask: %d %s %v", code, body, p.header)
	}
	if st := a.state(t, "p4"); st.State != "open" {
		t.Fatalf("after the drain the ask is %s; want open", st.State)
	}
}

// Withdrawing a parked ask ends its wait with ASK_ABORTED.
func TestParkedAskWithdrawn(t *testing.T) {
	t.Parallel()
	d := parkingDeployment(t)
	a := d.replica()
	p := d.parkAsk(t, a, askBody("p5", 0))
	if code, body := a.call(t, "DELETE", "/v1/asks/p5", ""); code != 200 {
		t.Fatalf("withdraw: %d %s", code, body)
	}
	if code, body := p.wait(t); code != 409 || !strings.Contains(body, waterfall.CodeAskAborted) {
		t.Fatalf("withdrawn parked ask returned %d %s", code, body)
	}
}
