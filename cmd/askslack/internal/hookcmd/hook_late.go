package hookcmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// Late answers: a question the agent went on without (Claude Code's
// question timeout ended AskUserQuestion, or askslack's MCP tool returned
// pending) stays open in Slack, and what a person answers later reaches the
// running session at the first chance the agent gives a hook — the next
// tool call (PostToolUse), the next prompt (UserPromptSubmit), the model's
// attempt to stop (Stop) — or, for Claude Code sitting idle, from a
// background Stop hook that wakes it (asyncRewake).
//
// Which calls a session may receive is kept on this machine, per session,
// in a small book: a call goes in when this session's own hook saw the
// agent go on without its answer, and never otherwise, so an answer to a
// call the session did not make is never injected. Each answer is claimed
// at the bot before it is printed (an ack that reports whether it was
// first), so of two hooks, two sessions or a hook and the MCP server's
// get_late_answers racing for one answer only one passes it on.

// lateBudget bounds what a delivering hook spends on the bot: it runs on
// every tool call, so a bot that is slow or down costs the agent at most
// this, and the answer waits for the next chance. Codex's hooks hold its
// turn while they run, so theirs is a second (codexLateBudget).
const (
	lateBudget      = 3 * time.Second
	codexLateBudget = time.Second
)

// lateBudget is this agent's bound for a delivering hook.
func (h *hookRun) lateBudget() time.Duration {
	if h.agent == hook.Codex {
		return codexLateBudget
	}
	return lateBudget
}

// book is the calls of one session whose late answers are still to come.
type book struct{ path string }

// bookFor is the book of the hook input's session. Its folder is the
// user's cache folder (askslack/late), or the system's temporary folder
// when there is none.
func bookFor(agent hook.Agent, in *hook.Input) book {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return book{path: filepath.Join(dir, "askslack", "late", hook.SessionKey(agent, in.SessionID))}
}

// locked runs fn on the book's calls under an exclusive lock, and writes
// back what fn returns when it differs.
func (b book) locked(fn func(ids []string) []string) ([]string, error) {
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(b.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); waterfall.ValidID(id) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	out := fn(slices.Clone(ids))
	if slices.Equal(out, ids) {
		return out, nil
	}
	if len(out) == 0 {
		return out, os.Remove(b.path)
	}
	if err := f.Truncate(0); err != nil {
		return nil, err
	}
	_, err = f.WriteAt([]byte(strings.Join(out, "\n")+"\n"), 0)
	return out, err
}

// asking is the session's other book: the calls its PermissionRequest hooks
// are asking in Slack right now.
func (b book) asking() book { return book{path: b.path + ".asking"} }

// calls are the book's calls; none when there is no book.
func (b book) calls() []string {
	if _, err := os.Stat(b.path); err != nil {
		return nil
	}
	ids, _ := b.locked(func(ids []string) []string { return ids })
	return ids
}

func (b book) add(id string) error {
	_, err := b.locked(func(ids []string) []string {
		if slices.Contains(ids, id) {
			return ids
		}
		return append(ids, id)
	})
	return err
}

func (b book) remove(done []string) {
	if len(done) == 0 {
		return
	}
	_, _ = b.locked(func(ids []string) []string {
		return slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(done, id) })
	})
}

// wentOn records that the agent went on without the answer to callID: the
// question turns continued in Slack (the bot queues a later answer) and the
// call goes into the session's book. An answer given at the very moment
// the agent went on settled the ask instead; it is logged, since the agent
// no longer reads this hook's decision.
func (h *hookRun) wentOn(in *hook.Input, callID string) {
	ctx, cancel := context.WithTimeout(context.Background(), hookWithdraw)
	defer cancel()
	_, err := h.client.Continue(ctx, callID)
	switch {
	case err == nil:
		if err := bookFor(h.agent, in).add(callID); err != nil {
			fmt.Fprintln(h.errw, "askslack hook: the agent went on; keeping its call for a late answer failed:", err)
			return
		}
		fmt.Fprintln(h.errw, "askslack hook: the agent went on without an answer; the question stays open in Slack and a later answer reaches this session")
	case waterfall.CodeOf(err) == waterfall.CodeAlreadySettled:
		fmt.Fprintln(h.errw, "askslack hook: answered in Slack just as the agent went on without an answer")
	default:
		fmt.Fprintln(h.errw, "askslack hook: the agent went on; the question could not stay open in Slack:", h.unreachable(err))
	}
}

