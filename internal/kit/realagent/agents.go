package realagent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Agent is one installed CLI set up in a throwaway HOME, working in a
// project folder of its own, talking to a scripted model.
type Agent struct {
	t   testing.TB
	bin string
	// Home is the agent's HOME; Dir the project folder it works in.
	Home, Dir string
	env       []string
}

// Env is the environment the agent runs with (HOME, PATH, the model API,
// and what the test added).
func (a *Agent) Env() []string { return append([]string(nil), a.env...) }

// Path is a file in the project folder.
func (a *Agent) Path(name string) string { return filepath.Join(a.Dir, name) }

// Exists reports whether the project folder holds name.
func (a *Agent) Exists(name string) bool {
	_, err := os.Stat(a.Path(name))
	return err == nil
}

// claudeKey is the API key the scripted model is called with; Claude Code
// remembers a custom key the person approved by its last 20 characters.
const claudeKey = "sk-ant-api03-askslack-realagent-test-key-0123456789"

// NewClaude sets up Claude Code: a HOME where onboarding is done, the API
// key approved and the project folder trusted; the project's
// .claude/settings.json is settings (nil: none). env adds variables (the
// askslack hook's ASKSLACK_URL and ASKSLACK_TOKEN; PATH is the test's).
func NewClaude(t testing.TB, bin, modelURL string, settings any, env ...string) *Agent {
	t.Helper()
	a := newAgent(t, bin)
	state := map[string]any{
		"hasCompletedOnboarding":        true,
		"numStartups":                   5,
		"customApiKeyResponses":         map[string]any{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
		"projects":                      map[string]any{a.Dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
		"bypassPermissionsModeAccepted": true,
		"autoUpdates":                   false,
	}
	writeJSON(t, filepath.Join(a.Home, ".claude.json"), state)
	if settings != nil {
		writeJSON(t, filepath.Join(a.Dir, ".claude", "settings.json"), settings)
	}
	a.env = append(a.baseEnv(),
		"ANTHROPIC_BASE_URL="+modelURL,
		"ANTHROPIC_API_KEY="+claudeKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	)
	a.env = append(a.env, env...)
	return a
}

// NewCodex sets up Codex: CODEX_HOME with a config.toml whose model
// provider is the scripted Responses API, approval_policy on-request, the
// project trusted; hooks (nil: none) is CODEX_HOME/hooks.json.
func NewCodex(t testing.TB, bin, modelURL string, hooks any, env ...string) *Agent {
	t.Helper()
	a := newAgent(t, bin)
	codexHome := filepath.Join(a.Home, ".codex")
	config := fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "scripted"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = %q
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"

[notice]
hide_full_access_warning = true
`, modelURL+"/v1", a.Dir)
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if hooks != nil {
		writeJSON(t, filepath.Join(codexHome, "hooks.json"), hooks)
	}
	a.env = append(a.baseEnv(), "CODEX_HOME="+codexHome, "SCRIPTED_API_KEY=sk-scripted", "OPENAI_API_KEY=sk-scripted")
	a.env = append(a.env, env...)
	return a
}

func newAgent(t testing.TB, bin string) *Agent {
	root := t.TempDir()
	// Registered after TempDir, so it runs before root is removed: the
	// agents' daemons go when the test does (procs.go).
	leaveNothing(t, root)
	a := &Agent{t: t, bin: bin, Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "project")}
	for _, d := range []string{a.Home, a.Dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Resolve symlinks: the CLIs key trust by the real path of the folder.
	if d, err := filepath.EvalSymlinks(a.Dir); err == nil {
		a.Dir = d
	}
	return a
}

func (a *Agent) baseEnv() []string {
	return []string{"HOME=" + a.Home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8", "USER=tester",
		"NO_UPDATE_NOTIFIER=1"}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Run runs the CLI headless with args in the project folder and returns
// its standard output; the error carries standard error.
func (a *Agent) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, a.bin, args...)
	cmd.Dir, cmd.Env = a.Dir, a.env
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v\nstderr:\n%s", filepath.Base(a.bin), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// PrintResult is the final line of `claude -p --output-format json`.
type PrintResult struct {
	Type            string `json:"type"`
	Subtype         string `json:"subtype"`
	Result          string `json:"result"`
	SessionID       string `json:"session_id"`
	StopReason      string `json:"stop_reason"`
	IsError         bool   `json:"is_error"`
	DeferredToolUse *struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"deferred_tool_use"`
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
}

// Print is `claude -p prompt --output-format json args…`.
func (a *Agent) Print(ctx context.Context, prompt string, args ...string) (PrintResult, error) {
	out, err := a.Run(ctx, append([]string{"-p", prompt, "--output-format", "json"}, args...)...)
	var r PrintResult
	if jerr := json.Unmarshal([]byte(lastLine(out)), &r); jerr != nil && err == nil {
		err = fmt.Errorf("claude -p printed no result JSON: %v\n%s", jerr, out)
	}
	return r, err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Terminal starts the CLI interactively with args in a real terminal.
func (a *Agent) Terminal(args ...string) *Term {
	a.t.Helper()
	return StartTerm(a.t, a.Dir, a.env, append([]string{a.bin}, args...)...)
}
