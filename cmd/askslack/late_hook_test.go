package main

// Late answers through the hooks (issue 42), end to end with the real
// binary: the agent goes on without an answer, a person answers in Slack,
// and the next hook the agent runs (PostToolUse, UserPromptSubmit, Stop, or
// the background --wake) hands the answer to the model — once, and only to
// the session that asked.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

func TestE2EHookLate(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	e := lateEnv{hookEnv: hookEnv{url: "http://" + b.addr, fake: d.fake}, b: b}
	for _, c := range []struct {
		name string
		run  func(*testing.T, lateEnv)
	}{
		{"QuestionTimeoutThenNextToolCall", lateNextToolCall},
		{"StopBlocksOnceForAnAnswer", lateStopOnce},
		{"WakeAnIdleSession", lateWake},
		{"WakerStartedBeforeTheCallIsBooked", lateWakeBeforeBooked},
		{"MCPPendingAdopted", lateMCPAdopted},
		{"OnlyTheCallsTheSessionWentOnWithout", lateOnlyOwnCalls},
		{"TerminalAnsweredFirstInjectsNothing", lateTerminalFirst},
		{"OwnMCPToolsAllowedAtOnce", lateOwnToolsGranted},
		{"PermissionFollowsThePrompt", latePermissionFollows},
		{"QuestionTimedAsClaudeCodeWaits", lateQuestionCountdown},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, e)
		})
	}
}

type lateEnv struct {
	hookEnv
	b *bot
}

// lateSession is one agent session on its own machine (its own cache
// folder, where the hooks keep the session's book).
type lateSession struct {
	t     *testing.T
	e     lateEnv
	env   []string
	id    string
	cache string
}

// Its project sets Claude Code's question timeout to 60 s (the question
// then times out, as these tests have Claude Code say in the transcript).
func newLateSession(t *testing.T, e lateEnv) *lateSession {
	cache := t.TempDir()
	project := claudeProject(t, `{"askUserQuestionTimeout":"60s"}`)
	return &lateSession{t: t, e: e, id: "sess-" + safe(t), cache: cache, env: []string{"XDG_CACHE_HOME=" + cache, "CLAUDE_PROJECT_DIR=" + project}}
}

// claudeProject is a project folder whose .claude/settings.json is
// settings (as Claude Code gives its hooks CLAUDE_PROJECT_DIR).
func claudeProject(t *testing.T, settings string) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// input is a hook input of event in this session.
func (s *lateSession) input(event string, fields map[string]any) map[string]any {
	in := map[string]any{"session_id": s.id, "cwd": "/home/u/" + dirOf(s.t), "hook_event_name": event,
		"transcript_path": filepath.Join(s.cache, "t.jsonl"), "permission_mode": "default"}
	for k, v := range fields {
		in[k] = v
	}
	return in
}

// run runs a hook of event and returns its stdout, stderr and status.
func (s *lateSession) run(event string, fields map[string]any, args ...string) (string, string, int) {
	s.t.Helper()
	h := startHookEnv(s.t, s.env, s.e.url, s.input(event, fields), append([]string{"claude"}, args...)...)
	out, code := h.wait(s.t)
	return out, h.stderr.String(), code
}

func (s *lateSession) postToolUse() (string, int) {
	out, _, code := s.run(hook.EventPostToolUse, map[string]any{"tool_name": "Bash",
		"tool_input": map[string]any{"command": "sleep 10"}, "tool_response": map[string]any{"stdout": ""}, "tool_use_id": "toolu_B"})
	return out, code
}

// noLate runs the late hooks once more: nothing is handed to the model.
func (s *lateSession) noLate() {
	s.t.Helper()
	for _, ev := range []string{hook.EventPostToolUse, hook.EventStop, hook.EventUserPromptSubmit} {
		if out, errw, code := s.run(ev, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{}, "prompt": "go on"}); out != "" || code != 0 {
			s.t.Fatalf("%s handed the model something again (exit %d): %s %s", ev, code, out, errw)
		}
	}
}

// noResponse is what Claude Code 2.1.332 writes as AskUserQuestion's result
// when its question timeout ends it.
const noResponse = "No response after 60s \u2014 the user may be away from keyboard. Proceed using your best judgment based on the context so far; you can re-ask this question later if it's still relevant."

