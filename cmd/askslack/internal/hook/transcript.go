package hook

import (
	"bytes"
	"encoding/json"
)

// Call follows one tool call through a Claude Code session transcript (the
// JSON-lines file a hook's transcript_path names): the assistant's tool_use
// for the call the hook was asked about, then the tool_result that ends it.
// A PermissionRequest hook runs beside the terminal's own dialog, and
// Claude Code (2.1.332) leaves the hook running when the person at the
// terminal answers first; the tool_result in the transcript is how the hook
// learns the question was answered there.
//
// Feed it the transcript's lines in order (Line), call Started once the
// lines already there when the hook began are in, then Choose after each
// batch; Answered reports once the call has its result. The call is the
// newest tool_use of the tool that had no result when the hook began, or
// that was written after (the transcript may lag the live turn, so the
// call and its result can appear together), preferring one whose input
// equals the hook's (Claude adds fields to ExitPlanMode's input before a
// hook sees it).
type Call struct {
	tool    string
	input   any
	uses    []use
	ended   map[string]bool
	wentOn  map[string]bool // the result says nobody answered
	started bool
	id      string // the call, once chosen
}

type use struct {
	id    string
	exact bool // its input equals the hook's
	late  bool // written after the hook began
}

// NewCall follows the call of tool with input.
func NewCall(tool string, input json.RawMessage) *Call {
	c := &Call{tool: tool, ended: map[string]bool{}, wentOn: map[string]bool{}}
	_ = json.Unmarshal(input, &c.input)
	return c
}

// transcriptLine is the part of a transcript line Call reads.
type transcriptLine struct {
	Type    string `json:"type"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type transcriptBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// Line reads one transcript line; lines it cannot read are skipped.
func (c *Call) Line(line []byte) {
	if !bytes.Contains(line, []byte(`"tool_`)) {
		return // most lines are neither a tool_use nor a tool_result
	}
	var l transcriptLine
	if json.Unmarshal(line, &l) != nil || (l.Type != "assistant" && l.Type != "user") {
		return
	}
	var blocks []transcriptBlock
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		switch {
		case b.Type == "tool_use" && b.Name == c.tool:
			var in any
			exact := json.Unmarshal(b.Input, &in) == nil && jsonEqual(in, c.input)
			c.uses = append(c.uses, use{id: b.ID, exact: exact, late: c.started})
		case b.Type == "tool_result":
			c.ended[b.ToolUseID] = true
			if noResponse(b.Content) {
				c.wentOn[b.ToolUseID] = true
			}
		}
	}
}

// Started marks the end of the lines written before the hook began.
func (c *Call) Started() { c.started = true }

// Choose fixes the call, once one can be told: until a candidate has been
// read it chooses nothing, and the next Choose tries again.
func (c *Call) Choose() {
	if c.id != "" || !c.started {
		return
	}
	newest := ""
	for i := len(c.uses) - 1; i >= 0; i-- {
		u := c.uses[i]
		if !u.late && c.ended[u.id] {
			continue // an earlier call, done before the hook began
		}
		if u.exact {
			c.id = u.id
			return
		}
		if newest == "" {
			newest = u.id
		}
	}
	c.id = newest
}

// ID is the tool_use id of the call followed, "" until chosen.
func (c *Call) ID() string { return c.id }

// Answered reports that the call has its result: the terminal (or
// another hook) decided it.
func (c *Call) Answered() bool { return c.id != "" && c.ended[c.id] }

// WentOn reports that the call's result says nobody answered and the agent
// went on: Claude Code's question timeout (askUserQuestionTimeout, or
// CLAUDE_AFK_TIMEOUT_MS) ends AskUserQuestion with "No response after
// 60s — the user may be away from keyboard. Proceed using your best
// judgment…" (2.1.332).
func (c *Call) WentOn() bool { return c.Answered() && c.wentOn[c.id] }

// noResponse reads a tool_result's content (a string or text blocks) for
// Claude Code's words for a question nobody answered.
func noResponse(content json.RawMessage) bool {
	return bytes.Contains(content, []byte("No response after")) && bytes.Contains(content, []byte("best judgment"))
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
