package main

// Real agents: the released Claude Code and Codex CLIs from the npm
// registry (internal/kit/realagent), driven by a scripted model API
// (internal/kit/modelapi), with askslack's hooks installed exactly as
// `askslack hook … --print-settings|--print-config` prints them, against
// the real binary and the project's fake Slack. A test reads what the
// agent handed back to the model (the tool result) and what the terminal
// shows. Run only these with `go test ./cmd/askslack -run RealAgent`;
// ASKSLACK_CLAUDE_CODE_VERSION / ASKSLACK_CODEX_VERSION name other
// releases.

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/kit/modelapi"
	"github.com/askslack/askslack/internal/kit/realagent"
	"github.com/askslack/askslack/internal/slackfake"
)

// realAgentToken is the agent caller's token the hooks use.
const realAgentToken = "realagent-token-0123456789abcdef"

// realEnv is a bot and what an agent needs to reach it through its hooks.
type realEnv struct {
	d   *deployment
	b   *bot
	url string
}

func newRealEnv(t *testing.T, env map[string]string) *realEnv {
	t.Helper()
	d := newDeployment(t, false)
	d.env["ASKSLACK_API_TOKENS"] = "agents:" + realAgentToken
	for k, v := range env {
		d.env[k] = v
	}
	b := d.start(viaHTTP)
	return &realEnv{d: d, b: b, url: "http://" + b.addr}
}

// hookEnv is what the agent's hook commands run with: the bot's address
// and token, and the askslack binary first on PATH (the printed settings
// call it by name).
func (e *realEnv) hookEnv() []string {
	return []string{"ASKSLACK_URL=" + e.url, "ASKSLACK_TOKEN=" + realAgentToken,
		"PATH=" + filepath.Dir(binPath) + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// printed runs `askslack hook <agent> <print flag> args…` and decodes it:
// the agent gets exactly what a person would paste.
func (e *realEnv) printed(t *testing.T, agent, print string, args ...string) map[string]any {
	t.Helper()
	out, err := exec.Command(binPath, append([]string{"hook", agent, print, "--url", e.url}, args...)...).Output()
	if err != nil {
		t.Fatalf("askslack hook %s %s: %v", agent, print, err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("printed settings are not JSON: %v\n%s", err, out)
	}
	return v
}

// claude installs Claude Code and sets it up against model with the hooks
// as printed (with printArgs) in the project's .claude/settings.json.
func (e *realEnv) claude(t *testing.T, model *modelapi.Server, printArgs ...string) *realagent.Agent {
	t.Helper()
	bin, version := realagent.Install(t, realagent.ClaudeCode)
	t.Logf("Claude Code %s", version)
	settings := e.printed(t, "claude", "--print-settings", printArgs...)
	return realagent.NewClaude(t, bin, model.URL(), settings, e.hookEnv()...)
}

// scripted starts a model that plays steps.
func scripted(t *testing.T, steps ...modelapi.Step) *modelapi.Server {
	t.Helper()
	m := modelapi.New(steps...)
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("model API requests:\n%s", strings.Join(m.Log(), "\n"))
		}
	})
	return m
}

func realCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// waitQuestion waits for the Slack message whose text contains substr.
func waitQuestion(t *testing.T, ctx context.Context, f *slackfake.Server, substr string) slackfake.Message {
	t.Helper()
	m, err := f.WaitMessage(ctx, func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), substr) && hasControls(m)
	})
	if err != nil {
		t.Fatalf("no question in Slack containing %q: %v", substr, err)
	}
	return m
}

// session is one interactive Claude Code session in a terminal.
type session struct {
	a     *realagent.Agent
	term  *realagent.Term
	model *modelapi.Server
}

// claudeTUI starts Claude Code in a terminal with args (a permission mode,
// say), waits for its prompt and submits a prompt that makes the scripted
// model play steps.
func (e *realEnv) claudeTUI(t *testing.T, ctx context.Context, steps []modelapi.Step, args []string, printArgs ...string) *session {
	t.Helper()
	model := scripted(t, steps...)
	a := e.claude(t, model, printArgs...)
	term := a.Terminal(args...)
	term.WaitFor(ctx, "❯")
	term.Type("go")
	term.Press("Enter")
	return &session{a: a, term: term, model: model}
}

