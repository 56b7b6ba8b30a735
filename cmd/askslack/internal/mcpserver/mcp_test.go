package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// ask_user_question's input becomes a request: questions numbered q0…,
// the server's agent, session and channel, and the wait asked for (or the
// server's default).
func TestRequestFromToolInput(t *testing.T) {
	s := &mcpServer{agent: "claude-code", session: "mcp-s", channel: "C0DEV", defaultWait: 5 * time.Minute}
	var in askInput
	if err := json.Unmarshal([]byte(`{"questions":[
		{"question":"Which database?","header":"Database","multiSelect":false,"options":[{"label":"Postgres","description":"durable"},{"label":"SQLite","description":"simple","preview":"CREATE TABLE t(x);"}]},
		{"question":"Which files?","header":"Files","multiSelect":true,"options":[{"label":"a.go","description":""},{"label":"b.go","description":""}]}]}`), &in); err != nil {
		t.Fatal(err)
	}
	req, ids, err := s.request(in)
	if err != nil {
		t.Fatal(err)
	}
	if req.Agent.ID != "claude-code" || req.Agent.SessionID != "mcp-s" || req.Channel != "C0DEV" || !strings.HasPrefix(req.CallID, "mcp-") {
		t.Fatalf("request %+v", req)
	}
	if len(req.Questions) != 2 || req.Questions[0].ID != "q0" || req.Questions[1].ID != "q1" || !req.Questions[1].MultiSelect ||
		req.Questions[0].Options[1].Preview != "CREATE TABLE t(x);" || ids["q1"] != "Which files?" {
		t.Fatalf("questions %+v, ids %v", req.Questions, ids)
	}
	if req.Timeout() != 5*time.Minute {
		t.Fatalf("default wait: %s", req.Timeout())
	}
	wait := 1.5
	in.WaitSeconds = &wait
	if req, _, _ = s.request(in); req.Timeout() != 1500*time.Millisecond {
		t.Fatalf("waitSeconds 1.5: %s", req.Timeout())
	}
	if _, _, err := s.request(askInput{}); err == nil {
		t.Fatal("no questions: accepted")
	}
}

func TestServerListsItsTools(t *testing.T) {
	for _, sc := range []string{askSchema, lateSchema} {
		if s := mustSchema(sc); s.Type != "object" {
			t.Fatalf("schema type %q", s.Type)
		}
	}
	_ = (&mcpServer{}).server() // registering the tools checks their schemas against the handlers' types
}
