package realagent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Term is a program running in a real terminal: a tmux session on a tmux
// server of its own (so parallel tests never share one), 160×50.
type Term struct {
	t      testing.TB
	socket string
	dir    string
}

// StartTerm runs argv in dir with exactly env (no variable of the test
// process leaks in) inside a new tmux session, and stops it when the test
// ends.
func StartTerm(t testing.TB, dir string, env []string, argv ...string) *Term {
	t.Helper()
	Need(t, "tmux")
	tmp := t.TempDir()
	term := &Term{t: t, socket: filepath.Join(tmp, "tmux.sock"), dir: dir}
	// A script holds the environment and the command, so neither depends
	// on what the tmux server inherited.
	var sb strings.Builder
	sb.WriteString("#!/bin/sh\ncd " + shq(dir) + " || exit 1\nexec env -i")
	for _, kv := range env {
		sb.WriteString(" " + shq(kv))
	}
	for _, a := range argv {
		sb.WriteString(" " + shq(a))
	}
	sb.WriteString("\n")
	script := filepath.Join(tmp, "run.sh")
	if err := os.WriteFile(script, []byte(sb.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := term.tmux("new-session", "-d", "-x", "160", "-y", "50", "-s", "agent", script); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	// Keep the pane after the program exits, so a test can read its last
	// screen.
	_, _ = term.tmux("set-option", "-t", "agent", "remain-on-exit", "on")
	pid := 0
	if out, err := term.tmux("display-message", "-p", "-t", "agent", "#{pane_pid}"); err == nil {
		pid, _ = strconv.Atoi(strings.TrimSpace(out))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("terminal at the end:\n%s", term.Screen())
		}
		_, _ = term.tmux("kill-server")
		// The program goes on writing its HOME for a moment after the
		// terminal is gone; the test's temporary folders are removed
		// next, so wait for it to end.
		stopProcess(pid)
	})
	return term
}

// stopProcess ends pid (SIGTERM, then SIGKILL after a few seconds) and
// waits until it is gone.
func stopProcess(pid int) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	start := time.Now()
	for alive(pid) && time.Since(start) < 10*time.Second {
		if time.Since(start) > 5*time.Second {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond) // no exit notice for a process that is not our child
	}
}

// alive reports whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// pid (comm) STATE …; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func (m *Term) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", m.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// Screen is what the terminal shows now, as plain text.
func (m *Term) Screen() string {
	out, err := m.tmux("capture-pane", "-p", "-t", "agent")
	if err != nil {
		return "(no screen: " + err.Error() + ")"
	}
	return out
}

// WaitFor waits until the screen contains every one of substrs, and
// returns that screen.
func (m *Term) WaitFor(ctx context.Context, substrs ...string) string {
	m.t.Helper()
	return m.WaitUntil(ctx, fmt.Sprintf("the terminal to show %q", substrs), func(s string) bool {
		for _, sub := range substrs {
			if !strings.Contains(s, sub) {
				return false
			}
		}
		return true
	})
}

// WaitUntil polls the screen until ok says so; the test fails, showing
// the last screen, when ctx ends first. A terminal has no event to wait
// on: polling what a person would see is the test.
func (m *Term) WaitUntil(ctx context.Context, what string, ok func(screen string) bool) string {
	m.t.Helper()
	for {
		s := m.Screen()
		if ok(s) {
			return s
		}
		select {
		case <-ctx.Done():
			m.t.Fatalf("waiting for %s: %v\nscreen:\n%s", what, ctx.Err(), s)
			return s
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Type types text as a person would (literally, no key names).
func (m *Term) Type(text string) {
	m.t.Helper()
	if out, err := m.tmux("send-keys", "-t", "agent", "-l", text); err != nil {
		m.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

// Press presses keys by tmux name: Enter, Escape, Down, Up, Tab, C-c, …
func (m *Term) Press(keys ...string) {
	m.t.Helper()
	for _, k := range keys {
		if out, err := m.tmux("send-keys", "-t", "agent", k); err != nil {
			m.t.Fatalf("tmux send-keys %s: %v\n%s", k, err, out)
		}
		time.Sleep(80 * time.Millisecond) // a person's pace: TUIs read keys in batches
	}
}

// Confirm presses key (Enter, say) until the screen no longer contains
// gone, as a person would when a dialog ignores a key pressed too soon
// after it appeared (Claude Code's dialogs ignore confirmations for a
// moment, against keys meant for what was there before).
func (m *Term) Confirm(ctx context.Context, key, gone string) {
	m.t.Helper()
	m.pressUntil(ctx, key, "closed "+strconv.Quote(gone), func(s string) bool { return !strings.Contains(s, gone) })
}

// Submit presses key until the screen shows appears (Codex's composer
// keeps a prompt typed before a dialog; Enter sends it once the dialog is
// gone).
func (m *Term) Submit(ctx context.Context, key, appears string) {
	m.t.Helper()
	m.pressUntil(ctx, key, "showed "+strconv.Quote(appears), func(s string) bool { return strings.Contains(s, appears) })
}

// SubmitAny presses key until the screen shows one of appears, and returns
// that screen (for a key whose answer may be one of several screens).
func (m *Term) SubmitAny(ctx context.Context, key string, appears ...string) string {
	m.t.Helper()
	return m.pressUntil(ctx, key, "showed any of "+strings.Join(appears, ", "), func(s string) bool {
		return slices.ContainsFunc(appears, func(a string) bool { return strings.Contains(s, a) })
	})
}

func (m *Term) pressUntil(ctx context.Context, key, what string, done func(screen string) bool) string {
	m.t.Helper()
	for i := 0; ; i++ {
		m.Press(key)
		wait, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		for !done(m.Screen()) && wait.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		if screen := m.Screen(); done(screen) {
			return screen
		}
		if ctx.Err() != nil || i == 5 {
			m.t.Fatalf("pressing %s never %s:\n%s", key, what, m.Screen())
		}
	}
}

// Exited reports whether the program has ended.
func (m *Term) Exited() bool {
	out, err := m.tmux("display-message", "-p", "-t", "agent", "#{pane_dead}")
	return err != nil || strings.TrimSpace(out) == "1"
}

// shq quotes s for sh.
func shq(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