// result waits for the agent to hand the model the result of its nth tool
// call and the model's closing turn to reach the terminal.
func (s *session) result(t *testing.T, ctx context.Context, n int) modelapi.Result {
	t.Helper()
	r, err := s.model.WaitResult(ctx, n)
	if err != nil {
		t.Fatalf("%v\nscreen:\n%s", err, s.term.Screen())
	}
	return r
}

// The questions the scripted model asks.
var (
	whichDatabase = map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false,
		"options": []any{map[string]any{"label": "PostgreSQL", "description": "Relational"}, map[string]any{"label": "SQLite", "description": "Embedded"}}}
	whichFiles = map[string]any{"question": "Which files should change?", "header": "Files", "multiSelect": true,
		"options": []any{map[string]any{"label": "auth.go", "description": "Login"}, map[string]any{"label": "db.go", "description": "Storage"},
			map[string]any{"label": "api.go", "description": "Routes"}}}
)

func askUser(questions ...any) modelapi.Step {
	return modelapi.Call("AskUserQuestion", map[string]any{"questions": questions})
}

// AskUserQuestion in an interactive session: the question shows in the
// terminal and in Slack at the same time (before 2.1.332 was tried, the
// PreToolUse hook held the terminal's picker back for the whole wait); the
// first answer wins and the other side is updated.
func TestRealAgentClaudeAskUserQuestion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		question []any
		answer   func(t *testing.T, ctx context.Context, e *realEnv, s *session, m slackfake.Message)
		want     string // in the tool result the model receives
		terminal bool   // answered in the terminal: Slack says so
	}{
		{"Single", []any{whichDatabase}, func(t *testing.T, ctx context.Context, e *realEnv, s *session, m slackfake.Message) {
			click(t, ctx, e.d.fake, m, "SQLite")
		}, `"Which database?"="SQLite"`, false},
		{"MultiSelect", []any{whichFiles}, func(t *testing.T, ctx context.Context, e *realEnv, s *session, m slackfake.Message) {
			if _, err := e.d.fake.Select(ctx, alice, m.Channel, m.TS, "askslack.check", []string{"auth.go", "api.go"}, slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.d.fake.ClickButtonByAction(ctx, alice, m.Channel, m.TS, "askslack.submit", "", slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
		}, `"Which files should change?"="auth.go, api.go"`, false},
		{"Several", []any{whichDatabase, whichFiles}, func(t *testing.T, ctx context.Context, e *realEnv, s *session, m slackfake.Message) {
			f := e.d.fake
			if _, err := f.Select(ctx, alice, m.Channel, m.TS, "askslack.select", []string{"PostgreSQL"}, slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Select(ctx, alice, m.Channel, m.TS, "askslack.check", []string{"db.go"}, slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.ClickButtonByAction(ctx, alice, m.Channel, m.TS, "askslack.submit", "", slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
		}, `"Which database?"="PostgreSQL", "Which files should change?"="db.go"`, false},
		{"Other", []any{whichDatabase}, func(t *testing.T, ctx context.Context, e *realEnv, s *session, m slackfake.Message) {
			typeOther(t, ctx, e.d.fake, m, "Other…", callIDOf(t, m), "DuckDB, for the analytics")
		}, `"Which database?"="DuckDB, for the analytics"`, false},
		{"TerminalFirst", []any{whichDatabase}, func(t *testing.T, ctx context.Context, e *realEnv, s *session, m slackfake.Message) {
			// The person at the keyboard picks SQLite: down, see it, enter.
			s.term.Submit(ctx, "Down", "❯ 2. SQLite") // pressed again if the picker dropped it
			s.term.Confirm(ctx, "Enter", "Enter to select")
		}, `"Which database?"="SQLite"`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := realCtx(t)
			e := newRealEnv(t, nil)
			s := e.claudeTUI(t, ctx, []modelapi.Step{askUser(c.question...), modelapi.Say("Finished.", true)}, []string{"--permission-mode", "default"})
			first := c.question[0].(map[string]any)["question"].(string)
			m := waitQuestion(t, ctx, e.d.fake, first)
			s.term.WaitFor(ctx, first, "Enter to select") // the terminal's picker, at the same time
			c.answer(t, ctx, e, s, m)
			r := s.result(t, ctx, 1)
			if r.IsError || !strings.Contains(r.Content, c.want) {
				t.Fatalf("the model was handed %+v; want %s", r, c.want)
			}
			s.term.WaitFor(ctx, "Finished. RESULT<<")
			if c.terminal {
				waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "marked answered in the terminal", func(m slackfake.Message) bool {
					return !hasControls(m) && strings.Contains(string(m.Blocks), "Answered in the terminal")
				})
				// (issue 42 f) answered in the terminal: nothing is injected.
				if n := s.model.Entered(lateIntro); n != 0 {
					t.Fatalf("a late answer was injected after the terminal answered: %d times", n)
				}
			} else {
				waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })
				if strings.Contains(s.term.Screen(), "Enter to select") {
					t.Fatalf("the terminal still shows the picker:\n%s", s.term.Screen())
				}
			}
		})
	}
}

