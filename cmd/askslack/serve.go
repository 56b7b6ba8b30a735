package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/askslack/askslack/claims"
	"github.com/askslack/askslack/mirror"
	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/waterfall/remote"
)

// backend is a store with its lifecycle.
type backend interface {
	store.Store
	Stop()
}

type memoryBackend struct{ *store.Memory }

func (memoryBackend) Stop() {}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

func newLogger(level string) *slog.Logger {
	l, _ := parseLevel(level)
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// serve runs the bot until SIGTERM/SIGINT, then drains.
func serve(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q; the bot is configured through the environment (see README)", args)
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogLevel)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return run(ctx, cfg, log)
}

func openStore(ctx context.Context, cfg *Config, log *slog.Logger) (backend, error) {
	if cfg.RedisURL == "" {
		log.Warn("REDIS_URL is not set: using the embedded in-memory store; run a single replica, and open questions are lost on restart")
		return memoryBackend{store.NewMemory(cfg.Retention, nil)}, nil
	}
	opts, err := redisOptions(cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	redisstore.LogTo(log) // go-redis logs JSON through slog, not plain text to stderr
	rdb := redis.NewUniversalClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		return nil, fmt.Errorf("REDIS_URL: cannot reach Redis at %s: %w", strings.Join(opts.Addrs, ","), err)
	}
	r, err := redisstore.New(rdb, redisstore.Options{Prefix: cfg.RedisPrefix, Retention: cfg.Retention, Logger: log})
	if err != nil {
		return nil, err
	}
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	log.Info("using Redis", "addrs", opts.Addrs, "prefix", cfg.RedisPrefix)
	return r, nil
}

func holderID() string {
	h, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", h, os.Getpid(), hex.EncodeToString(b))
}

func run(ctx context.Context, cfg *Config, log *slog.Logger) error {
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Stop()
	m := newMetrics(st)

	opts := []slack.Option{slack.OptionHTTPClient(slackHTTPClient())}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	api := slack.New(cfg.BotToken, opts...)
	slackDown, err := checkToken(ctx, api, log)
	if err != nil {
		return err
	}

	// Surface → mirror → host → bot: each is built from what came before.
	holder := holderID()
	surface := slackbot.NewSurface(api, slackbot.SurfaceOptions{Channel: cfg.Channel, Logger: log, Metrics: m})
	mir := mirror.New(st, surface, mirror.Options{Holder: holder, Logger: log, ReconcileAfter: cfg.ReconcileAfter, OnPanic: m.Panic})
	host := waterfall.NewHost(st, slackbot.Answerer{Surface: surface, Mirror: mir, Logger: log}, waterfall.HostOptions{Logger: log, Metrics: m})
	host.Observe(mir)
	var authz slackbot.Authorizer
	if len(cfg.AllowedUsers) > 0 || len(cfg.AllowedGroups) > 0 || cfg.RequirePrincipal {
		authz = &slackbot.Allowlist{API: api, Users: cfg.AllowedUsers, Groups: cfg.AllowedGroups, RequirePrincipal: cfg.RequirePrincipal}
	}
	bot := slackbot.New(api, host, slackbot.Options{Channel: cfg.Channel, Logger: log, Authorizer: authz, Metrics: m, Mirror: mir})
	keeper := claims.New(st, host, claims.Options{Holder: holder, Lease: cfg.ClaimLease, Logger: log, Countdown: mir, Metrics: m})
	if cfg.Channel == "" {
		log.Warn("ASKSLACK_CHANNEL is not set: only asks that name a channel reach Slack; others get NO_PROVIDER")
	}

	api2 := remote.NewServer(host, remote.Options{Tokens: cfg.APITokens, Logger: log, Metrics: m, Leases: st, Lease: cfg.ClaimLease,
		Grace: cfg.ReattachGrace, Graces: st, Notifier: bot})
	if len(cfg.APITokens) == 0 {
		log.Warn("ASKSLACK_API_TOKENS is not set: the host API accepts loopback callers only")
	}

	var socket *slackbot.Socket
	if cfg.AppToken != "" {
		socket = slackbot.NewSocket(api, bot, log)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", api2)
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		pctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := st.Ping(pctx); err != nil {
			http.Error(w, "store unreachable: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		if socket != nil && !socket.Connected() {
			http.Error(w, "Slack Socket Mode not connected", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	if cfg.PProf {
		mountPProf(mux)
		log.Warn("ASKSLACK_PPROF is on: /debug/pprof/ is served on the main listener")
	}
	if cfg.SigningSecret != "" {
		mux.Handle("/slack/", slackbot.HTTPHandler(bot, cfg.SigningSecret, log))
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("ASKSLACK_ADDR: %w", err)
	}
	// Every request must arrive within ReadTimeout (headers and body); the
	// routes that wait (a blocking ask, long polls, the wait stream) lift
	// the deadline once their request is read, so only a stalled request is
	// cut. No WriteTimeout: blocking answers take as long as a person does.
	srv := &http.Server{
		Handler:           recovering(mux, log, m),
		ReadHeaderTimeout: min(cfg.ReadTimeout, 10*time.Second),
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 2)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	sockCtx, stopSocket := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSocket()
	if cfg.AppToken != "" {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "askslack_socket_connected",
			Help: "1 when this replica's Slack Socket Mode connection is up.",
		}, func() float64 {
			if socket.Connected() {
				return 1
			}
			return 0
		}))
		go func() {
			if err := socket.Run(sockCtx); err != nil {
				errc <- fmt.Errorf("socket mode: %w", err)
			}
		}()
	}
	keeper.Start(ctx)
	if slackDown {
		go watchSlack(sockCtx, api, log, errc)
	}
	if err := mir.Start(sockCtx); err != nil {
		return err
	}
	mode := map[bool]string{true: "socket", false: "http"}[cfg.AppToken != ""]
	log.Info("askslack is running", "addr", ln.Addr().String(), "interactivity", mode, "channel", cfg.Channel)

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: draining")
	case runErr = <-errc:
		log.Error("stopping after a fatal error", "err", runErr)
	}
	// Drain: blocking asks return 503 so harnesses re-attach to another
	// replica; in-flight interactions finish; the questions stay open.
	api2.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	if err := srv.Shutdown(sctx); err != nil {
		// A stalled or slow client is not waited for beyond the grace.
		log.Warn("connections still open after the shutdown grace; closing them", "grace", cfg.ShutdownGrace.String())
		_ = srv.Close()
	}
	cancel()
	api2.Close()
	// Releasing claims and flushing message updates each get their own
	// budget, whatever the HTTP side used up.
	kctx, kcancel := context.WithTimeout(context.Background(), stopBudget)
	keeper.Stop(kctx) // released claims are taken over by another replica at once
	kcancel()
	stopSocket()
	bctx, bcancel := context.WithTimeout(context.Background(), stopBudget)
	_ = bot.Stop(bctx)
	_ = mir.Stop(bctx) // queued message updates get the same budget
	bcancel()
	log.Info("stopped")
	return runErr
}

