package main

// Late answers reaching a live Claude Code session (issue 42), with the
// released CLI, the hooks exactly as `askslack hook claude
// --print-settings` prints them, and the scripted model: Claude Code's
// question timeout (CLAUDE_AFK_TIMEOUT_MS stands in for the setting
// askUserQuestionTimeout, whose shortest value is 60 s) ends
// AskUserQuestion with no answer, the model goes on, alice answers in Slack
// afterwards, and what the model is sent next must carry her answer —
// once.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/kit/modelapi"
	"github.com/askslack/askslack/internal/kit/realagent"
	"github.com/askslack/askslack/internal/slackfake"
)

// lateIntro opens every late answer the hooks hand the model.
const lateIntro = "Late answer from Slack (askslack)"

// afkTimeout is Claude Code's question timeout in these tests.
const afkTimeout = "4000"

// claudeLate starts an interactive Claude Code with the printed hooks and
// a short question timeout, playing steps.
func (e *realEnv) claudeLate(t *testing.T, ctx context.Context, steps ...modelapi.Step) *session {
	t.Helper()
	model := scripted(t, steps...)
	bin, version := realagent.Install(t, realagent.ClaudeCode)
	t.Logf("Claude Code %s", version)
	settings := e.printed(t, "claude", "--print-settings")
	a := realagent.NewClaude(t, bin, model.URL(), settings, append(e.hookEnv(), "CLAUDE_AFK_TIMEOUT_MS="+afkTimeout)...)
	term := a.Terminal("--permission-mode", "default")
	term.WaitFor(ctx, "❯")
	term.Type("go")
	term.Press("Enter")
	return &session{a: a, term: term, model: model}
}

// wentOn waits for the question in Slack, then for Claude Code's question
// timeout to end the call and the question to turn continued there.
func (e *realEnv) wentOn(t *testing.T, ctx context.Context, s *session) slackfake.Message {
	t.Helper()
	m := waitQuestion(t, ctx, e.d.fake, "Which database?")
	r := s.result(t, ctx, 1)
	if !strings.Contains(r.Content, "No response after") {
		t.Fatalf("the question timeout did not end the call: %+v", r)
	}
	waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "moved on")
	})
	return m
}

// answered clicks PostgreSQL on the continued question, lets a thinking
// model go on (thinking, when not nil), and waits until the model is sent
// the answer; it returns that request's index and how long after the click
// it came.
func (e *realEnv) answered(t *testing.T, ctx context.Context, s *session, m slackfake.Message, thinking chan struct{}) (int, time.Duration) {
	t.Helper()
	clicked := time.Now()
	click(t, ctx, e.d.fake, m, "PostgreSQL")
	if thinking != nil {
		// The model "thought" while alice answered: it goes on once her
		// answer is queued.
		waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "queued", func(m slackfake.Message) bool {
			return strings.Contains(string(m.Blocks), "it has not read it yet")
		})
		close(thinking)
	}
	i, err := s.model.WaitBody(ctx, lateIntro)
	if err != nil {
		t.Fatalf("%v\nscreen:\n%s", err, s.term.Screen())
	}
	took := time.Since(clicked)
	body := string(s.model.Bodies()[i])
	callID := callIDOf(t, m)
	for _, want := range []string{callID, "Which database?", `\"PostgreSQL\"`, "answered by: alice"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the model request with the late answer lacks %q:\n%s", want, body)
		}
	}
	waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "received", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), "The agent has received it")
	})
	t.Logf("the model was sent alice's answer %s after her click (request %d)", took.Round(10*time.Millisecond), i+1)
	// How the agent framed it, as the model reads it (docs/hooks.md quotes
	// this).
	if j := strings.Index(body, lateIntro); j >= 0 {
		t.Logf("the model reads: …%s", body[max(0, j-1200):j+len(lateIntro)])
	}
	return i, took
}

// once checks, after the session has finished its script, that the answer
// entered the conversation exactly once.
func once(t *testing.T, s *session) {
	t.Helper()
	if n := s.model.Entered(lateIntro); n != 1 {
		t.Fatalf("the late answer entered the conversation %d times; want once", n)
	}
}

