package slackbot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

func permissionReq(callID, command string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "claude-code"},
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Question: "Allow Bash?",
			Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: command, Repo: "web"}}
}

// The rule form previews what its match would have matched, and Enter in
// the match field re-renders the preview for the edited match, keeping the
// choices made.
func TestRuleFormPreviewFollowsTheMatch(t *testing.T) {
	p := setupDispatch(t)
	p.host.UseRules(engine.RuleOptions{Store: p.st})
	p.bot.UseRules(RuleSettings{})
	ctx := testCtx(t)
	p.posted(t, permissionReq("r-build", "npm run build"))
	p.posted(t, permissionReq("r-go", "go test ./..."))
	m := p.posted(t, permissionReq("r-test", "npm test --watch=false"))
	if _, err := p.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Allow rule…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	var v slackfake.View
	if err := p.fake.WaitUntil(ctx, func() bool {
		vs := p.fake.OpenViews(alice.ID)
		if len(vs) == 1 {
			v = vs[0]
		}
		return len(vs) == 1
	}); err != nil {
		t.Fatal("no rule form opened")
	}
	if !strings.Contains(string(v.JSON), "It would have matched 1 of the last 3 permission asks") {
		t.Fatalf("preview of npm test *: %s", v.JSON)
	}
	var view map[string]any
	if err := json.Unmarshal(v.JSON, &view); err != nil {
		t.Fatal(err)
	}
	entry := map[string]any{"type": "plain_text_input", "value": "npm *"}
	until := map[string]any{"type": "radio_buttons", "selected_option": map[string]any{"value": "7d", "text": map[string]any{"type": "plain_text", "text": "7 days"}}}
	view["state"] = map[string]any{"values": map[string]any{
		blocks.RuleMatchBlock: map[string]any{blocks.RuleMatchInput: entry},
		blocks.RuleUntilBlock: map[string]any{blocks.RuleUntilInput: until},
	}}
	payload := map[string]any{"type": "block_actions", "user": map[string]any{"id": alice.ID, "username": "alice", "name": "alice"},
		"container": map[string]any{"type": "view", "view_id": v.ID}, "trigger_id": p.fake.IssueTrigger(alice.ID), "view": view,
		"actions": []any{map[string]any{"type": "plain_text_input", "action_id": blocks.RuleMatchInput, "block_id": blocks.RuleMatchBlock, "value": "npm *", "action_ts": "1.2"}}}
	if _, err := p.fake.Deliver(ctx, payload, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if err := p.fake.WaitUntil(ctx, func() bool {
		got, _ := p.fake.View(v.ID)
		return got.Updated > 0
	}); err != nil {
		t.Fatal("the form was not re-rendered")
	}
	got, _ := p.fake.View(v.ID)
	for _, want := range []string{"It would have matched 2 of the last 3 permission asks", "`npm run build`", "`npm test --watch=false`", `"initial_value":"npm *"`} {
		if !strings.Contains(string(got.JSON), want) {
			t.Fatalf("re-rendered form lacks %s: %s", want, got.JSON)
		}
	}
	if strings.Contains(string(got.JSON), "go test") {
		t.Fatalf("the preview lists an ask the match does not cover: %s", got.JSON)
	}
	// A match that cannot be a rule says why in the preview.
	entry["value"], payload["trigger_id"] = "* x", p.fake.IssueTrigger(alice.ID)
	view["hash"] = got.Hash
	payload["actions"] = []any{map[string]any{"type": "plain_text_input", "action_id": blocks.RuleMatchInput, "block_id": blocks.RuleMatchBlock, "value": "* x", "action_ts": "1.3"}}
	if _, err := p.fake.Deliver(ctx, payload, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if err := p.fake.WaitUntil(ctx, func() bool {
		got, _ := p.fake.View(v.ID)
		return strings.Contains(string(got.JSON), "cannot be saved: the first word of an allow pattern")
	}); err != nil {
		got, _ := p.fake.View(v.ID)
		t.Fatalf("no explanation for a bad match: %s", got.JSON)
	}
}
