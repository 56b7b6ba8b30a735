package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/pagerfake"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// leakSecret is planted in a command; nothing that leaves the bot for a
// system outside its people and operators may carry it (docs/security.md).
const leakSecret = "s3cretLEAK9f1"

var (
	leakCommand = "psql --password=" + leakSecret + " -c 'vacuum'"
	leakEdited  = "psql -c 'vacuum analyze'" // what the person edits it into: tool input too
)

// leakAsk is a Bash permission for leakCommand, as askslack hook files one:
// the command in the question's detail and the permission, editable.
func leakAsk(callID string, timeoutMs float64) *waterfall.Request {
	var timeout *float64
	if timeoutMs > 0 {
		timeout = &timeoutMs
	}
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "claude-code", SessionID: "sess-leak"}, TimeoutMs: timeout,
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Header: "Bash",
			Question: "claude-code wants to use Bash in infra. Allow it?", Detail: "```\n" + leakCommand + "\n```",
			Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: leakCommand, Repo: "infra",
			Editable: []waterfall.EditableField{{Name: "command", Label: "Command", Value: leakCommand, Of: waterfall.OfCommand}}}}
}

// carriesToolInput reports which of the planted command's secret and the
// edit's text s holds.
func carriesToolInput(s string) string {
	switch {
	case strings.Contains(s, leakSecret):
		return "the planted secret"
	case strings.Contains(s, "vacuum"):
		return "the command's text"
	}
	return ""
}

