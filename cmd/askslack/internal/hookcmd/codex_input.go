package hookcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// Codex's request_user_input in Slack. Codex (0.171.0) runs the session in
// its app server, which sends the question to its terminal as a JSON-RPC
// request (item/tool/requestUserInput) and takes the first response from
// any client of the thread, telling the others (serverRequest/resolved);
// a client that joins the thread (thread/resume) while the question is up
// gets the request too. So the PreToolUse hook, which Codex runs before it
// shows the question, starts this in the background and returns at once:
// it asks in Slack and joins the thread over the app server's control
// socket ($CODEX_HOME/app-server-control/app-server-control.sock, a
// WebSocket); an answer in Slack is its response, and an answer in the
// terminal withdraws the question in Slack. The model reads either as the
// call's output.

// besideDial bounds connecting to Codex's app server.
const besideDial = 5 * time.Second

// startBeside starts this binary again in the background (--beside) with
// the hook input on stdin, and returns: Codex shows its own question as
// soon as PreToolUse returns.
func (h *hookRun) startBeside(data []byte) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := append([]string{"hook", "codex"}, waiterFlags(h.flags)...)
	cmd := exec.Command(exe, append(args, "--beside")...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	cmd.Dir = os.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if log := backgroundLog(bookFor(h.agent, h.in)); log != nil {
		defer log.Close()
		cmd.Stderr = log
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	_, err = stdin.Write(data)
	stdin.Close()
	_ = cmd.Process.Release()
	return err
}

// rpcMessage is one JSON-RPC message of Codex's app server.
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// codexThread is a connection to Codex's app server, joined to one thread.
type codexThread struct {
	conn *websocket.Conn
	mu   sync.Mutex // writes
}

// joinCodexThread connects to the app server of CODEX_HOME (the hook's
// environment, else ~/.codex) and joins thread.
func joinCodexThread(ctx context.Context, thread string) (*codexThread, error) {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		home = filepath.Join(h, ".codex")
	}
	sock := filepath.Join(home, "app-server-control", "app-server-control.sock")
	d := websocket.Dialer{HandshakeTimeout: besideDial, NetDialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialUnix(ctx, sock)
	}}
	conn, _, err := d.DialContext(ctx, "ws://localhost/", nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to Codex's app server (%s): %w", sock, err)
	}
	t := &codexThread{conn: conn}
	for _, m := range []map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "askslack", "version": "1"},
			"capabilities": map[string]any{"experimentalApi": true}}},
		{"jsonrpc": "2.0", "method": "initialized"},
		{"jsonrpc": "2.0", "id": 2, "method": "thread/resume", "params": map[string]any{"threadId": thread, "excludeTurns": true}},
	} {
		if err := t.send(m); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return t, nil
}

func (t *codexThread) send(v any) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = t.conn.SetWriteDeadline(time.Now().Add(besideDial))
	return t.conn.WriteJSON(v)
}

// besideEvent is what the thread says about the question.
type besideEvent struct {
	request json.RawMessage // the app server's request for the question, when it came
	decided bool            // answered elsewhere (the terminal), or the turn ended
	err     error           // the connection is gone
}