// late runs on PostToolUse, UserPromptSubmit and Stop: it hands the
// session's waiting late answers to the model. A PostToolUse of askslack's
// MCP ask tool that came back pending first puts that call in the book.
// Any failure prints nothing: the agent goes on, and the answer waits for
// the next chance.
func (h *hookRun) late(ctx context.Context, in *hook.Input) error {
	b := bookFor(h.agent, in)
	if id := hook.PendingCall(in); id != "" {
		if err := b.add(id); err != nil {
			fmt.Fprintln(h.errw, "askslack hook: keeping the pending call for its late answer failed:", err)
		}
	}
	ids := b.calls()
	if len(ids) == 0 && !b.holds() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.lateBudget())
	defer cancel()
	msgs := h.collect(ctx, b, ids)
	held := b.takeHeld()
	if len(msgs) == 0 && len(held) == 0 {
		return nil
	}
	text := strings.Join(held, "\n\n")
	if len(msgs) > 0 {
		text = strings.TrimSpace(strings.Join([]string{text, hook.LateText(msgs)}, "\n\n"))
	}
	_, err := fmt.Fprintf(h.out, "%s\n", hook.LateOutput(in.HookEventName, text))
	return err
}

// collect claims the late answers waiting for ids, and drops from the book
// every call that will bring none any more (answered, withdrawn, gone, or
// delivered by someone else).
func (h *hookRun) collect(ctx context.Context, b book, ids []string) []waterfall.SteeredMessage {
	var (
		mu   sync.Mutex
		msgs []waterfall.SteeredMessage
		done []string
		wg   sync.WaitGroup
	)
	for _, id := range ids {
		wg.Go(func() {
			m, over := h.claim(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			if m != nil {
				msgs = append(msgs, *m)
			}
			if over {
				done = append(done, id)
			}
		})
	}
	wg.Wait()
	b.remove(done)
	slices.SortFunc(msgs, func(a, b waterfall.SteeredMessage) int { return a.QueuedAt.Compare(b.QueuedAt) })
	return msgs
}

// claim reads callID and, when a late answer waits, admits it; m is the
// answer when this claim was first. over: the call has nothing more to
// bring.
func (h *hookRun) claim(ctx context.Context, callID string) (m *waterfall.SteeredMessage, over bool) {
	st, err := h.client.Get(ctx, callID, 0)
	switch {
	case waterfall.CodeOf(err) == waterfall.CodeNotFound:
		return nil, true
	case err != nil:
		return nil, false
	case st.State == "settled" || st.State == "aborted":
		return nil, true
	case st.State != "continued" || st.Reply == nil:
		return nil, false
	}
	first, err := h.client.Admit(ctx, st.Agent.SessionID, st.Reply.ID)
	switch {
	case err != nil && waterfall.CodeOf(err) != waterfall.CodeUnavailable && !hostapi.Transient(err):
		return nil, true // withdrawn meanwhile, or no longer waiting
	case err != nil:
		return nil, false
	case !first:
		return nil, true
	}
	return st.Reply, true
}

// wakeLife bounds a background waiter: no question waits longer.
const wakeLife = waterfall.MaxTimeout

// wake is the background waiter (--wake): while the session has calls
// whose late answers are still to come, it waits for one and wakes the
// session with it. Claude Code runs it as an asyncRewake Stop hook: the
// answer goes on stderr with exit status 2, which Claude Code shows the
// model and which starts a turn when the session sits idle. Codex has no
// such hook; its Stop hook starts this waiter in the background
// (startCodexWaiter), and it hands each answer over with `codex queue`,
// which starts a turn in an idle session (codex_queue.go). One waiter
// runs per session (a lock); it ends as soon as the book is empty, when
// the agent that started it is gone, or after wakeLife.
func (h *hookRun) wake(ctx context.Context, in *hook.Input) error {
	defer h.signalReady()
	b := bookFor(h.agent, in)
	if !b.waiting() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(b.path+".wake", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return nil // another waiter has this session
	}
	h.signalReady()
	ctx, cancel := context.WithTimeout(ctx, wakeLife)
	defer cancel()
	deliver := h.wakeClaude
	if h.agent == hook.Codex {
		q, err := findCodexQueue(ctx, h.agentPID)
		if err != nil {
			// An older Codex: the answer waits for the next prompt or tool
			// call (the quick hooks).
			fmt.Fprintln(h.errw, "askslack hook: no late-answer waiter for this Codex:", err)
			return nil
		}
		ctx = whileAlive(ctx, h.agentPID)
		deliver = func(ctx context.Context, msgs []waterfall.SteeredMessage) (bool, error) {
			return false, h.wakeCodex(ctx, q, b, in.SessionID, msgs)
		}
	} else {
		ctx = whileParent(ctx)
	}
	for {
		err := h.waitLoop(ctx, b, deliver)
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		// A call booked while this waiter was ending found the lock held
		// and started none: look once more, unlocked.
		if err != nil || ctx.Err() != nil || !b.waiting() {
			return err
		}
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return nil // another waiter has this session now
		}
	}
}

