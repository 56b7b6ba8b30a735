// Package clientrun is what the Go tests of the clients in other languages
// (clients/typescript, clients/python) share: they build the askslack
// binary and the fake Slack once, run the client's own suite as a child
// process against them, and tell go test which files that suite reads so
// its cached result is dropped when one changes. Test kit: only tests
// import it.
package clientrun

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Root is the repository's root, two folders above a client's (the test's
// working directory).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "..", "..")
}

// Binaries builds the askslack binary and the fake Slack into a folder of
// the test's and returns the environment that names them to a client's
// suite (ASKSLACK_BIN, FAKESLACK_BIN).
func Binaries(t testing.TB, ctx context.Context, root string) []string {
	t.Helper()
	bin := t.TempDir()
	env := make([]string, 0, 2)
	for _, b := range []struct{ name, env, pkg string }{
		{"askslack", "ASKSLACK_BIN", "./cmd/askslack"},
		{"fakeslack", "FAKESLACK_BIN", "./internal/slackfake/cmd/fakeslack"},
	} {
		out := filepath.Join(bin, b.name)
		Run(t, ctx, root, nil, goBinary(), "build", "-o", out, b.pkg)
		env = append(env, b.env+"="+out)
	}
	return env
}

// Run runs a command in dir and fails the test with its output when it
// fails. When ctx ends the command gets SIGINT first, so a suite stops the
// processes it started (its harness does at exit), and SIGKILL ten
// seconds later.
func Run(t testing.TB, ctx context.Context, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	if testing.Verbose() {
		t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out)
	}
}

func goBinary() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		return filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
	}
	return "go"
}

// StatInputs stats every source file below root with one of exts (the
// repository's Go, and the client's own sources): go test drops a cached
// result when a file the test opened or stat'ed changes, and the suite
// reads them only through child processes, which go test cannot see.
func StatInputs(t testing.TB, root string, exts ...string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "dist" || name == "testdata" || name == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		for _, ext := range exts {
			if filepath.Ext(name) == ext {
				if _, err := os.Stat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Unavailable skips the test for why, or fails it under CI=true, where a
// client's suite must not silently stop running.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true): this suite must run in CI", why)
	}
	t.Skip(why)
}
