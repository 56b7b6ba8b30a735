package hook

import (
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

func edited(fields map[string]string) waterfall.Settlement {
	return answer(waterfall.AnswerItem{ID: "permission", Selected: []string{"Allow"}, Edited: fields})
}

// TestEditAndAllow: an edited allow reaches Claude as the whole tool input
// with the edited fields replaced and every other field as the agent gave
// it; the edited call is what runs.
func TestEditAndAllow(t *testing.T) {
	bash := build(t, Claude, "claude_permission_bash.json")
	sameJSON(t, decide(t, bash, edited(map[string]string{"command": "npm test -- --watch=false --bail"})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
		  "updatedInput":{"command":"npm test -- --watch=false --bail","description":"Run the test suite"},
		  "message":"Allowed with changes in Slack by ann."}}}`)

	edit := build(t, Claude, "claude_permission_edit.json")
	sameJSON(t, decide(t, edit, edited(map[string]string{"new_string": "func login(ctx context.Context) error {\n\treturn nil\n}"})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
		  "updatedInput":{"file_path":"/home/u/p/src/auth.go","old_string":"func login() {\n\treturn nil\n}",
		    "new_string":"func login(ctx context.Context) error {\n\treturn nil\n}","replace_all":false},
		  "message":"Allowed with changes in Slack by ann."}}}`)
}

// TestEditNeverReachesCodex: Codex's asks list no editable fields, and an
// edited answer that reaches a Codex hook anyway (an ask made by another
// program under its call id) denies: Codex fails closed on updatedInput,
// and running the call as asked would ignore what the person changed.
func TestEditNeverReachesCodex(t *testing.T) {
	codex := build(t, Codex, "codex_permission.json")
	if f := codex.Request.Permission.Editable; len(f) != 0 {
		t.Fatalf("a Codex ask lists editable fields %+v", f)
	}
	out := string(decide(t, codex, edited(map[string]string{"command": "make release"})))
	if !strings.Contains(out, `"behavior":"deny"`) || strings.Contains(out, "updatedInput") {
		t.Fatalf("Codex got %s, want a deny without updatedInput", out)
	}
}

// TestEditOfAFieldTheInputLacks denies rather than adding a field the
// tool never had.
func TestEditOfAFieldTheInputLacks(t *testing.T) {
	bash := build(t, Claude, "claude_permission_bash.json")
	out := string(decide(t, bash, edited(map[string]string{"timeout": "1"})))
	if !strings.Contains(out, `"behavior":"deny"`) {
		t.Fatalf("got %s, want a deny", out)
	}
}

// TestEditableSkipsWhatAFormCannotShow: a value longer than a Slack input
// holds is not offered for editing; the ask is still asked.
func TestEditableSkipsWhatAFormCannotShow(t *testing.T) {
	in := load(t, "claude_permission_bash.json")
	in.ToolInput = []byte(`{"command":"` + strings.Repeat("x", waterfall.MaxEditLen+1) + `"}`)
	p := &waterfall.Permission{Tool: "Bash", Command: "x"}
	if f := editableOf(in, p); len(f) != 0 {
		t.Fatalf("editable = %d fields, want none", len(f))
	}
	in.ToolInput = []byte(`{"command":42}`)
	if f := editableOf(in, p); len(f) != 0 {
		t.Fatalf("a number offered for editing: %+v", f)
	}
}
