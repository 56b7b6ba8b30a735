package main

import (
	"strings"
	"testing"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
)

// Issue 24 through askslack hook: a rule granted from the form answers the
// hook's ask as a tap would, and the next run of the same command is
// answered by the rule with no message — Claude's and Codex's decision
// JSON for a rule-answered ask.
func TestE2EHookRuleAnswered(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	url := "http://" + b.addr

	grant := func(t *testing.T, m slackfake.Message, button, callback, until string) {
		t.Helper()
		ctx := testCtx(t)
		click(t, ctx, d.fake, m, button)
		v := waitView(t, ctx, d.fake, alice.ID, callback)
		if _, err := d.fake.SubmitView(ctx, alice, v.ID, map[string][]string{blocks.RuleUntilBlock: {until}}, slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
	}
	messagesOf := func(t *testing.T) int {
		n := 0
		for _, m := range d.fake.Messages() {
			if strings.Contains(string(m.Blocks), dirOf(t)) {
				n++
			}
		}
		return n
	}

	t.Run("Claude", func(t *testing.T) {
		ctx := testCtx(t)
		in := hookInput(t, "claude_permission_bash.json")
		h := startHook(t, url, in, "claude")
		m := posted(t, ctx, d.fake)
		grant(t, m, "Allow rule…", blocks.CallbackAllowRule, "8 hours")
		h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)

		in["tool_use_id"] = "toolu_next_" + safe(t)
		in["tool_input"] = map[string]any{"command": "npm test -- --watch=false src/a.test.ts"}
		startHook(t, url, in, "claude").decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)
		if n := messagesOf(t); n != 1 {
			t.Fatalf("%d questions posted; the rule-answered run must post none", n)
		}
	})

	t.Run("Codex", func(t *testing.T) {
		ctx := testCtx(t)
		in := hookInput(t, "codex_permission.json")
		h := startHook(t, url, in, "codex")
		m := posted(t, ctx, d.fake)
		grant(t, m, "Deny rule…", blocks.CallbackDenyRule, "Until revoked")
		h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Slack by alice."}}}`)

		in["session_id"] = "019a3c5e-0000-7f40-b1e2-" + safe(t)
		startHook(t, url, in, "codex").decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny",
		  "message":"Denied by askslack standing rule 2 (deny Bash(rm -rf build && make release), granted by alice)."}}}`)
		if n := messagesOf(t); n != 1 {
			t.Fatalf("%d questions posted; the rule-answered run must post none", n)
		}
	})
}
