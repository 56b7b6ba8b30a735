package hook

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// TestPermissionSaysWhatItIsAbout: a permission ask carries its tool,
// command or repo-relative path, and repo; plans and questions never do.
func TestPermissionSaysWhatItIsAbout(t *testing.T) {
	for _, c := range []struct {
		agent Agent
		file  string
		want  *waterfall.Permission
	}{
		{Claude, "claude_permission_bash.json", &waterfall.Permission{Tool: "Bash", Command: "npm test -- --watch=false", Repo: "p",
			Editable: []waterfall.EditableField{{Name: "command", Label: "Command", Value: "npm test -- --watch=false", Multiline: true, Of: waterfall.OfCommand}}}},
		{Claude, "claude_permission_edit.json", &waterfall.Permission{Tool: "Edit", Path: "src/auth.go", Repo: "p",
			Editable: []waterfall.EditableField{{Name: "file_path", Label: "File", Value: "/home/u/p/src/auth.go", Of: waterfall.OfPath},
				{Name: "new_string", Label: "New text", Value: "func login(ctx context.Context) error {\n\treturn check(ctx)\n}", Multiline: true}}}},
		{Codex, "codex_permission.json", &waterfall.Permission{Tool: "Bash", Command: "rm -rf build && make release", Repo: "svc"}},
		{Claude, "claude_permission_exitplanmode.json", nil},
		{Claude, "claude_pretooluse_auq.json", nil},
	} {
		t.Run(c.file, func(t *testing.T) {
			got := build(t, c.agent, c.file).Request.Permission
			if (got == nil) != (c.want == nil) || (got != nil && !waterfall.SamePermission(got, c.want)) {
				t.Fatalf("permission = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestPermissionPaths(t *testing.T) {
	for _, c := range []struct{ cwd, path, want string }{
		{"/home/u/p", "/home/u/p/src/a.go", "src/a.go"},
		{"/home/u/p", "src/../lib/b.go", "lib/b.go"},
		{"/home/u/p", "/etc/passwd", "/etc/passwd"},
		{"/home/u/p", "/home/u/p/../q/x", "/home/u/q/x"},
		{"/home/u/p", "../../etc/shadow", "/home/etc/shadow"},
		{"", "/etc/hosts", "/etc/hosts"},
	} {
		if got := repoPath(c.cwd, c.path); got != c.want {
			t.Errorf("repoPath(%q, %q) = %q, want %q", c.cwd, c.path, got, c.want)
		}
	}
	// A command a rule could not match safely is left out, never cut.
	in := load(t, "claude_permission_bash.json")
	in.ToolInput = json.RawMessage(`{"command":"a\u0000b"}`)
	p, err := Build(Claude, in, Options{})
	if err != nil || p.Request.Permission != nil {
		t.Fatalf("Build = %+v, %v; want an ask without permission", p, err)
	}
}

// TestRuleAnsweredDecision is the decision JSON of an ask a standing rule
// answered: allow as a tap would, deny naming the rule.
func TestRuleAnsweredDecision(t *testing.T) {
	until := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	byRule := func(label, effect string) waterfall.Settlement {
		ref := &waterfall.RuleRef{ID: 12, Effect: effect, Match: "Bash(npm test *)", GrantedBy: "U0ALICE", GrantedByName: "alice", Until: &until}
		return waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "permission", Selected: []string{label}}}},
			Respondent: waterfall.Respondent{UserName: ref.Name(until.Add(-time.Hour)), Surface: waterfall.SurfaceRule, Rule: ref}}
	}
	for _, agent := range []Agent{Claude, Codex} {
		file := map[Agent]string{Claude: "claude_permission_bash.json", Codex: "codex_permission.json"}[agent]
		p := build(t, agent, file)
		sameJSON(t, decide(t, p, byRule("Allow", "allow")),
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)
		sameJSON(t, decide(t, p, byRule("Deny", "deny")),
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny",
			  "message":"Denied by askslack standing rule 12 (deny Bash(npm test *), granted by alice)."}}}`)
	}
	if n := byRule("Allow", "allow").Respondent.UserName; n != "rule 12 by alice, until 18:00 UTC" {
		t.Fatalf("respondent name %q", n)
	}
}
