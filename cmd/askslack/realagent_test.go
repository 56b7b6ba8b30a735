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
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/kit/modelapi"
	"github.com/askslack/askslack/internal/kit/realagent"
	"github.com/askslack/askslack/internal/kit/slackfake"
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
	t.Cleanup(m.Close)
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

func TestRealAgentProbeBashPrint(t *testing.T) {
	t.Parallel()
	e := newRealEnv(t, nil)
	model := scripted(t, modelapi.Call("Bash", map[string]any{"command": "touch released.marker", "description": "Create the release marker"}),
		modelapi.Say("Finished.", true))
	a := e.claude(t, model)
	ctx := realCtx(t)
	done := make(chan realagent.PrintResult, 1)
	go func() {
		r, err := a.Print(ctx, "make the marker")
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	msg := waitQuestion(t, ctx, e.d.fake, "touch released.marker")
	t.Logf("message: %s", msg.Blocks)
	if _, err := e.d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Allow", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	t.Logf("result: %+v", r)
	t.Logf("tool results: %+v", model.Results())
	if !a.Exists("released.marker") {
		t.Fatal("the command did not run")
	}
}

func TestRealAgentProbeEvents(t *testing.T) {
	mode := os.Getenv("PROBE_MODE")
	if mode == "" {
		t.Skip("probe")
	}
	e := newRealEnv(t, nil)
	_ = e
	log := filepath.Join(t.TempDir(), "events.jsonl")
	logHook := []any{map[string]any{"type": "command", "command": "cat >> " + log + "; echo >> " + log}}
	sig := filepath.Join(t.TempDir(), "sig.sh")
	os.WriteFile(sig, []byte("#!/bin/sh\necho start $$ >> "+log+".sig\ntrap 'echo TERM >> "+log+".sig; exit 0' TERM\ntrap 'echo INT >> "+log+".sig; exit 0' INT\ntrap 'echo HUP >> "+log+".sig; exit 0' HUP\ncat > /dev/null\necho stdin-closed >> "+log+".sig\nsleep 30 & wait\necho end >> "+log+".sig\n"), 0o755)
	sigHook := []any{map[string]any{"type": "command", "command": sig, "timeout": 100}}
	settings := map[string]any{"hooks": map[string]any{
		"PreToolUse":        []any{map[string]any{"matcher": "*", "hooks": logHook}},
		"PermissionRequest": []any{map[string]any{"matcher": "*", "hooks": logHook}, map[string]any{"matcher": "*", "hooks": sigHook}},
		"Notification":      []any{map[string]any{"matcher": "*", "hooks": logHook}},
	}}
	var step modelapi.Step
	switch os.Getenv("PROBE_TOOL") {
	case "plan":
		step = modelapi.Call("ExitPlanMode", map[string]any{})
	case "planwrite":
		step = modelapi.Step{Tool: "Write", InputFrom: func(b []byte) any {
			t.Logf("plan file: %q", modelapi.PlanFile(b))
			return map[string]any{"file_path": modelapi.PlanFile(b), "content": "# Ship it\n\n1. Build\n2. Deploy\n"}
		}}
	case "bash":
		step = modelapi.Call("Bash", map[string]any{"command": "touch released.marker", "description": "Create the marker"})
	default:
		step = modelapi.Call("AskUserQuestion", map[string]any{"questions": []any{map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false,
			"options": []any{map[string]any{"label": "PostgreSQL", "description": "Relational"}, map[string]any{"label": "SQLite", "description": "Embedded"}}}}})
	}
	steps := []modelapi.Step{step}
	if os.Getenv("PROBE_TOOL") == "planwrite" {
		steps = append(steps, modelapi.Call("ExitPlanMode", map[string]any{}))
	}
	model := scripted(t, append(steps, modelapi.Say("Finished.", true))...)
	bin, _ := realagent.Install(t, realagent.ClaudeCode)
	a := realagent.NewClaude(t, bin, model.URL(), settings, e.hookEnv()...)
	ctx := realCtx(t)
	term := a.Terminal("--permission-mode", mode)
	time.Sleep(4 * time.Second)
	t.Logf("start screen:\n%s", term.Screen())
	term.Type("go")
	term.Press("Enter")
	time.Sleep(8 * time.Second)
	t.Logf("screen:\n%s", term.Screen())
	if os.Getenv("PROBE_KEYS") != "" {
		term.Press(strings.Fields(os.Getenv("PROBE_KEYS"))...)
		time.Sleep(5 * time.Second)
		t.Logf("after keys:\n%s", term.Screen())
	}
	b, _ := os.ReadFile(log)
	t.Logf("events:\n%s", b)
	b, _ = os.ReadFile(log + ".sig")
	t.Logf("signals:\n%s", b)
	out, _ := exec.Command("sh", "-c", "ps -ef | grep -v grep | grep -E 'sig.sh|sleep 30'").CombinedOutput()
	t.Logf("ps:\n%s", out)
	out, _ = exec.Command("sh", "-c", "cat "+a.Home+"/.claude/projects/*/*.jsonl").CombinedOutput()
	t.Logf("transcript:\n%s", out)
	t.Logf("results: %+v", model.Results())
	_ = ctx
}