// wentOn asks AskUserQuestion through the PermissionRequest hook as printed
// (no --wait), then Claude Code's question timeout ends the call: the hook
// exits printing nothing and the question stays open, continued.
func (s *lateSession) wentOn(ctx context.Context) (slackfake.Message, string) {
	t := s.t
	in := s.input(hook.EventPermissionRequest, nil)
	var fx map[string]any
	raw, _ := os.ReadFile(filepath.Join("internal", "hook", "testdata", "claude_pretooluse_auq.json"))
	_ = json.Unmarshal(raw, &fx)
	in["tool_name"], in["tool_input"] = fx["tool_name"], fx["tool_input"]
	result := transcriptWith(t, in, noResponse)
	h := startHookEnv(t, s.env, s.e.url, in, "claude")
	m := posted(t, ctx, s.e.fake)
	callID := callIDOf(t, m)
	result()
	h.silent(t)
	mustContain(t, "hook stderr", h.stderr.String(), "went on without an answer")
	waitMessage(t, ctx, s.e.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "moved on")
	})
	st, err := s.e.b.client().Get(ctx, callID, 0)
	if err != nil || st.State != "continued" {
		t.Fatalf("after the agent went on: %+v %v", st, err)
	}
	return m, callID
}

// transcriptWith writes the transcript in["transcript_path"] names,
// holding the assistant's call of in's tool with in's input (as Claude Code
// writes it before asking), and returns a function that appends the call's
// result with content (what Claude Code writes once its own dialog was
// answered, or its question timeout ended it).
func transcriptWith(t *testing.T, in map[string]any, content string) (result func()) {
	t.Helper()
	path := in["transcript_path"].(string)
	use := map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": "toolu_Q1", "name": in["tool_name"], "input": in["tool_input"]}}}}
	if err := os.WriteFile(path, []byte(`{"type":"mode","mode":"normal"}`+"\n"+mustJSON(use)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		res := map[string]any{"type": "user", "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_Q1", "content": content}}}}
		fmt.Fprintln(f, mustJSON(res))
	}
}

// answerLate clicks label on the continued question and waits for Slack to
// say it went to the agent as a message.
func answerLate(t *testing.T, ctx context.Context, f *slackfake.Server, m slackfake.Message, label string) {
	t.Helper()
	click(t, ctx, f, m, label)
	waitMessage(t, ctx, f, m.Channel, m.TS, "queued", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "it has not read it yet")
	})
}

// delivered waits for the Slack message to say the agent received the
// answer, and when.
func delivered(t *testing.T, ctx context.Context, f *slackfake.Server, m slackfake.Message) {
	t.Helper()
	waitMessage(t, ctx, f, m.Channel, m.TS, "delivered", func(m slackfake.Message) bool {
		s := string(m.Blocks)
		return strings.Contains(s, "The agent has received it <!date^")
	})
}

// lateText checks what the model is handed: the intro, the call, the
// question, the choice and who made it.
func lateText(t *testing.T, text, callID string) {
	t.Helper()
	mustContain(t, "late answer", text, "Late answer from Slack", "call "+callID, "Which database?", `"PostgreSQL"`, "answered by: alice")
}

func lateNextToolCall(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	m, callID := s.wentOn(ctx)
	if out, code := s.postToolUse(); out != "" || code != 0 {
		t.Fatalf("before any answer the next tool call got %q (exit %d)", out, code)
	}
	answerLate(t, ctx, e.fake, m, "PostgreSQL")
	out, code := s.postToolUse()
	var o struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &o) != nil || o.HookSpecificOutput.HookEventName != "PostToolUse" {
		t.Fatalf("PostToolUse after the answer: exit %d, %q", code, out)
	}
	lateText(t, o.HookSpecificOutput.AdditionalContext, callID)
	delivered(t, ctx, e.fake, m)
	s.noLate()
}

func lateStopOnce(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	m, callID := s.wentOn(ctx)
	answerLate(t, ctx, e.fake, m, "PostgreSQL")
	out, _, code := s.run(hook.EventStop, map[string]any{"stop_hook_active": false, "last_assistant_message": "I'll wait."})
	var o struct{ Decision, Reason string }
	if code != 0 || json.Unmarshal([]byte(out), &o) != nil || o.Decision != "block" {
		t.Fatalf("Stop after the answer: exit %d, %q", code, out)
	}
	lateText(t, o.Reason, callID)
	// The model's next attempt to stop (stop_hook_active) is not blocked
	// again for the same answer.
	if out, _, code := s.run(hook.EventStop, map[string]any{"stop_hook_active": true}); out != "" || code != 0 {
		t.Fatalf("a second Stop blocked again: %q", out)
	}
	delivered(t, ctx, e.fake, m)
}

