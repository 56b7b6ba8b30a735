package hook

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

func load(t *testing.T, name string) *Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// build builds a fixture's plan; a PreToolUse fixture as a --defer run
// (only there does PreToolUse ask AskUserQuestion).
func build(t *testing.T, agent Agent, name string) *Plan {
	t.Helper()
	p, err := Build(agent, load(t, name), Options{Defer: strings.Contains(name, "pretooluse")})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sameJSON compares two JSON documents by value.
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("decision\n got %s\nwant %s", got, want)
	}
}

func answer(items ...waterfall.AnswerItem) waterfall.Settlement {
	return waterfall.Settlement{Answer: waterfall.Answer{Answers: items},
		Respondent: waterfall.Respondent{UserID: "U0ANN", UserName: "ann", Surface: waterfall.SurfaceSlack}}
}

func decide(t *testing.T, p *Plan, s waterfall.Settlement) []byte {
	t.Helper()
	out, err := p.Decide(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const auqQuestionsJSON = `[{"question":"Which database?","header":"DB","multiSelect":false,
  "options":[{"label":"PostgreSQL","description":"Relational"},{"label":"SQLite","description":"Embedded"}]}]`

func TestAskUserQuestion(t *testing.T) {
	p := build(t, Claude, "claude_pretooluse_auq.json")
	if p.Kind != Ask || !p.Stable || !p.Deferrable {
		t.Fatalf("plan %+v", p)
	}
	r := p.Request
	want := waterfall.Agent{ID: "claude-code", SessionID: "abc123", SourceTaskID: "p · abc123"}
	if r.Agent != want {
		t.Fatalf("agent %+v, want %+v", r.Agent, want)
	}
	q := r.Questions[0]
	if len(r.Questions) != 1 || q.Question != "Which database?" || q.Header != "DB" || q.MultiSelect ||
		len(q.Options) != 2 || q.Options[1] != (waterfall.Option{Label: "SQLite", Description: "Embedded"}) {
		t.Fatalf("questions %+v", r.Questions)
	}
	t.Run("Label", func(t *testing.T) {
		out := decide(t, p, answer(waterfall.AnswerItem{ID: "q0", Selected: []string{"PostgreSQL"}}))
		sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
		  "updatedInput":{"questions":`+auqQuestionsJSON+`,"answers":{"Which database?":"PostgreSQL"}}}}`)
	})
	t.Run("Other", func(t *testing.T) {
		out := decide(t, p, answer(waterfall.AnswerItem{ID: "q0", Selected: []string{}, Custom: "DuckDB, for analytics"}))
		sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
		  "updatedInput":{"questions":`+auqQuestionsJSON+`,"answers":{"Which database?":"DuckDB, for analytics"}}}}`)
	})
	t.Run("NeverBareAllow", func(t *testing.T) {
		out := decide(t, p, answer(waterfall.AnswerItem{ID: "q0", Selected: []string{}}))
		var d struct {
			H preToolUseOutput `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &d); err != nil || d.H.PermissionDecision != "deny" || d.H.UpdatedInput != nil ||
			!strings.Contains(d.H.PermissionDecisionReason, "skipped") {
			t.Fatalf("all skipped: %s", out)
		}
	})
}

func TestAskUserQuestionBatch(t *testing.T) {
	p := build(t, Claude, "claude_pretooluse_auq_multi.json")
	r := p.Request
	if len(r.Questions) != 2 || !r.Questions[0].MultiSelect || r.Questions[1].Options[0].Preview == "" {
		t.Fatalf("questions %+v", r.Questions)
	}
	if r.Agent.SourceTaskID != "shop · 5f0e2c1a" || r.Agent.SessionID != "5f0e2c1a-8b7d-4e3f-9a21-0c6d4b8e7f10" {
		t.Fatalf("agent %+v", r.Agent)
	}
	in := load(t, "claude_pretooluse_auq_multi.json")
	out := decide(t, p, answer(
		waterfall.AnswerItem{ID: "q0", Selected: []string{"Search", "Reviews"}, Custom: "Gift cards"},
		waterfall.AnswerItem{ID: "q1", Selected: []string{"Gallery top"}}))
	var questions json.RawMessage
	var ti map[string]json.RawMessage
	_ = json.Unmarshal(in.ToolInput, &ti)
	questions = ti["questions"]
	sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
	  "updatedInput":{"questions":`+string(questions)+`,"answers":{
	    "Which features should the first release include?":"Search, Reviews, Gift cards",
	    "Which layout for the product page?":"Gallery top"}}}}`)
	// A question skipped in the batch has no entry.
	out = decide(t, p, answer(waterfall.AnswerItem{ID: "q0", Selected: []string{}}, waterfall.AnswerItem{ID: "q1", Selected: []string{"Gallery left"}}))
	sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
	  "updatedInput":{"questions":`+string(questions)+`,"answers":{"Which layout for the product page?":"Gallery left"}}}}`)
}

func TestExitPlanMode(t *testing.T) {
	p := build(t, Claude, "claude_permission_exitplanmode.json")
	q := p.Request.Questions[0]
	if !q.PlanReview() || q.Intent.Approve != LabelApprove || q.Detail != "## Refactor auth\n1. Extract ..." || p.Deferrable || p.Stable {
		t.Fatalf("plan question %+v", q)
	}
	if !strings.Contains(q.Question, "Refactor auth") {
		t.Fatalf("question %q does not name the plan", q.Question)
	}
	t.Run("Approve", func(t *testing.T) {
		out := decide(t, p, answer(waterfall.AnswerItem{ID: "plan", Selected: []string{"Approve"}}))
		sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
		  "updatedInput":{"plan":"## Refactor auth\n1. Extract ...","planFilePath":"/home/u/.claude/plans/refactor-auth.md"}}}}`)
	})
	t.Run("DeclineWithFeedback", func(t *testing.T) {
		out := decide(t, p, answer(waterfall.AnswerItem{ID: "plan", Selected: []string{}, Custom: "Keep the v1 API; split step 3."}))
		sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Keep the v1 API; split step 3."}}}`)
	})
	t.Run("Decline", func(t *testing.T) {
		out := decide(t, p, answer(waterfall.AnswerItem{ID: "plan", Selected: []string{"Decline"}}))
		sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny",
		  "message":"The plan was declined in Slack by ann. Ask what should change before planning again."}}}`)
	})
}

func TestClaudePermission(t *testing.T) {
	p := build(t, Claude, "claude_permission_bash.json")
	q := p.Request.Questions[0]
	labels := []string{}
	for _, o := range q.Options {
		labels = append(labels, o.Label)
	}
	if strings.Join(labels, "|") != "Allow|Always allow|Allow, add rule|Deny" || q.Header != "Bash" {
		t.Fatalf("labels %q", labels)
	}
	if !strings.Contains(q.Detail, "```\nnpm test -- --watch=false\n```") || !strings.Contains(q.Question, "claude-code wants to use Bash in p") {
		t.Fatalf("question text %q detail %q", q.Question, q.Detail)
	}
	if !strings.Contains(q.Options[1].Description, "`npm test -- --watch=false`") || !strings.Contains(q.Options[2].Description, "Bash(npm test:*)") {
		t.Fatalf("descriptions %q, %q", q.Options[1].Description, q.Options[2].Description)
	}
	cases := map[string]struct {
		item waterfall.AnswerItem
		want string
	}{
		"Allow": {waterfall.AnswerItem{ID: "permission", Selected: []string{"Allow"}},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		"AlwaysAllow": {waterfall.AnswerItem{ID: "permission", Selected: []string{"Always allow"}},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
			  "updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test -- --watch=false"}],"behavior":"allow","destination":"localSettings"}]}}}`},
		"Suggestion": {waterfall.AnswerItem{ID: "permission", Selected: []string{"Allow, add rule"}},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
			  "updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"localSettings"}]}}}`},
		"Deny": {waterfall.AnswerItem{ID: "permission", Selected: []string{"Deny"}},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Slack by ann."}}}`},
		"DenyWithReason": {waterfall.AnswerItem{ID: "permission", Selected: []string{}, Custom: "Not on the shared runner."},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Not on the shared runner."}}}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { sameJSON(t, decide(t, p, answer(c.item)), c.want) })
	}
}

func TestCodexPermissionNeverUpdates(t *testing.T) {
	in := load(t, "codex_permission.json")
	// Even with suggestions Codex gets no "Always allow" and no updates.
	in.PermissionSuggestions = []json.RawMessage{json.RawMessage(`{"type":"setMode","mode":"acceptEdits"}`)}
	p, err := Build(Codex, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := p.Request.Questions[0]
	if len(q.Options) != 2 || q.Options[0].Label != "Allow" || q.Options[1].Label != "Deny" || p.Request.Agent.ID != "codex" {
		t.Fatalf("question %+v", q)
	}
	if !strings.Contains(q.Detail, "Rebuild the release artefacts\n```\nrm -rf build && make release\n```") {
		t.Fatalf("detail %q", q.Detail)
	}
	sameJSON(t, decide(t, p, answer(waterfall.AnswerItem{ID: "permission", Selected: []string{"Allow"}})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)
	sameJSON(t, decide(t, p, answer(waterfall.AnswerItem{ID: "permission", Custom: "use make clean"})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"use make clean"}}}`)
}

func TestEditDescribed(t *testing.T) {
	p := build(t, Claude, "claude_permission_edit.json")
	d := p.Request.Questions[0].Detail
	for _, want := range []string{"Edit `/home/u/p/src/auth.go`: 1 edit(s), −3 +3 lines", "- func login() {", "+ func login(ctx context.Context) error {"} {
		if !strings.Contains(d, want) {
			t.Fatalf("detail lacks %q:\n%s", want, d)
		}
	}
	if len(p.Request.Questions[0].Options) != 2 {
		t.Fatalf("no suggestions, yet options %+v", p.Request.Questions[0].Options)
	}
}

func TestDescribeCutsLongInput(t *testing.T) {
	long := map[string]any{"url": strings.Repeat("x", 3*maxDetail)}
	raw, _ := json.Marshal(long)
	d := Describe("mcp__web__fetch", raw)
	if !strings.Contains(d, "input cut at") || len([]rune(d)) > maxDetail+100 {
		t.Fatalf("long input not cut: %d characters", len(d))
	}
	if d := Describe("Bash", json.RawMessage(`{"command":"echo '`+"```"+`'"}`)); strings.Count(d, "```") != 2 {
		t.Fatalf("a fence inside the command closes the block: %q", d)
	}
}

func TestNotification(t *testing.T) {
	p := build(t, Claude, "claude_notification.json")
	if p.Kind != Notice || p.Notice.Text != "Permission needed: Claude needs your permission to use Bash" ||
		p.Notice.Agent.ID != "claude-code" || p.Notice.Agent.SourceTaskID != "p · abc123" {
		t.Fatalf("notice %+v", p)
	}
}

func TestSkipsAndErrors(t *testing.T) {
	pre := load(t, "claude_pretooluse_auq.json")
	pre.ToolName = "Bash"
	if p, err := Build(Claude, pre, Options{}); err != nil || p.Kind != Skip || p.Reason == "" {
		t.Fatalf("PreToolUse on Bash: %+v %v", p, err)
	}
	// AskUserQuestion belongs to PermissionRequest, beside the terminal;
	// to PreToolUse only with --defer (headless).
	auq := load(t, "claude_pretooluse_auq.json")
	if p, err := Build(Claude, auq, Options{}); err != nil || p.Kind != Skip || !strings.Contains(p.Reason, "PermissionRequest hook asks it") {
		t.Fatalf("PreToolUse on AskUserQuestion without --defer: %+v %v", p, err)
	}
	auq.HookEventName = EventPermissionRequest
	if p, err := Build(Claude, auq, Options{Defer: true}); err != nil || p.Kind != Skip {
		t.Fatalf("PermissionRequest on AskUserQuestion with --defer: %+v %v", p, err)
	}
	if p, err := Build(Claude, auq, Options{}); err != nil || p.Kind != Ask {
		t.Fatalf("PermissionRequest on AskUserQuestion: %+v %v", p, err)
	}
	for name, c := range map[string]struct {
		agent Agent
		in    string
	}{
		"UnknownEvent":       {Claude, `{"hook_event_name":"SessionStart","session_id":"s"}`},
		"CodexNotification":  {Codex, `{"hook_event_name":"Notification","session_id":"s"}`},
		"NoQuestions":        {Claude, `{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{}}`},
		"PermissionNoTool":   {Codex, `{"hook_event_name":"PermissionRequest","tool_input":{"command":"ls"}}`},
		"OptionlessQuestion": {Claude, `{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":" ","options":[]}]}}`},
	} {
		t.Run(name, func(t *testing.T) {
			in, err := Parse([]byte(c.in))
			if err == nil {
				_, err = Build(c.agent, in, Options{})
			}
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("err = %v, want ErrBadInput", err)
			}
		})
	}
	for _, bad := range []string{"", "not json", `{"session_id":"s"}`, `[1,2]`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrBadInput) {
			t.Fatalf("Parse(%q) = %v", bad, err)
		}
	}
}

