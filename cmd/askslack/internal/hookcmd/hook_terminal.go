package hookcmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/hook"
)

// errAnsweredInTerminal ends a hook's wait when the person at the agent's
// terminal answered its own dialog first.
var errAnsweredInTerminal = errors.New("answered in the agent's terminal")

// answeredInTerminal reports whether ctx ended because the terminal was
// answered first.
func answeredInTerminal(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errAnsweredInTerminal)
}

// transcriptPoll is how often the transcript is looked at: the Slack
// message turns "answered in the terminal" within about this long.
const transcriptPoll = 300 * time.Millisecond

// terminalGrace is how long a hook stopped by a signal looks for the
// terminal's answer in the transcript before it withdraws its question: an
// agent that stops the hook because its own dialog was answered writes the
// result a moment later.
const terminalGrace = 1500 * time.Millisecond

// terminalWatch follows the session's transcript for the result of the
// tool call the hook asks about (hook.Call).
type terminalWatch struct {
	answered chan struct{} // closed once the result is there
	wentOn   bool          // set before answered closes: nobody answered
	stop     func()
}

// watchTerminal returns a context that ends, with errAnsweredInTerminal as
// its cause, once the session's transcript shows the result of the tool
// call the hook asks about: Claude Code runs a PermissionRequest hook
// beside its own dialog and does not stop the hook when the dialog is
// answered. The watch goes on after ctx ends (a signal), until Stop, so
// that Within can still tell why. Without a transcript it returns ctx and
// a nil watch.
func (h *hookRun) watchTerminal(ctx context.Context, in *hook.Input) (context.Context, *terminalWatch) {
	if in.TranscriptPath == "" {
		return ctx, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	quit := make(chan struct{})
	done := make(chan struct{})
	w := &terminalWatch{answered: make(chan struct{})}
	go func() {
		defer close(done)
		t := &transcriptTail{path: in.TranscriptPath}
		call := hook.NewCall(in.ToolName, in.ToolInput)
		for first := true; ; first = false {
			t.read(call.Line)
			if first {
				call.Started()
			}
			call.Choose()
			if call.Answered() {
				w.wentOn = call.WentOn()
				close(w.answered)
				cancel(errAnsweredInTerminal)
				return
			}
			select {
			case <-quit:
				return
			case <-time.After(transcriptPoll):
			}
		}
	}()
	w.stop = func() { close(quit); <-done; cancel(nil) }
	return ctx, w
}

// Stop ends the watch; nil-safe.
func (w *terminalWatch) Stop() {
	if w != nil {
		w.stop()
	}
}

// Within reports whether the terminal's answer is in the transcript, or
// arrives within d; a nil watch never sees one.
func (w *terminalWatch) Within(d time.Duration) bool {
	if w == nil {
		return false
	}
	select {
	case <-w.answered:
		return true
	case <-time.After(d):
		return false
	}
}

// WentOn reports that the call's result is in the transcript and says the
// agent went on without an answer (Claude Code's question timeout): the
// question then stays open in Slack for a late answer. Call it after
// Within or answeredInTerminal saw the result.
func (w *terminalWatch) WentOn() bool {
	if w == nil {
		return false
	}
	select {
	case <-w.answered:
		return w.wentOn
	default:
		return false
	}
}

// transcriptTail reads a growing JSON-lines file a line at a time, from
// where the last read stopped.
type transcriptTail struct {
	path string
	off  int64
	part []byte // an unfinished last line
}

// maxTranscriptLine bounds the part of one line kept while it is being
// written; a longer line (a huge tool result) is skipped.
const maxTranscriptLine = 8 << 20

func (t *transcriptTail) read(line func([]byte)) {
	f, err := os.Open(t.path)
	if err != nil {
		return // not written yet
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() <= t.off {
		return
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		t.off += int64(n)
		data := buf[:n]
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			if len(t.part) > 0 {
				line(append(t.part, data[:i]...))
				t.part = t.part[:0]
			} else {
				line(data[:i])
			}
			data = data[i+1:]
		}
		if len(t.part)+len(data) <= maxTranscriptLine {
			t.part = append(t.part, data...)
		}
		if err != nil {
			return
		}
	}
}

// maxTranscriptScan is how much of a transcript's end is searched for the
// plan file it names.
const maxTranscriptScan = 4 << 20

// readTail is the last n bytes of the file at path (nil when unreadable).
func readTail(path string, n int64) []byte {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return b
}

// readPlanFile reads a plan file (hook.Options.ReadPlan) up to a size a
// plan can have.
func readPlanFile(path string) (string, error) {
	if !hook.PlanFilePath(path) {
		return "", errors.New("not a plan file")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return string(b), err
}

// questionGrace is added to Claude Code's question timeout for the
// question's window in Slack: Claude Code's timer starts as its dialog
// shows, a moment after this hook began, and the hook turns the question
// continued when the transcript says the agent went on; the bot closing
// the window itself is the fallback.
const questionGrace = 5 * time.Second

// claudeQuestionWait is how long Claude Code's terminal question waits
// before the agent goes on without an answer (its question timeout, plus
// questionGrace), from CLAUDE_AFK_TIMEOUT_MS and the settings files Claude
// Code reads, highest precedence first: managed, the project's local and
// shared settings (CLAUDE_PROJECT_DIR, which Claude Code gives its hooks,
// else the hook input's cwd), the user's. timed is false when the question
// does not time out (unset or "never", Claude Code's default).
func claudeQuestionWait(in *hook.Input) (wait time.Duration, timed bool) {
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	if project == "" {
		project = in.Cwd
	}
	user := os.Getenv("CLAUDE_CONFIG_DIR")
	if user == "" {
		if home, err := os.UserHomeDir(); err == nil {
			user = filepath.Join(home, ".claude")
		}
	}
	var files [][]byte
	for _, path := range []string{
		"/etc/claude-code/managed-settings.json",
		filepath.Join(project, ".claude", "settings.local.json"),
		filepath.Join(project, ".claude", "settings.json"),
		filepath.Join(user, "settings.json"),
	} {
		b, _ := os.ReadFile(path)
		files = append(files, b)
	}
	d, ok := hook.QuestionTimeout(os.Getenv(hook.AFKTimeoutEnv), files...)
	if !ok {
		return 0, false
	}
	return d + questionGrace, true
}
