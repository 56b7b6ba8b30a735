package main

// The Codex waiter (issue 52), end to end with the real binary and a
// stand-in `codex` on PATH that records what `codex queue` is given: the
// Stop hook returns at once and leaves one waiter per session in the
// background; the waiter claims the late answer and queues it once; a
// Codex without `queue` gets no waiter (the answer waits for the next
// prompt); a failed `codex queue` keeps the claimed answer for the next
// hook. The real Codex is in TestRealAgentCodexLate.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/waterfall"
)

// fakeCodex is a `codex` that answers `queue --help` as Codex 0.171.0 does
// (unless FAKE_CODEX_OLD is set: then as a Codex without queue) and writes
// each queued message to a file of its own in FAKE_CODEX_DIR (or fails,
// when FAKE_CODEX_FAIL is set, as queue does for a session it cannot find).
const fakeCodex = `#!/bin/sh
if [ "$1" = queue ] && [ "$2" = --help ]; then
  if [ -n "$FAKE_CODEX_OLD" ]; then echo "error: unrecognized subcommand 'queue'" >&2; exit 2; fi
  echo "Usage: codex queue [OPTIONS] --thread <THREAD> --message <TEXT>"; exit 0
fi
if [ "$1" = queue ] && [ "$2" = --thread ] && [ "$4" = --message ]; then
  if [ -n "$FAKE_CODEX_FAIL" ]; then echo "Error: No active session found matching '$3'." >&2; exit 1; fi
  f=$(mktemp "$FAKE_CODEX_DIR/queued.XXXXXX") && printf '%s' "$3" > "$f.thread" && printf '%s' "$5" > "$f"
  echo "Queued message for thread $3."; exit 0
fi
echo "fake codex: $*" >&2; exit 2
`

type codexWake struct {
	t       *testing.T
	e       lateEnv
	s       *lateSession
	dir     string // where the fake codex writes what it queued
	callID  string
	session string
}

// newCodexWake is a Codex session whose MCP ask went pending (booked by
// its PostToolUse hook), with the fake codex first on PATH.
func newCodexWake(t *testing.T, e lateEnv, env ...string) *codexWake {
	ctx := testCtx(t)
	s := newLateSession(t, e)
	bin, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(fakeCodex), 0o755); err != nil {
		t.Fatal(err)
	}
	s.env = append(s.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_CODEX_DIR="+dir)
	s.env = append(s.env, env...)
	w := &codexWake{t: t, e: e, s: s, dir: dir, callID: "mcp-" + safe(t), session: s.id}
	req := oneQuestion(w.callID, "PostgreSQL", "SQLite")
	req.Questions[0].Question = "Which database?"
	req.Agent = waterfall.Agent{ID: "codex", SessionID: s.id}
	ms := float64(1000)
	req.TimeoutMs = &ms
	if res, err := e.b.client().Ask(ctx, req); err != nil || !res.Pending {
		t.Fatalf("the MCP ask: %+v %v", res, err)
	}
	resp := mustJSON(map[string]any{"callId": w.callID, "pending": true})
	if out, _, code := w.run(hook.EventPostToolUse, map[string]any{"tool_name": "mcp__askslack__ask_user_question",
		"tool_input": map[string]any{}, "tool_response": resp}); out != "" || code != 0 {
		t.Fatalf("PostToolUse of the pending tool: exit %d %q", code, out)
	}
	return w
}

func (w *codexWake) run(event string, fields map[string]any) (string, string, int) {
	w.t.Helper()
	h := startHookEnv(w.t, w.s.env, w.e.url, w.s.input(event, fields), "codex")
	out, code := h.wait(w.t)
	w.t.Logf("%s hook took %s", event, h.took.Round(time.Millisecond)) // Codex holds its turn meanwhile
	return out, h.stderr.String(), code
}

// lockPath is the session's waiter lock.
func (w *codexWake) lockPath() string {
	return filepath.Join(w.s.cache, "askslack", "late", hook.SessionKey(hook.Codex, w.session)+".wake")
}

// waiterGone waits until no waiter holds the session's lock.
func (w *codexWake) waiterGone(ctx context.Context) {
	w.t.Helper()
	f, err := os.OpenFile(w.lockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			w.t.Fatal(err)
		}
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	case <-ctx.Done():
		f.Close() // the waiter still runs
		w.t.Fatal("the waiter did not end")
	}
}