func TestRealAgentClaudeLate(t *testing.T) {
	t.Parallel()
	ask := askUser(whichDatabase)
	t.Run("NextToolCall", func(t *testing.T) {
		// (a) the model goes on and makes another tool call: its
		// PostToolUse hook hands the answer over.
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		next := modelapi.Call("Bash", map[string]any{"command": "echo next step", "description": "Print the next step"})
		thinking := make(chan struct{})
		next.Gate = thinking // the model "thinks" while alice answers
		s := e.claudeLate(t, ctx, ask, next, modelapi.Say("Finished.", false))
		m := e.wentOn(t, ctx, s)
		i, _ := e.answered(t, ctx, s, m, thinking)
		if r := s.result(t, ctx, 2); !strings.Contains(r.Content, "next step") || i != 2 {
			t.Fatalf("want the answer in the request carrying the next tool's result (3), got request %d; result %+v", i+1, r)
		}
		s.term.WaitFor(ctx, "Finished.")
		once(t, s)
	})
	t.Run("Stop", func(t *testing.T) {
		// (c) the model tries to stop: the Stop hook blocks once with the
		// answer and the model takes one more turn.
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		wait := modelapi.Say("I'll wait for an answer.", false)
		thinking := make(chan struct{})
		wait.Gate = thinking
		s := e.claudeLate(t, ctx, ask, wait, modelapi.Say("Got it: PostgreSQL.", false))
		m := e.wentOn(t, ctx, s)
		i, _ := e.answered(t, ctx, s, m, thinking)
		if i != 2 {
			t.Fatalf("want the answer in the request after the model's stop (3), got %d", i+1)
		}
		s.term.WaitFor(ctx, "Got it: PostgreSQL.")
		if err := s.model.WaitRequests(ctx, 3); err != nil {
			t.Fatal(err)
		}
		idle(t, ctx, s, 3)
		once(t, s)
	})
	t.Run("IdleSessionWakes", func(t *testing.T) {
		// (b) the turn ended and the session sits at its prompt: the
		// background Stop hook (asyncRewake) wakes it with the answer.
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		s := e.claudeLate(t, ctx, ask, modelapi.Say("I'll wait for an answer.", false), modelapi.Say("Got it: PostgreSQL.", false))
		m := e.wentOn(t, ctx, s)
		s.term.WaitFor(ctx, "I'll wait for an answer.")
		idle(t, ctx, s, 2)
		i, _ := e.answered(t, ctx, s, m, nil)
		if i != 2 {
			t.Fatalf("want the answer in the request that woke the session (3), got %d", i+1)
		}
		s.term.WaitFor(ctx, "Got it: PostgreSQL.")
		idle(t, ctx, s, 3)
		once(t, s)
	})
	t.Run("PermissionOutlivesTheOldWait", func(t *testing.T) {
		// (e) a permission left waiting: no fixed wait ends it (the old
		// default withdrew it after 10 minutes; here, seconds longer than
		// the question timeout), so alice's Allow still runs the command.
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		settings := e.printed(t, "claude", "--print-settings")
		if got := permissionTimeout(settings); got < 86400 {
			t.Fatalf("the printed PermissionRequest hook times out after %ds; want at least a day", got)
		}
		s := e.claudeLate(t, ctx, bashTouch(), modelapi.Say("Finished.", true))
		m := waitQuestion(t, ctx, e.d.fake, touchMarker)
		s.term.WaitFor(ctx, "Do you want to proceed?")
		time.Sleep(15 * time.Second) // left alone, longer than the question timeout
		agentClient := &hostapi.Client{BaseURL: e.url, Token: realAgentToken}
		st, err := agentClient.Get(ctx, callIDOf(t, m), 0)
		if err != nil || st.State != "open" || st.Deadline != nil {
			t.Fatalf("the permission question after 15 s: %+v %v", st, err)
		}
		click(t, ctx, e.d.fake, m, "Allow")
		if r := s.result(t, ctx, 1); r.IsError || !s.a.Exists("released.marker") {
			t.Fatalf("the model was handed %+v", r)
		}
		if s.model.Entered(lateIntro) != 0 {
			t.Fatal("an answer given in time was also injected late")
		}
	})
}

