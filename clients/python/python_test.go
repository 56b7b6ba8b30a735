// Package python holds the Python client (the askslack package); this Go
// test runs its unittest suite so that `go test ./...` covers it.
package python

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// minPython is the oldest Python the client supports.
var minPython = [2]int{3, 10}

// TestPythonClient runs `python3 -m unittest discover -s tests -v` against
// the askslack binary and the fake Slack built here once. It skips when
// python3 is not on PATH or older than 3.10, except under CI=true, where a
// missing or old interpreter fails instead (the suite must not silently
// stop running there).
func TestPythonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Python client's tests")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		unavailable(t, "python3 not on PATH")
	}
	checkVersion(t, python)

	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "..", "..")
	statInputs(t, root)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	bin := t.TempDir()
	goTool := goBinary()
	for _, b := range []struct{ out, pkg string }{
		{"askslack", "./cmd/askslack"},
		{"fakeslack", "./internal/slackfake/cmd/fakeslack"},
	} {
		run(t, ctx, root, nil, goTool, "build", "-o", filepath.Join(bin, b.out), b.pkg)
	}

	run(t, ctx, dir, []string{
		"ASKSLACK_BIN=" + filepath.Join(bin, "askslack"),
		"FAKESLACK_BIN=" + filepath.Join(bin, "fakeslack"),
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in the source tree
		"PYTHONUNBUFFERED=1",
	}, python, "-m", "unittest", "discover", "-s", "tests", "-v")
}

// unavailable skips the test, or fails it under CI=true.
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: the Python client's tests must run in CI", why)
	}
	t.Skipf("%s: skipping the Python client's tests", why)
}

var pythonVersion = regexp.MustCompile(`Python (\d+)\.(\d+)`)

// checkVersion skips (or, in CI, fails) unless python is at least minPython.
func checkVersion(t *testing.T, python string) {
	t.Helper()
	out, err := exec.Command(python, "--version").CombinedOutput()
	if err != nil {
		unavailable(t, "python3 --version: "+err.Error()+": "+strings.TrimSpace(string(out)))
	}
	m := pythonVersion.FindStringSubmatch(string(out))
	if m == nil {
		unavailable(t, "python3 --version said "+strings.TrimSpace(string(out)))
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < minPython[0] || major == minPython[0] && minor < minPython[1] {
		unavailable(t, "python3 is "+m[1]+"."+m[2]+", older than 3.10")
	}
}

// run runs a command in dir and fails the test with its output when it
// fails. When ctx ends the command gets SIGINT first, so the Python suite
// stops the processes it started (its harness does at exit), and SIGKILL
// ten seconds later.
func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) {
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
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// statInputs stats every source file the Python suite depends on — the
// package's Python and the repository's Go — so that go test's result
// cache is invalidated when any of them changes (the test reads them only
// through child processes, which go test cannot see).
func statInputs(t *testing.T, root string) {
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
		switch filepath.Ext(name) {
		case ".go", ".py", ".toml", ".mod", ".sum":
			_, err := os.Stat(p)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
