package modelapi

import (
	"encoding/json"
	"io"
	"net/http"
)

// responsesRequest is the part of a Responses API request the script reads.
type responsesRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	Input  json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

type responsesItem struct {
	Type   string          `json:"type"`
	Role   string          `json:"role"`
	CallID string          `json:"call_id"`
	Name   string          `json:"name"`
	Output json.RawMessage `json:"output"`
}

// responses is POST /v1/responses.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range req.Tools {
		if t.Name != "" {
			tools = append(tools, t.Name)
		}
	}
	var items []responsesItem
	_ = json.Unmarshal(req.Input, &items) // a plain string input has no items
	turn := 0
	var results []Result
	for _, it := range items {
		switch {
		case it.Type == "function_call" || it.Type == "custom_tool_call" || it.Type == "message" && it.Role == "assistant":
			turn++
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			results = append(results, Result{CallID: it.CallID, Content: contentText(it.Output)})
		}
	}
	s.logf("responses: model=%s stream=%v tools=%v turn=%d items=%d", req.Model, req.Stream, tools, turn, len(items))
	step := Step{Text: "ok"}
	var last Result
	if offers(tools, s.peek(turn)) {
		step, last = s.record(body, turn, results)
	}
	step.hold(r)
	respID := nextID("resp_")
	var item map[string]any
	if step.Tool != "" {
		args, _ := json.Marshal(step.input(body))
		callID := nextID("call_")
		s.noteCall(callID, step.Tool)
		item = map[string]any{"type": "function_call", "id": nextID("fc_"), "call_id": callID, "name": step.Tool,
			"arguments": string(args), "status": "completed"}
		if step.Namespace != "" {
			item["namespace"] = step.Namespace
		}
	} else {
		item = map[string]any{"type": "message", "id": nextID("msg_"), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": step.text(last), "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	resp := func(status string, output []any) map[string]any {
		m := map[string]any{"id": respID, "object": "response", "status": status, "model": req.Model, "output": output}
		if status == "completed" {
			m["usage"] = usage
		}
		return m
	}
	if !req.Stream {
		writeJSON(w, resp("completed", []any{item}))
		return
	}
	e := newSSE(w)
	e.send("response.created", map[string]any{"type": "response.created", "response": resp("in_progress", []any{})})
	e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if step.Tool == "" {
		text := item["content"].([]any)[0].(map[string]any)["text"]
		e.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"],
			"output_index": 0, "content_index": 0, "delta": text})
	}
	e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.send("response.completed", map[string]any{"type": "response.completed", "response": resp("completed", []any{item})})
}