// --wake (Claude Code's asyncRewake Stop hook): waits in the background
// while the session sits idle and exits 2 with the answer on stderr, which
// wakes the session; nothing on stdout. A second waiter for the session
// leaves at once; a waiter with nothing to wait for leaves at once.
func lateWake(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	if out, _, code := s.run(hook.EventStop, nil, "--wake"); out != "" || code != 0 {
		t.Fatalf("a waiter with no call to wait for: exit %d %q", code, out)
	}
	m, callID := s.wentOn(ctx)
	// One waiter per session: of two started together, one leaves at once
	// with nothing to say, the other waits.
	a := startHookEnv(t, s.env, e.url, s.input(hook.EventStop, nil), "claude", "--wake")
	b := startHookEnv(t, s.env, e.url, s.input(hook.EventStop, nil), "claude", "--wake")
	var w, left *hookProc
	select {
	case <-a.done:
		w, left = b, a
	case <-b.done:
		w, left = a, b
	case <-ctx.Done():
		t.Fatal("two waiters for one session both stayed")
	}
	if out, code := left.wait(t); code != 0 || out != "" {
		t.Fatalf("the second waiter: exit %d %q; stderr %s", code, out, left.stderr.String())
	}
	select {
	case <-w.done:
		t.Fatalf("the waiter left before any answer: %s", w.stderr.String())
	default:
	}
	answerLate(t, ctx, e.fake, m, "PostgreSQL")
	out, code := w.wait(t)
	if code != 2 || out != "" {
		t.Fatalf("waiter: exit %d, stdout %q; want 2 and nothing; stderr %s", code, out, w.stderr.String())
	}
	lateText(t, w.stderr.String(), callID)
	if strings.HasPrefix(w.stderr.String(), "askslack:") {
		t.Fatalf("the model reads the answer, not an error line: %s", w.stderr.String())
	}
	delivered(t, ctx, e.fake, m)
	s.noLate()
}

// The model ended its turn before the PermissionRequest hook had read the
// question timeout in the transcript (a loaded machine; seen in CI): the
// waiter started by that Stop finds no call in the book yet, but the
// question is still being asked in the session, so it waits for it instead
// of leaving — and wakes the session with the answer.
func lateWakeBeforeBooked(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	in := s.input(hook.EventPermissionRequest, map[string]any{"tool_name": "AskUserQuestion",
		"tool_input": map[string]any{"questions": json.RawMessage(auqQuestions)}})
	result := transcriptWith(t, in, noResponse)
	h := startHookEnv(t, s.env, e.url, in, "claude")
	m := posted(t, ctx, e.fake)
	w := startHookEnv(t, s.env, e.url, s.input(hook.EventStop, nil), "claude", "--wake")
	result()
	h.silent(t)
	waitMessage(t, ctx, e.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "moved on")
	})
	answerLate(t, ctx, e.fake, m, "PostgreSQL")
	out, code := w.wait(t)
	if code != 2 || out != "" {
		t.Fatalf("waiter: exit %d, stdout %q; want 2 and nothing; stderr %s", code, out, w.stderr.String())
	}
	lateText(t, w.stderr.String(), callIDOf(t, m))
}