func TestCallID(t *testing.T) {
	a := load(t, "claude_pretooluse_auq.json")
	id1, stable := CallID(Claude, a)
	id2, _ := CallID(Claude, load(t, "claude_pretooluse_auq.json"))
	if !stable || id1 != id2 || !waterfall.ValidID(id1) || !strings.HasPrefix(id1, "claude-") {
		t.Fatalf("callId %q stable=%v, again %q", id1, stable, id2)
	}
	b := load(t, "claude_pretooluse_auq.json")
	b.ToolUseID = "toolu_02XYZ"
	if id, _ := CallID(Claude, b); id == id1 {
		t.Fatal("another tool call got the same callId")
	}
	// Without tool_use_id: a hash of tool name and input, insensitive to
	// the input's whitespace.
	c := load(t, "claude_permission_bash.json")
	idc, stable := CallID(Claude, c)
	c.ToolInput = json.RawMessage(`{ "command": "npm test -- --watch=false", "description": "Run the test suite" }`)
	if idc2, _ := CallID(Claude, c); stable || idc2 != idc {
		t.Fatalf("hash callId %q vs %q (stable=%v)", idc, idc2, stable)
	}
	c.ToolInput = json.RawMessage(`{"command":"npm test"}`)
	if idc3, _ := CallID(Claude, c); idc3 == idc {
		t.Fatal("a different input got the same callId")
	}
}