// (d) The MCP tool, registered as the README says: the model finds it
// (Claude Code defers MCP tools behind ToolSearch), asks with a short wait
// and gets pending — told in the structured result, which is what the
// model reads, that the answer will come by itself — and goes on; the
// PostToolUse hook adopts the call, and when the model tries to stop, the
// Stop hook hands alice's answer over. The permission prompt for askslack's
// own tool is allowed at once (nobody approves the question itself).
func TestRealAgentClaudeLateMCP(t *testing.T) {
	t.Parallel()
	ctx := realCtx(t)
	e := newRealEnv(t, nil)
	find := modelapi.Call("ToolSearch", map[string]any{"query": "select:mcp__askslack__ask_user_question", "max_results": 1})
	ask := modelapi.Call("mcp__askslack__ask_user_question", map[string]any{"questions": []any{whichDatabase}, "waitSeconds": 2})
	wait := modelapi.Say("I'll go on without it for now.", false)
	thinking := make(chan struct{})
	wait.Gate = thinking
	model := scripted(t, find, ask, wait, modelapi.Say("Got it: PostgreSQL.", false))
	bin, version := realagent.Install(t, realagent.ClaudeCode)
	t.Logf("Claude Code %s", version)
	a := realagent.NewClaude(t, bin, model.URL(), e.printed(t, "claude", "--print-settings"), e.hookEnv()...)
	if out, err := a.Run(ctx, "mcp", "add", "askslack", "--env", "ASKSLACK_URL="+e.url, "--env", "ASKSLACK_TOKEN="+realAgentToken,
		"--", binPath, "mcp", "--agent", "claude-code"); err != nil {
		t.Fatalf("claude mcp add: %v\n%s", err, out)
	}
	term := a.Terminal("--permission-mode", "default")
	term.WaitFor(ctx, "❯")
	term.Type("go")
	term.Press("Enter")
	s := &session{a: a, term: term, model: model}
	m := waitQuestion(t, ctx, e.d.fake, "Which database?")
	r := s.result(t, ctx, 2)
	if !strings.Contains(r.Content, "Do not assume an answer") || !strings.Contains(r.Content, "reaches you by itself") {
		t.Fatalf("the model was handed %+v; want the pending result telling it the answer comes by itself", r)
	}
	for _, msg := range e.d.fake.Messages() {
		if strings.Contains(string(msg.Blocks), "mcp__askslack") {
			t.Fatalf("a person was asked to approve the question itself: %s", msg.Blocks)
		}
	}
	waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "moved on")
	})
	i, _ := e.answered(t, ctx, s, m, thinking)
	if i != 3 {
		t.Fatalf("want the answer in the request after the model's stop (4), got %d", i+1)
	}
	term.WaitFor(ctx, "Got it: PostgreSQL.")
	idle(t, ctx, s, 4)
	once(t, s)
}

// idle checks the session stays at n model requests for a few seconds: no
// hook loops the session after the answer.
func idle(t *testing.T, ctx context.Context, s *session, n int) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
	}
	if got := s.model.Requests(); got != n {
		t.Fatalf("the session made %d model requests; want %d (a hook kept it going)", got, n)
	}
}

// permissionTimeout is the printed PermissionRequest hook's timeout.
func permissionTimeout(settings map[string]any) int {
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks["PermissionRequest"].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			if v, ok := h.(map[string]any)["timeout"].(float64); ok {
				return int(v)
			}
		}
	}
	return 0
}

