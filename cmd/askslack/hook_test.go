package main

// End-to-end tests of `askslack hook claude|codex`: the real binary reads a
// recorded hook input on stdin, asks the real bot, a person answers in the
// fake Slack, and the hook's stdout must be exactly the agent's documented
// decision JSON (compared parsed).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/internal/slackfake"
)

// hookInput loads a recorded hook input and gives it this test's own
// working directory (its base name finds the message) and tool_use_id (a
// callId of its own).
func hookInput(t *testing.T, fixture string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("internal", "hook", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	in["cwd"] = "/home/u/" + dirOf(t)
	if _, ok := in["tool_use_id"]; ok {
		in["tool_use_id"] = "toolu_" + safe(t)
	}
	return in
}

// dirOf is the test's working directory base name: no test's is a prefix
// of another's.
func dirOf(t *testing.T) string { return safe(t) + "-dir" }

// hookCallID is the callId the hook derives from in.
func hookCallID(t *testing.T, agent hook.Agent, in map[string]any) string {
	t.Helper()
	p, err := hook.Parse([]byte(mustJSON(in)))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := hook.CallID(agent, p)
	return id
}

// hookProc is one run of the hook command.
type hookProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
	took           time.Duration
}

func startHook(t *testing.T, url string, in any, args ...string) *hookProc {
	t.Helper()
	return startHookEnv(t, nil, url, in, args...)
}

// startHookEnv is startHook with more environment variables.
func startHookEnv(t *testing.T, env []string, url string, in any, args ...string) *hookProc {
	t.Helper()
	h := &hookProc{done: make(chan struct{})}
	h.cmd = exec.Command(binPath, append([]string{"hook"}, args...)...)
	h.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "ASKSLACK_URL=" + url}, env...)
	raw, ok := in.(string)
	if !ok {
		raw = mustJSON(in)
	}
	h.cmd.Stdin = strings.NewReader(raw)
	h.cmd.Stdout, h.cmd.Stderr = &h.stdout, &h.stderr
	start := time.Now()
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.err = h.cmd.Wait(); h.took = time.Since(start); close(h.done) }()
	t.Cleanup(func() { _ = h.cmd.Process.Kill(); <-h.done })
	return h
}

// wait returns the hook's stdout and exit status.
func (h *hookProc) wait(t *testing.T) (string, int) {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the hook did not exit within 60s; stderr: %s", h.stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(h.err, &ee) {
		code = ee.ExitCode()
	} else if h.err != nil {
		t.Fatal(h.err)
	}
	return h.stdout.String(), code
}

// decided waits for a successful exit and compares stdout with want.
func (h *hookProc) decided(t *testing.T, want string) {
	t.Helper()
	out, code := h.wait(t)
	if code != 0 {
		t.Fatalf("hook exited %d; stderr: %s", code, h.stderr.String())
	}
	var got, w any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not one JSON value: %v\n%q", err, out)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("stdout\n got %s\nwant %s", out, want)
	}
}

// silent waits for exit status 0 with nothing on stdout.
func (h *hookProc) silent(t *testing.T) {
	t.Helper()
	out, code := h.wait(t)
	if code != 0 || out != "" {
		t.Fatalf("want exit 0 and no stdout, got %d %q; stderr: %s", code, out, h.stderr.String())
	}
}

// posted waits for the hook's question, found by the test's cwd base name.
func posted(t *testing.T, ctx context.Context, f *slackfake.Server) slackfake.Message {
	t.Helper()
	m, err := f.WaitMessage(ctx, func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), dirOf(t)) && hasControls(m)
	})
	if err != nil {
		t.Fatalf("the hook's question never posted: %v", err)
	}
	return m
}

func click(t *testing.T, ctx context.Context, f *slackfake.Server, m slackfake.Message, label string) {
	t.Helper()
	if _, err := f.ClickButton(ctx, alice, m.Channel, m.TS, label, slackfake.Delivery{}); err != nil {
		t.Fatalf("clicking %q: %v", label, err)
	}
}

