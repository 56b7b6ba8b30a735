package loadbench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slacklimits"
)

func TestFirstButton(t *testing.T) {
	blocks := `[{"type":"section","block_id":"s","text":{"type":"mrkdwn","text":"q"},"accessory":{"type":"button","action_id":"full","text":{"type":"plain_text","text":"View"}}},
		{"type":"actions","block_id":"a","elements":[{"type":"button","action_id":"pick.0","value":"0","text":{"type":"plain_text","text":"Yes"}}]}]`
	if id, b, ok := firstButton(blocks, nil); !ok || id != "s" || b.ActionID != "full" {
		t.Errorf("any button: %q %+v %v", id, b, ok)
	}
	pick := func(a string) bool { return a == "pick.0" }
	if id, b, ok := firstButton(blocks, pick); !ok || id != "a" || b.ActionID != "pick.0" || b.Value != "0" {
		t.Errorf("clickable button: %q %+v %v", id, b, ok)
	}
	if _, _, ok := firstButton(`[{"type":"divider"}]`, nil); ok {
		t.Error("found a button in a divider")
	}
}

func TestSamples(t *testing.T) {
	var s Samples
	if s.Percentile(50) != 0 {
		t.Error("empty samples have a percentile")
	}
	for i := 1; i <= 100; i++ {
		s.Add(time.Duration(i) * time.Millisecond)
	}
	if p := s.Percentile(50); p != 50*time.Millisecond {
		t.Errorf("p50 %s", p)
	}
	if p := s.Percentile(99); p != 99*time.Millisecond {
		t.Errorf("p99 %s", p)
	}
}

func TestReadProc(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if p.RSS <= 0 || p.Threads <= 0 {
		t.Errorf("%+v", p)
	}
}

// TestNullBotLoop runs the equipment against itself: agents ask the null
// bot, which posts to the fake, which clicks, and every ask is answered.
func TestNullBotLoop(t *testing.T) {
	fake, err := NewSlack(SlackOptions{SigningSecret: "s", Click: true, CallID: NullCallID})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	bot := httptest.NewServer(NewNullBot(NullBotOptions{SlackURL: fake.URL(), SigningSecret: "s", Channel: "C1"}).Handler())
	defer bot.Close()
	fake.SetInteractionURL(bot.URL + "/slack/interactions")
	var begin, end SlackCounters
	res := Run(context.Background(), LoadOptions{URL: bot.URL, RunID: "t", Agents: 2, Warmup: 20 * time.Millisecond,
		Duration: 200 * time.Millisecond, MaxAsks: 10_000, Drain: 5 * time.Second, Slack: fake,
		Window: func(b bool) {
			if b {
				begin = fake.Counters()
			} else {
				end = fake.Counters()
			}
		}})
	if res.Answered == 0 || res.Errors != 0 {
		t.Fatalf("answered %d, errors %d, last %v", res.Answered, res.Errors, res.LastErr)
	}
	d := end.Sub(begin)
	if d.Posts == 0 || d.ClickErrors != 0 {
		t.Errorf("window counters %+v", d)
	}
	if ack, _ := fake.TakeLatencies(); ack.Len() == 0 {
		t.Error("no click was acknowledged")
	}
}

// An answered ask counts as stale until an update without controls lands
// on its message; unanswered asks and other messages do not count.
func TestStaleButtons(t *testing.T) {
	s, err := NewSlack(SlackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const question = `[{"type":"section","block_id":"s"},{"type":"actions","block_id":"a","elements":[]}]`
	const answered = `[{"type":"section","block_id":"s"},{"type":"context","elements":[]}]`
	s.shown("1.1", question)
	s.shown("1.2", question)
	s.clickedOn("1.1", "c1")
	s.clickedOn("1.2", "c2")
	s.Answered("c1", time.Now())
	if stale, n := s.StaleButtons(); stale != 1 || n != 1 {
		t.Fatalf("before the update: %d/%d; want 1/1", stale, n)
	}
	s.shown("1.1", answered)
	if stale, n := s.StaleButtons(); stale != 0 || n != 1 {
		t.Fatalf("after the update: %d/%d; want 0/1", stale, n)
	}
	s.ForgetMessages()
	if stale, n := s.StaleButtons(); stale != 0 || n != 0 {
		t.Fatalf("after forgetting: %d/%d", stale, n)
	}
}

func TestSlackRateLimits(t *testing.T) {
	s, err := NewSlack(SlackOptions{RateLimits: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A clock that stands still: no bucket refills while the test runs.
	at := time.Now()
	s.limiter = slacklimits.New(slacklimits.Slack(), 20, func() time.Time { return at })
	post := func(ch string) *http.Response {
		t.Helper()
		resp, err := http.Post(s.URL()+"chat.postMessage", "application/json", strings.NewReader(`{"channel":"`+ch+`","blocks":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	// Slack's chat.postMessage: one a second per channel after a short
	// burst (3, modelled).
	var codes []int
	for range 4 {
		codes = append(codes, post("C1").StatusCode)
	}
	if codes[3] != http.StatusTooManyRequests || codes[0] != 200 || codes[2] != 200 {
		t.Fatalf("statuses %v, want the fourth 429", codes)
	}
	if resp := post("C1"); resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q, want 1", resp.Header.Get("Retry-After"))
	}
	if post("C2").StatusCode != 200 {
		t.Fatal("another channel was refused")
	}
	if c := s.Counters(); c.Limited != 2 || c.Posts != 6 {
		t.Fatalf("counters %+v", c)
	}
}
