package waterfall

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
)

func storedAsk(t *testing.T, req *Request) *asktype.Ask {
	t.Helper()
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return &asktype.Ask{CallID: req.CallID, Request: raw, State: asktype.Open, Version: 1}
}

func rawJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every stored state decodes to its phase, with the answer it shows.
func TestDecodePhases(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_800_000_000, 0).UTC()
	s := Settlement{Answer: Answer{Answers: []AnswerItem{{ID: "q1", Selected: []string{"A"}}}},
		Respondent: Respondent{UserID: "U0ALICE", Surface: SurfaceSlack, At: at}}
	reply := SteeredMessage{ID: MessageID("call-1"), CallID: "call-1", Answers: []AnswerItem{{ID: "q1", Selected: []string{}, Custom: "late"}},
		Respondent: Respondent{UserID: "U0BOB", Surface: SurfaceSlack, At: at}, QueuedAt: at}

	for _, tt := range []struct {
		name      string
		mod       func(a *asktype.Ask)
		phase     Phase
		settled   bool   // Record.Settlement set
		queued    bool   // Record.Reply set
		answered  string // Answered().Respondent.UserID, "" for nil
		abandoned bool
	}{
		{name: "open", mod: func(a *asktype.Ask) {}, phase: PhaseOpen},
		{name: "continued", mod: func(a *asktype.Ask) { a.State = asktype.Continued }, phase: PhaseContinued},
		{name: "queued", mod: func(a *asktype.Ask) {
			a.State, a.Reply, a.ReplyAt = asktype.Continued, rawJSON(t, reply), at
		}, phase: PhaseQueued, queued: true, answered: "U0BOB"},
		{name: "settled", mod: func(a *asktype.Ask) {
			a.State, a.Settlement, a.SettledAt = asktype.Settled, rawJSON(t, s), at
		}, phase: PhaseSettled, settled: true, answered: "U0ALICE"},
		{name: "delivered", mod: func(a *asktype.Ask) {
			// The admitted late answer: the reply became the settlement.
			a.State, a.Reply, a.ReplyAt = asktype.Settled, rawJSON(t, reply), at
			a.Settlement, a.SettledAt = a.Reply, at.Add(time.Second)
		}, phase: PhaseDelivered, settled: true, answered: "U0BOB"},
		{name: "withdrawn", mod: func(a *asktype.Ask) {
			a.State, a.AbortedAt, a.AbortReason = asktype.Aborted, at, asktype.Withdrawn
		}, phase: PhaseAborted},
		{name: "abandoned", mod: func(a *asktype.Ask) {
			a.State, a.AbortedAt, a.AbortReason = asktype.Aborted, at, asktype.Abandoned
		}, phase: PhaseAborted, abandoned: true},
		{name: "no message", mod: func(a *asktype.Ask) {
			a.State, a.AbortedAt, a.AbortReason = asktype.Aborted, at, asktype.NoMessage
		}, phase: PhaseAborted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := storedAsk(t, validRequest())
			tt.mod(a)
			r, err := Decode(a)
			if err != nil {
				t.Fatal(err)
			}
			if r.Ask != a || r.Request.CallID != "call-1" || r.Request.Questions[0].ID != "q1" {
				t.Fatalf("record = %+v", r)
			}
			if r.Phase != tt.phase {
				t.Errorf("phase = %v, want %v", r.Phase, tt.phase)
			}
			if (r.Settlement != nil) != tt.settled || (r.Reply != nil) != tt.queued {
				t.Errorf("settlement = %+v, reply = %+v", r.Settlement, r.Reply)
			}
			got := ""
			if s := r.Answered(); s != nil {
				got = s.Respondent.UserID
			}
			if got != tt.answered {
				t.Errorf("answered by %q, want %q", got, tt.answered)
			}
			if r.Abandoned() != tt.abandoned {
				t.Errorf("abandoned = %v", r.Abandoned())
			}
		})
	}
}

func TestDecodeFailures(t *testing.T) {
	t.Parallel()
	if _, err := Decode(nil); err == nil {
		t.Error("decoding no ask succeeded")
	}
	for name, mod := range map[string]func(a *asktype.Ask){
		"bad request":           func(a *asktype.Ask) { a.CallID, a.Request = "bad-req", json.RawMessage(`{"questions":`) },
		"settled, no answer":    func(a *asktype.Ask) { a.State = asktype.Settled },
		"bad settlement":        func(a *asktype.Ask) { a.State, a.Settlement = asktype.Settled, json.RawMessage(`[`) },
		"bad reply":             func(a *asktype.Ask) { a.State, a.Reply = asktype.Continued, json.RawMessage(`"x"`) },
		"unknown state":         func(a *asktype.Ask) { a.State = "paused" },
		"request not an object": func(a *asktype.Ask) { a.CallID, a.Request = "not-obj", json.RawMessage(`7`) },
	} {
		a := storedAsk(t, validRequest())
		mod(a)
		if r, err := Decode(a); err == nil {
			t.Errorf("%s: decoded %+v", name, r)
		}
	}
}

// PhaseExpired is not a stored state, yet renders and parses like the rest.
func TestPhaseNames(t *testing.T) {
	t.Parallel()
	for p := PhaseOpen; p <= PhaseExpired; p++ {
		if got, ok := ParsePhase(p.String()); !ok || got != p {
			t.Errorf("ParsePhase(%q) = %v, %v", p.String(), got, ok)
		}
	}
	if _, ok := ParsePhase("pending"); ok {
		t.Error("an unknown phase parsed")
	}
	if s := Phase(99).String(); s != "Phase(99)" {
		t.Errorf("Phase(99) = %q", s)
	}
}

