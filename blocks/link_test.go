package blocks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// TestOpenInBrowser: with the answer page on, a question's message links
// to its page, and a plan cut at Slack's limits says the whole is there;
// an answered message, and a message without the page, link nowhere.
func TestOpenInBrowser(t *testing.T) {
	t.Parallel()
	plan := request(waterfall.Question{ID: "plan", Question: "Approve?", Detail: planMarkdown(40 << 10), Options: opts("Approve", "Revise"),
		Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"}})
	link := "https://askslack.example.com/app/asks/toolu_01ABC?x=1&y=2"
	blocksOf := func(v waterfall.View) string {
		m := Render(v)
		checkMessage(t, "plan", m)
		b, _ := json.Marshal(m.Blocks)
		return string(b)
	}

	v := view(plan)
	v.Link = link
	got := blocksOf(v)
	// & is escaped for mrkdwn; json.Marshal writes it as \u0026.
	for _, want := range []string{`askslack.example.com/app/asks/toolu_01ABC?x=1\u0026amp;y=2|Open in browser\u003e`, `|read it whole in the browser\u003e`} {
		if !strings.Contains(got, want) {
			t.Errorf("the open plan lacks %s:\n%s", want, got)
		}
	}

	v.Phase, v.Settlement = waterfall.PhaseSettled, &waterfall.Settlement{Answer: waterfall.SingleAnswer(&plan.Questions[0], []string{"Approve"}, ""),
		Respondent: waterfall.Respondent{UserID: "U0ALICE", Surface: waterfall.SurfaceWeb}}
	got = blocksOf(v)
	if strings.Contains(got, "Open in browser") {
		t.Errorf("an answered message links to the page: %s", got)
	}
	if !strings.Contains(got, `\u003c@U0ALICE\u003e (in the browser)`) {
		t.Errorf("the answer does not say alice answered in the browser: %s", got)
	}

	if got := blocksOf(view(plan)); strings.Contains(got, "browser") {
		t.Errorf("a message links to a page that is off: %s", got)
	}
}
