// Package webhooks is `askslack webhooks`: the bot's webhook endpoints
// (ASKSLACK_WEBHOOKS) as the running bot sees them through the host API
// (an operator's token): their cursor and lag, their last error and
// success, their dead letters, and redelivering them.
package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

const usage = `usage:
  askslack webhooks [--json] [--url URL] [--token TOKEN]
      list the endpoints: cursor, entries behind, lag, last success and error, dead letters
  askslack webhooks dead NAME [--json] [--url URL] [--token TOKEN]
      list an endpoint's dead letters (events it failed to take for 24h)
  askslack webhooks redeliver NAME ID... | --all [--url URL] [--token TOKEN]
      send those dead letters again (same ids), before the endpoint's next events
an operator's token (ASKSLACK_ADMIN_TOKENS); exit status 2 when the bot cannot be asked`

// Run is `askslack webhooks`. Flags may come before or after the
// arguments.
func Run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), usage); fs.PrintDefaults() }
	url, token := cli.ClientFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON (the API's answer) instead of a table")
	all := fs.Bool("all", false, "redeliver: every dead letter of the endpoint")
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil
		} else if err != nil {
			return &cli.ExitError{Code: 2, Err: err}
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	usageErr := func(format string, a ...any) error {
		return &cli.ExitError{Code: 2, Err: fmt.Errorf(format+"\n%s", append(a, usage)...)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &hostapi.Client{BaseURL: *url, Token: *token}
	cmd := ""
	if len(pos) > 0 {
		cmd = pos[0]
	}
	switch {
	case cmd == "" && !*all:
		eps, err := c.Webhooks(ctx)
		if err != nil {
			return failed(err)
		}
		if *asJSON {
			return printJSON(out, hostapi.WebhooksPage{Endpoints: eps})
		}
		return endpointTable(out, eps, time.Now())
	case cmd == "dead" && len(pos) == 2 && !*all:
		dead, err := c.WebhookDeadLetters(ctx, pos[1])
		if err != nil {
			return failed(err)
		}
		if *asJSON {
			return printJSON(out, hostapi.DeadLettersPage{DeadLetters: dead})
		}
		return deadTable(out, dead)
	case cmd == "redeliver" && len(pos) >= 2 && (*all != (len(pos) > 2)):
		n, err := c.RedeliverWebhooks(ctx, pos[1], pos[2:], *all)
		if err != nil {
			return failed(err)
		}
		fmt.Fprintf(out, "%d dead letter(s) of %s queued for redelivery\n", n, pos[1])
		return nil
	case cmd == "redeliver":
		return usageErr("askslack webhooks redeliver NAME: name the dead letters' ids, or --all")
	case cmd == "dead":
		return usageErr("askslack webhooks dead NAME: name one endpoint")
	}
	return usageErr("unexpected arguments %q", pos)
}

// failed is a request's error: NOT_FOUND (an unknown endpoint or dead
// letter) is the caller's mistake (exit 1), anything else the bot could
// not be asked (exit 2).
func failed(err error) error {
	if waterfall.CodeOf(err) == waterfall.CodeNotFound {
		return &cli.ExitError{Code: 1, Err: err}
	}
	return &cli.ExitError{Code: 2, Err: err}
}

func printJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// endpointTable prints one line per endpoint.
func endpointTable(out io.Writer, eps []hostapi.WebhookEndpoint, now time.Time) error {
	if len(eps) == 0 {
		fmt.Fprintln(out, "no webhook endpoints are configured (ASKSLACK_WEBHOOKS)")
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tURL\tCURSOR\tBEHIND\tLAG\tLAST SUCCESS\tLAST ERROR\tDEAD")
	for _, e := range eps {
		cursor, behind, lag := "-", "-", "-"
		if e.Started {
			cursor = fmt.Sprintf("%d/%d", e.Cursor, e.End)
			behind = strconv.FormatInt(e.Behind, 10)
			lag = (time.Duration(e.LagSeconds * float64(time.Second))).Round(time.Second).String()
		}
		lastErr := "-"
		if e.LastError != "" {
			lastErr = e.LastError
			if e.LastErrorAt != nil {
				lastErr = ago(now, *e.LastErrorAt) + ": " + lastErr
			}
			if e.Attempts > 0 {
				lastErr += fmt.Sprintf(" (retrying: %d attempts", e.Attempts)
				if e.NextAttempt != nil {
					lastErr += ", next in " + max(0, e.NextAttempt.Sub(now)).Round(time.Second).String()
				}
				lastErr += ")"
			}
		}
		lastOK := "-"
		if e.LastSuccess != nil {
			lastOK = ago(now, *e.LastSuccess)
		}
		dead := strconv.Itoa(e.DeadLetters)
		if e.Redelivery > 0 {
			dead += fmt.Sprintf(" (+%d redelivering)", e.Redelivery)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.URL, cursor, behind, lag, lastOK, oneLine(lastErr), dead)
	}
	return w.Flush()
}

// deadTable prints one line per dead letter.
func deadTable(out io.Writer, dead []hostapi.WebhookDeadLetter) error {
	if len(dead) == 0 {
		fmt.Fprintln(out, "no dead letters")
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTYPE\tSEQ\tCALL ID\tAT\tDEAD AT\tATTEMPTS\tLAST ERROR")
	for _, d := range dead {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s\n", d.ID, d.Type, d.Seq, orDash(d.CallID), d.At.UTC().Format(time.RFC3339),
			d.DeadAt.UTC().Format(time.RFC3339), d.Attempts, oneLine(d.LastError))
	}
	return w.Flush()
}

func ago(now, t time.Time) string {
	return max(0, now.Sub(t)).Round(time.Second).String() + " ago"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a receiver's answer on its table row.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}