// codexLate starts the Codex TUI with the hooks as printed and askslack's
// MCP server configured as the README says (a 2 s wait), trusts the hooks
// once as a person would, and submits prompt.
func (e *realEnv) codexLate(t *testing.T, ctx context.Context, prompt string, steps ...modelapi.Step) *session {
	t.Helper()
	model := scripted(t, steps...)
	bin, version := realagent.Install(t, realagent.Codex)
	t.Logf("Codex %s", version)
	a := realagent.NewCodex(t, bin, model.URL(), e.printed(t, "codex", "--print-config"), e.hookEnv()...)
	cfg, err := os.OpenFile(filepath.Join(a.Home, ".codex", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cfg, "\n[mcp_servers.askslack]\ncommand = %q\nargs = [\"mcp\", \"--agent\", \"codex\", \"--wait\", \"2s\"]\nenv = { ASKSLACK_URL = %q, ASKSLACK_TOKEN = %q }\n",
		binPath, e.url, realAgentToken)
	cfg.Close()
	term := codexTrusting(t, ctx, a, prompt)
	term.Confirm(ctx, "Enter", "Hooks need review")
	term.WaitFor(ctx, "› "+prompt)
	term.Submit(ctx, "Enter", "Working")
	return &session{a: a, term: term, model: model}
}

// codexStarved is how Codex's TUI exits when, starved of CPU on a loaded
// machine, it overruns the one-second wall-clock deadline of the input
// drain it runs before its hooks' trust dialog takes a decision
// (discard_pending_terminal_input in openai/codex's tui). Nothing has been
// sent to the model by then.
const codexStarved = "timed out discarding buffered terminal input"

// codexTrusting starts the Codex TUI of a, submits prompt, and brings its
// hooks' trust dialog to "Trust all and continue" as a person would (the
// key pressed until the cursor moved: one pressed as the dialog appears may
// be dropped). When Codex exited on its drain deadline instead (codexStarved:
// Codex's own one-second deadline, which a CPU-starved run overruns; seen in
// CI), it starts it once more, in a new terminal: the session had not begun.
func codexTrusting(t *testing.T, ctx context.Context, a *realagent.Agent, prompt string) *realagent.Term {
	t.Helper()
	term, starved := codexTrustDialog(t, ctx, a, prompt)
	if starved {
		t.Logf("Codex exited on its input drain's deadline (starved of CPU); starting it again:\n%s", term.Screen())
		term, starved = codexTrustDialog(t, ctx, a, prompt)
	}
	if starved {
		t.Fatalf("Codex exited on its input drain's deadline twice:\n%s", term.Screen())
	}
	return term
}

// codexTrustDialog is one try of codexTrusting: the terminal, and whether
// Codex exited on its drain deadline.
func codexTrustDialog(t *testing.T, ctx context.Context, a *realagent.Agent, prompt string) (*realagent.Term, bool) {
	t.Helper()
	term := a.Terminal()
	term.WaitFor(ctx, "Ask Codex to do anything")
	term.Type(prompt)
	term.Press("Enter")
	term.WaitFor(ctx, "Hooks need review", "Trust all and continue")
	screen := term.SubmitAny(ctx, "Down", "› 2. Trust all and continue", codexStarved)
	return term, strings.Contains(screen, codexStarved)
}

// (d) in the Codex TUI: the MCP tool's pending result, then alice's answer.
// Codex asks approval for every MCP call under on-request; the printed hook
// allows askslack's own tool at once, so the question is the first thing a
// person sees. When the model tries to stop, the Stop hook hands the answer
// over; when the turn had already ended, the waiter the Stop hook left in
// the background wakes the idle session with `codex queue`.
func TestRealAgentCodexLate(t *testing.T) {
	t.Parallel()
	ask := modelapi.Call("ask_user_question", map[string]any{"questions": []any{whichDatabase}})
	ask.Namespace = "mcp__askslack"
	t.Run("Stop", func(t *testing.T) {
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		wait := modelapi.Say("I'll go on without it for now.", false)
		thinking := make(chan struct{})
		wait.Gate = thinking
		s := e.codexLate(t, ctx, "pick a database", ask, wait, modelapi.Say("Got it: PostgreSQL.", false))
		m := waitQuestion(t, ctx, e.d.fake, "Which database?")
		for _, msg := range e.d.fake.Messages() {
			if strings.Contains(string(msg.Blocks), "mcp__askslack") || strings.Contains(string(msg.Blocks), "ask_user_question") {
				t.Fatalf("a person was asked to approve the question itself: %s", msg.Blocks)
			}
		}
		if r := s.result(t, ctx, 1); !strings.Contains(r.Content, "reaches you by itself") {
			t.Fatalf("the model was handed %+v; want the pending result", r)
		}
		waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
			return hasControls(m) && strings.Contains(string(m.Blocks), "moved on")
		})
		if i, _ := e.answered(t, ctx, s, m, thinking); i != 2 {
			t.Fatalf("want the answer in the request after the model's stop (3), got %d", i+1)
		}
		s.term.WaitFor(ctx, "Got it: PostgreSQL.")
		idle(t, ctx, s, 3)
		once(t, s)
	})
	t.Run("IdleSessionWakes", func(t *testing.T) {
		// The turn ended and the TUI sits idle: the Stop hook left a waiter
		// in the background, which hands alice's answer over with `codex
		// queue` — a new turn, the answer as a user message.
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		s := e.codexLate(t, ctx, "pick a database", ask, modelapi.Say("I'll go on without it for now.", false), modelapi.Say("Got it: PostgreSQL.", false))
		m := waitQuestion(t, ctx, e.d.fake, "Which database?")
		waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
			return hasControls(m) && strings.Contains(string(m.Blocks), "moved on")
		})
		s.term.WaitFor(ctx, "I'll go on without it for now.")
		idle(t, ctx, s, 2) // the turn's Stop hook has run: the session sits idle
		i, _ := e.answered(t, ctx, s, m, nil)
		if i != 2 {
			t.Fatalf("want the answer in the request that woke the session (3), got %d", i+1)
		}
		// The model reads it as a prompt: the last input item is a user
		// message holding the answer.
		var req struct {
			Input []struct {
				Type, Role string
				Content    []struct{ Text string }
			}
		}
		if err := json.Unmarshal(s.model.Bodies()[i], &req); err != nil || len(req.Input) == 0 {
			t.Fatalf("the waking request: %v", err)
		}
		last := req.Input[len(req.Input)-1]
		if last.Type != "message" || last.Role != "user" || len(last.Content) == 0 || !strings.HasPrefix(last.Content[0].Text, lateIntro) {
			t.Fatalf("the answer reached the model as %+v; want a user message starting %q", last, lateIntro)
		}
		t.Logf("the model reads: %q", last.Content[0].Text)
		s.term.WaitFor(ctx, "Got it: PostgreSQL.")
		idle(t, ctx, s, 3)
		once(t, s)
		// Hooks run again for this session, on this replica and, with a
		// shared Redis, on another, with the call booked again (a second
		// machine's hooks that saw it too): nothing is handed on twice.
		agentClient := &hostapi.Client{BaseURL: e.url, Token: realAgentToken}
		st, err := agentClient.Get(ctx, callIDOf(t, m), 0)
		if err != nil {
			t.Fatal(err)
		}
		urls := []string{e.url}
		if e.d.redisURL != "" {
			urls = append(urls, "http://"+e.d.start(viaHTTP).addr)
		}
		book := filepath.Join(s.a.Home, ".cache", "askslack", "late", hook.SessionKey(hook.Codex, st.Agent.SessionID))
		for _, u := range urls {
			for _, ev := range []string{hook.EventStop, hook.EventUserPromptSubmit, hook.EventPostToolUse} {
				if err := os.WriteFile(book, []byte(callIDOf(t, m)+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				in, _ := json.Marshal(map[string]any{"session_id": st.Agent.SessionID, "cwd": s.a.Dir, "hook_event_name": ev, "tool_name": "exec_command"})
				cmd := exec.CommandContext(ctx, binPath, "hook", "codex", "--url", u)
				cmd.Env = append(s.a.Env(), "ASKSLACK_TOKEN="+realAgentToken)
				cmd.Stdin = strings.NewReader(string(in))
				out, err := cmd.Output()
				if err != nil || strings.TrimSpace(string(out)) != "" {
					t.Fatalf("%s hook run again against %s: %v, printed %q; want nothing", ev, u, err, out)
				}
			}
		}
		idle(t, ctx, s, 3)
		once(t, s)
	})
}