// stopBudget is the time each shutdown step after the HTTP server gets.
const stopBudget = 10 * time.Second

// Slack's answers to auth.test that no retry can fix: the token is wrong.
var badTokenErrors = map[string]bool{"invalid_auth": true, "token_revoked": true, "not_authed": true, "account_inactive": true,
	"token_expired": true}

// tokenError says which token Slack refused and what to do.
func tokenError(code string) error {
	return fmt.Errorf("Slack refused SLACK_BOT_TOKEN (%s): the token is wrong, revoked or belongs to an app that was uninstalled; "+
		"copy the Bot User OAuth Token (xoxb-…) from your Slack app's OAuth & Permissions page into SLACK_BOT_TOKEN and start again", code)
}

// checkToken calls auth.test once at start-up. A refused token is fatal; an
// unreachable Slack is not (watchSlack keeps trying and says so).
// It reports whether Slack could not be asked.
func checkToken(ctx context.Context, api *slack.Client, log *slog.Logger) (down bool, err error) {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := api.AuthTestContext(actx)
	if err == nil {
		log.Info("Slack accepted the bot token", "team", resp.Team, "bot", resp.User, "botId", resp.BotID)
		return false, nil
	}
	if code := slackbot.SlackError(err); badTokenErrors[code] {
		return false, tokenError(code)
	}
	log.Warn("cannot reach Slack to check SLACK_BOT_TOKEN (auth.test); serving the API anyway and retrying", "err", err)
	return true, nil
}

// watchSlack repeats auth.test with backoff while Slack is unreachable,
// logging every failure at WARN with its cause and the recovery at INFO. A
// token Slack refuses stops the bot (errc).
func watchSlack(ctx context.Context, api *slack.Client, log *slog.Logger, errc chan<- error) {
	backoff := 500 * time.Millisecond
	for attempt := 2; ; attempt++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := api.AuthTestContext(actx)
		cancel()
		switch {
		case err == nil:
			log.Info("Slack is reachable again; the bot token is valid", "attempt", attempt, "team", resp.Team, "bot", resp.User)
			return
		case ctx.Err() != nil:
			return
		case badTokenErrors[slackbot.SlackError(err)]:
			select {
			case errc <- tokenError(slackbot.SlackError(err)):
			case <-ctx.Done():
			}
			return
		}
		backoff = min(backoff*2, time.Minute)
		log.Warn("Slack is still unreachable (auth.test); retrying", "attempt", attempt, "retryIn", backoff, "err", err)
	}
}

// mountPProf serves net/http/pprof under /debug/pprof/ on mux (the package's
// init registers on http.DefaultServeMux, which the bot does not serve).
func mountPProf(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
