package hookcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/waterfall"
)

// Waking an idle Codex session. Codex runs no hook while it sits idle and
// has no asyncRewake, but a released Codex (0.171.0) takes a message for a
// session from outside: `codex queue --thread <session id> --message
// <text>` hands it to the app server that runs the session, which starts a
// turn with it at once when the session is idle (after the running turn
// otherwise). The model reads it as a user message; the terminal shows it
// as a prompt. So Codex's Stop hook, when the session has a call whose late
// answer is still to come, starts a waiter in the background (it returns
// at once: a Codex hook holds the turn while it runs), and the waiter
// claims each answer at the bot, as every hook does, then queues it.

// codexQueueTimeout bounds one `codex queue` (it took 0.14 s here; the
// waiter runs beside the session, so nothing waits for it but the answer).
const codexQueueTimeout = 30 * time.Second

// startCodexWaiter starts this binary again as the session's background
// waiter (--wake), detached from Codex (its own session, no stdout or
// stderr Codex would wait on), with the flags this hook ran with and the
// process that ran this hook (Codex's app server) to watch: the waiter
// ends when it does. It hands the waiter only what it needs of the hook
// input. Failures are logged; the answer then waits for the next hook.
func (h *hookRun) startCodexWaiter(in *hook.Input) {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(h.errw, "askslack hook: no late-answer waiter:", err)
		return
	}
	input, _ := json.Marshal(map[string]string{"session_id": in.SessionID, "cwd": in.Cwd, "hook_event_name": hook.EventStop})
	in0, in1, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(h.errw, "askslack hook: no late-answer waiter:", err)
		return
	}
	defer in0.Close()
	_, _ = in1.Write(input) // far below a pipe's buffer
	in1.Close()
	ready0, ready1, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(h.errw, "askslack hook: no late-answer waiter:", err)
		return
	}
	defer ready0.Close()
	args := append([]string{"hook", "codex"}, waiterFlags(h.flags)...)
	args = append(args, "--wake", "--agent-pid", strconv.Itoa(os.Getppid()), "--ready-fd", "3")
	cmd := exec.Command(exe, args...)
	cmd.Stdin = in0
	if log := backgroundLog(bookFor(h.agent, in)); log != nil {
		defer log.Close()
		cmd.Stderr = log
	}
	cmd.ExtraFiles = []*os.File{ready1} // fd 3
	cmd.Dir = os.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	ready1.Close()
	if err != nil {
		fmt.Fprintln(h.errw, "askslack hook: no late-answer waiter:", err)
		return
	}
	_ = cmd.Process.Release()
	// Return once the waiter holds the session (or left: another has it),
	// so that a stop right after this one finds it; never later than
	// waiterStart.
	_ = ready0.SetReadDeadline(time.Now().Add(waiterStart))
	_, _ = ready0.Read(make([]byte, 1))
}

// waiterStart bounds how long the Stop hook waits for the waiter it
// started to hold the session (a few milliseconds, here).
const waiterStart = 500 * time.Millisecond

// waiterFlags are the hook's flags without those the waiter sets itself.
func waiterFlags(flags []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		name := strings.TrimLeft(strings.SplitN(f, "=", 2)[0], "-")
		switch {
		case name == "wake" || name == "beside":
		case (name == "agent-pid" || name == "ready-fd") && !strings.Contains(f, "="):
			i++ // and its value
		case name == "agent-pid" || name == "ready-fd":
		default:
			out = append(out, f)
		}
	}
	return out
}

// findCodexQueue is the Codex binary that has `codex queue`: the one that
// runs the session (the executable of pid, the process that ran the Stop
// hook, when it is a codex), else `codex` on PATH. An older Codex without
// queue is an error: its late answers wait for the next prompt.
func findCodexQueue(ctx context.Context, pid int) (string, error) {
	var bins []string
	if pid > 0 {
		if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && strings.HasPrefix(filepath.Base(exe), "codex") {
			bins = append(bins, exe)
		}
	}
	if p, err := exec.LookPath("codex"); err == nil && !slices.Contains(bins, p) {
		bins = append(bins, p)
	}
	if len(bins) == 0 {
		return "", errors.New("no codex binary found (not the process that ran the hook, not on PATH)")
	}
	for _, bin := range bins {
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := exec.CommandContext(hctx, bin, "queue", "--help").CombinedOutput()
		cancel()
		if err == nil && bytes.Contains(out, []byte("--thread")) && bytes.Contains(out, []byte("--message")) {
			return bin, nil
		}
	}
	return "", fmt.Errorf("%s has no `codex queue` (Codex 0.171.0 and later have it)", bins[0])
}

// wakeCodex hands msgs, claimed at the bot already, to the session with
// `codex queue`. When that fails the text is held in the session's book and
// goes with the next hook that delivers (a prompt, a tool call, a stop):
// claimed once, it is handed on once.
func (h *hookRun) wakeCodex(ctx context.Context, bin string, b book, session string, msgs []waterfall.SteeredMessage) error {
	text := hook.LateText(msgs)
	qctx, cancel := context.WithTimeout(ctx, codexQueueTimeout)
	defer cancel()
	cmd := exec.CommandContext(qctx, bin, "queue", "--thread", session, "--message", text)
	cmd.Dir = os.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(h.errw, "askslack hook: codex queue failed (%v): %s; the answer goes with the next hook\n", err, bytes.TrimSpace(out))
		if herr := b.hold(text); herr != nil {
			fmt.Fprintln(h.errw, "askslack hook: keeping the answer failed:", herr)
		}
		return nil
	}
	fmt.Fprintf(h.errw, "askslack hook: woke the session with %d late answer(s)\n", len(msgs))
	return nil
}

// held is the book's file of answers claimed but not handed on (a failed
// `codex queue`): one JSON string a line.
func (b book) held() string { return b.path + ".held" }

// holds reports whether the book holds such answers.
func (b book) holds() bool {
	fi, err := os.Stat(b.held())
	return err == nil && fi.Size() > 0
}

// hold keeps text for the next hook that delivers.
func (b book) hold(text string) error {
	line, _ := json.Marshal(text)
	return b.withHeld(func(f *os.File) error {
		if _, err := f.Seek(0, 2); err != nil {
			return err
		}
		_, err := f.Write(append(line, '\n'))
		return err
	})
}

// takeHeld returns the held answers and forgets them.
func (b book) takeHeld() []string {
	if !b.holds() {
		return nil
	}
	var texts []string
	_ = b.withHeld(func(f *os.File) error {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var s string
			if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
				texts = append(texts, s)
			}
		}
		// Emptied, not removed: a hold waiting on the lock still writes
		// to this file.
		return f.Truncate(0)
	})
	return texts
}

func (b book) withHeld(fn func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(b.held(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn(f)
}

// backgroundLog is where a hook's background process (the waiter, a
// question asked beside Codex's) writes what it would say on stderr: the
// session's log beside its book (nil when it cannot be opened).
func backgroundLog(b book) *os.File {
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(b.path+".log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil
	}
	return f
}
