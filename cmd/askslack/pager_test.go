package main

import (
	"context"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/pagerfake"
	"github.com/askslack/askslack/internal/slackfake"
)

const pageKey = "R0UTINGKEYE2ER0UTINGKEYE2E000001"

// pagerEnv points the deployment's bots at fake's provider, paging one
// interval after a 1s reminder (at 2s).
func pagerEnv(d *deployment, fake *pagerfake.Server, provider string) {
	d.env["ASKSLACK_REMIND"] = "1s"
	d.env["ASKSLACK_PAGE"] = provider
	if provider == "opsgenie" {
		d.env["ASKSLACK_OPSGENIE_API_KEY"] = pageKey
		d.env["ASKSLACK_OPSGENIE_URL"] = fake.URL()
	} else {
		d.env["ASKSLACK_PAGERDUTY_ROUTING_KEY"] = pageKey
		d.env["ASKSLACK_PAGERDUTY_URL"] = fake.URL()
	}
}

// waitEvents waits until the fake recorded n events of action for key.
func waitEvents(t *testing.T, ctx context.Context, f *pagerfake.Server, action, key string, n int) {
	t.Helper()
	if err := f.WaitFor(ctx, func([]pagerfake.Event) bool { return f.Count(action, key) >= n }); err != nil {
		t.Fatalf("waiting for %d %s of %s: %v", n, action, key, err)
	}
}

// threadReplies are the replies in m's thread.
func threadReplies(f *slackfake.Server, m slackfake.Message) []slackfake.Message {
	var out []slackfake.Message
	for _, r := range f.Messages() {
		if r.Channel == m.Channel && r.ThreadTS == m.TS {
			out = append(out, r)
		}
	}
	return out
}

// ASKSLACK_PAGE: a question nobody answers pages the on-call once, at the
// escalation step (with no ASKSLACK_ESCALATE, nothing more in Slack), and
// the answer clicked in Slack resolves the page once.
func TestE2EPagesTheOnCallAndResolvesOnTheAnswer(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"pagerduty", "opsgenie"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			fake := pagerfake.New(pagerfake.Options{RoutingKey: pageKey, APIKey: pageKey})
			defer fake.Close()
			d := newDeployment(t, false)
			pagerEnv(d, fake, provider)
			b := d.start(viaHTTP)

			callID := "page-" + provider
			key := "askslack/" + callID
			asked := b.askAsync(ctx, oneQuestion(callID, "Yes", "No"))
			msg := waitPosted(t, ctx, d.fake, callID)
			open, closed := "trigger", "resolve"
			if provider == "opsgenie" {
				open, closed = "create", "close"
			}
			waitEvents(t, ctx, fake, open, key, 1)
			ev := fake.Events()[0]
			wantSev := map[string]string{"pagerduty": "info", "opsgenie": "P4"}[provider] // a question
			if ev.Summary != "Deploy to production now?" || ev.Severity != wantSev || ev.Details["agent"] != "agent-1" ||
				ev.Details["session"] != "sess-1" || !strings.Contains(string(ev.Body), "/archives/"+msg.Channel+"/") {
				t.Fatalf("the page: %+v\n%s", ev, ev.Body)
			}
			waitMetric(t, ctx, b, `askslack_pages_total{action="open",provider="`+provider+`",result="ok"} 1`)
			// Later sweeps do not page again; Slack got the reminder only.
			waitSweeps(t, ctx, 2, b)
			if n := fake.Count(open, key); n != 1 {
				t.Fatalf("%d pages; want 1", n)
			}
			if r := threadReplies(d.fake, msg); len(r) != 1 || !strings.Contains(r[0].Text, "Still waiting") {
				t.Fatalf("thread replies %+v; want the one reminder", r)
			}

			if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
			if _, err := asked.wait(t); err != nil {
				t.Fatal(err)
			}
			waitEvents(t, ctx, fake, closed, key, 1)
			waitMetric(t, ctx, b, `askslack_pages_total{action="resolve",provider="`+provider+`",result="ok"} 1`)
			waitSweeps(t, ctx, 2, b) // nothing more comes
			if got := fake.Events(); len(got) != 2 {
				t.Fatalf("events %+v; want one page and one resolve", got)
			}
			if provider == "opsgenie" && fake.Events()[1].Note != "answered" {
				t.Fatalf("close note %q", fake.Events()[1].Note)
			}
		})
	}
}

// Two replicas over Redis sweep the same reminders and see the same
// answer: one page, one resolve.
func TestE2EPagesOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, true)
	fake := pagerfake.New(pagerfake.Options{RoutingKey: pageKey})
	defer fake.Close()
	pagerEnv(d, fake, "pagerduty")
	d.env["ASKSLACK_ESCALATE"] = "S0ONCALL" // the mention and the page, each once
	b1 := d.start(viaHTTP)
	b2 := d.start(viaHTTP) // another replica: the clicks go to it

	const callID = "page-replicas"
	const key = "askslack/" + callID
	asked := b1.askAsync(ctx, oneQuestion(callID, "Yes", "No"))
	msg := waitPosted(t, ctx, d.fake, callID)
	waitEvents(t, ctx, fake, "trigger", key, 1)
	waitSweeps(t, ctx, 2, b1, b2) // both replicas sweep twice more
	if n := fake.Count("trigger", key); n != 1 {
		t.Fatalf("%d pages from two replicas; want 1", n)
	}
	if err := d.fake.WaitUntil(ctx, func() bool { return len(threadReplies(d.fake, msg)) >= 2 }); err != nil {
		t.Fatalf("thread replies %+v; want the reminder and the escalation", threadReplies(d.fake, msg))
	}
	if r := threadReplies(d.fake, msg); len(r) != 2 || !strings.HasPrefix(r[1].Text, "<!subteam^S0ONCALL>") {
		t.Fatalf("thread replies %+v; want the reminder, then the mention once", r)
	}

	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := asked.wait(t); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, ctx, fake, "resolve", key, 1)
	waitSweeps(t, ctx, 2, b1, b2) // nothing more comes
	if got := fake.Events(); len(got) != 2 {
		t.Fatalf("events %+v; want one page and one resolve", got)
	}
}

// waitSweeps waits until each of bots has run n more sweeps of the
// reminders' schedule (askslack_reminder_sweeps_total): what a later sweep
// would have done wrong (a second page, a second resolve) has happened by
// then, without a sleep that guesses how long a sweep takes.
func waitSweeps(t *testing.T, ctx context.Context, n int, bots ...*bot) {
	t.Helper()
	for _, b := range bots {
		from := metricInt(b, "askslack_reminder_sweeps_total")
		if err := waitFor(ctx, func() bool { return metricInt(b, "askslack_reminder_sweeps_total") >= from+n }); err != nil {
			t.Fatalf("%s never swept %d more times (from %d)", b.addr, n, from)
		}
	}
}
