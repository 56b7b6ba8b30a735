// Package hookcmd is `askslack hook claude|codex`: run by Claude Code or
// Codex as a hook command, it asks the hook's question in Slack through the
// bot's host API and prints the agent's decision JSON, watching the bot
// and the agent's terminal while it waits. What an event asks and what an
// answer decides is package hook's (pure, no I/O); this package is the
// process around it.
package hookcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// hookUsage is `askslack hook`'s help.
const hookUsage = `usage: askslack hook claude|codex [flags] < hook-input.json
  run by Claude Code or Codex CLI as a hook command: asks in Slack and prints the agent's decision JSON.
  askslack hook claude --print-settings   the .claude/settings.json snippet
  askslack hook codex --print-config     the ~/.codex/hooks.json snippet`

// Bounds that keep a failing hook from holding up the agent: every error
// (bot unreachable, token refused) ends well within 5 s, a bot that stops
// answering within hookSilence.
const (
	// fixedWait is --wait's default for Codex, which runs the hook before
	// its own approval prompt (the terminal shows nothing while it waits),
	// and for a headless Claude Code run with --defer.
	fixedWait    = 10 * time.Minute
	hookDial     = 1500 * time.Millisecond
	hookReattach = time.Second
	hookWithdraw = 3 * time.Second
	// hookWindowSlack lets the bot close the window at its deadline (the
	// usual way) before this run closes it itself.
	hookWindowSlack = 2 * time.Second
	maxHookInput    = 16 << 20
)

// hookRun is one run of `askslack hook`.
type hookRun struct {
	agent  hook.Agent
	client *hostapi.Client
	wait   time.Duration
	// follow: Claude Code's prompt decides how long the question is up
	// (no --wait given): the hook waits until the terminal is answered,
	// the agent goes on, or the agent stops the hook.
	follow bool
	wakes  bool // --wake: the background waiter
	// agentPID (--agent-pid): with --wake, the process whose end ends the
	// waiter (Codex's, which runs the waiter detached); 0: the parent.
	agentPID int
	ready    *os.File      // --ready-fd: closed once the waiter holds its session, or left
	besides  bool          // --beside: Codex's request_user_input, in the background
	flags    []string      // the flags this run was given (a waiter gets them too)
	in       *hook.Input   // the hook's input, once read
	silence  time.Duration // see hookSilence
	defers   bool
	channel  string
	term     *terminalWatch // Claude's PermissionRequest: the terminal answered first
	out      io.Writer
	errw     io.Writer
}

// Run is `askslack hook claude|codex`. Errors are one line on
// stderr and exit status 1 with nothing on stdout: both agents treat that
// as a non-blocking failure and fall back to their own prompt.
func Run(args []string, in io.Reader, out, errw io.Writer) error {
	err := runHook(args, in, out, errw)
	if ee, ok := err.(*cli.ExitError); ok {
		return ee // said all it had to (--wake's exit status 2)
	}
	if err != nil {
		return &cli.ExitError{Code: 1, Err: errors.New(strings.Join(strings.Fields(err.Error()), " "))}
	}
	return nil
}

