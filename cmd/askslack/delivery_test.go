package main

import (
	"context"
	"strings"
	"testing"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
)

// ASKSLACK_DELIVERY=dm: the question goes to its principal's direct
// messages and is answered there; a principal Slack does not know gets the
// question in the channel, which says why; an ask may ask for the channel.
func TestE2EDeliveryToThePrincipalsDMs(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_DELIVERY"] = "dm"
	b := d.start(viaHTTP)
	ask := func(id, principal, delivery string) (slackfake.Message, <-chan hostapi.AskResult) {
		t.Helper()
		req := oneQuestion(id, "Yes", "No")
		req.Agent.Principal, req.Delivery = principal, delivery
		done := make(chan hostapi.AskResult, 1)
		actx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		go func() { r, _ := b.client().Ask(actx, req); done <- r }()
		m, err := d.fake.WaitMessage(ctx, func(m slackfake.Message) bool {
			return hasControls(m) && strings.Contains(string(m.Blocks), id)
		})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return m, done
	}

	m, done := ask("dm-1", "alice@example.com", "")
	if !strings.HasPrefix(m.Channel, "D") {
		t.Fatalf("the question went to %s, not a direct message", m.Channel)
	}
	if len(d.fake.Calls("conversations.open")) == 0 {
		t.Fatal("no conversations.open")
	}
	click(t, ctx, d.fake, m, "Yes")
	if r := <-done; len(r.Answers) == 0 || r.Answers[0].Selected[0] != "Yes" {
		t.Fatalf("the answer from the DM: %+v", r)
	}
	waitMessage(t, ctx, d.fake, m.Channel, m.TS, "the DM shows the answer", func(m slackfake.Message) bool { return !hasControls(m) })

	m, _ = ask("dm-2", "nobody@example.com", "")
	if m.Channel != "C0QUESTIONS" || !strings.Contains(string(m.Blocks), "not as a direct message") {
		t.Fatalf("an unknown principal's question: channel %s, blocks %s", m.Channel, m.Blocks)
	}
	m, _ = ask("dm-3", "alice@example.com", "channel")
	if m.Channel != "C0QUESTIONS" || strings.Contains(string(m.Blocks), "not as a direct message") {
		t.Fatalf(`delivery "channel" on the ask: channel %s, blocks %s`, m.Channel, m.Blocks)
	}
}
