// Package login is `askslack login`, `askslack logout` and `askslack
// whoami`: connecting this machine's agents to a bot as the person who
// signs in with Slack (the OAuth 2.0 device authorization grant, RFC
// 8628), keeping the personal agent token in the user's config directory
// (cli.SaveCredential), and saying who a token is.
package login

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/tokens"
)

const loginUsage = `usage: askslack login [--url URL] [--name NAME] [--agents claude,codex] [--no-browser]

Connects this machine's agents to the bot at --url as you: it prints a page and a code, you sign
in with Slack there, check what is connecting and confirm, and a token that asks as you (and can
never answer) is kept in your config directory. askslack ask, mcp and hook use it whenever
ASKSLACK_TOKEN is unset.`

// Run is askslack login.
func Run(args []string, out, errw io.Writer) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(errw)
	fs.Usage = func() { fmt.Fprintln(errw, loginUsage); fs.PrintDefaults() }
	u := fs.String("url", cli.EnvOr("ASKSLACK_URL", "http://127.0.0.1:8080"), "where the bot listens (ASKSLACK_URL)")
	name := fs.String("name", defaultName(), "what to call this machine's token (shown on the page, in App Home and on every question)")
	agents := fs.String("agents", strings.Join(defaultAgents(), ","), "the agents it connects, shown on the page (default: the agent CLIs found on PATH)")
	noBrowser := fs.Bool("no-browser", false, "never open a browser; only print the page (a headless machine opens none anyway)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("login: unexpected arguments %q", fs.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l := &run{url: cli.NormalURL(*u), out: out, client: &hostapi.Client{BaseURL: cli.NormalURL(*u), HTTP: &http.Client{Timeout: 30 * time.Second}}}
	var kinds []string
	for _, k := range strings.Split(*agents, ",") {
		if k = strings.TrimSpace(k); k != "" {
			kinds = append(kinds, k)
		}
	}
	return l.login(ctx, *name, kinds, !*noBrowser && canOpenBrowser())
}

type run struct {
	url    string
	out    io.Writer
	client *hostapi.Client
}

func (l *run) login(ctx context.Context, name string, kinds []string, browse bool) error {
	a, err := l.client.StartLogin(ctx, name, kinds)
	if err != nil {
		return deviceFailure(l.url, err)
	}
	fmt.Fprintf(l.out, "To connect %s to askslack at %s as you:\n", name, l.url)
	fmt.Fprintf(l.out, "  1. open   %s\n", a.VerificationURI)
	fmt.Fprintf(l.out, "  2. sign in with Slack and enter the code   %s\n", a.UserCode)
	fmt.Fprintf(l.out, "  (or open %s)\n", a.VerificationURIComplete)
	if browse && openBrowser(a.VerificationURIComplete) == nil {
		fmt.Fprintln(l.out, "Opened your browser.")
	}
	fmt.Fprintf(l.out, "Waiting for you to confirm (the code expires in %s; Ctrl-C stops)…\n", time.Duration(a.ExpiresIn)*time.Second)
	got, err := l.poll(ctx, a)
	if err != nil {
		return err
	}
	old, hadOld := cli.StoredCredential(l.url)
	path, err := cli.SaveCredential(cli.Credential{URL: l.url, Token: got.AccessToken, ID: got.Token.ID, Name: got.Token.Name,
		Owner: got.Token.Owner, OwnerName: got.Token.OwnerName, Expires: got.Token.Expires, Saved: time.Now()})
	if err != nil {
		return fmt.Errorf("connected, but the token could not be kept: %w (it is %s in App Home: revoke it there)", err, got.Token.ID)
	}
	owner := got.Token.OwnerName
	if owner == "" {
		owner = got.Token.Owner
	}
	fmt.Fprintf(l.out, "Connected: %s asks as %s (%s), token %s, until %s.\n", got.Token.Name, owner, got.Token.Owner, got.Token.ID,
		got.Token.Expires.Local().Format("2006-01-02"))
	fmt.Fprintf(l.out, "Kept in %s; askslack ask, mcp and hook use it when ASKSLACK_TOKEN is unset.\n", path)
	if hadOld && old.ID != got.Token.ID {
		l.revokeOld(ctx, old)
	}
	fmt.Fprintln(l.out, "Next: askslack hook claude --print-settings   (or: claude mcp add askslack -- askslack mcp --agent claude-code)")
	return nil
}