func runHook(args []string, in io.Reader, out, errw io.Writer) error {
	if len(args) == 0 || (args[0] != "claude" && args[0] != "codex") {
		return errors.New("hook needs an agent: askslack hook claude|codex")
	}
	agent := map[string]hook.Agent{"claude": hook.Claude, "codex": hook.Codex}[args[0]]
	fs := flag.NewFlagSet("hook "+args[0], flag.ContinueOnError)
	fs.SetOutput(errw)
	fs.Usage = func() { fmt.Fprintln(errw, hookUsage); fs.PrintDefaults() }
	u, token := cli.ClientFlags(fs)
	wait := fs.Duration("wait", 0, "how long to wait for an answer in Slack before the agent's own prompt decides (default: Claude Code, as long as its own prompt is up, at most 24h; Codex and --defer, 10m)")
	wakes := fs.Bool("wake", false, "the background waiter: wait for a late answer and wake the session with it (Claude Code: its asyncRewake Stop hook; Codex: started by the Stop hook)")
	agentPID := fs.Int("agent-pid", 0, "with --wake: end the waiter when this process ends (default: when the parent does)")
	besides := fs.Bool("beside", false, "Codex's request_user_input, in the background: ask in Slack and hand the answer to Codex's app server (started by the PreToolUse hook)")
	readyFD := fs.Int("ready-fd", 0, "with --wake: a file descriptor the waiter closes once it holds the session or has left (how the Codex Stop hook that starts it knows)")
	defers := fs.Bool("defer", false, "headless runs (claude -p): when the wait ends, print the defer decision and leave the question open")
	channel := fs.String("channel", "", "Slack channel id (default: the bot's ASKSLACK_CHANNEL)")
	settings := fs.Bool("print-settings", false, "print the Claude Code settings.json hooks snippet and exit")
	config := fs.Bool("print-config", false, "print the Codex hooks.json snippet and exit")
	mode := fs.String("permission-mode", "", "with --print-settings: also set Claude Code's permissions.defaultMode; default sends every permission prompt to Slack (Claude Code's own default, auto, asks nobody about most commands)")
	if err := fs.Parse(args[1:]); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if *wait < 0 || *wait > waterfall.MaxTimeout {
		return fmt.Errorf("--wait must be between 1ms and %s", waterfall.MaxTimeout)
	}
	// No --wait: Claude Code's prompt decides how long its question is up
	// (follow); a headless run that defers, and Codex, which runs the hook
	// before its own prompt, wait fixedWait.
	follow := *wait == 0 && agent == hook.Claude && !*defers
	switch {
	case follow:
		*wait = waterfall.MaxTimeout
	case *wait == 0:
		*wait = fixedWait
	}
	if *mode != "" && !slices.Contains(claudeModes, *mode) {
		return fmt.Errorf("--permission-mode must be one of %s", strings.Join(claudeModes, ", "))
	}
	if *mode != "" && !*settings {
		return errors.New("--permission-mode goes with --print-settings (Claude Code)")
	}
	if *settings || *config {
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "token" {
				fmt.Fprintln(errw, "askslack hook: the snippet leaves --token out (a secret does not belong in a settings file); set ASKSLACK_TOKEN where the agent runs")
			}
		})
		return printHookSettings(out, agent, *wait, *defers, *mode, snippetFlags(fs))
	}
	h := &hookRun{agent: agent, wait: *wait, follow: follow, wakes: *wakes, agentPID: *agentPID, besides: *besides, flags: args[1:], silence: hookSilenceFromEnv(),
		defers: *defers, channel: *channel, out: out, errw: errw, client: hookClient(*u, *token)}
	if *readyFD > 2 {
		h.ready = os.NewFile(uintptr(*readyFD), "ready")
		defer h.signalReady()
	}
	data, err := io.ReadAll(io.LimitReader(in, maxHookInput))
	if err != nil {
		return fmt.Errorf("reading the hook input: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return h.run(ctx, data)
}

// hookClient fails fast when the bot is unreachable, but leaves a blocking
// ask without a response deadline: it waits for a person (and watchBot
// for a bot that stopped answering).
func hookClient(base, token string) *hostapi.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: hookDial}).DialContext
	return &hostapi.Client{BaseURL: base, Token: token, HTTP: &http.Client{Transport: tr}, Reattach: hookReattach}
}