// Codex's own question (request_user_input, Plan mode) in Slack: the
// printed PreToolUse hook returns at once, the terminal shows its picker,
// and the question is asked in Slack beside it; the first answer wins. An
// answer in Slack reaches the model exactly as the terminal's would (the
// call's output) and closes the picker; an answer in the terminal
// withdraws the question in Slack.
func TestRealAgentCodexQuestion(t *testing.T) {
	t.Parallel()
	q := map[string]any{"questions": []any{map[string]any{"id": "db", "header": "DB", "question": "Which database?", "isOther": true, "isSecret": false,
		"options": []any{map[string]any{"label": "PostgreSQL", "description": "Relational"}, map[string]any{"label": "SQLite", "description": "Embedded"}}}}}
	start := func(t *testing.T, ctx context.Context, e *realEnv) *session {
		model := scripted(t, modelapi.Call("request_user_input", q), modelapi.Say("Turn over.", true))
		bin, version := realagent.Install(t, realagent.Codex)
		t.Logf("Codex %s", version)
		a := realagent.NewCodex(t, bin, model.URL(), e.printed(t, "codex", "--print-config"), e.hookEnv()...)
		t.Cleanup(func() {
			if logs, _ := filepath.Glob(filepath.Join(a.Home, ".cache", "askslack", "late", "*.log")); t.Failed() {
				for _, l := range logs {
					b, _ := os.ReadFile(l)
					t.Logf("%s:\n%s", filepath.Base(l), b)
				}
			}
		})
		// Codex asks to trust the new hooks as it starts; then Plan mode
		// (/plan), where Codex offers request_user_input, before the
		// prompt is typed (a prompt typed before keeps the mode it had).
		trust := func() (*realagent.Term, bool) {
			term := a.Terminal()
			term.WaitFor(ctx, "Hooks need review", "Trust all and continue")
			screen := term.SubmitAny(ctx, "Down", "› 2. Trust all and continue", codexStarved)
			return term, strings.Contains(screen, codexStarved)
		}
		term, starved := trust()
		if starved { // see codexTrusting
			term, starved = trust()
		}
		if starved {
			t.Fatalf("Codex exited on its input drain's deadline twice:\n%s", term.Screen())
		}
		term.Confirm(ctx, "Enter", "Hooks need review")
		term.WaitFor(ctx, "Ask Codex to do anything")
		term.Type("/plan")
		term.WaitFor(ctx, "switch to Plan mode")
		term.Submit(ctx, "Enter", "Plan mode (shift+tab to cycle)")
		term.Type("pick a database")
		term.Submit(ctx, "Enter", "Question 1/1")
		return &session{a: a, term: term, model: model}
	}
	t.Run("AnsweredInSlack", func(t *testing.T) {
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		s := start(t, ctx, e)
		m := waitQuestion(t, ctx, e.d.fake, "Which database?")
		mustContain(t, "message", string(m.Blocks), "codex", "DB", "PostgreSQL", "Relational", "SQLite", "Embedded")
		s.term.WaitFor(ctx, "Which database?", "2. SQLite")
		clicked := time.Now()
		click(t, ctx, e.d.fake, m, "SQLite")
		r := s.result(t, ctx, 1)
		t.Logf("the model got %s %s after the click", r.Content, time.Since(clicked).Round(10*time.Millisecond))
		if r.Tool != "request_user_input" || r.Content != `{"answers":{"db":{"answers":["SQLite"]}}}` {
			t.Fatalf("the model was handed %+v; want Codex's own answer shape with SQLite", r)
		}
		if screen := s.term.WaitFor(ctx, "Turn over."); strings.Contains(screen, "Question 1/1") {
			t.Fatalf("the terminal still asks:\n%s", screen)
		}
	})
	t.Run("AnsweredInTheTerminal", func(t *testing.T) {
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		s := start(t, ctx, e)
		m := waitQuestion(t, ctx, e.d.fake, "Which database?")
		s.term.WaitFor(ctx, "2. SQLite")
		s.term.Submit(ctx, "Enter", "Questions 1/1 answered") // PostgreSQL, the first option
		r := s.result(t, ctx, 1)
		if r.Content != `{"answers":{"db":{"answers":["PostgreSQL"]}}}` {
			t.Fatalf("the model was handed %+v", r)
		}
		waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "answered in the terminal", func(m slackfake.Message) bool {
			return !hasControls(m) && strings.Contains(string(m.Blocks), "Answered in the terminal")
		})
	})
}
