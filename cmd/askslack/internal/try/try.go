// Package try is `askslack try`: the bot, wired exactly as `askslack` wires
// it (package service), against a fake Slack in the same process, with the
// embedded store and a page that shows the channel, DMs, Home tabs and
// modals as Slack would and clicks as any of the workspace's people.
package try

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/kelseyhightower/envconfig"

	"github.com/askslack/askslack/cmd/askslack/internal/service"
	"github.com/askslack/askslack/internal/playground"
	"github.com/askslack/askslack/internal/slackfake"
)

// The people of the playground's workspace. alice and bob are on the
// allowlist (unless ASKSLACK_ALLOWED_USERS says otherwise); mallory is
// not, so her clicks show the refusal she would get.
var (
	tryAlice   = slackfake.User{ID: "U0ALICE", Name: "alice", Email: "alice@example.com"}
	tryBob     = slackfake.User{ID: "U0BOB", Name: "bob", Email: "bob@example.com"}
	tryMallory = slackfake.User{ID: "U0MALLORY", Name: "mallory", Email: "mallory@example.com"}
)

// tryWeb is the answer page's settings in the playground: its URL and the
// fake Slack app's client secret (made up at each start).
type tryWeb struct{ URL, ClientSecret string }

const (
	tryClientID  = "playground.client"
	tryChannel   = "C0QUESTIONS"
	tryCaller    = "playground"
	tryBotToken  = "xoxb-playground"
	tryAddr      = "127.0.0.1:8080"
	tryLogLevel  = "warn"
	tryPrincipal = "alice@example.com"
)

// Run is `askslack try`: the bot with the fake Slack in-process and
// the playground page, until SIGTERM/SIGINT.
func Run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("try", flag.ContinueOnError)
	def := tryAddr
	if v, set := os.LookupEnv("ASKSLACK_ADDR"); set {
		def = v
	}
	addr := fs.String("addr", def, "where the page and the bot's host API listen (ASKSLACK_ADDR)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: askslack try [--addr host:port]\n\nRuns the bot against a fake Slack in this process and serves a page that shows the\nquestions channel as Slack would. Configured like the bot (ASKSLACK_DELIVERY, ASKSLACK_THREADS,\nASKSLACK_REMIND, …); Slack and Redis settings are ignored.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("try: unexpected arguments %q", fs.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	pg, err := startTry(ctx, tryOptions{Addr: *addr})
	if err != nil {
		return err
	}
	pg.printIntro(out)
	return pg.wait()
}

type tryOptions struct {
	Addr string
	Log  *slog.Logger // default: JSON on stderr at ASKSLACK_LOG_LEVEL (warn here)
}

// tryRun is a running playground: the fake Slack, the bot and the page,
// all on one listener.
type tryRun struct {
	URL    string // the page and the bot's host API, e.g. http://127.0.0.1:8080
	Token  string // an agent token for the host API ("" when the environment set its own)
	Fake   *slackfake.Server
	cfg    *service.Config
	people []playground.Person
	done   chan error
}

// startTry starts the fake Slack, then the bot wired exactly as `askslack`
// wires it (service.NewApp) with SLACK_API_URL pointing at the fake and HTTP
// interactivity signed by it, and mounts the page beside the bot's routes.
// Everything stops when ctx ends; wait returns then.
func startTry(ctx context.Context, o tryOptions) (*tryRun, error) {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	base := "http://" + ln.Addr().String()
	secret := randomHex(16)
	web := tryWeb{URL: base, ClientSecret: randomHex(16)}
	fake := slackfake.New(slackfake.Options{
		BotToken: tryBotToken, SigningSecret: secret, InteractionURL: base + "/slack/interactions",
		Users:        []slackfake.User{tryAlice, tryBob, tryMallory},
		OIDCClientID: tryClientID, OIDCClientSecret: web.ClientSecret, OIDCRedirectURIs: []string{base + "/app/auth/callback"},
	})
	if err := fake.Start(); err != nil {
		ln.Close()
		return nil, err
	}
	fake.SetEventsURL(base + "/slack/events")
	fake.SetCommandsURL(base + "/slack/commands")
	cfg, token, err := tryConfig(fake.APIURL(), secret, ln.Addr().String(), web)
	if err != nil {
		ln.Close()
		fake.Close()
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = service.NewLogger(cfg.LogLevel)
	}
	a, err := service.NewApp(ctx, cfg, log)
	if err != nil {
		ln.Close()
		fake.Close()
		return nil, err
	}
	r := &tryRun{URL: base, Token: token, Fake: fake, cfg: cfg, done: make(chan error, 1)}
	for _, u := range []slackfake.User{tryAlice, tryBob, tryMallory} {
		r.people = append(r.people, playground.Person{User: u, Allowed: slices.Contains(cfg.AllowedUsers, u.ID)})
	}
	page := playground.New(playground.Options{Fake: fake, Channel: cfg.Channel, People: r.people, Info: r.info(), Logger: log})
	a.Mount("/", page, page.Close)
	a.ServeOn(ln)
	pctx, cancel := context.WithCancel(ctx)
	go page.Run(pctx)
	go func() {
		err := a.Run(ctx)
		cancel()
		page.Close()
		fake.Close()
		r.done <- err
	}()
	return r, nil
}

// wait blocks until the playground stopped and returns why.
func (r *tryRun) wait() error { return <-r.done }

