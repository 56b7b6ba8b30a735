package hook

import (
	"encoding/json"
	"testing"
)

func line(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func toolUse(id, name string, input any) []byte {
	return line(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
}

func toolResult(id string) []byte {
	return line(map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "ok"}}}})
}

// The call followed is the open one whose input equals the hook's, else
// the newest open one of the tool; its result, and only its, answers it.
func TestCallFollowsTheTranscript(t *testing.T) {
	cmd := map[string]any{"command": "touch x"}
	c := NewCall("Bash", json.RawMessage(`{"command":"touch x"}`))
	c.Started()
	c.Choose()
	if c.ID() != "" {
		t.Fatal("chose a call before any was read")
	}
	c = NewCall("Bash", json.RawMessage(`{"command":"touch x"}`))
	for _, l := range [][]byte{
		[]byte(`{"type":"mode","mode":"normal"}`), []byte(`not json`),
		toolUse("t1", "Bash", cmd), toolResult("t1"), // an earlier identical call, done
		toolUse("t2", "Bash", cmd), toolUse("t3", "Bash", map[string]any{"command": "ls"}),
		toolUse("t4", "Read", cmd),
	} {
		c.Line(l)
	}
	c.Started()
	c.Choose()
	if c.ID() != "t2" || c.Answered() {
		t.Fatalf("chose %q answered=%v", c.ID(), c.Answered())
	}
	c.Line(toolResult("t3"))
	if c.Answered() {
		t.Fatal("another call's result answered it")
	}
	c.Line(toolResult("t2"))
	if !c.Answered() {
		t.Fatal("its result did not answer it")
	}

	// ExitPlanMode's input gains fields before the hook sees it: the newest
	// open call of the tool is followed.
	p := NewCall("ExitPlanMode", json.RawMessage(`{"plan":"# x","planFilePath":"/p.md"}`))
	p.Line(toolUse("e1", "ExitPlanMode", map[string]any{}))
	p.Line(toolResult("e1"))
	p.Line(toolUse("e2", "ExitPlanMode", map[string]any{}))
	p.Started()
	p.Choose()
	if p.ID() != "e2" {
		t.Fatalf("chose %q", p.ID())
	}

	// The transcript lags: the call and its result are written together
	// after the hook began, and still answer it.
	l := NewCall("Bash", json.RawMessage(`{"command":"touch x"}`))
	l.Line(toolUse("o1", "Bash", cmd))
	l.Line(toolResult("o1"))
	l.Started()
	l.Choose()
	if l.ID() != "" {
		t.Fatalf("chose the earlier, finished call %q", l.ID())
	}
	l.Line(toolUse("n1", "Bash", cmd))
	l.Line(toolResult("n1"))
	l.Choose()
	if l.ID() != "n1" || !l.Answered() {
		t.Fatalf("lagging call: chose %q answered=%v", l.ID(), l.Answered())
	}
}