// writePlan is the model writing its plan where plan mode told it to.
func writePlan(plan string) modelapi.Step {
	return modelapi.Step{Tool: "Write", InputFrom: func(req []byte) any {
		return map[string]any{"file_path": modelapi.PlanFile(req), "content": plan}
	}}
}

const shipPlan = "# Ship the release\n\n1. Build the binaries\n2. Deploy to staging\n"

// A plan review in plan mode: the terminal's "Ready to code?" dialog and
// the Slack message at the same time; approve, decline, decline with
// feedback (the model reads it), two approvals with a quorum, and an
// ExitPlanMode called before any plan file was written.
func TestRealAgentClaudePlan(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		env    map[string]string
		noPlan bool
		answer func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message)
		check  func(t *testing.T, r modelapi.Result)
	}{
		{"Approve", nil, false, func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			click(t, ctx, e.d.fake, m, "Approve")
		}, func(t *testing.T, r modelapi.Result) {
			if r.IsError || !strings.Contains(r.Content, "approved") {
				t.Fatalf("the model was handed %+v", r)
			}
		}},
		{"Decline", nil, false, func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			click(t, ctx, e.d.fake, m, "Decline")
		}, func(t *testing.T, r modelapi.Result) {
			if !strings.Contains(r.Content, "declined in Slack by alice") {
				t.Fatalf("the model was handed %+v", r)
			}
		}},
		{"DeclineWithFeedback", nil, false, func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			typeOther(t, ctx, e.d.fake, m, "Decline with feedback…", callIDOf(t, m), "Deploy to a canary first, then staging.")
		}, func(t *testing.T, r modelapi.Result) {
			if !strings.Contains(r.Content, "Deploy to a canary first, then staging.") {
				t.Fatalf("the model was handed %+v", r)
			}
		}},
		{"Quorum", map[string]string{"ASKSLACK_QUORUM": "plan=2"}, false, func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			click(t, ctx, e.d.fake, m, "Approve")
			waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "showing one approval", func(m slackfake.Message) bool {
				return strings.Contains(string(m.Blocks), "1 of 2")
			})
			if _, err := e.d.fake.ClickButton(ctx, bob, m.Channel, m.TS, "Approve", slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, r modelapi.Result) {
			if r.IsError || !strings.Contains(r.Content, "approved") {
				t.Fatalf("the model was handed %+v", r)
			}
		}},
		{"NoPlanFile", nil, true, func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			mustContain(t, "message", string(m.Blocks), "wrote no plan file")
			click(t, ctx, e.d.fake, m, "Decline")
		}, func(t *testing.T, r modelapi.Result) {
			if !strings.Contains(r.Content, "declined in Slack") {
				t.Fatalf("the model was handed %+v", r)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := realCtx(t)
			e := newRealEnv(t, c.env)
			steps := []modelapi.Step{writePlan(shipPlan), modelapi.Call("ExitPlanMode", map[string]any{}), modelapi.Say("Finished.", true)}
			if c.noPlan {
				steps = steps[1:]
			}
			s := e.claudeTUI(t, ctx, steps, []string{"--permission-mode", "plan"})
			title := "Ship the release"
			if c.noPlan {
				title = "Approve this plan?"
			}
			m := waitQuestion(t, ctx, e.d.fake, title)
			if !c.noPlan {
				mustContain(t, "message", string(m.Blocks), "Build the binaries", "Deploy to staging")
				s.term.WaitFor(ctx, "Build the binaries", "Would you like to proceed?") // the terminal's dialog, at the same time
			} else {
				s.term.WaitFor(ctx, "Exit plan mode?")
			}
			c.answer(t, ctx, e, m)
			r := s.result(t, ctx, len(steps)-1)
			c.check(t, r)
			s.term.WaitFor(ctx, "Finished. RESULT<<")
			waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })
		})
	}
}

// headless runs `claude -p` in the background; wait for its result.
type headless struct {
	done chan struct{}
	res  realagent.PrintResult
	err  error
}

