package realagent

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// An agent's test leaves nothing running: a daemon started from the
// agent's HOME the way Codex starts its app-server (detached, outliving
// the command that started it) is stopped when the test that set the
// agent up ends, before its folders are removed.
func TestAnAgentsTestLeavesNoProcess(t *testing.T) {
	var root string
	t.Run("agent", func(t *testing.T) {
		a := NewCodex(t, "/bin/true", "http://127.0.0.1:1", nil)
		root = filepath.Dir(a.Home)
		// Two daemons: one found by its environment (HOME), one by its
		// command line only (no HOME of the agent's, another cwd).
		daemon := exec.Command("sh", "-c", "sleep 600 </dev/null >/dev/null 2>&1 &")
		daemon.Env, daemon.Dir = a.Env(), a.Dir
		log := filepath.Join(a.Home, ".codex", "daemon.log")
		if err := os.WriteFile(log, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		byArgs := exec.Command("sh", "-c", `tail -f "$1" </dev/null >/dev/null 2>&1 &`, "sh", log)
		byArgs.Env, byArgs.Dir = []string{"PATH=/usr/bin:/bin"}, "/"
		for _, c := range []*exec.Cmd{daemon, byArgs} {
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("starting a daemon: %v %s", err, out)
			}
		}
		if got := under(root); len(got) != 2 {
			t.Fatalf("found %d processes under the agent's folder; want the 2 daemons: %v", len(got), got)
		}
	})
	if left := under(root); len(left) > 0 {
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL) // not to leave them ourselves
		}
		t.Fatalf("after the agent's test ended, still running under its folder:\n%s", procList(left))
	}
}

func TestNamesAWholePath(t *testing.T) {
	for s, want := range map[string]bool{
		"/tmp/T/001": true, "/tmp/T/001/home": true, "HOME=/tmp/T/001/home\x00": true, "cd /tmp/T/001 && x": true,
		"/tmp/T/0010": false, "/tmp/T/00": false, "": false, "/tmp/T/0010 /tmp/T/001:": true,
	} {
		if got := names([]byte(s), "/tmp/T/001"); got != want {
			t.Errorf("names(%q) = %v; want %v", s, got, want)
		}
	}
}