// The MCP tool returned pending: its PostToolUse puts the call in the
// session's book, and the answer given later comes in on the next prompt.
func lateMCPAdopted(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	callID := "mcp-" + safe(t)
	req := oneQuestion(callID, "PostgreSQL", "SQLite")
	req.Questions[0].Question = "Which database?"
	req.Agent = waterfall.Agent{ID: "claude-code", SessionID: "mcp-session-" + safe(t)}
	ms := float64(1000)
	req.TimeoutMs = &ms
	res, err := e.b.client().Ask(ctx, req)
	if err != nil || !res.Pending {
		t.Fatalf("the MCP ask: %+v %v", res, err)
	}
	m := waitPosted(t, ctx, e.fake, callID)
	// As Claude Code hands an MCP result to PostToolUse: content blocks,
	// the structured result as JSON text.
	resp := []any{map[string]any{"type": "text", "text": mustJSON(map[string]any{"callId": callID, "pending": true})}}
	if out, _, code := s.run(hook.EventPostToolUse, map[string]any{"tool_name": "mcp__askslack__ask_user_question",
		"tool_input": map[string]any{}, "tool_response": resp}); out != "" || code != 0 {
		t.Fatalf("PostToolUse of the pending tool: exit %d %q", code, out)
	}
	answerLate(t, ctx, e.fake, m, "PostgreSQL")
	out, _, code := s.run(hook.EventUserPromptSubmit, map[string]any{"prompt": "anything new?"})
	var o struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string } `json:"hookSpecificOutput"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &o) != nil || o.HookSpecificOutput.HookEventName != "UserPromptSubmit" {
		t.Fatalf("UserPromptSubmit: exit %d %q", code, out)
	}
	lateText(t, o.HookSpecificOutput.AdditionalContext, callID)
	delivered(t, ctx, e.fake, m)
}

// A session receives only the calls its own hooks saw it go on without:
// another session gets nothing, and an ask some other program made under
// this session's id (same token) is never injected.
func lateOnlyOwnCalls(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	other := newLateSession(t, e)
	other.id = s.id + "-other"
	m, _ := s.wentOn(ctx)

	callID := "planted-" + safe(t)
	req := oneQuestion(callID, "Yes", "No")
	sin, _ := hook.Parse([]byte(mustJSON(s.input(hook.EventStop, nil))))
	req.Agent = waterfall.Agent{ID: "claude-code", SessionID: hook.AgentSession(hook.Claude, sin)}
	ms := float64(1000)
	req.TimeoutMs = &ms
	if res, err := e.b.client().Ask(ctx, req); err != nil || !res.Pending {
		t.Fatalf("the planted ask: %+v %v", res, err)
	}
	pm := waitPosted(t, ctx, e.fake, callID)
	answerLate(t, ctx, e.fake, pm, "Yes")
	answerLate(t, ctx, e.fake, m, "PostgreSQL")

	other.noLate()
	out, code := s.postToolUse()
	if code != 0 || !strings.Contains(out, "PostgreSQL") || strings.Contains(out, callID) {
		t.Fatalf("the session got %q (exit %d): want its own answer and not the planted one", out, code)
	}
	if st, err := e.b.client().Get(ctx, callID, 0); err != nil || st.State != "continued" || st.Reply == nil {
		t.Fatalf("the planted answer must stay queued for whoever made the ask: %+v %v", st, err)
	}
}

// The person at the terminal answered: the question is withdrawn as
// answered there, and nothing is ever injected.
func lateTerminalFirst(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	in := s.input(hook.EventPermissionRequest, map[string]any{"tool_name": "AskUserQuestion",
		"tool_input": map[string]any{"questions": json.RawMessage(auqQuestions)}})
	result := transcriptWith(t, in, `User has answered your questions: "Which database?"="SQLite".`)
	h := startHookEnv(t, s.env, e.url, in, "claude")
	m := posted(t, ctx, e.fake)
	result()
	h.silent(t)
	waitMessage(t, ctx, e.fake, m.Channel, m.TS, "answered in the terminal", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "Answered in the terminal")
	})
	s.noLate()
	if _, err := os.Stat(filepath.Join(s.cache, "askslack", "late")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(s.cache, "askslack", "late"))
		for _, en := range entries {
			if b, _ := os.ReadFile(filepath.Join(s.cache, "askslack", "late", en.Name())); len(strings.TrimSpace(string(b))) > 0 {
				t.Fatalf("a call answered in the terminal went into the book: %s", b)
			}
		}
	}
}

// A permission prompt for askslack's own MCP tools is allowed at once
// (both agents): asking a person gates nothing, and a person approving the
// question before seeing it helps no one. Any other MCP tool still asks.
func lateOwnToolsGranted(t *testing.T, e lateEnv) {
	for _, agent := range []string{"claude", "codex"} {
		in := map[string]any{"session_id": "s-" + safe(t), "cwd": "/home/u/" + dirOf(t), "hook_event_name": "PermissionRequest",
			"tool_name": "mcp__askslack__ask_user_question", "tool_input": map[string]any{"questions": []any{}}}
		startHook(t, e.url, in, agent).decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)
	}
	ctx := testCtx(t)
	in := map[string]any{"session_id": "s-" + safe(t), "cwd": "/home/u/" + dirOf(t), "hook_event_name": "PermissionRequest",
		"tool_name": "mcp__other__ask_user_question", "tool_input": map[string]any{"x": 1}}
	h := startHook(t, e.url, in, "codex")
	m := posted(t, ctx, e.fake)
	click(t, ctx, e.fake, m, "Deny")
	out, _ := h.wait(t)
	mustContain(t, "decision", out, `"behavior":"deny"`)
}

// No --wait (the printed settings): a permission is asked with no deadline
// and stays answerable for as long as Claude Code's dialog is up; a signal
// from the agent (its own hook timeout) withdraws it, so the question never
// claims an agent that is gone still waits.
func latePermissionFollows(t *testing.T, e lateEnv) {
	ctx := testCtx(t)
	in := hookInput(t, "claude_permission_bash.json")
	h := startHook(t, e.url, in, "claude")
	m := posted(t, ctx, e.fake)
	callID := callIDOf(t, m)
	st, err := e.b.client().Get(ctx, callID, 0)
	if err != nil || st.Deadline != nil || st.State != "open" {
		t.Fatalf("a followed permission: %+v %v; want open with no deadline", st, err)
	}
	if strings.Contains(string(m.Blocks), "waits until") {
		t.Fatalf("the message names a deadline the agent does not have: %s", m.Blocks)
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	h.silent(t)
	waitMessage(t, ctx, e.fake, m.Channel, m.TS, "withdrawn", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "withdrew")
	})
}

// AskUserQuestion with the printed settings (no --wait) is timed as Claude
// Code's own question waits: its question timeout (askUserQuestionTimeout,
// or CLAUDE_AFK_TIMEOUT_MS) when one is set, so the message counts down to
// when the agent goes on; none when it is unset or "never" (Claude Code's
// default: the terminal waits), so no countdown at all — not the day the
// hook could wait.
func lateQuestionCountdown(t *testing.T, e lateEnv) {
	for _, c := range []struct {
		name     string
		env      []string
		deadline time.Duration // 0: none
		shows    string
	}{
		{"Unset", []string{"CLAUDE_PROJECT_DIR=" + claudeProject(t, `{}`)}, 0, ""},
		{"Never", []string{"CLAUDE_PROJECT_DIR=" + claudeProject(t, `{"askUserQuestionTimeout":"never"}`)}, 0, ""},
		{"FiveMinutes", []string{"CLAUDE_PROJECT_DIR=" + claudeProject(t, `{"askUserQuestionTimeout":"5m"}`)}, 5 * time.Minute, "about 5 minutes left"},
		{"Variable", []string{"CLAUDE_PROJECT_DIR=" + claudeProject(t, `{"askUserQuestionTimeout":"5m"}`), "CLAUDE_AFK_TIMEOUT_MS=600000"}, 10 * time.Minute, "about 10 minutes left"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := newLateSession(t, e)
			s.env = append(s.env, c.env...)
			in := s.input(hook.EventPermissionRequest, map[string]any{"tool_name": "AskUserQuestion",
				"tool_input": map[string]any{"questions": json.RawMessage(auqQuestions)}, "tool_use_id": "toolu_" + safe(t)})
			transcriptWith(t, in, noResponse)
			asked := time.Now()
			h := startHookEnv(t, s.env, e.url, in, "claude")
			m := posted(t, ctx, e.fake)
			st, err := e.b.client().Get(ctx, callIDOf(t, m), 0)
			if err != nil || st.State != "open" {
				t.Fatalf("the question: %+v %v", st, err)
			}
			switch {
			case c.deadline == 0 && (st.Deadline != nil || strings.Contains(string(m.Blocks), "waits until")):
				t.Fatalf("Claude Code's question does not time out, yet the question has a deadline: %v\n%s", st.Deadline, m.Blocks)
			case c.deadline > 0 && st.Deadline == nil:
				t.Fatalf("no deadline; want Claude Code's %s", c.deadline)
			case c.deadline > 0:
				// The window is the agent's, a few seconds' grace after it.
				if d := st.Deadline.Sub(asked); d < c.deadline || d > c.deadline+time.Minute {
					t.Fatalf("deadline %s after the question; want Claude Code's %s and a few seconds", d, c.deadline)
				}
				mustContain(t, "message", string(m.Blocks), "The agent waits until", c.shows)
			}
			_ = h.cmd.Process.Signal(syscall.SIGTERM)
			h.silent(t)
		})
	}
}
