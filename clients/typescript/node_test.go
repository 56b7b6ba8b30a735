// Package typescript holds the TypeScript client (@askslack/client); this Go
// test runs its Node test suite so that `go test ./...` covers it.
package typescript

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/kit/clientrun"
)

// TestTypeScriptClient runs `npm ci` (when node_modules is missing or older
// than package-lock.json) and `npm test`, which compiles the package and runs
// its tests with Node's test runner against the askslack binary and the fake
// Slack built here once. It skips when node or npm is not on PATH.
func TestTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the TypeScript client's Node tests")
	}
	needNode(t)
	root := clientrun.Root(t)
	clientrun.StatInputs(t, root, ".go", ".ts", ".json", ".mod", ".sum")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	env := clientrun.Binaries(t, ctx, root)
	install(t, ctx)
	clientrun.Run(t, ctx, ".", env, "npm", "test")
}

// needNode skips without node and npm (fails under CI=true).
func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			clientrun.Unavailable(t, tool+" not on PATH: skipping the TypeScript client's tests")
		}
	}
}

// install runs `npm ci` when node_modules is missing or older than the lock file.
func install(t *testing.T, ctx context.Context) {
	t.Helper()
	installed, err := os.Stat(filepath.Join("node_modules", ".package-lock.json"))
	if err == nil {
		lock, err := os.Stat("package-lock.json")
		if err == nil && !lock.ModTime().After(installed.ModTime()) {
			return
		}
	}
	clientrun.Run(t, ctx, ".", nil, "npm", "ci", "--no-audit", "--no-fund")
}