// waiterRuns reports whether a waiter holds the session's lock.
func (w *codexWake) waiterRuns() bool {
	f, err := os.OpenFile(w.lockPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// queued are the messages the fake codex was handed, each with its thread.
func (w *codexWake) queued() (texts, threads []string) {
	w.t.Helper()
	names, _ := filepath.Glob(filepath.Join(w.dir, "queued.*"))
	for _, n := range names {
		if strings.HasSuffix(n, ".thread") {
			continue
		}
		b, _ := os.ReadFile(n)
		th, _ := os.ReadFile(n + ".thread")
		texts, threads = append(texts, string(b)), append(threads, string(th))
	}
	return texts, threads
}

func TestE2EHookCodexWaiter(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	e := lateEnv{hookEnv: hookEnv{url: "http://" + b.addr, fake: d.fake}, b: b}

	t.Run("QueuesTheAnswerOnce", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		w := newCodexWake(t, e)
		// Two stops (two turns ending close together): the hooks print
		// nothing, return while their waiter goes on, and one waiter runs.
		for range 2 {
			if out, errw, code := w.run(hook.EventStop, map[string]any{"stop_hook_active": false}); out != "" || code != 0 {
				t.Fatalf("Stop: exit %d %q %s", code, out, errw)
			}
		}
		if !w.waiterRuns() {
			t.Fatal("no waiter runs after the Stop hook returned")
		}
		m := waitPosted(t, ctx, e.fake, w.callID)
		answerLate(t, ctx, e.fake, m, "PostgreSQL")
		delivered(t, ctx, e.fake, m)
		w.waiterGone(ctx)
		texts, threads := w.queued()
		if len(texts) != 1 || threads[0] != w.session {
			t.Fatalf("codex queue was run %d times (threads %q); want once for %s", len(texts), threads, w.session)
		}
		lateText(t, texts[0], w.callID)
		// Every later hook of the session hands nothing on, and starts no
		// waiter that would.
		for _, ev := range []string{hook.EventUserPromptSubmit, hook.EventPostToolUse, hook.EventStop} {
			if out, errw, code := w.run(ev, map[string]any{"tool_name": "exec_command", "prompt": texts[0]}); out != "" || code != 0 {
				t.Fatalf("%s after the wake: exit %d %q %s", ev, code, out, errw)
			}
		}
		w.waiterGone(ctx)
		if texts, _ := w.queued(); len(texts) != 1 {
			t.Fatalf("queued %d times; want once", len(texts))
		}
	})

	t.Run("OlderCodexWaitsForTheNextPrompt", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		w := newCodexWake(t, e, "FAKE_CODEX_OLD=1")
		if out, _, code := w.run(hook.EventStop, nil); out != "" || code != 0 {
			t.Fatalf("Stop: exit %d %q", code, out)
		}
		w.waiterGone(ctx) // a Codex without queue: the waiter leaves at once
		m := waitPosted(t, ctx, e.fake, w.callID)
		answerLate(t, ctx, e.fake, m, "PostgreSQL")
		out, _, code := w.run(hook.EventUserPromptSubmit, map[string]any{"prompt": "anything new?"})
		var o struct {
			HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &o) != nil {
			t.Fatalf("UserPromptSubmit: exit %d %q", code, out)
		}
		lateText(t, o.HookSpecificOutput.AdditionalContext, w.callID)
		if texts, _ := w.queued(); len(texts) != 0 {
			t.Fatalf("queued %d messages to a Codex without queue", len(texts))
		}
	})

	t.Run("FailedQueueGoesWithTheNextHook", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		w := newCodexWake(t, e, "FAKE_CODEX_FAIL=1")
		if out, _, code := w.run(hook.EventStop, nil); out != "" || code != 0 {
			t.Fatalf("Stop: exit %d %q", code, out)
		}
		m := waitPosted(t, ctx, e.fake, w.callID)
		answerLate(t, ctx, e.fake, m, "PostgreSQL")
		w.waiterGone(ctx) // claimed, queue failed, kept; nothing left to wait for
		out, _, code := w.run(hook.EventUserPromptSubmit, map[string]any{"prompt": "anything new?"})
		var o struct {
			HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &o) != nil {
			t.Fatalf("UserPromptSubmit after the failed queue: exit %d %q", code, out)
		}
		lateText(t, o.HookSpecificOutput.AdditionalContext, w.callID)
		if out, _, code := w.run(hook.EventUserPromptSubmit, map[string]any{"prompt": "more?"}); out != "" || code != 0 {
			t.Fatalf("the kept answer was handed on twice: %q", out)
		}
	})
}