// typeOther opens the question's "Other…" (or feedback) modal and submits text.
func typeOther(t *testing.T, ctx context.Context, f *slackfake.Server, m slackfake.Message, button, callID, text string) {
	t.Helper()
	click(t, ctx, f, m, button)
	view := waitView(t, ctx, f, alice.ID, callID)
	if _, err := f.SubmitView(ctx, alice, view.ID, map[string][]string{blocks.TextBlockID(callID, 0): {text}}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}

// callIDOf reads the callId out of a question message's block ids.
func callIDOf(t *testing.T, m slackfake.Message) string {
	t.Helper()
	s := string(m.Blocks)
	i := strings.Index(s, `"ask/`)
	if i < 0 {
		t.Fatalf("no ask block id in %s", s)
	}
	rest := s[i+5:]
	return rest[:strings.IndexByte(rest, '/')]
}

const auqQuestions = `[{"question":"Which database?","header":"DB","multiSelect":false,
  "options":[{"label":"PostgreSQL","description":"Relational"},{"label":"SQLite","description":"Embedded"}]}]`

// hookEnv is the bot the hook cases share.
type hookEnv struct {
	url  string
	fake *slackfake.Server
}

func TestE2EHook(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	e := hookEnv{url: "http://" + b.addr, fake: d.fake}
	for _, c := range []struct {
		name string
		run  func(*testing.T, hookEnv)
	}{
		{"AskUserQuestion", hookAskUserQuestion},
		{"AskUserQuestionOther", hookAskUserQuestionOther},
		{"AskUserQuestionBatch", hookAskUserQuestionBatch},
		{"PlanApprove", hookPlanApprove},
		{"PlanDeclineWithFeedback", hookPlanDeclineWithFeedback},
		{"BashAlwaysAllow", hookBashAlwaysAllow},
		{"EditDenyWithReason", hookEditDenyWithReason},
		{"BashEditAndAllow", hookBashEditAndAllow},
		{"CodexAllow", hookCodexAllow},
		{"CodexDeny", hookCodexDeny},
		{"Notification", hookNotification},
		{"NotificationWhileAsked", hookNotificationWhileAsked},
		{"WaitEndsWithdraws", hookWaitEndsWithdraws},
		{"LiveBotIsNotSilent", hookLiveBotIsNotSilent},
		{"SignalWithdraws", hookSignalWithdraws},
		{"AnsweredInTerminal", hookAnsweredInTerminal},
		{"SkipAskUserQuestionPreToolUse", hookSkipAskUserQuestionPreToolUse},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, e)
		})
	}
}

// auqPermission is AskUserQuestion as Claude Code 2.1.332 hands it to a
// PermissionRequest hook (no tool_use_id).
func auqPermission(t *testing.T, fixture string) map[string]any {
	in := hookInput(t, fixture)
	in["hook_event_name"] = "PermissionRequest"
	delete(in, "tool_use_id")
	return in
}

func hookAskUserQuestion(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	in := auqPermission(t, "claude_pretooluse_auq.json")
	h := startHook(t, url, in, "claude")
	m := posted(t, ctx, f)
	// Who asks: the agent, the working directory, the session.
	mustContain(t, "message", string(m.Blocks), "claude-code", dirOf(t)+" · abc123", "Which database?", "PostgreSQL", "Relational")
	mustContain(t, "notification text", m.Text, "claude-code asks: Which database?")
	click(t, ctx, f, m, "PostgreSQL")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
	  "updatedInput":{"questions":`+auqQuestions+`,"answers":{"Which database?":"PostgreSQL"}}}}}`)
	waitMessage(t, ctx, f, m.Channel, m.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })
}

func hookAskUserQuestionOther(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	in := auqPermission(t, "claude_pretooluse_auq.json")
	h := startHook(t, url, in, "claude")
	m := posted(t, ctx, f)
	typeOther(t, ctx, f, m, "Other…", callIDOf(t, m), "DuckDB, embedded analytics")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
	  "updatedInput":{"questions":`+auqQuestions+`,"answers":{"Which database?":"DuckDB, embedded analytics"}}}}}`)
}

