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
// Feed it the transcript's lines in order (Line); Answered reports once the
// call has its result. The call is the newest tool_use of the tool that has
// no result yet, preferring one whose input equals the hook's (Claude adds
// fields to ExitPlanMode's input before a hook sees it).
type Call struct {
	tool  string
	input any
	open  []string // tool_use ids of the tool without a result, oldest first
	exact string   // the open one whose input equals the hook's
	ended map[string]bool
	id    string // the call, once chosen
	done  bool
}

// NewCall follows the call of tool with input.
func NewCall(tool string, input json.RawMessage) *Call {
	c := &Call{tool: tool, ended: map[string]bool{}}
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
}

// Line reads one transcript line; lines it cannot read are skipped.
func (c *Call) Line(line []byte) {
	if c.done || !bytes.Contains(line, []byte(`"tool_`)) {
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
		case b.Type == "tool_use" && b.Name == c.tool && c.id == "":
			c.open = append(c.open, b.ID)
			var in any
			if json.Unmarshal(b.Input, &in) == nil && jsonEqual(in, c.input) {
				c.exact = b.ID
			}
		case b.Type == "tool_result":
			c.ended[b.ToolUseID] = true
			if c.id != "" && b.ToolUseID == c.id {
				c.done = true
			}
		}
	}
}

// Choose fixes the call among the tool_uses read so far that have no
// result yet: call it once the transcript read when the hook started is
// in; until a tool_use has been read it chooses nothing, and the next
// Choose tries again (the transcript may lag the live turn).
func (c *Call) Choose() {
	if c.id != "" {
		return
	}
	if c.exact != "" && !c.ended[c.exact] {
		c.id = c.exact
		return
	}
	for i := len(c.open) - 1; i >= 0; i-- {
		if !c.ended[c.open[i]] {
			c.id = c.open[i]
			return
		}
	}
}

// ID is the tool_use id of the call followed, "" until chosen.
func (c *Call) ID() string { return c.id }

// Answered reports that the call has its result: the terminal (or
// another hook) decided it.
func (c *Call) Answered() bool { return c.done }

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
