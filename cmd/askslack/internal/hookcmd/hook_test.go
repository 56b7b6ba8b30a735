package hookcmd

import (
	"bytes"
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