// signalReady tells the Stop hook that started this waiter (--ready-fd)
// that it holds the session or has left; safe to call twice.
func (h *hookRun) signalReady() {
	if h.ready != nil {
		h.ready.Close()
		h.ready = nil
	}
}

// waiting reports whether the session has a call whose late answer may
// still come, or a question still asked.
func (b book) waiting() bool { return len(b.calls()) > 0 || len(b.asking().calls()) > 0 }

// waitLoop is one waiter's watch: it hands every answer that comes to
// deliver, and returns once nothing is left to wait for, or deliver says
// the waiter is done.
func (h *hookRun) waitLoop(ctx context.Context, b book, deliver func(context.Context, []waterfall.SteeredMessage) (bool, error)) error {
	for ctx.Err() == nil {
		ids := b.calls()
		// A question still asked in this session may be the one the agent
		// just went on without: its hook books it a moment after the model
		// may already have ended its turn (the Stop hooks run then). Open,
		// it is waited for; continued, its answer is this session's.
		open, wentOn := h.stillAsking(ctx, b.asking())
		for _, id := range wentOn {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 && len(open) == 0 {
			return nil
		}
		cctx, ccancel := context.WithTimeout(ctx, lateBudget)
		msgs := h.collect(cctx, b, ids)
		ccancel()
		if len(msgs) > 0 {
			if done, err := deliver(ctx, msgs); done || err != nil {
				return err
			}
			continue
		}
		h.awaitChange(ctx, append(ids, open...))
	}
	return nil
}

// wakeClaude hands msgs to Claude Code as an asyncRewake hook does: on
// stderr, exit status 2. The waiter is then done; the turn it starts ends
// with a Stop hook that starts the next one.
func (h *hookRun) wakeClaude(_ context.Context, msgs []waterfall.SteeredMessage) (bool, error) {
	fmt.Fprintln(h.errw, hook.LateText(msgs))
	return true, &cli.ExitError{Code: 2, Err: cli.ErrReported}
}

// stillAsking sorts the calls of the asking book by their state at the
// bot: open (or the bot cannot tell yet), and continued — the agent went on
// without it, and the hook asking it books it in a moment. An entry a
// killed hook left behind on an ended ask is neither.
func (h *hookRun) stillAsking(ctx context.Context, asking book) (open, wentOn []string) {
	for _, id := range asking.calls() {
		rctx, cancel := context.WithTimeout(ctx, lateBudget)
		st, err := h.client.Get(rctx, id, 0)
		cancel()
		switch {
		case err != nil && waterfall.CodeOf(err) != waterfall.CodeNotFound, err == nil && st.State == "open":
			open = append(open, id)
		case err == nil && st.State == "continued":
			wentOn = append(wentOn, id)
		}
	}
	return open, wentOn
}

// whileParent is ctx ended also when the process that started this one is
// gone (the agent exited; the waiter is then reparented): a waiter must not
// outlive its session.
func whileParent(ctx context.Context) context.Context {
	parent := os.Getppid()
	return whileTrue(ctx, func() bool { return os.Getppid() == parent })
}

// whileAlive is ctx ended also when process pid is gone (Codex's app
// server, which ran the Stop hook that started this waiter; the waiter
// itself runs detached from it). pid 0 watches the parent instead.
func whileAlive(ctx context.Context, pid int) context.Context {
	if pid <= 0 {
		return whileParent(ctx)
	}
	return whileTrue(ctx, func() bool { return processAlive(pid) })
}

// processAlive reports whether pid runs (a zombie does not).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: kill(0) said it runs
	}
	// pid (comm) STATE …; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// whileTrue is ctx ended also once ok, asked every second, says no.
func whileTrue(ctx context.Context, ok func() bool) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !ok() {
					return
				}
			}
		}
	}()
	return ctx
}

// wakePoll is the longest a waiter goes without looking again: it also
// notices a new call in the book and a parent that is gone.
const wakePoll = 20 * time.Second

// awaitChange returns once one of ids changes at the bot, or after
// wakePoll (or at once when the bot cannot be reached, after a second).
func (h *hookRun) awaitChange(ctx context.Context, ids []string) {
	ctx, cancel := context.WithTimeout(ctx, wakePoll)
	defer cancel()
	changed := make(chan struct{}, len(ids))
	for _, id := range ids {
		go func() {
			st, err := h.client.Get(ctx, id, 0)
			if err == nil {
				_, err = h.client.WaitChange(ctx, id, st.Version, wakePoll)
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				select { // the bot is down or refuses: look again in a second
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			changed <- struct{}{}
		}()
	}
	select {
	case <-ctx.Done():
	case <-changed:
	}
}
