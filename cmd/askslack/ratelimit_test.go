package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// pacedScale is how many times faster than Slack pacedDeployment keeps time.
const pacedScale = 4

// pacedDeployment is a deployment with pacing on against a fake that
// enforces Slack's rate limits at ×4: a post every 250 ms. Faster, the
// replicas' lane timers (one per lane, a token's period apart) are no
// longer what decides the order.
func pacedDeployment(t *testing.T) (*deployment, *slackfake.Server) {
	t.Helper()
	d := newDeployment(t, true)
	fake := slackfake.New(slackfake.Options{
		BotToken: "xoxb-test", AppToken: "xapp-test", SigningSecret: testSecret,
		Users: []slackfake.User{alice, bob, carol}, RateLimits: pacedScale,
	})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	d.fake = fake
	d.env["ASKSLACK_SLACK_PACING"] = "true"
	d.env["ASKSLACK_SLACK_TIME_SCALE"] = fmt.Sprint(pacedScale)
	return d, fake
}

// TestE2ERateLimitedBurstLosesAndDoublesNothing: two replicas on one Redis
// with pacing on, against a fake that enforces Slack's rate limits at ×20
// (one post per 50 ms per channel). A burst of asks from four sessions
// into one channel, some timed with a window shorter than the queue: every
// untimed ask is posted exactly once and answered, its buttons go, and no
// timed ask is posted twice or answered; a timed ask returns pending.
func TestE2ERateLimitedBurstLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	d, fake := pacedDeployment(t)
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

// Issue 31: one agent session asks 24 questions into a channel through one
// replica; half a (Slack) second later three other sessions ask 4 each
// through the other. Turns at the channel's shared budget are the
// sessions', whichever replica holds them: the small sessions' questions
// are all posted before the burst's 12th (before, all 24 went first).
func TestE2EFairTurnsAcrossReplicas(t *testing.T) {
	t.Parallel()
	d, fake := pacedDeployment(t)
	one, two := d.start(viaHTTP), d.start(viaHTTP)
	ctx := testCtx(t)
	ask := func(b *bot, session string, i int) *asked {
		req := oneQuestion(fmt.Sprintf("fair-%s-%02d", session, i), "Yes", "No")
		req.Agent = waterfall.Agent{ID: "agent-" + session, SessionID: "fair-" + session}
		return b.askAsync(ctx, req)
	}
	// The asks wait for answers nobody gives; the test's end stops them.
	for i := range 24 {
		ask(one, "busy", i)
	}
	time.Sleep(500 * time.Millisecond / pacedScale) // the others come half a (Slack) second later
	for _, s := range []string{"s1", "s2", "s3"} {
		for i := range 4 {
			ask(two, s, i)
		}
	}
	if err := fake.WaitUntil(ctx, func() bool { return len(postedOrder(fake)) >= 36 }); err != nil {
		t.Fatalf("only %d of 36 questions posted", len(postedOrder(fake)))
	}
	order := postedOrder(fake)
	busy, small := 0, 0
	for _, id := range order {
		if strings.HasPrefix(id, "fair-busy-") {
			busy++
			if busy == 12 && small < 12 {
				t.Fatalf("the burst's 12th question was posted before %d of the small sessions' 12: %v", 12-small, order)
			}
		} else {
			small++
		}
	}
	t.Logf("post order: %v", order)
}

// postedOrder lists the call ids of the questions posted, in post order.
func postedOrder(f *slackfake.Server) []string {
	var ids []string
	for _, c := range f.Calls("chat.postMessage") {
		if !c.OK() {
			continue
		}
		if m := askBlockID.FindSubmatch(c.Body); m != nil {
			ids = append(ids, string(m[1]))
		}
	}
	return ids
}