// watch reads the thread until ctx ends or the connection does, and tells
// events about the question of tool call item: its request, then whether
// it was resolved by someone else or its turn ended.
func (t *codexThread) watch(ctx context.Context, item string, events chan<- besideEvent) {
	go func() { <-ctx.Done(); t.conn.Close() }()
	var reqID json.RawMessage
	var turn string
	for {
		var m rpcMessage
		if err := t.conn.ReadJSON(&m); err != nil {
			events <- besideEvent{err: err}
			return
		}
		switch m.Method {
		case "item/tool/requestUserInput":
			var p struct{ ItemID, TurnID string }
			if json.Unmarshal(m.Params, &p) == nil && p.ItemID == item && len(m.ID) > 0 {
				reqID, turn = m.ID, p.TurnID
				events <- besideEvent{request: m.ID}
			}
		case "serverRequest/resolved":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			// A request resolved before this connection was handed it (the
			// terminal answered as it joined) is the question's too: the
			// turn waits on nothing else while it is up.
			if json.Unmarshal(m.Params, &p) == nil && (reqID == nil || string(p.RequestID) == string(reqID)) {
				events <- besideEvent{decided: true}
			}
		case "item/completed":
			var p struct {
				Item struct{ ID string } `json:"item"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.Item.ID == item {
				events <- besideEvent{decided: true}
			}
		case "turn/completed":
			var p struct {
				Turn struct{ ID string } `json:"turn"`
			}
			if json.Unmarshal(m.Params, &p) == nil && (turn == "" || p.Turn.ID == turn) {
				events <- besideEvent{decided: true}
			}
		}
	}
}

// beside is the background half of request_user_input in Slack: it asks,
// joins the session's thread in Codex's app server and hands an answer
// given in Slack to Codex as the terminal's would be; the question is
// withdrawn when the terminal answers first, the turn ends, or the wait
// (--wait) is over.
func (h *hookRun) beside(ctx context.Context, p *hook.Plan) error {
	ctx, cancel := context.WithTimeout(ctx, h.wait+hookWindowSlack)
	defer cancel()
	t, err := joinCodexThread(ctx, h.in.SessionID)
	if err != nil {
		return err
	}
	defer t.conn.Close()
	events := make(chan besideEvent, 8)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go t.watch(wctx, h.in.ToolUseID, events)

	req := p.Request
	ms := float64(h.wait.Milliseconds())
	req.TimeoutMs, req.OnTimeout = &ms, waterfall.OnTimeoutTerminal
	type asked struct {
		res hostapi.AskResult
		err error
	}
	answered := make(chan asked, 1)
	go func() {
		res, err := h.post(ctx, req)
		answered <- asked{res, err}
	}()
	var request json.RawMessage
	for {
		select {
		case ev := <-events:
			switch {
			case ev.request != nil:
				request = ev.request
			case ev.decided:
				h.withdraw(req.CallID, hostapi.ReasonElsewhere)
				fmt.Fprintln(h.errw, "askslack hook: answered in the terminal; the question in Slack is withdrawn")
				return nil
			case ev.err != nil:
				// Codex's app server went away: nobody could be handed
				// the answer.
				h.withdraw(req.CallID, "")
				return fmt.Errorf("the connection to Codex's app server closed: %w", ev.err)
			}
		case a := <-answered:
			switch {
			case a.err != nil:
				h.withdraw(req.CallID, "")
				return h.unreachable(a.err)
			case a.res.Pending:
				h.withdraw(req.CallID, "")
				return nil
			}
			return h.answerCodex(ctx, t, events, request, a.res.Settlement)
		}
	}
}

// answerCodex responds to the app server's request (waiting for it if it
// has not come yet) with the answer given in Slack.
func (h *hookRun) answerCodex(ctx context.Context, t *codexThread, events <-chan besideEvent, request json.RawMessage, s waterfall.Settlement) error {
	resp, ok, err := hook.CodexAnswers(h.in, s)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(h.errw, "askslack hook: every question was skipped in Slack; the terminal still asks")
		return nil
	}
	for request == nil {
		select {
		case ev := <-events:
			if ev.decided || ev.err != nil {
				return errors.New("answered in Slack, but the terminal's question was gone first")
			}
			request = ev.request
		case <-ctx.Done():
			return errors.New("answered in Slack, but Codex never asked its app server's clients")
		}
	}
	// The id goes back exactly as it came.
	return t.send(map[string]any{"jsonrpc": "2.0", "id": request, "result": json.RawMessage(resp)})
}

// dialUnix connects to the Unix socket at path, also when path is longer
// than a socket address holds (108 bytes; a deep CODEX_HOME): then through
// its folder, opened, as /proc/self/fd/N/<name>.
func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	d := &net.Dialer{Timeout: besideDial}
	if len(path) < 100 {
		return d.DialContext(ctx, "unix", path)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return d.DialContext(ctx, "unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
}
