// Package askcmd is `askslack ask`: a terminal client of the bot's host API
// that asks one question (or a request read from a file) and prints the
// answer.
package askcmd

import (
	"context"
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

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// Run is `askslack ask`: a terminal client of the host API. Exit status 0
// when answered, 2 when the wait ended without an answer, 1 on error.
func Run(args []string, out io.Writer) error {
	f, err := parseAskFlags(args)
	if err != nil {
		return err
	}
	req, err := f.request()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &hostapi.Client{BaseURL: *f.url, Token: *f.token}
	fmt.Fprintf(os.Stderr, "asking (call %s)…\n", req.CallID)
	res, err := askOrWithdraw(ctx, c, req)
	if err != nil {
		return err
	}
	if *f.asJSON {
		printJSONResult(out, res)
	} else {
		printResult(out, req, res)
	}
	if res.Pending {
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("no answer within %s; the question stays open in Slack (call %s)", *f.wait, req.CallID)}
	}
	return nil
}

// askFlags are `askslack ask`'s flags.
type askFlags struct {
	url, token                                       *string
	question, header, detail, callID, agent, session *string
	channel, file                                    *string
	options                                          cli.MultiFlag
	multi, asJSON                                    *bool
	wait                                             *time.Duration
}

func parseAskFlags(args []string) (*askFlags, error) {
	fs := flag.NewFlagSet("ask", flag.ContinueOnError)
	f := &askFlags{}
	f.url, f.token = cli.ClientFlags(fs)
	f.question = fs.String("question", "", "the question to ask")
	fs.Var(&f.options, "option", "an option label (repeat for each option)")
	f.multi = fs.Bool("multi", false, "allow choosing several options")
	f.header = fs.String("header", "", "short heading shown above the question")
	f.detail = fs.String("detail", "", "supporting detail (markdown)")
	f.wait = fs.Duration("wait", 0, "answer window, e.g. 5m; when it ends the question stays open (0 waits until answered)")
	f.callID = fs.String("call-id", "", "call id (default: a fresh one); repeat one to re-attach")
	f.agent = fs.String("agent", "askslack-cli", "agent id shown in Slack")
	f.session = fs.String("session", "", "agent session id that receives late answers")
	f.channel = fs.String("channel", "", "Slack channel id (default: the bot's ASKSLACK_CHANNEL)")
	f.file = fs.String("file", "", "read the whole request JSON from this file ('-' for stdin) instead of flags")
	f.asJSON = fs.Bool("json", false, "print the raw JSON result")
	return f, fs.Parse(args)
}

// request is the ask the flags describe: read from --file, or built from
// --question and --option; with a call id and, for a timed ask, a session.
func (f *askFlags) request() (*waterfall.Request, error) {
	req, err := f.baseRequest()
	if err != nil {
		return nil, err
	}
	if *f.callID != "" {
		req.CallID = *f.callID
	}
	if req.CallID == "" {
		req.CallID = cli.NewCallID("cli")
	}
	if *f.wait > 0 {
		ms := float64(f.wait.Milliseconds())
		req.TimeoutMs = &ms
		if req.Agent.SessionID == "" {
			// A timed ask needs a session: that is where a late answer goes.
			req.Agent.SessionID = cli.NewCallID("cli-session")
			fmt.Fprintf(os.Stderr, "late answers go to session %s (askslack reads them from GET /v1/sessions/%s/messages)\n", req.Agent.SessionID, req.Agent.SessionID)
		}
	}
	return req, nil
}

func (f *askFlags) baseRequest() (*waterfall.Request, error) {
	if *f.file != "" {
		return readRequest(*f.file)
	}
	if *f.question == "" {
		return nil, errors.New("--question is required (or --file with a request JSON)")
	}
	q := waterfall.Question{ID: "q1", Question: *f.question, Header: *f.header, Detail: *f.detail, MultiSelect: *f.multi}
	for _, o := range f.options {
		q.Options = append(q.Options, waterfall.Option{Label: o})
	}
	return &waterfall.Request{Agent: waterfall.Agent{ID: *f.agent, SessionID: *f.session}, Questions: []waterfall.Question{q}, Channel: *f.channel}, nil
}

// readRequest decodes a request JSON from file ("-": stdin).
func readRequest(file string) (*waterfall.Request, error) {
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	var req waterfall.Request
	if err := json.NewDecoder(r).Decode(&req); err != nil {
		return nil, fmt.Errorf("reading the request: %w", err)
	}
	return &req, nil
}

// askOrWithdraw asks; interrupting (ctx ending) withdraws the question.
func askOrWithdraw(ctx context.Context, c *hostapi.Client, req *waterfall.Request) (hostapi.AskResult, error) {
	res, err := c.Ask(ctx, req)
	if err == nil || ctx.Err() == nil {
		return res, err
	}
	// Interrupting is withdrawing: say so now rather than leave the
	// question to the bot's re-attach grace.
	actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, aerr := c.Abort(actx, req.CallID); aerr != nil && waterfall.CodeOf(aerr) != waterfall.CodeAlreadySettled {
		return res, fmt.Errorf("interrupted; withdrawing the question failed (the bot withdraws it after its re-attach grace): %w", aerr)
	}
	return res, errors.New("interrupted: the question was withdrawn")
}

func printJSONResult(out io.Writer, res hostapi.AskResult) {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if res.Pending {
		_ = enc.Encode(map[string]any{"pending": true, "callId": res.CallID})
	} else {
		_ = enc.Encode(res.Settlement)
	}
}

func printResult(out io.Writer, req *waterfall.Request, res hostapi.AskResult) {
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
