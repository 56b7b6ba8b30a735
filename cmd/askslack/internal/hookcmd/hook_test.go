package hookcmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
)

// A hook that cannot run says why on one line, exit status 1, nothing on
// stdout: both agents then fall back to their own prompt.
func TestUsageErrorsAreOneLineExit1(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "hook needs an agent"},
		{[]string{"gemini"}, "hook needs an agent"},
		{[]string{"claude", "--wait", "-1s"}, "--wait must be between"},
		{[]string{"claude", "--wait", "25h"}, "--wait must be between"},
		{[]string{"claude", "--permission-mode", "yolo", "--print-settings"}, "--permission-mode must be one of"},
		{[]string{"claude", "--permission-mode", "plan"}, "--permission-mode goes with --print-settings"},
	} {
		var out, errw bytes.Buffer
		err := Run(c.args, strings.NewReader(""), &out, &errw)
		if err == nil || cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || out.Len() != 0 {
			t.Errorf("hook %q: %v (exit %d), stdout %q; want one line with %q, exit 1", c.args, err, cli.ExitCode(err), out.String(), c.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"30m0s":                   "30m0s",
		"http://bot:8080/x":       "http://bot:8080/x",
		"":                        "''",
		"a b":                     "'a b'",
		"it's":                    `'it'\''s'`,
		"http://h/?x=1&y='$HOME'": `'http://h/?x=1&y='\''$HOME'\'''`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s; want %s", in, got, want)
		}
	}
}

// What the printed settings give each hook: Claude Code's PermissionRequest
// follows its prompt (a day and a minute); --defer and Codex keep a fixed
// window (ten minutes and one); every agent gets the late-answer hooks, and
// only Claude Code the background waiter.
func TestPrintedSettingsWaitAndLateHooks(t *testing.T) {
	for _, c := range []struct {
		args    []string
		timeout float64
		wake    bool
	}{
		{[]string{"claude", "--print-settings"}, 86460, true},
		{[]string{"claude", "--print-settings", "--defer"}, 660, true},
		{[]string{"claude", "--print-settings", "--wait", "30m"}, 1860, true},
		{[]string{"codex", "--print-config"}, 660, false},
	} {
		var out, errw bytes.Buffer
		if err := Run(c.args, strings.NewReader(""), &out, &errw); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Hooks map[string][]struct {
				Hooks []map[string]any `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if got := doc.Hooks["PermissionRequest"][0].Hooks[0]["timeout"]; got != c.timeout {
			t.Errorf("%q: PermissionRequest timeout %v, want %v", c.args, got, c.timeout)
		}
		for _, ev := range []string{"PostToolUse", "UserPromptSubmit", "Stop"} {
			if len(doc.Hooks[ev]) == 0 {
				t.Errorf("%q: no %s hook", c.args, ev)
			}
		}
		wake := false
		for _, h := range doc.Hooks["Stop"][0].Hooks {
			if h["asyncRewake"] == true && strings.HasSuffix(h["command"].(string), " --wake") {
				wake = true
			}
		}
		if wake != c.wake {
			t.Errorf("%q: background waiter %v, want %v", c.args, wake, c.wake)
		}
	}
}