func TestDefer(t *testing.T) {
	sameJSON(t, Defer(), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`)
}

// What Claude Code 2.1.332 really sends: AskUserQuestion through
// PermissionRequest is answered with a PermissionRequest allow carrying the
// answers (the terminal's picker stays answerable beside it).
func TestAskUserQuestionThroughPermissionRequest(t *testing.T) {
	p := build(t, Claude, "claude_2.1.332_permission_auq.json")
	if p.Kind != Ask || p.Deferrable || len(p.Request.Questions) != 1 {
		t.Fatalf("plan %+v", p)
	}
	out := decide(t, p, answer(waterfall.AnswerItem{ID: "q0", Selected: []string{"SQLite"}}))
	sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
	  "updatedInput":{"questions":[{"question":"Which database?","header":"DB","options":[{"label":"PostgreSQL","description":"Relational"},
	    {"label":"SQLite","description":"Embedded"}],"multiSelect":false}],"answers":{"Which database?":"SQLite"}}}}}`)
	out = decide(t, p, answer(waterfall.AnswerItem{ID: "q0", Selected: []string{}, Custom: "DuckDB"}))
	if !strings.Contains(string(out), `"answers":{"Which database?":"DuckDB"}`) {
		t.Fatalf("typed answer: %s", out)
	}
	out = decide(t, p, answer(waterfall.AnswerItem{ID: "q0", Selected: []string{}}))
	if !strings.Contains(string(out), `"behavior":"deny"`) || !strings.Contains(string(out), "skipped") {
		t.Fatalf("skipped: %s", out)
	}
}