// poll polls at the interval the bot gave, five seconds more after each
// slow_down (RFC 8628 §3.5), until the token, a refusal or expiry.
func (l *run) poll(ctx context.Context, a tokens.Authorization) (hostapi.DeviceToken, error) {
	interval := time.Duration(max(a.Interval, 1)) * time.Second
	deadline := time.Now().Add(time.Duration(a.ExpiresIn) * time.Second)
	for {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return hostapi.DeviceToken{}, errors.New("stopped before the code was confirmed; nothing was connected")
		case <-t.C:
		}
		got, err := l.client.PollLogin(ctx, a.DeviceCode)
		var de *hostapi.DeviceError
		switch {
		case err == nil:
			return got, nil
		case errors.As(err, &de) && de.Code == "authorization_pending":
		case errors.As(err, &de) && de.Code == "slow_down":
			interval += 5 * time.Second
		case errors.As(err, &de) && de.Code == "access_denied":
			return hostapi.DeviceToken{}, errors.New("the connection was denied in the browser; nothing was connected")
		case errors.As(err, &de) && de.Code == "expired_token":
			return hostapi.DeviceToken{}, errors.New("the code expired before it was confirmed (or was used already); run askslack login again")
		case hostapi.Transient(err) || (errors.As(err, &de) && de.Code == "temporarily_unavailable"):
			// The bot restarting, or a replica going away: poll on.
		default:
			return hostapi.DeviceToken{}, deviceFailure(l.url, err)
		}
		if time.Now().After(deadline) {
			return hostapi.DeviceToken{}, errors.New("the code expired before it was confirmed; run askslack login again")
		}
	}
}

// revokeOld revokes the token this machine had for the bot (a login
// replaces it), as that token; best effort, said either way.
func (l *run) revokeOld(ctx context.Context, old cli.Credential) {
	c := &hostapi.Client{BaseURL: l.url, Token: old.Token, HTTP: l.client.HTTP}
	if _, err := c.RevokeToken(ctx, old.ID); err != nil {
		fmt.Fprintf(l.out, "The token this machine had before (%s) was replaced here; it could not be revoked (%v): revoke it in App Home if it still shows.\n", old.ID, err)
		return
	}
	fmt.Fprintf(l.out, "The token this machine had before (%s) is revoked.\n", old.ID)
}

// deviceFailure words a refusal of the device endpoints.
func deviceFailure(botURL string, err error) error {
	var de *hostapi.DeviceError
	if errors.As(err, &de) {
		switch de.Code {
		case "unauthorized_client", "not_supported":
			return fmt.Errorf("cannot log in to %s: %s", botURL, de.Description)
		case "slow_down":
			return fmt.Errorf("cannot log in to %s just now: %s", botURL, de.Description)
		}
		return fmt.Errorf("logging in to %s: %v", botURL, de)
	}
	if hostapi.Transient(err) {
		return fmt.Errorf("cannot reach the bot at %s (--url, ASKSLACK_URL): %v", botURL, err)
	}
	return fmt.Errorf("logging in to %s: %w", botURL, err)
}

// defaultName is this machine's short host name, as a token name.
func defaultName() string {
	h, err := os.Hostname()
	if err != nil {
		return "agent"
	}
	h, _, _ = strings.Cut(h, ".")
	var b strings.Builder
	for _, r := range h {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		return "agent"
	}
	return name[:min(len(name), 40)]
}

// defaultAgents are the agent CLIs on PATH.
func defaultAgents() []string {
	var out []string
	for _, a := range []string{"claude", "codex"} {
		if _, err := exec.LookPath(a); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// canOpenBrowser: a desktop session that is not reached over SSH.
func canOpenBrowser() bool {
	if os.Getenv("SSH_CONNECTION") != "" || os.Getenv("SSH_TTY") != "" {
		return false
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