func hookAskUserQuestionBatch(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	in := auqPermission(t, "claude_pretooluse_auq_multi.json")
	h := startHook(t, url, in, "claude")
	m := posted(t, ctx, f)
	mustContain(t, "message", string(m.Blocks), "Which features", "Which layout", "Preview", dirOf(t)+" · 5f0e2c1a")
	if _, err := f.Select(ctx, bob, m.Channel, m.TS, "askslack.check", []string{"Search", "Reviews"}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Select(ctx, bob, m.Channel, m.TS, "askslack.select", []string{"Gallery top"}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ClickButtonByAction(ctx, bob, m.Channel, m.TS, "askslack.submit", "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	questions, _ := json.Marshal(in["tool_input"].(map[string]any)["questions"])
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
	  "updatedInput":{"questions":`+string(questions)+`,"answers":{
	    "Which features should the first release include?":"Search, Reviews",
	    "Which layout for the product page?":"Gallery top"}}}}}`)
}

func hookPlanApprove(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "claude_permission_exitplanmode.json"), "claude")
	m := posted(t, ctx, f)
	mustContain(t, "message", string(m.Blocks), "Plan review from", "Refactor auth", "Extract", "Decline with feedback…")
	click(t, ctx, f, m, "Approve")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
	  "updatedInput":{"plan":"## Refactor auth\n1. Extract ...","planFilePath":"/home/u/.claude/plans/refactor-auth.md"}}}}`)
}

func hookPlanDeclineWithFeedback(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "claude_permission_exitplanmode.json"), "claude")
	m := posted(t, ctx, f)
	typeOther(t, ctx, f, m, "Decline with feedback…", callIDOf(t, m), "Keep the v1 API; split step 3.")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Keep the v1 API; split step 3."}}}`)
}

func hookBashAlwaysAllow(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "claude_permission_bash.json"), "claude")
	m := posted(t, ctx, f)
	mustContain(t, "message", string(m.Blocks), "claude-code wants to use Bash in "+dirOf(t),
		"```\\nnpm test -- --watch=false\\n```", "Run the test suite", "Allow", "Always allow", "Deny", "Allow, add rule", "Bash(npm test:*)", "Other…")
	click(t, ctx, f, m, "Always allow")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
	  "updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test -- --watch=false"}],"behavior":"allow","destination":"localSettings"}]}}}`)
}

func hookEditDenyWithReason(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "claude_permission_edit.json"), "claude")
	m := posted(t, ctx, f)
	mustContain(t, "message", string(m.Blocks), "/home/u/p/src/auth.go", "- func login() {", "+ func login(ctx context.Context) error {")
	if strings.Contains(string(m.Blocks), `"Always allow"`) { // Claude's own rule names one command; an edit has none
		t.Fatal("Always allow offered for an edit")
	}
	typeOther(t, ctx, f, m, "Other…", callIDOf(t, m), "Keep login's signature; callers depend on it.")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Keep login's signature; callers depend on it."}}}`)
}

// hookBashEditAndAllow: alice narrows the command in the Edit & allow form;
// Claude gets the whole input back with the command she wrote, and the
// message says she allowed it with changes and shows what changed.
func hookBashEditAndAllow(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "claude_permission_bash.json"), "claude")
	m := posted(t, ctx, f)
	callID := callIDOf(t, m)
	click(t, ctx, f, m, "Edit & allow…")
	view := waitView(t, ctx, f, alice.ID, blocks.CallbackEdit)
	mustContain(t, "the form", string(view.JSON), `"initial_value":"npm test -- --watch=false"`)
	if _, err := f.SubmitView(ctx, alice, view.ID, map[string][]string{blocks.EditBlockID(callID, "command"): {"npm test -- --watch=false --bail"}}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
	  "updatedInput":{"command":"npm test -- --watch=false --bail","description":"Run the test suite"},
	  "message":"Allowed with changes in Slack by alice."}}}`)
	done := waitMessage(t, ctx, f, m.Channel, m.TS, "allowed with changes", func(m slackfake.Message) bool { return !hasControls(m) })
	mustContain(t, "the answered message", string(done.Blocks), "Allowed with changes by <@"+alice.ID+">",
		"- npm test -- --watch=false\\n+ npm test -- --watch=false --bail")
}

func hookCodexAllow(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "codex_permission.json"), "codex")
	m := posted(t, ctx, f)
	mustContain(t, "message", string(m.Blocks), "codex", "rm -rf build &amp;&amp; make release", "Rebuild the release artefacts", dirOf(t)+" · 019a3c5e")
	if strings.Contains(string(m.Blocks), "Edit & allow") {
		// Codex fails closed on updatedInput: its asks never offer an edit.
		t.Errorf("a Codex ask offers Edit & allow: %s", m.Blocks)
	}
	click(t, ctx, f, m, "Allow")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)
}

func hookCodexDeny(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "codex_permission.json"), "codex")
	m := posted(t, ctx, f)
	click(t, ctx, f, m, "Deny")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Slack by alice."}}}`)
}

