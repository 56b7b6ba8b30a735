package main

// A change to an ask while its post is in flight: Slack has stored the
// message (people see it and click it) but the bot has not had the reply
// that tells it the message's ts. Whatever the change — a settling click,
// a vote, a withdrawal, the window closing — the message must end up
// showing it, whether the post's reply comes late or never.

import (
	"context"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

func TestE2EChangeWhilePostInFlight(t *testing.T) {
	t.Parallel()
	// b is the replica the change goes to; in the paced variant it is not
	// the one that posted.
	type change func(t *testing.T, ctx context.Context, d *deployment, b *bot, m slackfake.Message, id string)
	click := func(label string) change {
		return func(t *testing.T, ctx context.Context, d *deployment, b *bot, m slackfake.Message, id string) {
			to := slackfake.Delivery{Transport: slackfake.TransportHTTP, To: "http://" + b.addr + "/slack/interactions"}
			if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, label, to); err != nil {
				t.Fatal(err)
			}
		}
	}
	planOfTwo := func(id string) *waterfall.Request {
		q := waterfall.Question{ID: "plan", Header: "Plan", Question: "Approve the plan?", Detail: "1. Build\n2. Ship",
			Options: []waterfall.Option{{Label: "Approve"}, {Label: "Decline"}},
			Intent:  &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"}}
		return &waterfall.Request{CallID: id, Agent: waterfall.Agent{ID: "agent-1", SessionID: "sess-1"}, Questions: []waterfall.Question{q}, Approvals: 2}
	}
	cases := []struct {
		name    string
		req     func(id string) *waterfall.Request
		timed   bool
		clicked bool
		change  change
		shows   func(m slackfake.Message) bool
	}{
		{"Settled", nil, false, true, click("Yes"), func(m slackfake.Message) bool {
			return !hasControls(m) && strings.Contains(m.Text, "Answered by alice")
		}},
		{"Voted", planOfTwo, false, true, click("Approve"), func(m slackfake.Message) bool {
			return hasControls(m) && strings.Contains(string(m.Blocks), "1 of 2")
		}},
		{"Withdrawn", nil, false, false, func(t *testing.T, ctx context.Context, d *deployment, b *bot, m slackfake.Message, id string) {
			if _, err := b.client().Abort(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, func(m slackfake.Message) bool {
			return !hasControls(m) && strings.Contains(string(m.Blocks), "withdrew")
		}},
		{"Continued", nil, true, false, func(t *testing.T, ctx context.Context, d *deployment, b *bot, m slackfake.Message, id string) {
			if err := d.fake.WaitUntil(ctx, func() bool {
				st, err := b.client().Get(ctx, id, 0)
				return err == nil && st.State == "continued"
			}); err != nil {
				t.Fatal("the window never closed")
			}
		}, func(m slackfake.Message) bool {
			return hasControls(m) && strings.Contains(string(m.Blocks), "still delivered")
		}},
	}
	for _, c := range cases {
		for _, v := range []struct {
			name        string
			lost, paced bool
		}{{"ReplyLate", false, false}, {"ReplyLost", true, false}, {"TwoPacedReplyLate", false, true}, {"TwoPacedReplyLost", true, true}} {
			lost := v.lost
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				d := newDeployment(t, v.paced)
				var poster, b *bot
				if v.paced {
					// Two replicas pacing their calls at Slack's rates
					// (×20): the question is asked through one, and the
					// change reaches the other.
					d.env["ASKSLACK_SLACK_PACING"] = "true"
					d.env["ASKSLACK_SLACK_TIME_SCALE"] = "20"
					poster, b = d.start(viaHTTP), d.start(viaHTTP)
				} else {
					poster = d.start(viaHTTP)
					b = poster
				}
				id := "inflight-" + safe(t)
				req := oneQuestion(id, "Yes", "No")
				if c.req != nil {
					req = c.req(id)
				}
				if c.timed {
					ms := float64(1500)
					req.TimeoutMs = &ms
				}
				hold := d.fake.HoldReplyNext("chat.postMessage")
				a := poster.askAsync(ctx, req)
				select {
				case <-hold.Arrived():
				case <-ctx.Done():
					t.Fatal("the question was never posted")
				}
				m := waitPosted(t, ctx, d.fake, id)
				before, err := b.client().Get(ctx, id, 0)
				if err != nil {
					t.Fatal(err)
				}
				c.change(t, ctx, d, b, m, id)
				// The change is recorded before the post's reply arrives.
				if err := d.fake.WaitUntil(ctx, func() bool {
					st, err := b.client().Get(ctx, id, 0)
					return err == nil && st.Version > before.Version
				}); err != nil {
					t.Fatal("the change was never recorded")
				}
				// The message shows the change while the post's reply is
				// still out: a click's change through its response_url (the
				// click names the message), any other by the message found.
				waitMessage(t, ctx, d.fake, m.Channel, m.TS, "brought up to date before the post's reply", c.shows)
				if c.clicked && len(d.fake.Calls("conversations.history")) != 0 {
					t.Fatal("the clicked message was looked for; the click names it")
				}
				if lost {
					hold.ReleaseLost()
				} else {
					hold.Release()
				}
				waitMessage(t, ctx, d.fake, m.Channel, m.TS, "brought up to date", c.shows)
				if c.name == "Settled" {
					if _, err := a.wait(t); err != nil {
						t.Fatal(err)
					}
				}
				if n := len(d.fake.Calls("chat.postMessage")); n != 1 {
					t.Fatalf("posted %d times", n)
				}
			})
		}
	}
}