func runPrint(ctx context.Context, a *realagent.Agent, prompt string, args ...string) *headless {
	h := &headless{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		h.res, h.err = a.Print(ctx, prompt, args...)
	}()
	return h
}

func (h *headless) wait(t *testing.T) realagent.PrintResult {
	t.Helper()
	<-h.done
	if h.err != nil {
		t.Fatal(h.err)
	}
	return h.res
}

const touchMarker = "touch released.marker"

func bashTouch() modelapi.Step {
	return modelapi.Call("Bash", map[string]any{"command": touchMarker, "description": "Create the release marker"})
}

// Tool permissions from a headless `claude -p` (PermissionRequest fires
// there too): allow, deny, deny with a reason, Always allow (Claude's own
// rule: the same command then runs with nobody asked), a standing rule
// (answered with no message), and in a terminal the person at the
// keyboard answering first.
func TestRealAgentClaudeBash(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answer  func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message)
		ran     bool
		content string // in the tool result
		again   bool   // the same command again, in a new run: nobody is asked
		made    string // the file the command made ("": released.marker)
	}{
		{"Allow", func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			click(t, ctx, e.d.fake, m, "Allow")
		}, true, "(Bash completed with no output)", false, ""},
		{"Deny", func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			click(t, ctx, e.d.fake, m, "Deny")
		}, false, "Denied in Slack by alice.", false, ""},
		{"DenyWithReason", func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			typeOther(t, ctx, e.d.fake, m, "Other…", callIDOf(t, m), "Not before the freeze ends.")
		}, false, "Not before the freeze ends.", false, ""},
		{"AlwaysAllow", func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			mustContain(t, "message", string(m.Blocks), "Always allow", "don't ask again for `touch released.marker`", "Allow, add folder", "Allow, accept edits")
			click(t, ctx, e.d.fake, m, "Always allow")
		}, true, "(Bash completed with no output)", true, ""},
		{"StandingRule", func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			click(t, ctx, e.d.fake, m, "Allow rule…")
			view := waitView(t, ctx, e.d.fake, alice.ID, blocks.CallbackAllowRule)
			if _, err := e.d.fake.SubmitView(ctx, alice, view.ID, map[string][]string{blocks.RuleMatchBlock: {touchMarker},
				blocks.RuleUntilBlock: {"1 hour"}}, slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
		}, true, "(Bash completed with no output)", true, ""},
		{"EditAndAllow", func(t *testing.T, ctx context.Context, e *realEnv, m slackfake.Message) {
			// alice changes what runs: Claude runs her command, not its own.
			click(t, ctx, e.d.fake, m, "Edit & allow…")
			view := waitView(t, ctx, e.d.fake, alice.ID, blocks.CallbackEdit)
			if _, err := e.d.fake.SubmitView(ctx, alice, view.ID, map[string][]string{
				blocks.EditBlockID(callIDOf(t, m), "command"): {"touch edited.marker"}}, slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
		}, true, "(Bash completed with no output)", false, "edited.marker"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := realCtx(t)
			e := newRealEnv(t, nil)
			model := scripted(t, bashTouch(), modelapi.Say("Finished.", true))
			a := e.claude(t, model)
			run := runPrint(ctx, a, "make the marker")
			m := waitQuestion(t, ctx, e.d.fake, touchMarker)
			c.answer(t, ctx, e, m)
			res := run.wait(t)
			r, err := model.WaitResult(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			made := cmp.Or(c.made, "released.marker")
			if !strings.Contains(r.Content, c.content) || a.Exists(made) != c.ran || !strings.Contains(res.Result, c.content) {
				t.Fatalf("ran=%v, the model was handed %+v, result %q; want ran=%v and %q", a.Exists(made), r, res.Result, c.ran, c.content)
			}
			if made != "released.marker" && a.Exists("released.marker") {
				t.Fatal("the command as the agent asked it ran too")
			}
			waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })
			if !c.again {
				return
			}
			// The same command in a new run: it runs, and nobody is asked.
			if err := os.Remove(a.Path("released.marker")); err != nil {
				t.Fatal(err)
			}
			if c.name == "AlwaysAllow" {
				local, _ := os.ReadFile(a.Path(".claude/settings.local.json"))
				mustContain(t, "Claude's local settings", string(local), `"Bash(touch released.marker)"`)
			}
			posts := len(e.d.fake.Calls("chat.postMessage"))
			// A new conversation replays the model's script from its start.
			if _, err := a.Print(ctx, "make the marker again"); err != nil {
				t.Fatal(err)
			}
			if r, err := model.WaitResult(ctx, 2); err != nil || r.IsError || !a.Exists("released.marker") {
				t.Fatalf("the same command again: %+v %v (ran=%v)", r, err, a.Exists("released.marker"))
			}
			if n := len(e.d.fake.Calls("chat.postMessage")); n != posts {
				t.Fatalf("the same command was asked again: %d posts after %d", n, posts)
			}
		})
	}
}