func hookNotification(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	in := hookInput(t, "claude_notification.json")
	in["session_id"] = "notice-" + safe(t) // no other case's question is open in it
	h := startHook(t, url, in, "claude")
	h.silent(t)
	m, err := f.WaitMessage(ctx, func(m slackfake.Message) bool { return strings.Contains(string(m.Blocks), dirOf(t)) })
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "notice", string(m.Blocks), "FYI from", "claude-code", "Permission needed: Claude needs your permission to use Bash")
	if hasControls(m) {
		t.Fatalf("the notice has controls: %s", m.Blocks)
	}
}

// Claude Code sends permission_prompt at the moment its PermissionRequest
// hook asks in Slack: while the session's question is open there, a notice
// would only repeat it.
func hookNotificationWhileAsked(t *testing.T, e hookEnv) {
	ctx := testCtx(t)
	session := "asked-" + safe(t)
	ask := hookInput(t, "claude_permission_bash.json")
	ask["session_id"] = session
	h := startHook(t, e.url, ask, "claude")
	m := posted(t, ctx, e.fake)
	note := hookInput(t, "claude_notification.json")
	note["session_id"] = session
	startHook(t, e.url, note, "claude").silent(t)
	for _, msg := range e.fake.Messages() {
		if strings.Contains(string(msg.Blocks), "FYI from") && strings.Contains(string(msg.Blocks), dirOf(t)) {
			t.Fatalf("a notice repeated the open question: %s", msg.Blocks)
		}
	}
	click(t, ctx, e.fake, m, "Allow")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)
}

func hookWaitEndsWithdraws(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, hookInput(t, "claude_permission_bash.json"), "claude", "--wait", "2s")
	m := posted(t, ctx, f)
	// The message says what happens when the window ends: the hook
	// withdraws the question and the agent asks in its terminal; no late
	// answer reaches it.
	mustContain(t, "message", string(m.Blocks), "The agent waits until", "then asks in its terminal")
	if strings.Contains(string(m.Blocks), "new message") {
		t.Fatalf("the message promises late answers the hook will never read: %s", m.Blocks)
	}
	h.silent(t)
	waitMessage(t, ctx, f, m.Channel, m.TS, "withdrawn", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "withdrew")
	})
}

// A bot that is alive keeps answering the hook's long polls: a wait twice
// as long as the silence the hook allows ends like any unanswered wait.
func hookLiveBotIsNotSilent(t *testing.T, e hookEnv) {
	ctx := testCtx(t)
	h := startHookEnv(t, []string{"ASKSLACK_HOOK_SILENCE=4s"}, e.url, hookInput(t, "claude_permission_bash.json"), "claude", "--wait", "8s")
	m := posted(t, ctx, e.fake)
	h.silent(t)
	waitMessage(t, ctx, e.fake, m.Channel, m.TS, "withdrawn", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "withdrew")
	})
}

func hookSignalWithdraws(t *testing.T, e hookEnv) {
	url, f := e.url, e.fake
	ctx := testCtx(t)
	h := startHook(t, url, auqPermission(t, "claude_pretooluse_auq.json"), "claude")
	m := posted(t, ctx, f)
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	h.silent(t)
	waitMessage(t, ctx, f, m.Channel, m.TS, "withdrawn", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "withdrew")
	})
}