// tryConfig is the bot's configuration for the playground: the
// environment as for the bot, with Slack pointed at the fake, the embedded
// store, and defaults that make the page useful (a channel, an allowlist
// without mallory, a named agent token bound to alice). It returns the
// agent token it made ("" when ASKSLACK_API_TOKENS set the callers).
func tryConfig(apiURL, secret, addr string, web tryWeb) (*service.Config, string, error) {
	var c service.Config
	if err := envconfig.Process("", &c); err != nil {
		return nil, "", fmt.Errorf("reading the environment: %w", err)
	}
	if _, set := os.LookupEnv("ASKSLACK_LOG_LEVEL"); !set {
		c.LogLevel = tryLogLevel
	}
	c.BotToken, c.AppToken, c.SigningSecret, c.APIURL, c.RedisURL = tryBotToken, "", secret, apiURL, ""
	c.Addr = addr
	// The answer page, signed in through the fake's "Sign in with Slack".
	c.WebURL, c.ClientID, c.ClientSecret = web.URL, tryClientID, web.ClientSecret
	if c.Channel == "" {
		c.Channel = tryChannel
	}
	if len(service.NonEmpty(c.AllowedUsers)) == 0 && len(service.NonEmpty(c.AllowedGroups)) == 0 {
		c.AllowedUsers = []string{tryAlice.ID, tryBob.ID}
	}
	token := ""
	if len(service.NonEmpty(c.APITokens)) == 0 {
		token = "pg-" + randomHex(12)
		c.APITokens = []string{tryCaller + ":" + token}
		if len(service.NonEmpty(c.CallerPrincipals)) == 0 {
			// The playground's agent works for alice: mentions ping her,
			// and ASKSLACK_DELIVERY=dm|both reaches her DMs.
			c.CallerPrincipals = []string{tryCaller + "=" + tryPrincipal}
		}
	}
	return &c, token, c.Check()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// selfCommand is how to run this binary again: "go run ./cmd/askslack" when it
// was started with go run, else its name.
func selfCommand() string {
	exe, err := os.Executable()
	if err == nil && strings.Contains(exe, "go-build") {
		return "go run ./cmd/askslack"
	}
	return "askslack"
}

// urlArg is " --url u" unless u is where the clients look by default.
func urlArg(u string) string {
	if u == "http://"+tryAddr && os.Getenv("ASKSLACK_URL") == "" {
		return ""
	}
	return " --url " + u
}

func (r *tryRun) tokenArg() string {
	if r.Token != "" {
		return r.Token
	}
	return "<a secret of ASKSLACK_API_TOKENS>"
}

// info is what the page shows under "Ask from a terminal".
func (r *tryRun) info() []string {
	cmd := selfCommand()
	return []string{
		fmt.Sprintf("%s ask --url %s --token %s --question \"Deploy now?\" --option Yes --option No", cmd, r.URL, r.tokenArg()),
		fmt.Sprintf("%s ask --url %s --token %s --question \"Which files?\" --option a.go --option b.go --multi --wait 2m", cmd, r.URL, r.tokenArg()),
	}
}

// printIntro says where the page is and what to run next.
func (r *tryRun) printIntro(out io.Writer) {
	cmd := selfCommand()
	var allowed, refused []string
	for _, p := range r.people {
		if p.Allowed {
			allowed = append(allowed, p.User.Name)
		} else {
			refused = append(refused, p.User.Name)
		}
	}
	fmt.Fprintf(out, "askslack playground: %s/\n", r.URL)
	fmt.Fprintf(out, "  the real bot (embedded store, delivery %s, threads %s) talking to a fake Slack in this process;\n", r.cfg.Delivery, r.cfg.Threads)
	fmt.Fprintf(out, "  pick who clicks on the page: %s may answer; %s may not (ASKSLACK_ALLOWED_USERS).\n", strings.Join(allowed, ", "), strings.Join(refused, ", "))
	fmt.Fprintf(out, "  answer from a browser too: %s/app/ (sign in with the fake Slack as any of them).\n", r.URL)
	fmt.Fprintf(out, "\nConnect this machine's agents as yourself (sign in with the fake Slack as alice or bob, confirm the code):\n")
	fmt.Fprintf(out, "  %s login%s\n", cmd, urlArg(r.URL))
	fmt.Fprintf(out, "  %s hook claude --print-settings%s   # no token needed after login\n", cmd, urlArg(r.URL))
	fmt.Fprintf(out, "\nOr ask from another terminal with the playground's own agent token:\n")
	for _, l := range r.info() {
		fmt.Fprintf(out, "  %s\n", l)
	}
	fmt.Fprintf(out, "\nPlug in a coding agent over MCP (Claude Code):\n")
	fmt.Fprintf(out, "  claude mcp add askslack --env ASKSLACK_URL=%s --env ASKSLACK_TOKEN=%s -- askslack mcp --agent claude-code\n", r.URL, r.tokenArg())
	fmt.Fprintf(out, "  (or from this checkout: %s mcp --url %s --token %s --agent claude-code)\n", cmd, r.URL, r.tokenArg())
	fmt.Fprintf(out, "\nAnswer Claude Code's own prompts (hooks):\n")
	fmt.Fprintf(out, "  export ASKSLACK_URL=%s ASKSLACK_TOKEN=%s\n", r.URL, r.tokenArg())
	fmt.Fprintf(out, "  %s hook claude --print-settings --url %s   # merge into .claude/settings.json\n", cmd, r.URL)
	fmt.Fprintf(out, "\nCtrl-C stops it; nothing is kept.\n")
}
