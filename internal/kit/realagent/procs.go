package realagent

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The CLIs start processes that outlive the command that started them:
// Codex's `codex app-server --managed-daemon` and its `pid-update-loop`,
// run from CODEX_HOME's packages, detach and keep running after the test.
// Every agent's HOME and project folder are under one temporary folder of
// the test, so what the test started is whatever runs with that folder in
// its command line, working folder or environment. leaveNothing stops
// those when the test ends, and fails the test if any survive.

// proc is a process found under a folder.
type proc struct {
	pid     int
	cmdline string
}

func (p proc) String() string { return strconv.Itoa(p.pid) + " " + p.cmdline }

// leaveNothing registers, on t, stopping every process under dir when t
// ends (before dir is removed: register it after the t.TempDir that made
// dir). It kills them (SIGKILL: their HOME is removed next, there is
// nothing to save), waits until they are gone, logs what it stopped, and
// fails t naming any still running after stopWait.
func leaveNothing(t testing.TB, dir string) {
	t.Cleanup(func() { stopUnder(t, dir) })
}

// stopWait bounds the wait for killed processes to go (a SIGKILLed process
// ends at once unless it is stuck in the kernel).
const stopWait = 10 * time.Second

func stopUnder(t testing.TB, dir string) {
	left := under(dir)
	if len(left) == 0 {
		return
	}
	t.Logf("stopping %d processes the test left running under %s:\n%s", len(left), dir, procList(left))
	start := time.Now()
	for len(left) > 0 {
		if time.Since(start) > stopWait {
			t.Errorf("processes still running under %s %s after SIGKILL:\n%s", dir, stopWait, procList(left))
			return
		}
		// Kill them all again on each round: a supervisor such as the
		// pid-update-loop may start a daemon anew before it dies itself.
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond) // no exit notice for a process that is not our child
		left = under(dir)
	}
}

func procList(ps []proc) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

// under lists the live processes (zombies are not) other than this one
// whose command line, working folder or environment names dir or a path
// in it. It reads /proc; where there is none it finds nothing.
func under(dir string) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || !alive(pid) {
			continue
		}
		base := "/proc/" + e.Name()
		cmd, _ := os.ReadFile(base + "/cmdline")
		env, _ := os.ReadFile(base + "/environ") // readable for our own user's processes
		cwd, _ := os.Readlink(base + "/cwd")
		if names(cmd, dir) || names(env, dir) || names([]byte(cwd), dir) {
			out = append(out, proc{pid: pid, cmdline: strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))})
		}
	}
	return out
}

// names reports whether b holds dir as a whole path or a path's start:
// dir followed by the end, "/", a NUL, a space, ":" or "=" (so /tmp/x/001
// does not name /tmp/x/0010).
func names(b []byte, dir string) bool {
	d := []byte(dir)
	for i := 0; ; {
		j := bytes.Index(b[i:], d)
		if j < 0 {
			return false
		}
		k := i + j + len(d)
		if k == len(b) || strings.IndexByte("/\x00 :=\"'", b[k]) >= 0 {
			return true
		}
		i = i + j + 1
	}
}
