// Package python holds the Python client (the askslack package); this Go
// test runs its unittest suite so that `go test ./...` covers it.
package python

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/kit/clientrun"
)

// minPython is the oldest Python the client supports.
var minPython = [2]int{3, 10}

// TestPythonClient runs `python3 -m unittest discover -s tests -v` against
// the askslack binary and the fake Slack built here once. It skips when
// python3 is not on PATH or older than 3.10, except under CI=true, where a
// missing or old interpreter fails instead.
func TestPythonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Python client's tests")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		clientrun.Unavailable(t, "python3 not on PATH: skipping the Python client's tests")
	}
	checkVersion(t, python)
	root := clientrun.Root(t)
	clientrun.StatInputs(t, root, ".go", ".py", ".toml", ".mod", ".sum")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	env := append(clientrun.Binaries(t, ctx, root),
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in the source tree
		"PYTHONUNBUFFERED=1",
	)
	clientrun.Run(t, ctx, ".", env, python, "-m", "unittest", "discover", "-s", "tests", "-v")
}

var pythonVersion = regexp.MustCompile(`Python (\d+)\.(\d+)`)

// checkVersion skips (or, in CI, fails) unless python is at least minPython.
func checkVersion(t *testing.T, python string) {
	t.Helper()
	out, err := exec.Command(python, "--version").CombinedOutput()
	if err != nil {
		clientrun.Unavailable(t, "python3 --version: "+err.Error()+": "+strings.TrimSpace(string(out)))
	}
	m := pythonVersion.FindStringSubmatch(string(out))
	if m == nil {
		clientrun.Unavailable(t, "python3 --version said "+strings.TrimSpace(string(out)))
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < minPython[0] || major == minPython[0] && minor < minPython[1] {
		clientrun.Unavailable(t, "python3 is "+m[1]+"."+m[2]+", older than 3.10: skipping the Python client's tests")
	}
}
