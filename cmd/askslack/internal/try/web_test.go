package try

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	kitbrowser "github.com/askslack/askslack/internal/kit/browser"
	"github.com/askslack/askslack/internal/slackfake"
)

// across is until for a condition on a page a navigation may still be
// replacing.
func (p *tryPage) across(what, js string) {
	p.t.Helper()
	if err := kitbrowser.Until(p.ctx, js); err != nil {
		p.t.Fatalf("waiting until %s: %v\npage text:\n%s", what, err, p.text())
	}
}

// click clicks css, again if the live page replaced it meanwhile.
func (p *tryPage) click(what, css string) {
	p.t.Helper()
	if err := kitbrowser.Click(p.ctx, css); err != nil {
		p.t.Fatalf("%s: %v\npage text:\n%s", what, err, p.text())
	}
}

// signInAs signs the tab in to the answer page as user, through the fake
// Slack's sign-in page, and waits for the inbox to be live.
func (p *tryPage) signInAs(user string) {
	p.t.Helper()
	p.do("open the answer page", chromedp.Navigate(p.run.URL+"/app/"))
	p.across("the sign-in page", `document.getElementById("signin")`)
	p.click("sign in with Slack", "#signin")
	p.across("the fake Slack's person picker", `document.querySelector('a[data-user="`+user+`"]')`)
	p.do("pick "+user, chromedp.Click(chromedp.CSS(`a[data-user="`+user+`"]`)))
}

// TestWebBrowser: a person answers from a browser signed in with (the fake)
// Slack: the ask appears without a reload, the answer reaches the agent and
// the Slack message shows it; a long plan renders whole; mallory (on no
// list) cannot sign in.
func TestWebBrowser(t *testing.T) {
	tab := browser(t)
	p := startTryPage(t, tab)

	p.signInAs("U0ALICE")
	p.across("alice's empty inbox, live", `document.getElementById("empty") && document.body.dataset.live === "on"`)

	// A plan of 40 KB: Slack shows a part, the page the whole.
	var plan strings.Builder
	plan.WriteString("## Migrate billing to v2\n\n")
	for i := 1; plan.Len() < 40<<10; i++ {
		fmt.Fprintf(&plan, "### Step %d\n\n- Move `table_%d` behind the **v2** flag\n- Backfill in batches of 10,000 rows\n\n| check | owner |\n|---|---|\n| row counts | alice |\n\n```diff\n-SELECT * FROM billing_%d\n+SELECT * FROM billing_v2_%d\n```\n\n", i, i, i, i)
	}
	plan.WriteString("### The last step\n\nDrop the old tables.\n")
	answer := p.ask(`{"callId":"web-plan","agent":{"id":"claude-code","sessionId":"s-web"},
		"questions":[{"id":"plan","question":"Approve this plan to migrate the billing service?","detail":`+js(plan.String())+`,
		"options":[{"label":"Approve","description":"Start the migration"},{"label":"Revise","description":"Send the plan back"}],
		"intent":{"kind":"plan-review","approve":"Approve"}}]}`, false)
	p.across("the ask appears in the inbox without a reload", `document.querySelector('li[data-call="web-plan"]')`)

	msg, err := p.run.Fake.WaitMessage(p.ctx, func(m slackfake.Message) bool { return strings.Contains(string(m.Blocks), "ask/web-plan/") })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(msg.Blocks), "/app/asks/web-plan|read it whole in the browser") || !strings.Contains(string(msg.Blocks), "|Open in browser>") {
		t.Fatalf("the Slack message does not point to the page: %s", msg.Blocks)
	}

	p.click("open the ask", `li[data-call="web-plan"] a`)
	p.across("the whole plan", `document.getElementById("plan0") && document.getElementById("plan0").textContent.includes("The last step")`)
	p.across("its diff and table", `document.querySelector("#plan0 span.add") && document.querySelector("#plan0 table")`)
	p.across("scrolled to the top", `(window.scrollTo(0, 0), window.scrollY === 0)`)
	p.shot("testdata/web/ask.png")

	p.click("pick Approve", `input[name="q0"][data-label="Approve"]`)
	p.click("send", "#send")
	p.across("the page says it was sent", `document.getElementById("flash") && document.getElementById("flash").textContent.includes("sent to the agent")`)
	got := <-answer
	if s := fmt.Sprint(got["answers"], got["respondent"]); !strings.Contains(s, "Approve") || !strings.Contains(s, "U0ALICE") || !strings.Contains(s, "web") {
		t.Fatalf("the agent got %v", got)
	}
	if _, err := p.run.Fake.WaitMessage(p.ctx, func(m slackfake.Message) bool {
		return m.TS == msg.TS && strings.Contains(string(m.Blocks), "<@U0ALICE> (in the browser)") && !strings.Contains(string(m.Blocks), `"type":"button"`)
	}); err != nil {
		t.Fatalf("the Slack message does not show alice's answer: %v", err)
	}

	// Back on the inbox, the next ask appears live, and answering it in
	// Slack takes it off the page without a reload.
	p.do("back to the inbox", chromedp.Navigate(p.run.URL+"/app/"))
	p.across("the inbox is live", `document.body.dataset.live === "on"`)
	p.ask(`{"callId":"web-db","agent":{"id":"codex","sessionId":"s-db"},"questions":[{"id":"db","question":"Which database?","options":[{"label":"PostgreSQL"},{"label":"SQLite"}]}]}`, true)
	p.across("the new ask", `document.querySelector('li[data-call="web-db"]')`)
	p.shot("testdata/web/inbox.png")
	db, err := p.run.Fake.WaitMessage(p.ctx, func(m slackfake.Message) bool { return strings.Contains(string(m.Blocks), "ask/web-db/") })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.run.Fake.ClickButton(p.ctx, tryBob, db.Channel, db.TS, "SQLite", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	p.across("answered in Slack, it leaves the inbox", `!document.querySelector('li[data-call="web-db"]')`)

	// Signed out, mallory (on no list here) is refused at sign-in.
	p.click("sign out", "#signout")
	p.across("signed out", `document.getElementById("why") && document.getElementById("why").textContent.includes("signed out")`)
	p.signInAs("U0MALLORY")
	p.across("mallory is refused", `document.getElementById("why") && document.getElementById("why").textContent.includes("not on the list")`)
}