// Issue 43: a command holding a secret, taken through every webhook event
// (created, answered in the window with an edit, answered late with an
// edit, continued, withdrawn, answered by a standing rule granted from it,
// the rule granted and revoked) and a page to the on-call (PagerDuty and
// Opsgenie), is in no webhook body, no page, no log line and no metric;
// the edited allow's body names the field and its new value's SHA-256.
func TestE2ENoToolInputLeavesTheBot(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"pagerduty", "opsgenie"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			rcv := newHookReceiver(t)
			pages := pagerfake.New(pagerfake.Options{RoutingKey: pageKey, APIKey: pageKey})
			t.Cleanup(pages.Close)
			d := newDeployment(t, false)
			d.env["ASKSLACK_API_TOKENS"] = "ci:" + ciToken
			d.env["ASKSLACK_ANSWER_TOKENS"] = "console:" + consoleTok
			d.env["ASKSLACK_ADMIN_TOKENS"] = "ops:" + opsToken
			d.env["ASKSLACK_ALLOWED_USERS"] = alice.ID + "," + bob.ID
			d.env["ASKSLACK_WEBHOOKS"] = "audit=" + rcv.srv.URL + "/hook"
			d.env["ASKSLACK_WEBHOOK_SECRET"] = hookSecret
			pagerEnv(d, pages, provider)
			b := d.start(viaHTTP)
			edit := `{"answers":[{"id":"permission","selected":["Allow"],"edited":{"command":` + mustJSON(leakEdited) + `}}]}`

			// Answered in its window, with an edit, through the answer API.
			askAsyncAs(t, b, ciToken, leakAsk("leak-edit", 0))
			waitPosted(t, ctx, d.fake, "leak-edit")
			code, body := api(t, b, "POST", "/v1/asks/leak-edit/answer", consoleTok, edit)
			if code != http.StatusOK {
				t.Fatalf("the edited allow: %d %s", code, body)
			}

			// Continued at the end of its window, then answered late with an edit.
			askAsyncAs(t, b, ciToken, leakAsk("leak-late", 1000))
			rcv.waitFor(t, ctx, "ask.continued", "leak-late")
			if code, body := api(t, b, "POST", "/v1/asks/leak-late/answer", consoleTok, edit); code != http.StatusOK {
				t.Fatalf("the late edited allow: %d %s", code, body)
			}

			// Withdrawn by its agent.
			askAsyncAs(t, b, ciToken, leakAsk("leak-withdrawn", 0))
			waitPosted(t, ctx, d.fake, "leak-withdrawn")
			if code, body := api(t, b, "DELETE", "/v1/asks/leak-withdrawn", ciToken, ""); code >= 300 {
				t.Fatalf("withdrawing: %d %s", code, body)
			}

			// Left unanswered until the on-call is paged, then alice grants a
			// rule of the exact command; it answers the next ask; ops revokes it.
			askAsyncAs(t, b, ciToken, leakAsk("leak-rule", 0))
			msg := waitPosted(t, ctx, d.fake, "leak-rule")
			open := map[string]string{"pagerduty": "trigger", "opsgenie": "create"}[provider]
			waitEvents(t, ctx, pages, open, "askslack/leak-rule", 1)
			if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Allow rule…", slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
			view := waitView(t, ctx, d.fake, alice.ID, blocks.CallbackAllowRule)
			resp, err := d.fake.SubmitView(ctx, alice, view.ID, map[string][]string{blocks.RuleMatchBlock: {leakCommand},
				blocks.RuleUntilBlock: {"1 hour"}}, slackfake.Delivery{})
			if err != nil || strings.Contains(string(resp.Body), `"errors"`) {
				t.Fatalf("granting the rule: %v %s", err, resp.Body)
			}
			if code, body := askBlocking(t, b, leakAsk("leak-byrule", 0)); code != http.StatusOK || !strings.Contains(body, `"surface":"rule"`) {
				t.Fatalf("the ask the rule answers: %d %s", code, body)
			}
			if code, body := api(t, b, "DELETE", "/v1/rules/1", opsToken, ""); code >= 300 {
				t.Fatalf("revoking the rule: %d %s", code, body)
			}

			for _, w := range []struct{ typ, callID string }{
				{"ask.created", "leak-edit"}, {"ask.answered", "leak-edit"},
				{"ask.created", "leak-late"}, {"ask.continued", "leak-late"},
				{"ask.created", "leak-withdrawn"}, {"ask.withdrawn", "leak-withdrawn"},
				{"ask.created", "leak-rule"}, {"ask.answered", "leak-rule"}, {"rule.granted", "leak-rule"}, {"rule.revoked", "leak-rule"},
				{"ask.created", "leak-byrule"}, {"ask.answered", "leak-byrule"},
			} {
				rcv.waitFor(t, ctx, w.typ, w.callID)
			}
			late := rcv.waitFor(t, ctx, "ask.answered", "leak-late")
			if !late.body.Late {
				t.Errorf("the late answer came without late: %s", late.raw)
			}

			// What the edited allows say instead.
			for _, x := range []hookDelivery{rcv.waitFor(t, ctx, "ask.answered", "leak-edit"), late} {
				if !strings.Contains(x.body.Detail, "allowed with changes\ncommand (new value sha256:"+sha256Hex(leakEdited)+"):") ||
					x.body.Ask == nil || len(x.body.Ask.Answers) != 1 || x.body.Ask.Answers[0].Edited["command"] != "sha256:"+sha256Hex(leakEdited) {
					t.Errorf("the edited allow's body does not name the field and its hash: %s", x.raw)
				}
			}

			rcv.mu.Lock()
			got := append([]hookDelivery(nil), rcv.got...)
			rcv.mu.Unlock()
			for _, x := range got {
				if what := carriesToolInput(string(x.raw)); what != "" {
					t.Errorf("a webhook body carries %s: %s", what, x.raw)
				}
			}
			if len(pages.Events()) == 0 {
				t.Fatal("no page reached the fake")
			}
			for _, ev := range pages.Events() {
				if what := carriesToolInput(string(ev.Body)); what != "" {
					t.Errorf("a page to %s carries %s: %s", provider, what, ev.Body)
				}
			}
			if what := carriesToolInput(metricsText(t, b)); what != "" {
				t.Errorf("/metrics carries %s", what)
			}
			for _, l := range strings.Split(b.logs.String(), "\n") {
				if what := carriesToolInput(l); what != "" {
					t.Errorf("a log line carries %s: %s", what, l)
				}
			}
		})
	}
}

// metricsText is the bot's /metrics.
func metricsText(t *testing.T, b *bot) string {
	t.Helper()
	resp, err := http.Get("http://" + b.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}
