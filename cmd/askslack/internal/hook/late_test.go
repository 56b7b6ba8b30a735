package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// The pending result of askslack's MCP ask tool is found however the agent
// wraps it in PostToolUse; anything else — another tool, another server's
// tool of that name, an answered result, a bad id — adopts nothing.
func TestPendingCall(t *testing.T) {
	pending := `{"callId":"mcp-abc","pending":true,"message":"No answer yet"}`
	text, _ := json.Marshal(pending)
	for name, c := range map[string]struct {
		tool, resp, want string
	}{
		"structured":         {"mcp__askslack__ask_user_question", pending, "mcp-abc"},
		"content blocks":     {"mcp__askslack__ask_user_question", `[{"type":"text","text":` + string(text) + `}]`, "mcp-abc"},
		"wrapped":            {"mcp__askslack__ask_user_question", `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":{"callId":"mcp-abc","pending":true}}`, "mcp-abc"},
		"a JSON string":      {"mcp__askslack__ask_user_question", string(text), "mcp-abc"},
		"server named other": {"mcp__asker__ask_user_question", pending, "mcp-abc"},
		"answered":           {"mcp__askslack__ask_user_question", `{"callId":"mcp-abc","pending":false}`, ""},
		"another tool":       {"Bash", pending, ""},
		"not MCP":            {"ask_user_question", pending, ""},
		"bad id":             {"mcp__askslack__ask_user_question", `{"callId":"a b/../c","pending":true}`, ""},
		"not JSON":           {"mcp__askslack__ask_user_question", `"pending"`, ""},
	} {
		in := &Input{HookEventName: EventPostToolUse, ToolName: c.tool, ToolResponse: json.RawMessage(c.resp)}
		if got := PendingCall(in); got != c.want {
			t.Errorf("%s: PendingCall = %q, want %q", name, got, c.want)
		}
	}
	if got := PendingCall(&Input{HookEventName: EventPermissionRequest, ToolName: "mcp__askslack__ask_user_question", ToolResponse: json.RawMessage(pending)}); got != "" {
		t.Errorf("a PermissionRequest adopted %q", got)
	}
}

// What each event prints: additionalContext on PostToolUse and
// UserPromptSubmit, a block with the text as its reason on Stop.
func TestLateOutput(t *testing.T) {
	text := LateText([]waterfall.SteeredMessage{{Text: "The user answered your question (call c1)."}})
	if !strings.HasPrefix(text, "Late answer from Slack") || !strings.Contains(text, "call c1") {
		t.Fatalf("LateText: %q", text)
	}
	for ev, want := range map[string]string{
		EventPostToolUse:      `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}`,
		EventUserPromptSubmit: `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}`,
		EventStop:             `{"decision":"block","reason":"x"}`,
	} {
		if got := string(LateOutput(ev, "x")); got != want {
			t.Errorf("%s: %s, want %s", ev, got, want)
		}
	}
}

// Only askslack's own MCP tools are allowed without asking.
func TestOwnTool(t *testing.T) {
	for tool, want := range map[string]bool{
		"mcp__askslack__ask_user_question": true, "mcp__askslack__get_late_answers": true,
		"mcp__askslack__other": false, "mcp__evil__ask_user_question": false, "Bash": false, "": false,
	} {
		if OwnTool(tool) != want {
			t.Errorf("OwnTool(%q) = %v", tool, !want)
		}
	}
	var o map[string]any
	if err := json.Unmarshal(GrantOutput(), &o); err != nil || !strings.Contains(string(GrantOutput()), `"behavior":"allow"`) {
		t.Fatalf("GrantOutput: %s", GrantOutput())
	}
}

// A transcript whose AskUserQuestion result is Claude Code's question
// timeout says the agent went on; an answer in the terminal does not.
func TestCallWentOn(t *testing.T) {
	input := json.RawMessage(`{"questions":[]}`)
	use := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"AskUserQuestion","input":{"questions":[]}}]}}`
	for result, want := range map[string]bool{
		`"No response after 60s \u2014 the user may be away from keyboard. Proceed using your best judgment based on the context so far."`: true,
		`[{"type":"text","text":"No response after 5s — the user may be away from keyboard. Proceed using your best judgment."}]`:          true,
		`"User has answered your questions: \"Which database?\"=\"SQLite\"."`:                                                              false,
	} {
		c := NewCall(ToolAskUserQuestion, input)
		c.Line([]byte(use))
		c.Started()
		c.Choose()
		c.Line([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":` + result + `}]}}`))
		if !c.Answered() || c.WentOn() != want {
			t.Errorf("%s: answered %v, went on %v; want went on %v", result, c.Answered(), c.WentOn(), want)
		}
	}
}
