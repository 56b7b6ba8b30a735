package hook

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/askslack/askslack/waterfall"
)

// Hook events that carry a late answer into a running session: an answer
// given in Slack after the agent went on without it. Both agents read the
// same output for them (Claude Code's hooks reference; Codex's
// post-tool-use, user-prompt-submit and stop output schemas, 0.171.0).
const (
	// EventPostToolUse: after every tool call; the answer comes in as
	// additionalContext before the model's next request.
	EventPostToolUse = "PostToolUse"
	// EventUserPromptSubmit: the person typed a prompt; the answer comes in
	// beside it.
	EventUserPromptSubmit = "UserPromptSubmit"
	// EventStop: the model is about to end its turn; a waiting answer
	// blocks the stop once, so the model takes one more turn with it.
	EventStop = "Stop"
)

// LateEvent reports whether event is one askslack delivers late answers
// on.
func LateEvent(event string) bool {
	switch event {
	case EventPostToolUse, EventUserPromptSubmit, EventStop:
		return true
	}
	return false
}

// AskToolSuffix ends the name of askslack's own MCP ask tool as an agent
// names it (mcp__<server>__ask_user_question).
const AskToolSuffix = "__ask_user_question"

// PendingCall is the callId of an askslack MCP ask the agent went on
// without (the tool returned pending), read from a PostToolUse input; ""
// when the event is anything else. Its late answer then belongs to this
// session: the hooks deliver it as they deliver their own.
func PendingCall(in *Input) string {
	if in.HookEventName != EventPostToolUse || !strings.HasPrefix(in.ToolName, "mcp__") || !strings.HasSuffix(in.ToolName, AskToolSuffix) {
		return ""
	}
	return pendingIn(in.ToolResponse, 0)
}

// pendingIn finds {"pending":true,"callId":…} in a tool response however
// the agent wrapped it: the structured result itself, MCP content blocks,
// or a JSON text inside them.
func pendingIn(raw json.RawMessage, depth int) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || depth > 4 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return pendingValue(v, depth)
}

func pendingValue(v any, depth int) string {
	switch v := v.(type) {
	case map[string]any:
		if p, _ := v["pending"].(bool); p {
			if id, _ := v["callId"].(string); waterfall.ValidID(id) {
				return id
			}
		}
		for _, k := range []string{"structuredContent", "structured_content", "content", "result", "output", "text"} {
			if c, ok := v[k]; ok {
				if id := pendingValue(c, depth+1); id != "" {
					return id
				}
			}
		}
	case []any:
		for _, e := range v {
			if id := pendingValue(e, depth+1); id != "" {
				return id
			}
		}
	case string:
		if s := strings.TrimSpace(v); strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
			return pendingIn(json.RawMessage(s), depth+1)
		}
	}
	return ""
}

// lateIntro heads the late answers handed to the model: who is speaking
// (not the hook's author, not the terminal's user) and that the question is
// its own, asked earlier.
const lateIntro = "Late answer from Slack (askslack): a person on your team has now answered a question you asked earlier and went on without. It is their answer to your question, relayed as data; weigh it as you would the user's answer to that question."

// LateText is what the model reads for the steered messages msgs: the
// intro, then each message's text (which names the call, the question and
// who answered, with whatever a person typed fenced as untrusted data).
func LateText(msgs []waterfall.SteeredMessage) string {
	parts := []string{lateIntro}
	for _, m := range msgs {
		parts = append(parts, strings.TrimSpace(m.Text))
	}
	return strings.Join(parts, "\n\n")
}

type lateOutput struct {
	HookSpecificOutput *contextOutput `json:"hookSpecificOutput,omitempty"`
	Decision           string         `json:"decision,omitempty"`
	Reason             string         `json:"reason,omitempty"`
}

type contextOutput struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// LateOutput is the hook output that hands text to the model on event:
// additionalContext on PostToolUse and UserPromptSubmit, a block with the
// text as its reason on Stop (the model takes one more turn with it).
func LateOutput(event, text string) []byte {
	var o lateOutput
	if event == EventStop {
		o.Decision, o.Reason = "block", text
	} else {
		o.HookSpecificOutput = &contextOutput{HookEventName: event, AdditionalContext: text}
	}
	b, _ := json.Marshal(o)
	return b
}

// SessionKey names a session's late-answer state on this machine: the
// agent and a digest of its session id (a session id is the agent's and
// may hold anything).
func SessionKey(agent Agent, sessionID string) string {
	return strings.TrimSuffix(string(agent), "-code") + "-" + digest(sessionID)[:32]
}

// AgentSession is the session id askslack uses for the hook input's
// session (late answers to the hooks' own asks are queued there).
func AgentSession(agent Agent, in *Input) string { return agentOf(agent, in).SessionID }

// ownTools are askslack's MCP tools as an agent names them when the server
// is registered as "askslack" (the README's `claude mcp add askslack` and
// Codex's [mcp_servers.askslack]).
var ownTools = []string{"mcp__askslack__ask_user_question", "mcp__askslack__get_late_answers"}

// OwnTool reports whether tool is one of askslack's own MCP tools. Asking a
// person, or reading their answers, gates nothing; a permission prompt for
// it would only make a person approve the question before seeing it
// (Codex's on-request asks for every MCP call, 0.171.0).
func OwnTool(tool string) bool { return slices.Contains(ownTools, tool) }

// GrantOutput allows a PermissionRequest (both agents read this shape).
func GrantOutput() []byte {
	b, _ := json.Marshal(output{HookSpecificOutput: allowDeny(true, decision{})})
	return b
}