// A tool permission in a terminal: the person at the keyboard answers the
// terminal's dialog first; the command runs, and the Slack message says it
// was answered in the terminal (before: it stayed open, its buttons live,
// and a later tap went nowhere).
func TestRealAgentClaudeBashTerminalFirst(t *testing.T) {
	t.Parallel()
	ctx := realCtx(t)
	e := newRealEnv(t, nil)
	s := e.claudeTUI(t, ctx, []modelapi.Step{bashTouch(), modelapi.Say("Finished.", true)}, []string{"--permission-mode", "default"})
	m := waitQuestion(t, ctx, e.d.fake, touchMarker)
	s.term.WaitFor(ctx, "Do you want to proceed?")
	s.term.Confirm(ctx, "Enter", "Do you want to proceed?") // 1. Yes
	if r := s.result(t, ctx, 1); r.IsError || !s.a.Exists("released.marker") {
		t.Fatalf("the model was handed %+v", r)
	}
	waitMessage(t, ctx, e.d.fake, m.Channel, m.TS, "marked answered in the terminal", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "Answered in the terminal")
	})
}

// What reaches Slack depends on Claude Code's permission mode. An
// interactive session's default (auto, in 2.1.332) runs `rm -rf ./build &&
// touch …` in the working folder with no permission request, so nothing is
// asked; settings printed with --permission-mode default start sessions in
// default mode, and the prompt reaches Slack. (`claude -p` asks either way.)
func TestRealAgentClaudeModes(t *testing.T) {
	t.Parallel()
	const risky = "rm -rf ./build && touch deployed.marker"
	steps := []modelapi.Step{modelapi.Call("Bash", map[string]any{"command": risky, "description": "Clean and mark"}), modelapi.Say("Finished.", true)}
	t.Run("AutoAsksNobody", func(t *testing.T) {
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		s := e.claudeTUI(t, ctx, steps, nil)
		if r := s.result(t, ctx, 1); r.IsError || !s.a.Exists("deployed.marker") {
			t.Fatalf("the model was handed %+v", r)
		}
		s.term.WaitFor(ctx, "Finished. RESULT<<")
		if n := len(e.d.fake.Calls("chat.postMessage")); n != 0 {
			t.Fatalf("%d messages posted; auto mode asks nobody", n)
		}
	})
	t.Run("DefaultModeAsksSlack", func(t *testing.T) {
		t.Parallel()
		ctx := realCtx(t)
		e := newRealEnv(t, nil)
		s := e.claudeTUI(t, ctx, steps, nil, "--permission-mode", "default")
		m := waitQuestion(t, ctx, e.d.fake, "deployed.marker")
		click(t, ctx, e.d.fake, m, "Allow")
		if r := s.result(t, ctx, 1); r.IsError || !s.a.Exists("deployed.marker") {
			t.Fatalf("the model was handed %+v", r)
		}
	})
}