func (h *hookRun) run(ctx context.Context, data []byte) error {
	in, err := hook.Parse(data)
	if err != nil {
		return err
	}
	h.in = in
	p, err := hook.Build(h.agent, in, hook.Options{Defer: h.defers, ReadPlan: readPlanFile,
		Transcript: func() []byte { return readTail(in.TranscriptPath, maxTranscriptScan) }})
	if err != nil {
		return err
	}
	switch p.Kind {
	case hook.Late:
		if h.wakes {
			if in.HookEventName != hook.EventStop {
				return fmt.Errorf("--wake runs as a Stop hook, not on %s", in.HookEventName)
			}
			return h.wake(ctx, in)
		}
		err := h.late(ctx, in)
		if h.agent == hook.Codex && in.HookEventName == hook.EventStop && bookFor(h.agent, in).waiting() {
			// Codex runs no hook while idle: a waiter in the background
			// wakes the session when the answer comes.
			h.startCodexWaiter(in)
		}
		return err
	case hook.Grant:
		_, err := fmt.Fprintf(h.out, "%s\n", hook.GrantOutput())
		return err
	case hook.Beside:
		p.Request.Channel = h.channel
		if h.besides {
			return h.beside(ctx, p)
		}
		// Codex shows its own question once this hook returns; the
		// question in Slack is asked beside it, in the background.
		return h.startBeside(data)
	case hook.Skip:
		fmt.Fprintln(h.errw, "askslack hook:", p.Reason)
		return nil
	case hook.Notice:
		if in.NotificationType == "permission_prompt" && h.askingInSlack(ctx, p.Notice.Agent.SessionID) {
			fmt.Fprintln(h.errw, "askslack hook: the permission prompt is already asked in Slack; no notice")
			return nil
		}
		nctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		defer cancel()
		return h.unreachable(h.client.Notify(nctx, hostapi.Notice{Agent: p.Notice.Agent, Text: p.Notice.Text, Channel: h.channel}))
	}
	req := p.Request
	req.Channel = h.channel
	question := in.ToolName == hook.ToolAskUserQuestion
	if !h.follow || question {
		// A question the agent may go on without is timed, so that it can
		// turn continued (a late answer needs the session it goes to), and
		// timed as the agent waits: following Claude Code's prompt, its
		// question timeout, or not at all when its question does not time
		// out (then, like a permission, no countdown: the terminal waits).
		wait, timed := h.wait, true
		if h.follow && question {
			wait, timed = claudeQuestionWait(in)
		}
		if timed {
			ms := float64(wait.Milliseconds())
			req.TimeoutMs = &ms
		}
	}
	if !h.defers && !(h.follow && question) {
		req.OnTimeout = waterfall.OnTimeoutTerminal // the window's end withdraws it (ask)
	}
	if !h.defers && !p.Stable {
		// Without a tool_use_id the derived id would re-attach a later,
		// identical request to an earlier answer; only --defer wants that.
		req.CallID = cli.NewCallID(string(h.agent))
	}
	ctx, stop := h.watchBot(ctx, req.CallID)
	defer stop()
	if h.agent == hook.Claude && in.HookEventName == hook.EventPermissionRequest && !h.defers {
		ctx, h.term = h.watchTerminal(ctx, in)
		defer h.term.Stop()
		// The permission_prompt notice that fires beside this hook looks
		// here for the question it would repeat (an untimed ask is not in
		// the session's projection).
		asking := bookFor(h.agent, in).asking()
		if asking.add(req.CallID) == nil {
			defer asking.remove([]string{req.CallID})
		}
	}
	if h.defers {
		err = h.deferred(ctx, p)
	} else {
		err = h.ask(ctx, p)
	}
	if serr := silenced(ctx); err != nil && serr != nil {
		return serr // whatever failed, it failed because the bot stopped answering
	}
	return err
}

// ask posts the question and waits. Unanswered (the window closed) or
// interrupted (the agent was answered in the terminal and stopped us): the
// question is withdrawn and nothing is printed, so the agent's own prompt
// decides.
func (h *hookRun) ask(ctx context.Context, p *hook.Plan) error {
	res, err := h.post(ctx, p.Request)
	if silenced(ctx) != nil {
		return silenced(ctx) // a withdrawal would not be answered either
	}
	// Stopped by a signal: an agent that stops its hook because its own
	// dialog was answered (or timed out) says so in the transcript.
	terminal := answeredInTerminal(ctx) || ctx.Err() != nil && h.term.Within(terminalGrace)
	switch {
	case terminal && h.term.WentOn():
		// Claude Code's question timeout: the agent goes on without an
		// answer, and one given later in Slack still reaches it.
		h.wentOn(h.in, p.Request.CallID)
		return nil
	case terminal:
		// The terminal decided; an answer given in Slack at the same
		// moment would be ignored by the agent, so none is printed.
		h.withdraw(p.Request.CallID, hostapi.ReasonElsewhere)
		fmt.Fprintln(h.errw, "askslack hook: answered in the terminal; the question in Slack is withdrawn")
		return nil
	case ctx.Err() != nil:
		h.withdraw(p.Request.CallID, "")
		return nil
	case err != nil:
		return h.unreachable(err)
	case !res.Pending:
		return h.print(p, res.Settlement)
	case h.follow && p.Request.TimeoutMs != nil:
		// Claude Code's question timeout, as the window the bot closed:
		// the agent goes on (or a moment later will); the question stays
		// open for a late answer, as when the transcript says so first.
		h.wentOn(h.in, p.Request.CallID)
		return nil
	}
	if s, ok := h.withdraw(p.Request.CallID, ""); ok {
		return h.print(p, s) // answered just as the window closed
	}
	return nil
}

