package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// Every interaction of issue 4, once per transport: the dispatcher is one,
// the transports two.
func TestE2EAnswering(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{viaHTTP, viaSocket} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			d := newDeployment(t, false)
			d.env["ASKSLACK_ALLOWED_USERS"] = alice.ID + "," + carol.ID
			d.env["ASKSLACK_ALLOWED_GROUPS"] = "S0ONCALL" // bob
			b := d.start(tr)
			if tr == viaSocket {
				if err := d.fake.WaitConnected(testCtx(t), 1); err != nil {
					t.Fatal(err)
				}
			}
			t.Run("CheckboxSubmit", func(t *testing.T) { checkboxSubmit(t, d, b) })
			t.Run("BatchWithSkipped", func(t *testing.T) { batchWithSkipped(t, d, b) })
			t.Run("OtherModal", func(t *testing.T) { otherModal(t, d, b) })
			t.Run("PlanApprove", func(t *testing.T) { planReview(t, d, b, false) })
			t.Run("PlanDeclineWithFeedback", func(t *testing.T) { planReview(t, d, b, true) })
			t.Run("UnauthorisedRefused", func(t *testing.T) { unauthorised(t, d, b) })
			t.Run("RetriedDelivery", func(t *testing.T) { retried(t, d, b, tr) })
		})
	}
}