// transcriptFor writes a session transcript holding the assistant's call of
// in's tool with in's input (as Claude Code writes it before asking), names
// it in in, and returns a function that appends the call's result (what
// Claude Code writes when its own dialog was answered).
func transcriptFor(t *testing.T, in map[string]any) (result func()) {
	t.Helper()
	in["transcript_path"] = filepath.Join(t.TempDir(), "session.jsonl")
	return transcriptWith(t, in, "ok")
}

// The person at the terminal answers Claude's own dialog first: the hook
// reads the call's result in the transcript, withdraws its question as
// answered in the terminal and exits printing nothing — whether the agent
// leaves the hook running (Claude Code 2.1.332) or stops it.
func hookAnsweredInTerminal(t *testing.T, e hookEnv) {
	for _, stopped := range []bool{false, true} {
		t.Run(map[bool]string{false: "LeftRunning", true: "Stopped"}[stopped], func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			in := hookInput(t, "claude_permission_bash.json")
			result := transcriptFor(t, in)
			h := startHook(t, e.url, in, "claude")
			m := posted(t, ctx, e.fake)
			if stopped {
				_ = h.cmd.Process.Signal(syscall.SIGTERM)
				time.Sleep(200 * time.Millisecond) // the agent writes the result just after stopping the hook
			}
			result()
			h.silent(t)
			waitMessage(t, ctx, e.fake, m.Channel, m.TS, "answered in the terminal", func(m slackfake.Message) bool {
				return !hasControls(m) && strings.Contains(string(m.Blocks), "Answered in the terminal")
			})
		})
	}
}

// PreToolUse on AskUserQuestion (settings printed before 2.1.332 was
// tried) asks nothing without --defer: the PermissionRequest hook does,
// beside the terminal; with --defer the PermissionRequest hook stays out.
func hookSkipAskUserQuestionPreToolUse(t *testing.T, e hookEnv) {
	startHook(t, e.url, hookInput(t, "claude_pretooluse_auq.json"), "claude").silent(t)
	startHook(t, e.url, auqPermission(t, "claude_pretooluse_auq.json"), "claude", "--defer").silent(t)
}

