package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// askslack mcp driven as a coding agent would: list tools, ask, a Slack
// click answers; a short wait returns "no answer yet"; a late click arrives
// through get_late_answers.
func TestE2EMCP(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)

	var progress atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	cmd := exec.Command(binPath, "mcp", "--url", "http://"+b.addr, "--agent", "claude-code")
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "ask_user_question,get_late_answers" {
		t.Fatalf("tools = %v", names)
	}

	question := map[string]any{"questions": []any{map[string]any{
		"question": "Which database should the service use?", "header": "Database", "multiSelect": false,
		"options": []any{
			map[string]any{"label": "Postgres", "description": "Relational, already in prod"},
			map[string]any{"label": "SQLite", "description": "Embedded, simplest"},
		},
	}}, "waitSeconds": 60}
	type callResult struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan callResult, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "ask_user_question", Arguments: question}
		params.SetProgressToken("p1")
		res, err := session.CallTool(ctx, params)
		done <- callResult{res, err}
	}()
	msg, err := d.fake.WaitMessage(ctx, func(m slackfake.Message) bool { return strings.Contains(m.Text, "Which database") })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.Text, "claude-code") {
		t.Fatalf("the message does not name the agent: %q", msg.Text)
	}
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Postgres", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.IsError {
		t.Fatalf("tool call: %v %+v", r.err, r.res)
	}
	txt := r.res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(txt, `"Postgres"`) || !strings.Contains(txt, "alice") {
		t.Fatalf("tool text:\n%s", txt)
	}
	var out mcpAskOutput
	raw, _ := json.Marshal(r.res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || out.Pending || out.Answers[0].Selected[0] != "Postgres" || out.Respondent.UserID != alice.ID {
		t.Fatalf("structured content %s (%v)", raw, err)
	}
	// The agents hand the model the structured result, not the text: the
	// answer as the model must read it (who answered fenced) is in it.
	if !strings.Contains(out.Message, `"Postgres"`) || !strings.Contains(out.Message, "untrusted-data") {
		t.Fatalf("structured message: %q", out.Message)
	}
	if progress.Load() == 0 {
		t.Fatal("no progress notification while waiting")
	}

	// A short wait: no answer yet, never an invented default.
	question["waitSeconds"] = 1
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: question})
	if err != nil || res.IsError {
		t.Fatalf("short wait: %v %+v", err, res)
	}
	txt = res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(txt, "No answer yet") || !strings.Contains(txt, "get_late_answers") {
		t.Fatalf("short wait text: %s", txt)
	}
	raw, _ = json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || !out.Pending {
		t.Fatalf("short wait structured: %s", raw)
	}
	// Pending, said where the model reads it: assume nothing, the answer
	// comes by itself.
	for _, want := range []string{"Do not assume an answer", "reaches you by itself", out.CallID} {
		if !strings.Contains(out.Message, want) {
			t.Fatalf("pending structured message lacks %q: %q", want, out.Message)
		}
	}
	// A late click, then get_late_answers returns it (fenced) and acknowledges it.
	late, err := d.fake.WaitMessage(ctx, func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), out.CallID) && strings.Contains(string(m.Blocks), "still delivered")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.fake.ClickButton(ctx, bob, late.Channel, late.TS, "SQLite", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "get_late_answers", Arguments: map[string]any{"waitSeconds": 10}})
	if err != nil || res.IsError {
		t.Fatalf("get_late_answers: %v %+v", err, res)
	}
	txt = res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(txt, out.CallID) || !strings.Contains(txt, `"SQLite"`) {
		t.Fatalf("late answers text:\n%s", txt)
	}
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "get_late_answers", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "No late answers") {
		t.Fatalf("acknowledged answers came back: %v %+v", err, res)
	}
	// Bad input is refused by the schema: five questions.
	five := map[string]any{"questions": []any{question["questions"].([]any)[0], question["questions"].([]any)[0],
		question["questions"].([]any)[0], question["questions"].([]any)[0], question["questions"].([]any)[0]}}
	if res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: five}); err == nil && !res.IsError {
		t.Fatal("five questions accepted")
	}
}

// mcpAskOutput is ask_user_question's structured result as an agent reads it.
type mcpAskOutput struct {
	CallID     string                 `json:"callId"`
	Pending    bool                   `json:"pending"`
	Answers    []waterfall.AnswerItem `json:"answers,omitempty"`
	Respondent *waterfall.Respondent  `json:"respondent,omitempty"`
	Message    string                 `json:"message"`
}
