package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/waterfall/remote"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// clientFlags are shared by the client subcommands (ask, mcp).
func clientFlags(fs *flag.FlagSet) (url, token *string) {
	defURL := os.Getenv("ASKSLACK_URL")
	if defURL == "" {
		defURL = "http://127.0.0.1:8080"
	}
	url = fs.String("url", defURL, "where the bot listens (ASKSLACK_URL)")
	token = fs.String("token", os.Getenv("ASKSLACK_TOKEN"), "bearer token for the host API (ASKSLACK_TOKEN)")
	return url, token
}

func newCallID(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// ask is `askslack ask`: a terminal client of the host API. Exit status 0
// when answered, 2 when the wait ended without an answer, 1 on error.
func ask(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("ask", flag.ContinueOnError)
	url, token := clientFlags(fs)
	question := fs.String("question", "", "the question to ask")
	var options multiFlag
	fs.Var(&options, "option", "an option label (repeat for each option)")
	multi := fs.Bool("multi", false, "allow choosing several options")
	header := fs.String("header", "", "short heading shown above the question")
	detail := fs.String("detail", "", "supporting detail (markdown)")
	wait := fs.Duration("wait", 0, "answer window, e.g. 5m; when it ends the question stays open (0 waits until answered)")
	callID := fs.String("call-id", "", "call id (default: a fresh one); repeat one to re-attach")
	agent := fs.String("agent", "askslack-cli", "agent id shown in Slack")
	session := fs.String("session", "", "agent session id that receives late answers")
	channel := fs.String("channel", "", "Slack channel id (default: the bot's ASKSLACK_CHANNEL)")
	file := fs.String("file", "", "read the whole request JSON from this file ('-' for stdin) instead of flags")
	asJSON := fs.Bool("json", false, "print the raw JSON result")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var req waterfall.Request
	if *file != "" {
		var r io.Reader = os.Stdin
		if *file != "-" {
			f, err := os.Open(*file)
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		if err := json.NewDecoder(r).Decode(&req); err != nil {
			return fmt.Errorf("reading the request: %w", err)
		}
	} else {
		if *question == "" {
			return errors.New("--question is required (or --file with a request JSON)")
		}
		q := waterfall.Question{ID: "q1", Question: *question, Header: *header, Detail: *detail, MultiSelect: *multi}
		for _, o := range options {
			q.Options = append(q.Options, waterfall.Option{Label: o})
		}
		req = waterfall.Request{Agent: waterfall.Agent{ID: *agent, SessionID: *session}, Questions: []waterfall.Question{q}, Channel: *channel}
	}
	if *callID != "" {
		req.CallID = *callID
	}
	if req.CallID == "" {
		req.CallID = newCallID("cli")
	}
	if *wait > 0 {
		ms := float64(wait.Milliseconds())
		req.TimeoutMs = &ms
		if req.Agent.SessionID == "" {
			// A timed ask needs a session: that is where a late answer goes.
			req.Agent.SessionID = newCallID("cli-session")
			fmt.Fprintf(os.Stderr, "late answers go to session %s (askslack reads them from GET /v1/sessions/%s/messages)\n", req.Agent.SessionID, req.Agent.SessionID)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &remote.Client{BaseURL: *url, Token: *token}
	fmt.Fprintf(os.Stderr, "asking (call %s)…\n", req.CallID)
	res, err := c.Ask(ctx, &req)
	if err != nil {
		if ctx.Err() != nil {
			// Interrupting is withdrawing: say so now rather than leave the
			// question to the bot's re-attach grace.
			actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, aerr := c.Abort(actx, req.CallID); aerr != nil && waterfall.CodeOf(aerr) != waterfall.CodeAlreadySettled {
				return fmt.Errorf("interrupted; withdrawing the question failed (the bot withdraws it after its re-attach grace): %w", aerr)
			}
			return errors.New("interrupted: the question was withdrawn")
		}
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if res.Pending {
			_ = enc.Encode(map[string]any{"pending": true, "callId": res.CallID})
		} else {
			_ = enc.Encode(res.Settlement)
		}
	} else {
		printResult(out, &req, res)
	}
	if res.Pending {
		return &exitError{code: 2, err: fmt.Errorf("no answer within %s; the question stays open in Slack (call %s)", *wait, req.CallID)}
	}
	return nil
}

func printResult(out io.Writer, req *waterfall.Request, res remote.AskResult) {
	if res.Pending {
		return
	}
	who := res.Respondent.UserName
	if who == "" {
		who = res.Respondent.UserID
	}
	fmt.Fprintf(out, "answered by %s at %s\n", who, res.Respondent.At.Local().Format(time.DateTime))
	for _, q := range req.Questions {
		it := res.Item(q.ID)
		switch {
		case it == nil || (len(it.Selected) == 0 && it.Custom == ""):
			fmt.Fprintf(out, "%s: (skipped)\n", q.Question)
		default:
			parts := append([]string{}, it.Selected...)
			if it.Custom != "" {
				parts = append(parts, fmt.Sprintf("%q", it.Custom))
			}
			fmt.Fprintf(out, "%s: %s\n", q.Question, strings.Join(parts, ", "))
		}
	}
}
