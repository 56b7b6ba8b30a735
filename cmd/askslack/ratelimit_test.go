package main

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/askslack/askslack/internal/kit/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// TestE2ERateLimitedBurstLosesAndDoublesNothing: two replicas on one Redis
// with pacing on, against a fake that enforces Slack's rate limits at ×20
// (one post per 50 ms per channel). A burst of asks from four sessions
// into one channel, some timed with a window shorter than the queue: every
// untimed ask is posted exactly once and answered, its buttons go, and no
// timed ask is posted twice or answered; a timed ask returns pending.
func TestE2ERateLimitedBurstLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, true)
	fake := slackfake.New(slackfake.Options{
		BotToken: "xoxb-test", AppToken: "xapp-test", SigningSecret: testSecret,
		Users: []slackfake.User{alice, bob, carol}, RateLimits: 20,
	})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	d.fake = fake
	d.env["ASKSLACK_SLACK_PACING"] = "true"
	d.env["ASKSLACK_SLACK_TIME_SCALE"] = "20"
	one, two := d.start(viaHTTP), d.start(viaHTTP)
	ctx := testCtx(t)

	const sessions, perSession = 4, 6
	type ask struct {
		id    string
		timed bool
		a     *asked
	}
	var asks []ask
	for s := range sessions {
		for i := range perSession {
			req := oneQuestion(fmt.Sprintf("rl-%d-%d", s, i), "Yes", "No")
			req.Agent = waterfall.Agent{ID: fmt.Sprintf("agent-%d", s), SessionID: fmt.Sprintf("rl-sess-%d", s)}
			timed := i == perSession-1
			if timed {
				// Shorter than the 24 posts' queue (1.2 s at ×20) may be.
				ms := 300.0
				req.TimeoutMs = &ms
			}
			b := one
			if len(asks)%2 == 1 {
				b = two
			}
			asks = append(asks, ask{id: req.CallID, timed: timed, a: b.askAsync(ctx, req)})
		}
	}
	// A person answers every untimed question as soon as it shows.
	var wg sync.WaitGroup
	for _, x := range asks {
		if x.timed {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := waitPosted(t, ctx, fake, x.id)
			if _, err := fake.ClickButton(ctx, alice, m.Channel, m.TS, "Yes", slackfake.Delivery{}); err != nil {
				t.Errorf("clicking %s: %v", x.id, err)
			}
		}()
	}
	for _, x := range asks {
		res, err := x.a.wait(t)
		switch {
		case err != nil:
			t.Errorf("%s: %v", x.id, err)
		case x.timed && !res.Pending:
			t.Errorf("%s: timed and never clicked, but not pending: %+v", x.id, res)
		case !x.timed && (res.Pending || len(res.Answers) == 0):
			t.Errorf("%s: not answered: %+v", x.id, res)
		}
	}
	wg.Wait()
	for _, x := range asks {
		posted := 0
		for _, c := range fake.Calls("chat.postMessage") {
			if c.OK() && bytes.Contains(c.Body, []byte("ask/"+x.id+"/")) {
				posted++
			}
		}
		if posted > 1 || (!x.timed && posted != 1) {
			t.Errorf("%s posted %d times", x.id, posted)
		}
		if x.timed {
			continue
		}
		m := waitPosted(t, ctx, fake, x.id)
		waitMessage(t, ctx, fake, m.Channel, m.TS, "lost its buttons", func(m slackfake.Message) bool { return !hasControls(m) })
	}
	t.Logf("429s the fake answered: %v", fake.RateLimited())
}
