// Package typescript holds the TypeScript client (@askslack/client); this Go
// test runs its Node test suite so that `go test ./...` covers it.
package typescript

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptClient runs `npm ci` (when node_modules is missing or older
// than package-lock.json) and `npm test`, which compiles the package and runs
// its tests with Node's test runner against the askslack binary and the fake
// Slack built here once. It skips when node or npm is not on PATH.
func TestTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the TypeScript client's Node tests")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH: skipping the TypeScript client's tests", tool)
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "..", "..")
	statInputs(t, root)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	bin := t.TempDir()
	goTool := goBinary()
	for _, b := range []struct{ out, pkg string }{
		{"askslack", "./cmd/askslack"},
		{"fakeslack", "./internal/slackfake/cmd/fakeslack"},
	} {
		run(t, ctx, root, nil, goTool, "build", "-o", filepath.Join(bin, b.out), b.pkg)
	}

	if needsInstall(dir) {
		run(t, ctx, dir, nil, "npm", "ci", "--no-audit", "--no-fund")
	}
	run(t, ctx, dir, []string{
		"ASKSLACK_BIN=" + filepath.Join(bin, "askslack"),
		"FAKESLACK_BIN=" + filepath.Join(bin, "fakeslack"),
	}, "npm", "test")
}

// run runs a command in dir and fails the test with its output when it fails.
func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
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

// needsInstall reports whether node_modules is missing or older than the lock file.
func needsInstall(dir string) bool {
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return true
	}
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	return err != nil || lock.ModTime().After(installed.ModTime())
}

// statInputs stats every source file the Node suite depends on — the
// package's TypeScript and the repository's Go — so that go test's result
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
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "dist" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".ts", ".json", ".mod", ".sum":
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