// Codex in its terminal (the TUI) with approval_policy on-request and the
// hooks.json as printed: the first prompt asks to trust the new hook (a
// person chooses "Trust all and continue" once); an escalated command then
// reaches Slack, and runs or not as answered there. While the hook waits,
// Codex shows "Running hook" and no approval of its own: Codex runs
// PermissionRequest hooks before its approval UI (0.171.0).
func TestRealAgentCodex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, click, want string
		ran               bool
	}{
		{"Allow", "Allow", "", true},
		{"Deny", "Deny", "Denied in Slack by alice.", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := realCtx(t)
			e := newRealEnv(t, nil)
			model := scripted(t, modelapi.Call("exec_command", map[string]any{"cmd": touchMarker, "sandbox_permissions": "require_escalated",
				"justification": "Create the release marker"}), modelapi.Say("Finished.", true))
			bin, version := realagent.Install(t, realagent.Codex)
			t.Logf("Codex %s", version)
			a := realagent.NewCodex(t, bin, model.URL(), e.printed(t, "codex", "--print-config"), e.hookEnv()...)
			// A key pressed just as the dialog appears may be dropped (CI
			// saw it once): pressed until the cursor has moved.
			term := codexTrusting(t, ctx, a, "make the marker")
			term.Confirm(ctx, "Enter", "Hooks need review")
			// Back at the composer with the prompt kept: send it.
			term.WaitFor(ctx, "› make the marker")
			term.Submit(ctx, "Enter", "Working")
			m := waitQuestion(t, ctx, e.d.fake, touchMarker)
			mustContain(t, "message", string(m.Blocks), "codex", "Create the release marker")
			if strings.Contains(string(m.Blocks), "Edit & allow") {
				t.Fatal("a Codex permission offers Edit & allow: Codex fails closed on updatedInput") // its hook lists no editable fields
			}
			if strings.Contains(string(m.Blocks), `"Always allow"`) {
				t.Fatal("Always allow offered to Codex, which fails closed on permission updates")
			}
			term.WaitFor(ctx, "Running hook")
			click(t, ctx, e.d.fake, m, c.click)
			r, err := model.WaitResult(ctx, 1)
			if err != nil {
				t.Fatalf("%v\n%s", err, term.Screen())
			}
			if a.Exists("released.marker") != c.ran || !strings.Contains(r.Content, c.want) {
				t.Fatalf("ran=%v, the model was handed %+v; want ran=%v and %q", a.Exists("released.marker"), r, c.ran, c.want)
			}
			term.WaitFor(ctx, "Finished. RESULT<<")
		})
	}
}

// `codex exec` runs with approval "never" whatever the config says: an
// escalation is rejected at once and no hook fires, so nothing can be asked
// headless (0.171.0).
func TestRealAgentCodexExecAsksNobody(t *testing.T) {
	t.Parallel()
	ctx := realCtx(t)
	e := newRealEnv(t, nil)
	model := scripted(t, modelapi.Call("exec_command", map[string]any{"cmd": touchMarker, "sandbox_permissions": "require_escalated",
		"justification": "Create the release marker"}), modelapi.Say("Finished.", true))
	bin, _ := realagent.Install(t, realagent.Codex)
	a := realagent.NewCodex(t, bin, model.URL(), e.printed(t, "codex", "--print-config"), e.hookEnv()...)
	if _, err := a.Run(ctx, "exec", "--skip-git-repo-check", "make the marker"); err != nil {
		t.Fatal(err)
	}
	r, err := model.WaitResult(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Exists("released.marker") || !strings.Contains(r.Content, "approval policy is Never") || len(e.d.fake.Calls("chat.postMessage")) != 0 {
		t.Fatalf("codex exec: ran=%v, posts=%d, the model was handed %+v", a.Exists("released.marker"), len(e.d.fake.Calls("chat.postMessage")), r)
	}
}

// Headless with --defer: `claude -p` asks in Slack, its wait ends, Claude
// denies the call for now and the run ends, the question stays open; an
// answer given later is applied when the session is resumed (`claude -p
// --resume`) and the model makes the same call again: the hook finds the
// answer at once, and nothing is posted twice.
func TestRealAgentClaudeDeferResume(t *testing.T) {
	t.Parallel()
	ctx := realCtx(t)
	e := newRealEnv(t, nil)
	model := scripted(t, bashTouch(), modelapi.Say("Not allowed yet.", true), bashTouch(), modelapi.Say("Finished.", true))
	a := e.claude(t, model, "--defer", "--wait", "2s")
	first, err := a.Print(ctx, "make the marker")
	if err != nil {
		t.Fatal(err)
	}
	if a.Exists("released.marker") {
		t.Fatal("the command ran unanswered")
	}
	m := waitQuestion(t, ctx, e.d.fake, touchMarker)
	posts := len(e.d.fake.Calls("chat.postMessage"))
	click(t, ctx, e.d.fake, m, "Allow") // late: the run is over
	resumed, err := a.Print(ctx, "the marker is approved now; try again", "--resume", first.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := model.WaitResult(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || !a.Exists("released.marker") {
		t.Fatalf("resumed %s → %s: the model was handed %+v (ran=%v)", first.SessionID, resumed.SessionID, r, a.Exists("released.marker"))
	}
	if n := len(e.d.fake.Calls("chat.postMessage")); n != posts {
		t.Fatalf("the resumed run asked again: %d posts after %d", n, posts)
	}
}
