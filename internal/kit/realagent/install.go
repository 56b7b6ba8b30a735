// Package realagent runs the real agent CLIs — Claude Code from npm
// `@anthropic-ai/claude-code`, Codex from npm `@openai/codex` — in tests:
// it installs a pinned release once per machine into a cache directory,
// sets up a throwaway HOME the way a person would have answered the CLI's
// first-run questions once, and drives the CLI headless or in a real
// terminal (tmux) as a person would: reading the screen, typing, pressing
// keys. Point the CLI at a scripted model (internal/kit/modelapi) and at
// the askslack binary under test through its hooks.
//
// Without node, npm or tmux the tests that need them are skipped, saying
// so, unless CI=true: then they fail.
package realagent

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A CLI is an npm package whose binary a test runs.
type CLI struct {
	Package string // npm package name
	Bin     string // the command it installs under node_modules/.bin
	Version string // pinned release
	// VersionEnv names the variable that runs the tests against another
	// release (a version or dist-tag npm understands).
	VersionEnv string
}

// The CLIs, pinned to the newest releases on the npm registry when the
// tests were written; set the VersionEnv variable to try another.
var (
	ClaudeCode = CLI{Package: "@anthropic-ai/claude-code", Bin: "claude", Version: "2.1.332", VersionEnv: "ASKSLACK_CLAUDE_CODE_VERSION"}
	Codex      = CLI{Package: "@openai/codex", Bin: "codex", Version: "0.171.0", VersionEnv: "ASKSLACK_CODEX_VERSION"}
)

// version is the release to run: VersionEnv if set, else the pin.
func (c CLI) version() string {
	if v := strings.TrimSpace(os.Getenv(c.VersionEnv)); v != "" {
		return v
	}
	return c.Version
}

// Need skips t (or fails it, under CI=true) when a command the real-agent
// tests need is missing.
func Need(t testing.TB, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("real-agent test needs %s (not on PATH); .ci/run installs it", c)
			}
			t.Skipf("real-agent test skipped: %s is not on PATH (CI=true makes this a failure)", c)
		}
	}
}

// Install installs c (its version, see VersionEnv) once per machine into
// the user cache directory and returns the path of its binary and the
// version installed. Concurrent test processes wait for one install.
func Install(t testing.TB, c CLI) (bin, version string) {
	t.Helper()
	Need(t, "node", "npm")
	version = c.version()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "askslack-realagent", strings.NewReplacer("/", "+", "@", "").Replace(c.Package)+"@"+version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	bin = filepath.Join(dir, "node_modules", ".bin", c.Bin)
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return bin, installedVersion(dir, c, version)
	}
	t.Logf("installing %s@%s into %s (once per machine)", c.Package, version, dir)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, c.Package+"@"+version)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm install %s@%s: %v\n%s", c.Package, version, err, out.String())
	}
	if err := finishInstall(dir, c); err != nil {
		t.Fatalf("npm install %s@%s: %v\n%s", c.Package, version, err, out.String())
	}
	if _, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
		t.Fatalf("%s --version after installing %s@%s: %v", bin, c.Package, version, err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, installedVersion(dir, c, version)
}

// finishInstall runs what an npm that holds back install scripts left
// undone: Claude Code's package ships a placeholder binary that its
// postinstall replaces with the platform's native one.
func finishInstall(dir string, c CLI) error {
	if c.Package != ClaudeCode.Package {
		return nil
	}
	pkg := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code")
	if fi, err := os.Stat(filepath.Join(pkg, "bin", "claude.exe")); err == nil && fi.Size() > 1<<20 {
		return nil
	}
	cmd := exec.Command("node", "install.cjs")
	cmd.Dir = pkg
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("its postinstall (node install.cjs): %v\n%s", err, out)
	}
	return nil
}

// installedVersion reads the version npm installed (a dist-tag resolves to
// one), falling back to what was asked for.
func installedVersion(dir string, c CLI, asked string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(c.Package), "package.json"))
	if err != nil {
		return asked
	}
	const key = `"version": "`
	if i := bytes.Index(b, []byte(key)); i >= 0 {
		rest := b[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j > 0 {
			return string(rest[:j])
		}
	}
	return asked
}
