package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// What Codex 0.171.0 sent its PreToolUse hook for request_user_input.
const codexQuestionInput = `{"session_id":"01a2502b-66a4-7e62-8640-bbc7296080df","turn_id":"01a2502b-9888","cwd":"/home/u/app",
 "hook_event_name":"PreToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"request_user_input","tool_use_id":"call_000002",
 "tool_input":{"questions":[{"header":"DB","id":"db","isOther":true,"isSecret":false,"question":"Which database?",
   "options":[{"description":"Relational","label":"PostgreSQL"},{"description":"Embedded","label":"SQLite"}]},
  {"header":"Region","id":"region","isOther":false,"isSecret":false,"question":"Which region?","options":[{"description":"","label":"eu"}]}]}}`

func TestCodexQuestions(t *testing.T) {
	in, err := Parse([]byte(codexQuestionInput))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(Codex, in, Options{})
	if err != nil || p.Kind != Beside || !p.Stable {
		t.Fatalf("Build: %+v %v; want Beside with a stable callId", p, err)
	}
	qs := p.Request.Questions
	if len(qs) != 2 || qs[0].Header != "DB" || qs[0].Question != "Which database?" || qs[0].Options[1].Label != "SQLite" || qs[0].Options[1].Description != "Embedded" {
		t.Fatalf("questions: %+v", qs)
	}
	s := waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q0", Selected: []string{"SQLite"}}}}}
	resp, ok, err := CodexAnswers(in, s)
	if err != nil || !ok || string(resp) != `{"answers":{"db":{"answers":["SQLite"]}}}` {
		t.Fatalf("answers: %s %v %v", resp, ok, err)
	}
	s = waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q0", Custom: " DuckDB "}, {ID: "q1", Selected: []string{"eu"}}}}}
	if resp, _, _ := CodexAnswers(in, s); string(resp) != `{"answers":{"db":{"answers":["DuckDB"]},"region":{"answers":["eu"]}}}` {
		t.Fatalf("typed text and a second question: %s", resp)
	}
	if _, ok, _ := CodexAnswers(in, waterfall.Settlement{}); ok {
		t.Fatal("nothing answered, yet ok")
	}
	// A secret question is never asked in Slack.
	secret := strings.Replace(codexQuestionInput, `"isSecret":false,"question":"Which region?"`, `"isSecret":true,"question":"Which region?"`, 1)
	in, _ = Parse([]byte(secret))
	if p, err := Build(Codex, in, Options{}); err != nil || p.Kind != Skip || p.Request != nil {
		t.Fatalf("a secret question: %+v %v; want Skip", p, err)
	}
	// Another tool's PreToolUse is none of askslack's business.
	var other map[string]any
	_ = json.Unmarshal([]byte(codexQuestionInput), &other)
	other["tool_name"] = "exec_command"
	b, _ := json.Marshal(other)
	in, _ = Parse(b)
	if p, err := Build(Codex, in, Options{}); err != nil || p.Kind != Skip {
		t.Fatalf("PreToolUse on exec_command: %+v %v", p, err)
	}
}