func checkboxSubmit(t *testing.T, d *deployment, b *bot) {
	ctx := testCtx(t)
	req := &waterfall.Request{CallID: "multi-" + safe(t), Agent: waterfall.Agent{ID: "agent-1"},
		Questions: []waterfall.Question{{ID: "files", Question: "Which files should I refactor?", MultiSelect: true,
			Options: []waterfall.Option{{Label: "main.go"}, {Label: "store.go", Description: "the persistence layer"}, {Label: "blocks.go"}}}}}
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	// Ticks are remembered by Slack in state.values: tick two, untick one, tick another.
	for _, sel := range [][]string{{"main.go", "store.go"}, {"store.go"}, {"store.go", "blocks.go"}} {
		if _, err := d.fake.Select(ctx, alice, msg.Channel, msg.TS, "askslack.check", sel, slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.fake.ClickButtonByAction(ctx, alice, msg.Channel, msg.TS, "askslack.submit", "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || fmt.Sprint(res.Answers[0].Selected) != "[store.go blocks.go]" {
		t.Fatalf("answer %+v %v", res, err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
}

func batchWithSkipped(t *testing.T, d *deployment, b *bot) {
	ctx := testCtx(t)
	req := &waterfall.Request{CallID: "batch-" + safe(t), Agent: waterfall.Agent{ID: "agent-1"}, Questions: []waterfall.Question{
		{ID: "db", Question: "Which database?", Options: []waterfall.Option{{Label: "Postgres"}, {Label: "SQLite"}}},
		{ID: "tests", Question: "Which suites?", MultiSelect: true, Options: []waterfall.Option{{Label: "unit"}, {Label: "e2e"}}},
		{ID: "name", Question: "Service name?", Options: []waterfall.Option{{Label: "askd"}, {Label: "asker"}}},
	}}
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	q := func(i int) string { return "ask/" + req.CallID + "/" + fmt.Sprint(i) }
	if _, err := d.fake.Select(ctx, bob, msg.Channel, msg.TS, q(0), []string{"SQLite"}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.fake.Select(ctx, bob, msg.Channel, msg.TS, q(1), []string{"unit", "e2e"}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	st, _ := b.client().Get(ctx, req.CallID, 0)
	if st.State != "open" {
		t.Fatalf("choosing in a batch settled it early: %s", st.State)
	}
	if _, err := d.fake.ClickButtonByAction(ctx, bob, msg.Channel, msg.TS, "askslack.submit", "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	got := mustJSON(res.Answers)
	want := `[{"id":"db","selected":["SQLite"]},{"id":"tests","selected":["unit","e2e"]},{"id":"name","selected":[]}]`
	if got != want {
		t.Fatalf("answers %s, want %s", got, want)
	}
}

func otherModal(t *testing.T, d *deployment, b *bot) {
	ctx := testCtx(t)
	req := oneQuestion("other-"+safe(t), "Blue", "Green")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if _, err := d.fake.ClickButton(ctx, carol, msg.Channel, msg.TS, "Other…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	view := waitView(t, ctx, d.fake, carol.ID, req.CallID)
	textBlock := blocks.TextBlockID(req.CallID, 0)
	// Whitespace passes Slack's client check but is no answer: a field error, the modal stays.
	resp, err := d.fake.SubmitView(ctx, carol, view.ID, map[string][]string{textBlock: {"   "}}, slackfake.Delivery{})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	var ack struct {
		ResponseAction string            `json:"response_action"`
		Errors         map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(resp.Body, &ack); err != nil || ack.ResponseAction != "errors" || ack.Errors[textBlock] == "" {
		t.Fatalf("empty text ack = %s (%v); want a field error on %s", resp.Body, err, textBlock)
	}
	if v, _ := d.fake.View(view.ID); v.Closed {
		t.Fatal("the modal closed on an empty answer")
	}
	if _, err := d.fake.SubmitView(ctx, carol, view.ID, map[string][]string{textBlock: {"Teal, like the logo"}}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || res.Answers[0].Custom != "Teal, like the logo" || len(res.Answers[0].Selected) != 0 {
		t.Fatalf("answer %+v %v", res, err)
	}
	if v, _ := d.fake.View(view.ID); !v.Closed {
		t.Fatal("the modal stayed open after a good answer")
	}
	upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	if !strings.Contains(string(upd.Blocks), "Teal, like the logo") {
		t.Fatalf("answered message lacks the typed text: %s", upd.Blocks)
	}
}

func planRequest(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "agent-1", Principal: "alice@example.com"}, Questions: []waterfall.Question{{
		ID: "plan", Question: "Approve this migration plan?", Detail: "## Plan\n1. **Add** column\n2. Backfill\n3. Drop old column",
		Options: []waterfall.Option{{Label: "Approve"}, {Label: "Reject"}},
		Intent:  &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
	}}}
}

func planReview(t *testing.T, d *deployment, b *bot, decline bool) {
	ctx := testCtx(t)
	req := planRequest("plan-" + safe(t))
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if !decline {
		if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		res, err := a.wait(t)
		if err != nil || mustJSON(res.Answers) != `[{"id":"plan","selected":["Approve"]}]` {
			t.Fatalf("approve: %+v %v", res, err)
		}
		upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
		if !strings.Contains(string(upd.Blocks), "approved") || !strings.Contains(string(upd.Blocks), "<@"+alice.ID+">") {
			t.Fatalf("answered plan does not say approved by whom: %s", upd.Blocks)
		}
		return
	}
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Decline with feedback…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	view := waitView(t, ctx, d.fake, alice.ID, req.CallID)
	if _, err := d.fake.SubmitView(ctx, alice, view.ID, map[string][]string{blocks.TextBlockID(req.CallID, 0): {"Backfill in batches of 1000."}}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || mustJSON(res.Answers) != `[{"id":"plan","selected":[],"custom":"Backfill in batches of 1000."}]` {
		t.Fatalf("decline: %+v %v", res, err)
	}
	upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	if !strings.Contains(string(upd.Blocks), "declined") {
		t.Fatalf("answered plan does not say declined: %s", upd.Blocks)
	}
}

func unauthorised(t *testing.T, d *deployment, b *bot) {
	ctx := testCtx(t)
	mallory := slackfake.User{ID: "U0MALLORY", Name: "mallory"}
	req := oneQuestion("authz-"+safe(t), "Yes", "No")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if _, err := d.fake.ClickButton(ctx, mallory, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, mallory.ID, "not on the list")
	if st, _ := b.client().Get(ctx, req.CallID, 0); st.State != "open" {
		t.Fatalf("an unauthorised click changed the ask to %s", st.State)
	}
	// bob is allowed through the S0ONCALL user group.
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "No", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.wait(t); err != nil || res.Respondent.UserID != bob.ID {
		t.Fatalf("group member's answer: %+v %v", res, err)
	}
}

func retried(t *testing.T, d *deployment, b *bot, tr transport) {
	ctx := testCtx(t)
	req := oneQuestion("retry-"+safe(t), "Yes", "No")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	click := func(n int) {
		if _, err := d.fake.ClickButtonIn(ctx, msg, alice, "Yes", slackfake.Delivery{RetryNum: n}); err != nil {
			t.Fatal(err)
		}
	}
	click(0)
	if _, err := a.wait(t); err != nil {
		t.Fatal(err)
	}
	upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	click(1) // Slack re-delivers the same click
	waitEphemeral(t, ctx, d.fake, alice.ID, "Already answered by <@"+alice.ID+">")
	st, _ := b.client().Get(ctx, req.CallID, 0)
	if st.State != "settled" || st.Respondent.UserID != alice.ID || st.Version != mustStatusVersion(t, b, req.CallID) {
		t.Fatalf("after a retried delivery: %+v", st)
	}
	if m, _ := d.fake.Message(msg.Channel, msg.TS); m.Text != upd.Text {
		t.Fatalf("a retried delivery changed the message: %q → %q", upd.Text, m.Text)
	}
}

func mustStatusVersion(t *testing.T, b *bot, callID string) int64 {
	st, err := b.client().Get(testCtx(t), callID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st.Version
}

// 50 people click at once (over both transports, on a message each saw
// before anyone answered): exactly one answer stands; everyone else hears
// who answered.
func TestE2EFiftyConcurrentClicks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	req := oneQuestion("fifty", "Yes", "No")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	var wg sync.WaitGroup
	var failed atomic.Int32
	users := make([]slackfake.User, 50)
	for i := range users {
		users[i] = slackfake.User{ID: fmt.Sprintf("U%04d", i), Name: fmt.Sprintf("user%d", i)}
		wg.Go(func() {
			button := []string{"Yes", "No"}[i%2]
			resp, err := d.fake.ClickButtonIn(ctx, msg, users[i], button, slackfake.Delivery{})
			if err != nil || resp.Status != http.StatusOK {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d deliveries failed", failed.Load())
	}
	res, err := a.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	winner := res.Respondent.UserID
	if err := d.fake.WaitUntil(ctx, func() bool {
		n := 0
		for _, e := range d.fake.Ephemerals() {
			if strings.Contains(e.Text, "Already answered by <@"+winner+">") {
				n++
			}
		}
		return n == 49
	}); err != nil {
		t.Fatalf("not all 49 losers were told who answered: %d ephemerals", len(d.fake.Ephemerals()))
	}
	for _, e := range d.fake.Ephemerals() {
		if e.User == winner {
			t.Fatalf("the winner %s got %q", winner, e.Text)
		}
	}
	st, _ := b.client().Get(ctx, req.CallID, 0)
	if st.Respondent.UserID != winner || fmt.Sprint(st.Answers[0].Selected) != fmt.Sprint(res.Answers[0].Selected) {
		t.Fatalf("stored answer %+v differs from the returned one %+v", st, res)
	}
}

// A permanent Slack refusal to post falls through the waterfall (here to
// NO_PROVIDER); a 429 is waited out and the post succeeds.
func TestE2ESlackFailures(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	d.fake.FailNext("chat.postMessage", 1, "channel_not_found", 0)
	_, err := b.client().Ask(ctx, oneQuestion("perm-fail", "Yes"))
	var we *waterfall.Error
	if !errors.As(err, &we) || we.Code != waterfall.CodeNoProvider {
		t.Fatalf("ask with channel_not_found: %v; want NO_PROVIDER", err)
	}
	b.waitLog(ctx, "channel_not_found")
	d.fake.FailNext("chat.postMessage", 1, "ratelimited", 1)
	req := oneQuestion("rate-limited", "Yes")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	calls := d.fake.Calls("chat.postMessage")
	if n := len(calls); n < 3 || calls[n-2].OK() {
		t.Fatalf("want a refused post then a retried one; calls: %d", n)
	}
	// The click's response_url fails, then chat.update twice: the retries
	// still lock the message.
	d.fake.FailNext("response_url", 1, "internal_error", 0)
	d.fake.FailNext("chat.update", 2, "internal_error", 0)
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.wait(t); err != nil {
		t.Fatalf("the answer must stand although chat.update failed: %v", err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked after retries", func(m slackfake.Message) bool { return !hasControls(m) })
}

// safe turns a subtest name into a call id fragment.
func safe(t *testing.T) string {
	return strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
}

// With ASKSLACK_REQUIRE_PRINCIPAL, an ask of a caller the operator bound to
// a principal whose email maps to a Slack user (users.lookupByEmail) is
// answered by that user only.
func TestE2EPrincipalMustAnswer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_REQUIRE_PRINCIPAL"] = "true"
	d.bindPrincipals(alice.Email)
	b := d.start(viaHTTP)
	req := planRequest("principal") // principal alice@example.com
	a := askWith(ctx, d.clientFor(b, alice.Email), req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, bob.ID, "Only <@"+alice.ID+">")
	if st, _ := d.clientFor(b, alice.Email).Get(ctx, req.CallID, 0); st.State != "open" {
		t.Fatalf("a refused click changed the ask to %s", st.State)
	}
	if len(d.fake.Calls("users.lookupByEmail")) == 0 {
		t.Fatal("the principal was not looked up by email")
	}
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.wait(t); err != nil || res.Respondent.UserID != alice.ID {
		t.Fatalf("the principal's answer: %+v %v", res, err)
	}
}

// Reading aids open read-only modals and change nothing: an option's
// preview, and the whole of a plan too long for the message.
func TestE2EPreviewAndFullPlan(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	plan := "## Migration\n" + strings.Repeat("1. **Step** with a long explanation of what happens.\n", 400)
	req := &waterfall.Request{CallID: "reading", Agent: waterfall.Agent{ID: "agent-1"}, Questions: []waterfall.Question{{
		ID: "layout", Question: "Approve the plan and layout?", Detail: plan,
		Options: []waterfall.Option{{Label: "Approve", Preview: "```\n+--------+\n| side   |\n+--------+\n```"}, {Label: "Reject"}},
		Intent:  &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
	}}}
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	opened := func(substr string) { waitView(t, ctx, d.fake, carol.ID, substr) }
	if _, err := d.fake.ClickButtonByAction(ctx, carol, msg.Channel, msg.TS, "askslack.preview.0", "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	opened("| side   |")
	if _, err := d.fake.ClickButtonByAction(ctx, carol, msg.Channel, msg.TS, "askslack.fullplan", "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	opened("Migration")
	if st, _ := b.client().Get(ctx, req.CallID, 0); st.State != "open" {
		t.Fatalf("reading changed the ask to %s", st.State)
	}
	if _, err := b.client().Abort(ctx, req.CallID); err != nil {
		t.Fatal(err)
	}
	_, _ = a.wait(t)
}

// A click on a question whose record is gone (retention ran out) tells the
// clicker and replaces the message's controls with an "expired" note.
func TestE2EClickOnExpiredQuestion(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, true)
	b := d.start(viaHTTP)
	req := oneQuestion("gone", "Yes", "No")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if _, err := b.client().Abort(ctx, req.CallID); err != nil {
		t.Fatal(err)
	}
	_, _ = a.wait(t)
	// Retention ends: the record disappears (as PEXPIREAT would make it).
	rdb := redisFor(t, d)
	if n, err := rdb.Del(ctx, d.prefix+":ask:{"+req.CallID+"}").Result(); err != nil || n != 1 {
		t.Fatalf("deleting the record: %d %v", n, err)
	}
	if _, err := d.fake.ClickButtonIn(ctx, msg, alice, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "no longer available")
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "marked expired", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "no longer open")
	})
}
