package cli

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&ExitError{Code: 2, Err: errors.New("usage")}, 2},
		{&ExitError{Code: 0, Err: errors.New("odd")}, 0},
		{errors.New("plain"), 1},
		// Only an ExitError itself carries a code, as before the split.
		{fmt.Errorf("wrapped: %w", &ExitError{Code: 2, Err: errors.New("usage")}), 1},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d; want %d", c.err, got, c.want)
		}
	}
	inner := errors.New("inner")
	e := &ExitError{Code: 2, Err: inner}
	if e.Error() != "inner" || !errors.Is(e, inner) {
		t.Errorf("ExitError reads %q and unwraps to %v", e.Error(), errors.Unwrap(e))
	}
}

func TestClientFlagsReadTheEnvironment(t *testing.T) {
	t.Setenv("ASKSLACK_URL", "")
	t.Setenv("ASKSLACK_TOKEN", "")
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	url, token := ClientFlags(fs)
	if *url != "http://127.0.0.1:8080" || *token != "" {
		t.Fatalf("defaults: url %q token %q", *url, *token)
	}
	t.Setenv("ASKSLACK_URL", "http://bot:9000")
	t.Setenv("ASKSLACK_TOKEN", "tok")
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	url, token = ClientFlags(fs)
	if *url != "http://bot:9000" || *token != "tok" {
		t.Fatalf("from the environment: url %q token %q", *url, *token)
	}
	if err := fs.Parse([]string{"--url", "http://other", "--token", "t2"}); err != nil || *url != "http://other" || *token != "t2" {
		t.Fatalf("flags: url %q token %q (%v)", *url, *token, err)
	}
}

func TestMultiFlagAndHelpers(t *testing.T) {
	var m MultiFlag
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&m, "option", "")
	if err := fs.Parse([]string{"--option", "Yes", "--option", "No"}); err != nil || m.String() != "Yes, No" {
		t.Fatalf("MultiFlag %q (%v)", m.String(), err)
	}
	id := NewCallID("cli")
	if !regexp.MustCompile(`^cli-[0-9a-f]{12}$`).MatchString(id) || id == NewCallID("cli") {
		t.Fatalf("NewCallID = %q", id)
	}
	t.Setenv("ASKSLACK_AGENT", "")
	if got := EnvOr("ASKSLACK_AGENT", "coding-agent"); got != "coding-agent" {
		t.Fatalf("EnvOr unset = %q", got)
	}
	t.Setenv("ASKSLACK_AGENT", "claude")
	if got := EnvOr("ASKSLACK_AGENT", "coding-agent"); got != "claude" {
		t.Fatalf("EnvOr set = %q", got)
	}
}
