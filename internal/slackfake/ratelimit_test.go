package slackfake

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/slacklimits"
)

// frozen is a clock the test moves by hand, so the buckets refill only
// when it says.
type frozen struct {
	mu sync.Mutex
	t  time.Time
}

func (f *frozen) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *frozen) add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func TestRateLimitsAnswer429AsSlack(t *testing.T) {
	t.Parallel()
	clk := &frozen{t: time.Now()}
	s, api := setup(t, Options{RateLimits: 20, Now: clk.now})
	ctx := testCtx(t)

	for i := range slacklimits.PostMessage.Burst {
		if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
			t.Fatalf("post %d of the burst: %v", i, err)
		}
	}
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("over", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Second {
		t.Fatalf("past the burst: want *slack.RateLimitedError of 1s, got %v", err)
	}
	// The refused post was not stored, and another channel is unaffected.
	for _, m := range s.Messages() {
		if m.Text == "over" {
			t.Fatal("a rate-limited post took effect")
		}
	}
	if _, _, err := api.PostMessageContext(ctx, "C2", slack.MsgOptionText("x", false)); err != nil {
		t.Fatalf("another channel: %v", err)
	}
	clk.add(50 * time.Millisecond) // one Slack second at ×20
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Fatalf("one scaled second later: %v", err)
	}
	calls := s.Calls("chat.postMessage")
	if c := calls[slacklimits.PostMessage.Burst]; c.Status != 429 || c.Error() != "ratelimited" {
		t.Fatalf("recorded %d %s, want 429 ratelimited", c.Status, c.Response)
	}
	if n := s.RateLimited()["chat.postMessage"]; n != 1 {
		t.Fatalf("RateLimited counted %d, want 1", n)
	}
}

func TestRateLimitsOffByDefault(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	for range 20 {
		if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.RateLimited()) != 0 {
		t.Fatal("limits enforced without Options.RateLimits")
	}
}

func TestRateLimitsArePerWorkspace(t *testing.T) {
	t.Parallel()
	clk := &frozen{t: time.Now()}
	o := multiOptions()
	o.RateLimits, o.Now = 20, clk.now
	s := startMulti(t, o)
	ctx := testCtx(t)
	solo := apiAs(s, s.Install(Installation{TeamID: "T0SOLO"}).BotToken)
	ext := apiAs(s, s.Install(Installation{TeamID: "T0EXT"}).BotToken)
	for range slacklimits.PostMessage.Burst {
		if _, _, err := solo.PostMessageContext(ctx, "C0SHARED", slack.MsgOptionText("x", false)); err != nil {
			t.Fatal(err)
		}
	}
	var rl *slack.RateLimitedError
	if _, _, err := solo.PostMessageContext(ctx, "C0SHARED", slack.MsgOptionText("over", false)); !errors.As(err, &rl) {
		t.Fatalf("past the burst: %v", err)
	}
	// The other organization's installation has buckets of its own.
	if _, _, err := ext.PostMessageContext(ctx, "C0SHARED", slack.MsgOptionText("x", false)); err != nil {
		t.Fatalf("another workspace's install in the same channel: %v", err)
	}
	if n := s.RateLimited()["chat.postMessage"]; n != 1 {
		t.Fatalf("RateLimited = %d, want 1", n)
	}
}
