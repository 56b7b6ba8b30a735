package blocks

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

func permissionView() waterfall.View {
	req := &waterfall.Request{CallID: "call-1", Caller: "ci", Agent: waterfall.Agent{ID: "claude-code", SessionID: "s1", SourceTaskID: "web · abc123"},
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Header: "Bash", Question: "claude-code wants to use Bash in web. Allow it?",
			Detail: "Run the tests\n```\nnpm test -- --watch=false\n```",
			Options: []waterfall.Option{{Label: "Allow", Description: "Run it this once"},
				{Label: "Always allow", Description: "Run it and add the allow rule Bash(npm test:*) to local settings"},
				{Label: "Deny", Description: "Don't run it; the agent is told it was denied"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: "npm test -- --watch=false", Repo: "web"}}
	v := view(req)
	v.CallID = req.CallID
	return v
}

// TestPermissionMessageOffersRules: a permission message keeps Allow,
// Claude's own "Always allow" and Deny, and adds Allow rule… and Always
// deny…, whose ids decode to this ask; a question or an ask without a
// permission gets neither.
func TestPermissionMessageOffersRules(t *testing.T) {
	v := permissionView()
	m := Render(v)
	checkMessage(t, "message", m)
	checkIDs(t, "message", v, m.Blocks)
	var labels []string
	kinds := map[Kind]bool{}
	for _, e := range Elements(m.Blocks) {
		a, err := Decode(e.BlockID, e.ActionID, e.Values[0])
		if err != nil || a.CallID != v.CallID || a.Question != 0 {
			t.Fatalf("element %+v decodes to %+v, %v", e, a, err)
		}
		kinds[a.Kind] = true
	}
	for _, b := range m.Blocks {
		if ab, ok := b.(*slack.ActionBlock); ok {
			for _, el := range ab.Elements.ElementSet {
				if btn, ok := el.(*slack.ButtonBlockElement); ok {
					labels = append(labels, btn.Text.Text)
				}
			}
		}
	}
	if got := strings.Join(labels, "|"); got != "Allow|Always allow|Deny|Other…|Allow rule…|Deny rule…" {
		t.Fatalf("buttons %s", got)
	}
	if !kinds[KindAllowRule] || !kinds[KindDenyRule] {
		t.Fatalf("kinds %v", kinds)
	}
	modal := RuleModal(RuleForm{Meta: Meta{CallID: v.CallID, Channel: "C1", TS: "1.2"}, Effect: "allow", Tool: "Bash", Field: "command",
		Match: "npm test *", Repo: "web", Caller: "ci", Looked: 57, Preview: []string{"npm test", "npm test -- --watch=false"}})
	checkView(t, "rule-allow", modal)
	deny := RuleModal(RuleForm{Meta: Meta{CallID: v.CallID}, Effect: "deny", Tool: "Edit", Field: "path", Match: "src/*.go", Repo: "web",
		RepoAll: true, Until: "revoked", Looked: 3, Admin: true})
	checkView(t, "rule-deny", deny)
	until := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	items := []RuleItem{
		{ID: 12, Effect: "allow", Match: "Bash(npm test *)", Repo: "web", By: "U0ALICE", Granted: until.Add(-8 * time.Hour), Until: until, Uses: 41, Revoke: true},
		{ID: 13, Effect: "deny", Match: "Bash(git push --force *)", By: "U0BOB", Granted: until.Add(-time.Hour), Uses: 0},
	}
	listing := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: RuleBlocks(items, 5)}}
	golden(t, filepath.Join("testdata", "golden", "permission_rules"), map[string]any{
		"message":    map[string]any{"text": m.Text, "blocks": m.Blocks},
		"rule-allow": modal, "rule-deny": deny, "rules": listing,
	})
	for _, b := range []*waterfall.Request{request(waterfall.Question{ID: "q1", Question: "Which?", Options: opts("A", "B")})} {
		if got := ruleControls(view(b)); got != nil {
			t.Fatalf("a question got rule controls")
		}
	}
	bare := permissionView()
	bare.Request.Permission = nil
	if ruleControls(bare) != nil {
		t.Fatal("an ask without a permission got rule controls")
	}
}

func TestRuleLineAndNotice(t *testing.T) {
	until := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	r := RuleItem{ID: 12, Effect: "allow", Match: "Bash(npm test *)", Repo: "web", Caller: "ci", By: "U0ALICE", Granted: until.Add(-time.Hour), Until: until, Uses: 3}
	line := RuleLine(r)
	for _, want := range []string{"*12* · Allow `Bash(npm test *)`", "repo `web`, caller `ci`", "by <@U0ALICE>", "until <!date^", "used 3×"} {
		if !strings.Contains(line, want) {
			t.Fatalf("line %q lacks %q", line, want)
		}
	}
	n := RuleNotice("claude-code <!channel>", "Allowed", r, "npm test")
	if !strings.Contains(n, "Allowed `npm test` for *claude-code &lt;!channel&gt;* by standing rule 12") || strings.Contains(n, "<!channel>") {
		t.Fatalf("notice %q", n)
	}
	if id, ok := ParseRevokeBlockID(RevokeBlockID(12)); !ok || id != 12 {
		t.Fatal("revoke block id does not round-trip")
	}
	for _, bad := range []string{"rule/x", "rule/-1", "ask/c/0", "rule/0"} {
		if _, ok := ParseRevokeBlockID(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}