// For `touch released.marker` Claude Code 2.1.332 suggested a folder and
// accept-edits mode; echoing the first did not stop the same command from
// being asked again. Always allow is a rule for exactly the command; the
// suggestions are offered under what they do.
func TestAlwaysAllowIsTheExactCommand(t *testing.T) {
	p := build(t, Claude, "claude_2.1.332_permission_touch.json")
	var labels []string
	for _, o := range p.Request.Questions[0].Options {
		labels = append(labels, o.Label)
	}
	if got := strings.Join(labels, "|"); got != "Allow|Always allow|Allow, add folder|Allow, accept edits|Deny" {
		t.Fatalf("labels %q", got)
	}
	for label, want := range map[string]string{
		"Always allow":        `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch released.marker"}],"behavior":"allow","destination":"localSettings"}]`,
		"Allow, add folder":   `[{"type":"addDirectories","directories":["/home/u/p"],"destination":"session"}]`,
		"Allow, accept edits": `[{"type":"setMode","mode":"acceptEdits","destination":"session"}]`,
	} {
		out := decide(t, p, answer(waterfall.AnswerItem{ID: "permission", Selected: []string{label}}))
		var d struct {
			H struct {
				Decision struct {
					Behavior           string          `json:"behavior"`
					UpdatedPermissions json.RawMessage `json:"updatedPermissions"`
				} `json:"decision"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &d); err != nil || d.H.Decision.Behavior != "allow" {
			t.Fatalf("%s: %s", label, out)
		}
		sameJSON(t, d.H.Decision.UpdatedPermissions, want)
		if !waterfall.AllowsPermission(label) {
			t.Fatalf("%q does not count as an allow for quorum", label)
		}
	}
	// A multi-line command gets no exact rule: Claude's rules match a line.
	in := load(t, "claude_2.1.332_permission_touch.json")
	in.ToolInput = json.RawMessage(`{"command":"touch a\nrm -rf /"}`)
	p, err := Build(Claude, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range p.Request.Questions[0].Options {
		if o.Label == LabelAlwaysAllow {
			t.Fatal("Always allow offered for a multi-line command")
		}
	}
}

// ExitPlanMode with an empty input (the model wrote no plan file before
// calling it) reads the plan file the transcript names; only a file in a
// .claude/plans folder is ever read.
func TestPlanReadFromItsFile(t *testing.T) {
	in := load(t, "claude_2.1.332_permission_exitplanmode_empty.json")
	plans := map[string]string{"/home/u/.claude/plans/go-eager-minsky.md": "# Ship it\n\n1. Build\n2. Deploy\n"}
	var asked []string
	read := func(path string) (string, error) {
		asked = append(asked, path)
		if t, ok := plans[path]; ok {
			return t, nil
		}
		return "", errors.New("no such file")
	}
	transcript := []byte(`{"message":{"content":"create your plan at /home/u/.claude/plans/go-eager-minsky.md using the Write tool"}}` + "\n")
	p, err := Build(Claude, in, Options{ReadPlan: read, Transcript: func() []byte { return transcript }})
	if err != nil {
		t.Fatal(err)
	}
	q := p.Request.Questions[0]
	if !strings.Contains(q.Detail, "1. Build") || !strings.Contains(q.Detail, "Read from the plan file `/home/u/.claude/plans/go-eager-minsky.md`") ||
		!strings.Contains(q.Question, "Ship it") {
		t.Fatalf("question %q detail %q", q.Question, q.Detail)
	}
	// Approving echoes the input as it came.
	out := decide(t, p, answer(waterfall.AnswerItem{ID: "plan", Selected: []string{"Approve"}}))
	sameJSON(t, out, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{}}}}`)

	// No plan file anywhere: said so.
	p, err = Build(Claude, in, Options{ReadPlan: read, Transcript: func() []byte { return nil }})
	if err != nil || !strings.Contains(p.Request.Questions[0].Detail, "wrote no plan file") {
		t.Fatalf("no plan: %v %+v", err, p.Request.Questions[0])
	}
	// A planFilePath outside .claude/plans is never read.
	asked = nil
	in.ToolInput = json.RawMessage(`{"planFilePath":"/home/u/.ssh/id_rsa"}`)
	if _, err := Build(Claude, in, Options{ReadPlan: read, Transcript: func() []byte { return nil }}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 0 {
		t.Fatalf("read %q", asked)
	}
	for path, ok := range map[string]bool{
		"/home/u/.claude/plans/a.md": true, "/home/u/.claude/plans/../../.ssh/x.md": false, "relative/.claude/plans/a.md": false,
		"/home/u/.claude/plans/a.txt": false, "/home/u/.claude/plans/sub/a.md": false, "/home/u/plans/a.md": false,
	} {
		if PlanFilePath(path) != ok {
			t.Errorf("PlanFilePath(%q) = %v", path, !ok)
		}
	}
}