// --defer (claude -p): the wait ends, the defer decision is printed and the
// question stays open; a late answer in Slack is returned by the next run
// with the same input at once, without a second post.
func TestE2EHookDefer(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	url := "http://" + b.addr
	in := hookInput(t, "claude_pretooluse_auq.json")
	id := hookCallID(t, hook.Claude, in)

	first := startHook(t, url, in, "claude", "--defer", "--wait", "2s")
	m := posted(t, ctx, d.fake)
	mustContain(t, "message", string(m.Blocks), "after that, answers still reach it") // --defer leaves it open
	first.decided(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`)
	late := waitMessage(t, ctx, d.fake, m.Channel, m.TS, "continued", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "still delivered")
	})
	click(t, ctx, d.fake, late, "SQLite")
	if err := d.fake.WaitUntil(ctx, func() bool {
		st, err := b.client().Get(ctx, id, 0)
		return err == nil && st.Reply != nil
	}); err != nil {
		t.Fatal("the late answer was never queued")
	}
	posts := len(d.fake.Calls("chat.postMessage"))
	// A wait far longer than the hook is given to exit (60 s): the rerun
	// must return the late answer without waiting at all, whatever the
	// machine's load.
	second := startHook(t, url, in, "claude", "--defer", "--wait", "10m")
	second.decided(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
	  "updatedInput":{"questions":`+auqQuestions+`,"answers":{"Which database?":"SQLite"}}}}`)
	if n := len(d.fake.Calls("chat.postMessage")); n != posts {
		t.Fatalf("the rerun posted again (%d → %d posts)", posts, n)
	}
	if st, err := b.client().Get(ctx, id, 0); err != nil || st.State != "settled" {
		t.Fatalf("the admitted late answer did not settle the question: %+v %v", st, err)
	}
	// A third run (say the session is resumed twice) still gets the answer.
	startHook(t, url, in, "claude", "--defer", "--wait", "2s").decided(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
	  "updatedInput":{"questions":`+auqQuestions+`,"answers":{"Which database?":"SQLite"}}}}`)
}

// Errors never block the agent: a one-line reason on stderr, nothing on
// stdout, exit status 1, within 5 s.
func TestE2EHookErrors(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	d.env["ASKSLACK_API_TOKENS"] = "right-token-right-token"
	b := d.start(viaHTTP)
	url := "http://" + b.addr
	auq := auqPermission(t, "claude_pretooluse_auq.json")
	cases := []struct {
		name  string
		url   string
		in    any
		args  []string
		cause string
	}{
		{"BadStdin", url, "{not json", []string{"claude", "--token", "right-token-right-token"}, "not a JSON object"},
		{"UnknownEvent", url, `{"hook_event_name":"SessionStart","session_id":"s"}`, []string{"claude", "--token", "right-token-right-token"}, `"SessionStart" is not handled`},
		{"CodexNotification", url, `{"hook_event_name":"Notification","session_id":"s"}`, []string{"codex", "--token", "right-token-right-token"}, "not handled"},
		{"Unreachable", "http://" + freeAddr(t), auq, []string{"claude"}, "unreachable"},
		{"RefusedToken", url, auq, []string{"claude", "--token", "wrong-token"}, "UNAUTHORIZED"},
		{"NoAgent", url, auq, []string{"gemini"}, "askslack hook claude|codex"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := startHook(t, c.url, c.in, c.args...)
			out, code := h.wait(t)
			stderr := strings.TrimSpace(h.stderr.String())
			if code != 1 || out != "" || strings.Contains(stderr, "\n") || !strings.Contains(stderr, c.cause) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing, one line with %q", code, out, stderr, c.cause)
			}
			if h.took > 5*time.Second {
				t.Fatalf("took %s, want under 5s", h.took)
			}
		})
	}
}

// An error from the host API is one stderr line with the program's name
// once: the edge (main) says "askslack:", nothing below it does.
func TestE2EHookErrorLine(t *testing.T) {
	t.Parallel()
	auq := auqPermission(t, "claude_pretooluse_auq.json")
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"NotTheBot", http.NotFound, "askslack: POST /v1/asks: HTTP 404: 404 page not found"},
		{"NotJSON", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>hello</html>") },
			"askslack: POST /v1/asks: decoding response: invalid character '<' looking for beginning of value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			t.Cleanup(srv.Close)
			h := startHook(t, srv.URL, auq, "claude")
			out, code := h.wait(t)
			if got := h.stderr.String(); code != 1 || out != "" || got != c.want+"\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, out, got, c.want+"\n")
			}
		})
	}
}

// The printed snippet runs every hook with the flags it was printed with:
// each command, run by a shell as the agent runs it, hands askslack exactly
// those flags — Notification's too, and values a shell would split or
// expand. The token is a secret and is never written into it.
func TestHookPrintSettingsCarriesFlags(t *testing.T) {
	t.Parallel()
	stub := t.TempDir()
	if err := os.WriteFile(filepath.Join(stub, "askslack"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	url := "http://bot.example:8080/askslack?x=1&y='$HOME' `id`"
	for _, c := range []struct {
		agent, print string
		events       []string
	}{
		{"claude", "--print-settings", []string{"PreToolUse", "PermissionRequest", "Notification"}},
		{"codex", "--print-config", []string{"PermissionRequest"}},
	} {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(binPath, "hook", c.agent, c.print, "--channel", "C0HOOKS", "--wait", "30m", "--defer",
				"--url", url, "--token", "s3cret")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			if strings.Contains(string(out), "s3cret") || !strings.Contains(stderr.String(), "ASKSLACK_TOKEN") {
				t.Fatalf("the token was written into the snippet, or stderr does not say it was left out:\n%s\nstderr: %s", out, stderr.String())
			}
			var snippet struct {
				Hooks map[string][]struct {
					Hooks []struct {
						Command string `json:"command"`
					} `json:"hooks"`
				} `json:"hooks"`
			}
			if err := json.Unmarshal(out, &snippet); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := []string{"hook", c.agent, "--channel", "C0HOOKS", "--defer", "--url", url, "--wait", "30m0s"}
			for _, ev := range c.events {
				if len(snippet.Hooks[ev]) == 0 {
					t.Fatalf("no %s hook in\n%s", ev, out)
				}
				for _, g := range snippet.Hooks[ev] {
					for _, h := range g.Hooks {
						sh := exec.Command("/bin/sh", "-c", h.Command)
						sh.Env = []string{"PATH=" + stub, "HOME=/nonexistent"}
						got, err := sh.Output()
						if err != nil {
							t.Fatalf("%s: running %q: %v", ev, h.Command, err)
						}
						if args := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n"); !slices.Equal(args, want) {
							t.Errorf("%s: %q runs askslack with\n %q\nwant\n %q", ev, h.Command, args, want)
						}
					}
				}
			}
		})
	}
}

// The same tool call asked again with another --wait (a headless run with
// --defer killed and re-run after its settings changed) re-attaches to the
// question it posted: the wait is not part of what it asks. A longer wait
// is answered as usual; a shorter one ends this run's wait when its own
// window does (the stored deadline is later) and defers, leaving the
// question open.
func TestE2EHookRerunWithAnotherWait(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	d.env["ASKSLACK_REATTACH_GRACE"] = "10m" // the killed run's question waits for the re-run however slow the machine
	b := d.start(viaHTTP)
	url := "http://" + b.addr
	rerun := func(t *testing.T, ctx context.Context, firstWait, secondWait string) (*hookProc, slackfake.Message) {
		t.Helper()
		in := hookInput(t, "claude_pretooluse_auq.json")
		first := startHook(t, url, in, "claude", "--defer", "--wait", firstWait)
		m := posted(t, ctx, d.fake)
		_ = first.cmd.Process.Kill()
		<-first.done
		second := startHook(t, url, in, "claude", "--defer", "--wait", secondWait)
		t.Cleanup(func() {
			if n := hookPosts(t, d.fake); n != 1 {
				t.Errorf("the question was posted %d times", n)
			}
		})
		return second, m
	}
	t.Run("Longer", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		h, m := rerun(t, ctx, "5m", "10m")
		click(t, ctx, d.fake, m, "PostgreSQL") // before or after the re-run re-attached: either way it gets the answer
		h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
		  "updatedInput":{"questions":`+auqQuestions+`,"answers":{"Which database?":"PostgreSQL"}}}}`)
	})
	t.Run("Shorter", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		h, m := rerun(t, ctx, "10m", "1s")
		h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`)
		if cur, _ := d.fake.Message(m.Channel, m.TS); !hasControls(cur) {
			t.Fatalf("--defer withdrew the question: %s", cur.Blocks)
		}
	})
}

// hookPosts counts the messages posted for this test's hook questions.
func hookPosts(t *testing.T, f *slackfake.Server) int {
	n := 0
	for _, c := range f.Calls("chat.postMessage") {
		if strings.Contains(string(c.Body)+c.Params["blocks"], dirOf(t)) {
			n++
		}
	}
	return n
}

// A bot that accepts connections and never answers (hung, or a proxy holding
// the connection) must not hold the agent's own prompt for the whole wait:
// the hook notices the silence and gives up like any other error — exit 1,
// nothing on stdout, one line on stderr. The silence allowed is made small
// here (ASKSLACK_HOOK_SILENCE, a test knob); the wait is left at 10m.
func TestE2EHookSilentBot(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn // accepted, read from never, answered never
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	url := "http://" + ln.Addr().String()
	for _, c := range []struct {
		name, fixture string
		args          []string
	}{
		{"Ask", "claude_permission_bash.json", []string{"claude"}},
		{"Defer", "claude_pretooluse_auq.json", []string{"claude", "--defer"}},
		{"Codex", "codex_permission.json", []string{"codex"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := startHookEnv(t, []string{"ASKSLACK_HOOK_SILENCE=1s"}, url, hookInput(t, c.fixture), c.args...)
			out, code := h.wait(t)
			stderr := h.stderr.String()
			want := "askslack: the askslack bot at " + url + " stopped answering: no reply for 1s\n"
			if code != 1 || out != "" || stderr != want {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, out, stderr, want)
			}
		})
	}
}
