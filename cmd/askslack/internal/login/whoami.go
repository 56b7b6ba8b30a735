package login

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// Whoami is askslack whoami: who the token this machine uses for --url is
// to the bot, and where it comes from.
func Whoami(args []string, out, errw io.Writer) error {
	fs := flag.NewFlagSet("whoami", flag.ContinueOnError)
	fs.SetOutput(errw)
	fs.Usage = func() {
		fmt.Fprintln(errw, "usage: askslack whoami [--url URL] [--token T]\n\nSays who this machine's token is to the bot: its caller, role, principal and, for a token of askslack login, its owner, expiry and last use.")
		fs.PrintDefaults()
	}
	u, tok := cli.ClientFlags(fs)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	from := "ASKSLACK_TOKEN"
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "token" {
			from = "--token"
		}
	})
	if from == "ASKSLACK_TOKEN" && os.Getenv("ASKSLACK_TOKEN") == "" {
		from = "the credentials file"
		if path, err := cli.CredentialsPath(); err == nil {
			from = path
		}
	}
	if *tok == "" {
		from = "no token (a loopback caller of a bot with no tokens configured holds every role)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &hostapi.Client{BaseURL: cli.NormalURL(*u), Token: *tok, HTTP: &http.Client{Timeout: 30 * time.Second}}
	w, err := c.Whoami(ctx)
	if err != nil {
		if waterfall.CodeOf(err) == "UNAUTHORIZED" && *tok == "" {
			return fmt.Errorf("not logged in to %s: run askslack login", c.BaseURL)
		}
		return fmt.Errorf("%s: %w", c.BaseURL, err)
	}
	fmt.Fprintf(out, "%s at %s: %s", w.Caller, c.BaseURL, strings.Join(w.Roles, "+"))
	if w.Principal != "" {
		fmt.Fprintf(out, ", asking for %s", w.Principal)
	}
	fmt.Fprintln(out)
	if t := w.Token; t != nil {
		owner := t.OwnerName
		if owner == "" {
			owner = t.Owner
		}
		fmt.Fprintf(out, "  token %s %q of %s (%s)", t.ID, t.Name, owner, t.Owner)
		if len(t.Kinds) > 0 {
			fmt.Fprintf(out, " for %s", strings.Join(t.Kinds, ", "))
		}
		fmt.Fprintf(out, "\n  connected %s from %s; expires %s\n", t.Created.Local().Format(time.DateTime), t.ConnectAddr, t.Expires.Local().Format(time.DateTime))
		if !t.LastUsed.IsZero() {
			fmt.Fprintf(out, "  last used %s from %s\n", t.LastUsed.Local().Format(time.DateTime), t.LastAddr)
		}
	}
	fmt.Fprintf(out, "  from %s\n", from)
	return nil
}

// Logout is askslack logout: the token askslack login kept for --url is
// revoked (as itself) and forgotten here.
func Logout(args []string, out, errw io.Writer) error {
	fs := flag.NewFlagSet("logout", flag.ContinueOnError)
	fs.SetOutput(errw)
	fs.Usage = func() {
		fmt.Fprintln(errw, "usage: askslack logout [--url URL]\n\nRevokes the token askslack login kept for the bot at --url, on every replica, and removes it from the credentials file.")
		fs.PrintDefaults()
	}
	u := fs.String("url", cli.EnvOr("ASKSLACK_URL", "http://127.0.0.1:8080"), "where the bot listens (ASKSLACK_URL)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	botURL := cli.NormalURL(*u)
	cred, ok := cli.StoredCredential(botURL)
	if !ok {
		return fmt.Errorf("not logged in to %s: no token is kept for it", botURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &hostapi.Client{BaseURL: botURL, Token: cred.Token, HTTP: &http.Client{Timeout: 30 * time.Second}}
	_, rerr := c.RevokeToken(ctx, cred.ID)
	_, path, err := cli.RemoveCredential(botURL)
	if err != nil {
		return fmt.Errorf("removing the token from %s: %w", path, err)
	}
	switch {
	case rerr == nil:
		fmt.Fprintf(out, "Logged out of %s: token %s (%s) is revoked, and removed from %s.\n", botURL, cred.ID, cred.Name, path)
	case waterfall.CodeOf(rerr) == "UNAUTHORIZED":
		fmt.Fprintf(out, "Logged out of %s: token %s (%s) was already revoked or expired; removed from %s.\n", botURL, cred.ID, cred.Name, path)
	default:
		fmt.Fprintf(out, "Removed token %s (%s) from %s, but the bot could not revoke it (%v): revoke it in App Home.\n", cred.ID, cred.Name, path, rerr)
	}
	return nil
}