// post is a blocking ask for this run's window (--wait): pending when the
// window closes, whichever closes it — the bot at the stored deadline, or
// this run when its own wait (plus hookWindowSlack) ends first (a re-run
// that re-attached to a question asked with a longer wait). Once it has been waiting a while, a
// bot restart or a draining replica is healed by re-attaching (same
// callId) until the window is over; before that, failures are errors at
// once.
func (h *hookRun) post(ctx context.Context, req *waterfall.Request) (hostapi.AskResult, error) {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, h.wait+hookWindowSlack)
	defer cancel()
	for {
		res, err := h.client.Ask(wctx, req)
		switch {
		case err == nil:
			return res, nil
		case ctx.Err() != nil:
			return res, ctx.Err()
		case wctx.Err() != nil:
			return hostapi.AskResult{Pending: true, CallID: req.CallID}, nil
		case time.Since(start) < 5*time.Second || !reattachable(err):
			return res, err
		}
	}
}

// noticeGrace is how long a permission_prompt notice waits for the
// PermissionRequest hook, which fires at the same moment, to post its
// question.
const noticeGrace = 2 * time.Second

// askingInSlack reports whether the session has a question open in Slack
// (the PermissionRequest hook's): a notice that the agent needs permission
// would only repeat it. Any error says no, so the notice is posted.
func (h *hookRun) askingInSlack(ctx context.Context, session string) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(noticeGrace):
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for _, id := range bookFor(h.agent, h.in).asking().calls() {
		if st, err := h.client.Get(pctx, id, 0); err == nil && st.State == "open" {
			return true
		}
	}
	p, err := h.client.Projection(pctx, session)
	if err != nil {
		return false
	}
	for _, q := range p.Active {
		if q.State == "open" {
			return true
		}
	}
	return false
}

// unreachable names the bot's address when it could not be reached.
func (h *hookRun) unreachable(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("the askslack bot at %s is unreachable: %v", h.client.BaseURL, ue.Err)
	}
	return err
}

func reattachable(err error) bool {
	var ue *url.Error
	return waterfall.CodeOf(err) == waterfall.CodeUnavailable || errors.As(err, &ue)
}

// withdraw takes the question back. If it was answered after all, the
// answer is returned so it can still be used.
func (h *hookRun) withdraw(callID, reason string) (waterfall.Settlement, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), hookWithdraw)
	defer cancel()
	_, err := h.client.AbortBecause(ctx, callID, reason)
	if waterfall.CodeOf(err) != waterfall.CodeAlreadySettled {
		return waterfall.Settlement{}, false
	}
	st, err := h.client.Get(ctx, callID, 0)
	if err != nil || st.State != "settled" || st.Respondent == nil {
		return waterfall.Settlement{}, false
	}
	return waterfall.Settlement{Answer: waterfall.Answer{Answers: st.Answers}, Respondent: *st.Respondent}, true
}

func (h *hookRun) print(p *hook.Plan, s waterfall.Settlement) error {
	out, err := p.Decide(s)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(h.out, "%s\n", out)
	return err
}