// A request is decoded once: every later version of the ask gets the same
// value, while another request under the same callId is decoded afresh.
func TestDecodeCachesTheRequest(t *testing.T) {
	t.Parallel()
	req := validRequest()
	req.CallID = "cache-same"
	a := storedAsk(t, req)
	first, err := Decode(a)
	if err != nil {
		t.Fatal(err)
	}
	later := *a
	later.Version, later.State = 7, asktype.Continued
	later.Request = append(json.RawMessage(nil), a.Request...) // a fresh copy of the same JSON
	second, err := Decode(&later)
	if err != nil {
		t.Fatal(err)
	}
	if first.Request != second.Request {
		t.Fatal("a later version of the ask decoded its request again")
	}
	if p, _ := DecodeRequest(&later); p != first.Request {
		t.Fatal("DecodeRequest does not share the cached request")
	}

	other := validRequest()
	other.CallID = "cache-same"
	other.Questions[0].Question = "Which, really?"
	third, err := Decode(storedAsk(t, other))
	if err != nil {
		t.Fatal(err)
	}
	if third.Request == first.Request || third.Request.Questions[0].Question != "Which, really?" {
		t.Fatal("another request under the same callId was served from the cache")
	}
}

func TestRequestCacheIsBounded(t *testing.T) {
	t.Parallel()
	ask := func(i int) *asktype.Ask {
		req := validRequest()
		req.CallID = fmt.Sprintf("bounded-%d", i)
		return storedAsk(t, req)
	}
	t.Run("entries", func(t *testing.T) {
		t.Parallel()
		c := newRequestCache(4, 1<<20)
		keep, err := c.get(ask(0))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < 40; i++ {
			if _, err := c.get(ask(i)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.get(ask(0)); err != nil { // used again: never the oldest
				t.Fatal(err)
			}
			if n := c.len(); n > 4 {
				t.Fatalf("%d requests cached, bound 4", n)
			}
		}
		if again, _ := c.get(ask(0)); again != keep {
			t.Fatal("the most recently used request was evicted")
		}
		first, _ := c.get(ask(1))
		if again, _ := c.get(ask(1)); again != first {
			t.Fatal("a request just decoded is not cached")
		}
	})
	t.Run("bytes", func(t *testing.T) {
		t.Parallel()
		size := len(ask(0).Request)
		c := newRequestCache(100, 3*size+size/2)
		for i := range 10 {
			if _, err := c.get(ask(i)); err != nil {
				t.Fatal(err)
			}
		}
		if n := c.len(); n != 3 {
			t.Fatalf("%d requests of %d bytes cached under a bound of %d bytes", n, size, c.maxBytes)
		}
		if c.bytes > c.maxBytes {
			t.Fatalf("%d bytes cached, bound %d", c.bytes, c.maxBytes)
		}
		big := validRequest()
		big.CallID = "bounded-big"
		big.Questions[0].Detail = strings.Repeat("x", 4*size)
		if _, err := c.get(storedAsk(t, big)); err != nil {
			t.Fatal(err)
		}
		if c.len() != 3 || c.bytes > c.maxBytes {
			t.Fatalf("a request over the whole bound was cached: %d entries, %d bytes", c.len(), c.bytes)
		}
	})
}

// Readers on many goroutines share one decoded request.
func TestRequestCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := newRequestCache(8, 1<<20)
	asks := make([]*asktype.Ask, 16)
	for i := range asks {
		req := validRequest()
		req.CallID = fmt.Sprintf("conc-%d", i%4)
		asks[i] = storedAsk(t, req)
	}
	var wg sync.WaitGroup
	got := make([]*Request, len(asks)*8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.get(asks[i%len(asks)])
			if err != nil {
				t.Error(err)
			}
			got[i] = r
		}()
	}
	wg.Wait()
	for i, r := range got {
		want, _ := c.get(asks[i%len(asks)])
		if r != want {
			t.Fatalf("reader %d got a request other than the cached one", i)
		}
	}
}

// A settled ask's settlement is decoded once per process, however many
// readers decode the ask (the waiter, the mirror, Home tabs, the host
// API): they share it. A callId reused with another settlement is another
// entry.
func TestSettlementDecodedOnce(t *testing.T) {
	req := validRequest()
	req.CallID = "settled-once"
	a := storedAsk(t, req)
	a.State = asktype.Settled
	a.Settlement = json.RawMessage(`{"answers":[{"id":"q1","selected":["A"]}],"respondent":{"userId":"U1","surface":"slack"}}`)
	first, err := Decode(a)
	if err != nil || first.Settlement == nil {
		t.Fatal(err)
	}
	again, err := Decode(&asktype.Ask{CallID: a.CallID, Request: a.Request, State: asktype.Settled, Version: 7,
		Settlement: append(json.RawMessage(nil), a.Settlement...)})
	if err != nil || again.Settlement != first.Settlement {
		t.Fatalf("the mirror's read decoded the settlement again (%p, %p, %v)", first.Settlement, again.Settlement, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Decode(a) }); n > 1 {
		t.Fatalf("decoding a settled ask allocates %v times; want only its record", n)
	}
	other := *a
	other.Settlement = json.RawMessage(`{"answers":[{"id":"q1","selected":["B"]}],"respondent":{"userId":"U2","surface":"slack"}}`)
	if r, err := Decode(&other); err != nil || r.Settlement.Respondent.UserID != "U2" {
		t.Fatalf("another settlement under the same callId: %+v %v", r, err)
	}
}
