// Package audit is `askslack audit`: it prints the bot's hash-chained audit
// trail through the host API (an operator's token), as JSON lines or CSV,
// and `askslack audit verify` walks the chain.
package audit

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/store"
)

const auditUsage = `usage:
  askslack audit [--since 24h] [--call-id ID] [--format jsonl|csv] [--url URL] [--token TOKEN]
      print the audit trail, oldest first (an operator's token: ASKSLACK_ADMIN_TOKENS)
  askslack audit verify [--url URL] [--token TOKEN]
      walk the whole chain; exit 1 naming the first broken link, 0 with a summary`

// auditPage is how many entries each request of the CLI reads.
const auditPage = store.MaxAuditLimit

// Run is `askslack audit` and `askslack audit verify`. Exit
// status: 0 done (verify: the chain holds), 1 the chain is broken, 2 the
// trail could not be read.
func Run(args []string, out io.Writer) error {
	verify := len(args) > 0 && args[0] == "verify"
	if verify {
		args = args[1:]
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), auditUsage); fs.PrintDefaults() }
	url, token := cli.ClientFlags(fs)
	var since, callID, format *string
	if !verify {
		since = fs.String("since", "", "only entries at or after this: a duration back from now (24h, 7d) or an RFC 3339 time; default: all kept")
		callID = fs.String("call-id", "", "only the entries of this ask")
		format = fs.String("format", "jsonl", "jsonl (one entry per line, as the API returns it) or csv")
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	if fs.NArg() > 0 {
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("unexpected arguments %q\n%s", fs.Args(), auditUsage)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &hostapi.Client{BaseURL: *url, Token: *token}
	if verify {
		return verifyTrail(ctx, c, out)
	}
	q := asktype.AuditQuery{CallID: *callID, Limit: auditPage}
	if *since != "" {
		t, err := hostapi.ParseSince(*since, time.Now())
		if err != nil {
			return &cli.ExitError{Code: 2, Err: fmt.Errorf("--since: %w", err)}
		}
		q.Since = t
	}
	var write func(*asktype.AuditEntry) error
	var flush func() error
	switch *format {
	case "jsonl":
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		write = func(e *asktype.AuditEntry) error { return enc.Encode(e) }
		flush = func() error { return nil }
	case "csv":
		w := csv.NewWriter(out)
		if err := w.Write(csvHeader); err != nil {
			return err
		}
		write = func(e *asktype.AuditEntry) error { return w.Write(csvRow(e)) }
		flush = func() error { w.Flush(); return w.Error() }
	default:
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("--format %q: want jsonl or csv", *format)}
	}
	if err := c.AuditAll(ctx, q, write); err != nil {
		_ = flush()
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("reading the audit trail: %w", err)}
	}
	return flush()
}

var csvHeader = []string{"seq", "at", "callId", "event", "caller", "agentId", "sessionId", "userId", "userName", "surface", "detail", "prev", "hash"}

func csvRow(e *asktype.AuditEntry) []string {
	var agent asktype.AuditAgent
	var who asktype.AuditRespondent
	if e.Agent != nil {
		agent = *e.Agent
	}
	if e.Respondent != nil {
		who = *e.Respondent
	}
	return []string{strconv.FormatInt(e.Seq, 10), e.At.UTC().Format(time.RFC3339Nano), e.CallID, e.Event, e.Caller,
		agent.ID, agent.SessionID, who.UserID, who.UserName, who.Surface, e.Detail, e.Prev, e.Hash}
}

// verifyTrail walks the whole chain through the API and reports its first
// break (exit 1) or a one-line summary.
func verifyTrail(ctx context.Context, c *hostapi.Client, out io.Writer) error {
	var v store.ChainVerifier
	err := c.AuditAll(ctx, asktype.AuditQuery{Limit: auditPage}, func(e *asktype.AuditEntry) error { return v.Next(e) })
	var br *store.ChainBreak
	switch {
	case errors.As(err, &br):
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("audit trail BROKEN at seq %d: %s (%d entries before it hold together)", br.Seq, br.Problem, v.Count)}
	case err != nil:
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("reading the audit trail: %w", err)}
	case v.Count == 0:
		fmt.Fprintln(out, "audit trail ok: empty")
	default:
		from := ""
		if v.First > 1 {
			from = fmt.Sprintf("; entries before seq %d were trimmed by retention", v.First)
		}
		fmt.Fprintf(out, "audit trail ok: %d entries, seq %d to %d, head %s%s\n", v.Count, v.First, v.Last, v.Head, from)
	}
	return nil
}