// snippetFlags are the flags given on the command line that the printed
// hook commands must carry (all but the print flags and the token), in
// flag-name order, each argument quoted for a shell.
func snippetFlags(fs *flag.FlagSet) []string {
	var args []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "print-settings", "print-config", "token", "permission-mode", "wake", "agent-pid", "ready-fd", "beside":
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if f.Value.String() == "true" {
				args = append(args, "--"+f.Name)
			} else {
				args = append(args, "--"+f.Name+"="+shellQuote(f.Value.String()))
			}
			return
		}
		args = append(args, "--"+f.Name, shellQuote(f.Value.String()))
	})
	return args
}

// shellQuote quotes s for a POSIX shell (the agents run a hook's command
// with one): as it is when no character in it means anything to a shell,
// else in single quotes.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lateHookTimeout is the printed timeout, in seconds, of the hooks that
// deliver late answers (they take at most lateBudget).
const lateHookTimeout = 15

// claudeModes are Claude Code's permission modes a settings file may make
// the default (bypassPermissions is left out: nothing would be asked).
var claudeModes = []string{"default", "acceptEdits", "plan", "auto", "dontAsk"}

// printHookSettings prints the snippet to paste into the agent's settings.
// Every command, Notification's too, carries the flags the snippet was
// printed with (flags), so the hooks ask where and how they were meant to;
// the hook's own timeout is the wait plus a minute, so askslack always
// withdraws and exits before the agent kills it.
//
// Claude Code: PermissionRequest asks every permission prompt, plans and
// AskUserQuestion included; it runs beside the terminal's own dialog, and
// the first answer wins. PreToolUse on AskUserQuestion only with --defer
// (headless), where only PreToolUse can defer: a waiting PreToolUse hook
// keeps the terminal from showing the question at all. mode, when set,
// becomes permissions.defaultMode.
func printHookSettings(out io.Writer, agent hook.Agent, wait time.Duration, defers bool, mode string, flags []string) error {
	command := strings.Join(append([]string{"askslack", "hook", map[hook.Agent]string{hook.Claude: "claude", hook.Codex: "codex"}[agent]}, flags...), " ")
	timeout := int((wait + time.Minute).Seconds())
	handler := []any{map[string]any{"type": "command", "command": command, "timeout": timeout}}
	// The late-answer hooks (hook_late.go) read a small file and, only
	// when the session has a question it went on without, ask the bot:
	// they end within lateBudget.
	quick := []any{map[string]any{"type": "command", "command": command, "timeout": lateHookTimeout}}
	late := map[string]any{
		hook.EventPostToolUse:      []any{map[string]any{"matcher": "*", "hooks": quick}},
		hook.EventUserPromptSubmit: []any{map[string]any{"hooks": quick}},
		hook.EventStop:             []any{map[string]any{"hooks": quick}},
	}
	doc := map[string]any{}
	if agent == hook.Claude {
		hooks := map[string]any{
			"PermissionRequest": []any{map[string]any{"matcher": "*", "hooks": handler}},
			"Notification": []any{map[string]any{"matcher": "idle_prompt|permission_prompt",
				"hooks": []any{map[string]any{"type": "command", "command": command, "async": true}}}},
		}
		for k, v := range late {
			hooks[k] = v
		}
		// A session that sits idle at its prompt runs no hook; a
		// background Stop hook waits for a late answer and wakes it.
		hooks[hook.EventStop] = []any{map[string]any{"hooks": append(quick,
			map[string]any{"type": "command", "command": command + " --wake", "asyncRewake": true})}}
		if defers {
			hooks["PreToolUse"] = []any{map[string]any{"matcher": "AskUserQuestion", "hooks": handler}}
		}
		doc["hooks"] = hooks
		if mode != "" {
			doc["permissions"] = map[string]any{"defaultMode": mode}
		}
	} else {
		late[hook.EventPostToolUse] = []any{map[string]any{"matcher": ".*", "hooks": quick}}
		late["PermissionRequest"] = []any{map[string]any{"matcher": ".*", "hooks": handler}}
		// Codex's own questions (Plan mode): the hook returns at once and
		// asks in Slack beside the terminal (codex_input.go).
		late[hook.EventPreToolUse] = []any{map[string]any{"matcher": "^" + hook.ToolRequestUserInput + "$", "hooks": quick}}
		doc["hooks"] = late
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a command with & stays readable
	return enc.Encode(doc)
}
