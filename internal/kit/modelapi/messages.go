package modelapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

var ids atomic.Int64

func nextID(prefix string) string { return fmt.Sprintf("%s%06d", prefix, ids.Add(1)) }

// messagesRequest is the part of a Messages API request the script reads.
type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	System json.RawMessage `json:"system"`
}

func lastMessage(req messagesRequest) string {
	if len(req.Messages) == 0 {
		return ""
	}
	return string(req.Messages[len(req.Messages)-1].Content)
}

type messageBlock struct {
	Type      string          `json:"type"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// messages is POST /v1/messages.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	turn := 0
	var results []Result
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
			continue
		}
		var blocks []messageBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string prompt
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				results = append(results, Result{CallID: b.ToolUseID, Content: contentText(b.Content), IsError: b.IsError})
			}
		}
	}
	s.logf("messages: model=%s stream=%v tools=%d turn=%d system=%.200q last=%.300s", req.Model, req.Stream, len(tools), turn, string(req.System), lastMessage(req))
	step := Step{Text: "ok"}
	var last Result
	if offers(tools, s.peek(turn)) {
		step, last = s.record(body, turn, results)
	}
	step.hold(r)
	var content map[string]any
	stop := "end_turn"
	input := step.input(body)
	if step.Tool != "" {
		id := nextID("toolu_")
		s.noteCall(id, step.Tool)
		content = map[string]any{"type": "tool_use", "id": id, "name": step.Tool, "input": input}
		stop = "tool_use"
	} else {
		content = map[string]any{"type": "text", "text": step.text(last)}
	}
	msg := map[string]any{"id": nextID("msg_"), "type": "message", "role": "assistant", "model": orModel(req.Model),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
	if !req.Stream {
		msg["content"], msg["stop_reason"] = []any{content}, stop
		writeJSON(w, msg)
		return
	}
	e := newSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": msg})
	if step.Tool != "" {
		input, _ := json.Marshal(input)
		start := map[string]any{"type": "tool_use", "id": content["id"], "name": step.Tool, "input": map[string]any{}}
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": content["text"]}})
	}
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// peek is the step for turn without recording anything.
func (s *Server) peek(turn int) Step {
	if turn >= len(s.script) {
		return Step{Text: "Done."}
	}
	return s.script[turn]
}

func orModel(m string) string {
	if m == "" {
		return "claude-sonnet-4-5"
	}
	return m
}
