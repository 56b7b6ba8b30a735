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

// ASKSLACK_MENTION takes ids only: a name or a channel is a startup error
// that says what to use instead.
func TestMentionConfigTakesIDsOnly(t *testing.T) {
	base := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisPrefix: "askslack", Addr: ":8080",
		Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, ReattachGrace: 30 * time.Second,
		ReadTimeout: 30 * time.Second, ShutdownGrace: time.Second, LogLevel: "info", ReconcileAfter: time.Minute, Delivery: "channel"}
	for _, ok := range [][]string{{"U0BOB"}, {"W0ENT", "S0ONCALL"}, {" U0BOB ", ""}} {
		c := base
		c.Mention = ok
		if err := c.check(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"@bob", "bob", "C0CHANNEL", "<!channel>", "U0bob", "S"} {
		c := base
		c.Mention = []string{bad}
		err := c.check()
		if err == nil || !strings.Contains(err.Error(), "ASKSLACK_MENTION") {
			t.Errorf("%q: %v; want an ASKSLACK_MENTION error", bad, err)
		}
	}
}

// The reach settings fail at startup with what to do, not at the first
// question.
func TestReachConfigErrorsSayWhatToDo(t *testing.T) {
	base := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisPrefix: "askslack", Addr: ":8080",
		Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, ReattachGrace: 30 * time.Second,
		ReadTimeout: 30 * time.Second, ShutdownGrace: time.Second, LogLevel: "info", ReconcileAfter: time.Minute,
		Delivery: "channel", Threads: "off"}
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want string // "" for no error
	}{
		{"both", func(c *Config) { c.Delivery = "both" }, ""},
		{"sms", func(c *Config) { c.Delivery = "sms" }, `ASKSLACK_DELIVERY "sms" must be`},
		{"threads", func(c *Config) { c.Threads = "session" }, ""},
		{"threads per channel", func(c *Config) { c.Threads = "channel" }, `ASKSLACK_THREADS "channel" must be`},
		{"remind", func(c *Config) { c.Remind, c.Escalate = []string{"15m", "1h"}, []string{"S0ONCALL"} }, ""},
		{"remind backwards", func(c *Config) { c.Remind = []string{"1h", "15m"} }, "ASKSLACK_REMIND: \"15m\" does not come after"},
		{"remind not a duration", func(c *Config) { c.Remind = []string{"hourly"} }, "ASKSLACK_REMIND: \"hourly\" is not a duration"},
		{"escalate alone", func(c *Config) { c.Escalate = []string{"S0ONCALL"} }, "ASKSLACK_ESCALATE: an escalation fires one interval after the last reminder"},
		{"escalate a name", func(c *Config) { c.Remind, c.Escalate = []string{"1h"}, []string{"@oncall"} }, `ASKSLACK_ESCALATE: "@oncall" is not a Slack user id`},
	} {
		c := base
		tc.set(&c)
		err := c.check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
