package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
)

// A question pings its principal (an email, looked up in Slack) and the
// people ASKSLACK_MENTION names, in the message text that notifies; what
// the agent wrote never pings anyone.
func TestE2EMentionsPingThePrincipalAndTheConfiguredPeople(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_MENTION"] = "U0BOB, S0ONCALL"
	b := d.start(viaHTTP)
	req := oneQuestion("men-1", "Yes", "No")
	req.Agent.Principal = "alice@example.com"
	req.Questions[0].Question = "Tell <@U0CAROL> and <!channel>?"
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _, _ = b.client().Ask(actx, req) }()
	m, err := d.fake.WaitMessage(ctx, func(m slackfake.Message) bool { return hasControls(m) })
	if err != nil {
		t.Fatal(err)
	}
	const pings = "<@U0ALICE> <@U0BOB> <!subteam^S0ONCALL> "
	if !strings.HasPrefix(m.Text, pings) {
		t.Fatalf("text %q; want it to start with the mentions %q", m.Text, pings)
	}
	// Desktop notifications read the blocks first (Slack, July 2026): the
	// mention line leads the blocks too.
	var bs []struct {
		Type     string            `json:"type"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &bs); err != nil {
		t.Fatal(err)
	}
	var first struct{ Type, Text string }
	if len(bs) > 0 && len(bs[0].Elements) > 0 {
		_ = json.Unmarshal(bs[0].Elements[0], &first)
	}
	if len(bs) == 0 || bs[0].Type != "context" || first.Type != "mrkdwn" || first.Text != strings.TrimSpace(pings) {
		t.Fatalf("the blocks do not start with the mention line %q: %s", strings.TrimSpace(pings), m.Blocks)
	}
	rest := m.Text[len(pings):] + strings.Replace(string(m.Blocks), `"`+strings.TrimSpace(pings)+`"`, "", 1)
	for _, ping := range []string{"<@U0CAROL>", "<!channel>", "<@U0ALICE>"} {
		if strings.Contains(rest, ping) {
			t.Fatalf("the agent's text pings %s: %s", ping, rest)
		}
	}
	if len(d.fake.Calls("users.lookupByEmail")) == 0 {
		t.Fatal("the principal's email was never looked up")
	}
}

// A principal Slack cannot look up right now (or at all) holds nothing
// back: the question posts with the configured mentions.
func TestE2EMentionsWithoutAPrincipalStillPost(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_MENTION"] = "U0BOB"
	d.fake.FailNext("users.lookupByEmail", 100, "internal_error", 0)
	b := d.start(viaHTTP)
	for _, principal := range []string{"alice@example.com", "nobody@example.com", "not-slack"} {
		req := oneQuestion("men-"+principal, "Yes", "No")
		req.Agent.Principal = principal
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		go func() { _, _ = b.client().Ask(actx, req) }()
		m, err := d.fake.WaitMessage(ctx, func(m slackfake.Message) bool {
			return hasControls(m) && strings.Contains(string(m.Blocks), req.CallID)
		})
		if err != nil {
			t.Fatalf("%s: %v", principal, err)
		}
		if !strings.HasPrefix(m.Text, "<@U0BOB> ") || strings.Contains(m.Text, "U0ALICE") {
			t.Fatalf("%s: text %q; want only the configured mention", principal, m.Text)
		}
	}
}
