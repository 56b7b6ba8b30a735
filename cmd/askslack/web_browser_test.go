package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askslack/askslack/internal/kit/browser"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// webTab is a headless Chromium tab on the answer page of a real binary.
type webTab struct {
	t    *testing.T
	tab  context.Context
	base string
}

func (w *webTab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		w.t.Fatalf("%s: %v\npage text:\n%s", what, err, browser.Text(w.tab))
	}
}

// click clicks css, again if the live page replaced it meanwhile.
func (w *webTab) click(what, css string) {
	w.t.Helper()
	if err := browser.Click(w.tab, css); err != nil {
		w.t.Fatalf("%s: %v\npage text:\n%s", what, err, browser.Text(w.tab))
	}
}

func (w *webTab) until(what, js string) {
	w.t.Helper()
	if err := browser.Until(w.tab, js); err != nil {
		w.t.Fatalf("waiting until %s: %v\npage text:\n%s", what, err, browser.Text(w.tab))
	}
}

func (w *webTab) eval(js string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.tab, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		w.t.Fatalf("evaluating %s: %v", js, err)
	}
	return s
}

// signIn goes through Sign in with Slack on the fake's person picker.
func (w *webTab) signIn(user string) {
	w.t.Helper()
	w.do("open the answer page", chromedp.Navigate(w.base+"/app/"))
	w.until("the sign-in page", `document.getElementById("signin")`)
	w.click("sign in with Slack", "#signin")
	w.until("the fake Slack's person picker", `document.querySelector('a[data-user="`+user+`"]')`)
	w.do("pick "+user, chromedp.Click(chromedp.CSS(`a[data-user="`+user+`"]`)))
	w.until("signed in, the inbox live", `document.getElementById("signout") && document.body.dataset.live === "on"`)
}

// TestE2EWebBrowser: the real binary, the fake Slack and a real browser:
// alice signs in with Slack, a plan of 40 KB appears in her inbox without a
// reload and renders whole, her answer reaches the agent and the Slack
// message; mallory, on the allowlist but not among an ask's approvers,
// sees nothing to answer and her forged POST (her own session's CSRF
// token, from the page) is refused.
func TestE2EWebBrowser(t *testing.T) {
	t.Parallel()
	tab := browser.Start(t)
	ctx := testCtx(t)
	d, b, base := webDeployment(t)
	w := &webTab{t: t, tab: tab, base: base}

	w.signIn(alice.ID)
	w.until("an empty inbox", `document.getElementById("empty")`)

	var plan strings.Builder
	for i := 1; plan.Len() < 40<<10; i++ {
		fmt.Fprintf(&plan, "## Step %d\n\n1. Move `t%d`\n2. Check\n\n| a | b |\n|---|---|\n| %d | x |\n\n```diff\n-old %d\n+new %d\n```\n\n", i, i, i, i, i)
	}
	plan.WriteString("## The last step\n\nDone.\n")
	req := &waterfall.Request{CallID: "wb-plan", Agent: waterfall.Agent{ID: "claude-code"}, Questions: []waterfall.Question{{
		ID: "plan", Question: "Approve this plan?", Detail: plan.String(), Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
		Options: []waterfall.Option{{Label: "Approve"}, {Label: "Revise"}}}}}
	asked := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, "wb-plan")
	w.until("the plan appears without a reload", `document.querySelector('li[data-call="wb-plan"]')`)

	w.click("open it", `li[data-call="wb-plan"] a`)
	w.until("the whole plan, its diff and tables", `document.getElementById("plan0") && document.getElementById("plan0").textContent.includes("The last step") && document.querySelector("#plan0 span.del") && document.querySelector("#plan0 table")`)
	w.click("pick Approve", `input[name="q0"][data-label="Approve"]`)
	w.click("send", "#send")
	w.until("sent", `document.getElementById("flash") && document.getElementById("flash").textContent.includes("sent to the agent")`)
	res, err := asked.wait(t)
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Selected[0] != "Approve" || res.Respondent.UserID != alice.ID || res.Respondent.Surface != "web" {
		t.Fatalf("the agent got %+v, %v", res, err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "the answer in Slack", func(m slackfake.Message) bool {
		return !hasControls(m) && bytes.Contains(m.Blocks, []byte("<@U0ALICE> (in the browser)"))
	})

	// mallory: signed in, nothing of the permission ask is hers.
	b.askAsync(ctx, &waterfall.Request{CallID: "wb-perm", Agent: waterfall.Agent{ID: "claude-code"}, Approvers: []string{alice.ID},
		Permission: &waterfall.Permission{Tool: "Bash", Command: "make deploy"},
		Questions:  []waterfall.Question{{ID: waterfall.PermissionQuestionID, Question: "Run make deploy?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}}})
	waitPosted(t, ctx, d.fake, "wb-perm")
	w.click("sign out", "#signout")
	w.until("signed out", `document.getElementById("why") && document.getElementById("why").textContent.includes("signed out")`)
	w.signIn(mallory.ID)
	w.until("mallory's inbox is empty", `document.getElementById("empty")`)
	status := w.eval(`fetch("/app/asks/wb-perm", {method: "POST", body: new URLSearchParams({csrf: document.querySelector('input[name="csrf"]').value, q0: "0"})}).then(r => String(r.status))`)
	if status != "404" {
		t.Fatalf("mallory's forged POST from the page: %s", status)
	}
	if st := askState(t, ctx, b, "wb-perm"); st != "open" {
		t.Fatalf("the permission is %s after mallory's POST", st)
	}
}
