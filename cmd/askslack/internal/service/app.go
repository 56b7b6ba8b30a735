// Package service is the askslack bot itself: its configuration from the
// environment (Config), its metrics, and the wiring of every part (store →
// Slack → mirror → host → bot, claims, reminders, host API → HTTP server)
// into an App that starts them in phases and stops them in reverse. Serve
// is `askslack` (and `askslack serve`); askslack try runs the same App
// against a fake Slack.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/slack-go/slack"

	"github.com/askslack/askslack/claims"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/installs"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/mirror"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/tokens"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/web"
	"github.com/askslack/askslack/webhook"
)

// App is the bot: every part built once by NewApp, each from parts built
// before it (store → Slack client → surface → mirror → host → bot, keeper,
// host API → HTTP server), so nothing is bound late and nothing refers
// back. Run starts the parts and stops them.
type App struct {
	cfg       *Config
	log       *slog.Logger
	clock     clock.Clock
	store     backend
	metrics   *metrics
	slack     *slack.Client
	slackHTTP *http.Client // slack's, shared with the JSON chat client
	slackDown bool         // auth.test could not reach Slack at start: watch it
	surface   *slackbot.Surface
	mirror    *mirror.Mirror
	host      *engine.Host
	bot       *slackbot.Bot
	authz     slackbot.Authorizer // who may answer: the clicks' and the answer page's
	web       *web.Server         // the answer page; nil when not configured
	teamID    teamCache           // the workspace, for the answer page's sign-in
	keeper    *claims.Keeper
	reminders *remind.Sender
	webhooks  *webhook.Dispatcher // ASKSLACK_WEBHOOKS; nil when none (webhooks.go)
	tokens    *tokens.Service     // askslack login; nil when off (tokens.go)
	hostAPI   *hostapi.Server
	// Several workspaces (installs.go); all nil with one.
	installs     *installs.Keeper
	workspaces   *slackbot.Workspaces
	refresh      *installs.Refresher
	refreshes    *prometheus.CounterVec
	installCount prometheus.Counter
	// workspaceRequests: the host API's asks and notices per workspace.
	workspaceRequests *prometheus.CounterVec
	socket            *slackbot.Socket // nil in HTTP mode
	server            *http.Server
	ln                net.Listener // when set before Run (ServeOn), served instead of listening on ASKSLACK_ADDR (askslack try)
	addr              string       // where server listens, once started
	fatal             chan error   // errors that stop the bot (Serve, Socket Mode, a refused token)
}

// NewApp connects to the store and Slack and builds every part; nothing
// runs until Run.
func NewApp(ctx context.Context, cfg *Config, log *slog.Logger) (*App, error) {
	a := &App{cfg: cfg, log: log, clock: clock.Real, fatal: make(chan error, 2)}
	st, err := openStore(ctx, cfg, log, a.clock)
	if err != nil {
		return nil, err
	}
	a.store, a.metrics = st, newMetrics(st)
	a.slackHTTP = slackHTTPClient()
	a.buildInstalls() // several workspaces: every Slack call goes out with its workspace's token
	a.slack = newSlackClient(cfg, a.slackHTTP)
	if a.installs != nil {
		a.installsStartup(ctx)
	} else if a.slackDown, err = slackbot.CheckToken(ctx, a.slack, log); err != nil {
		return nil, err
	}
	holder := holderID()
	a.buildCore(holder)
	a.buildWebhooks(holder)
	a.buildRules()
	if err := a.buildTokens(); err != nil {
		return nil, err
	}
	if err := a.buildWeb(); err != nil {
		return nil, err
	}
	a.buildEdges()
	if a.installs != nil {
		a.refresh = a.refresher(holder)
	}
	return a, nil
}

// newSlackClient is the one Slack Web API client; slackbot wraps it.
func newSlackClient(cfg *Config, hc *http.Client) *slack.Client {
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	return slack.New(cfg.BotToken, opts...)
}

// buildCore builds the parts that keep asks and messages: surface →
// mirror → host → bot and keeper, each from what came before.
func (a *App) buildCore(holder string) {
	cfg, log, m := a.cfg, a.log, a.metrics
	clickURLs := slackbot.NewClickURLs(a.slackHTTP, a.clock.Now)
	sopts := a.surfaceOptions()
	sopts.ClickURLs = clickURLs
	sopts.Workspaces = a.workspaces
	if cfg.webOn() {
		sopts.AskLink = func(callID string) string { return web.AskURL(cfg.WebURL, callID) }
	}
	a.authz = a.authorizer()
	a.surface = slackbot.NewSurface(a.slack, sopts)
	a.mirror = mirror.New(a.store, a.surface, mirror.Options{Holder: holder, Clock: a.clock, Logger: log,
		ReconcileAfter: cfg.ReconcileAfter, OnPanic: m.Panic, Pace: a.pace()})
	if cfg.SlackPacing {
		m.watchQueue(a.mirror.QueueDepth)
	}
	a.host = engine.NewHost(a.store, slackbot.Answerer{Surface: a.surface, Logger: log},
		engine.HostOptions{Clock: a.clock, Logger: log, Metrics: m, Audit: a.store, Policy: waterfall.QuorumPolicy{}, Quorum: cfg.quorum})
	a.host.Observe(a.mirror)
	a.host.UseMemory(engine.MemoryOptions{Notes: a.store, For: cfg.AnswerMemory}) // off at 0
	a.bot = slackbot.New(a.slack, a.host, slackbot.Options{Channel: cfg.Channel, TimeScale: cfg.SlackTimeScale, Logger: log, Authorizer: a.authz,
		Metrics: m, Mirror: a.mirror, Directory: a.store, ClickURLs: clickURLs, Workspaces: a.workspaces, Uninstaller: a.uninstaller()})
	a.host.Observe(a.bot) // Home tabs follow their questions
	a.keeper = claims.New(a.store, a.host, claims.Options{Holder: holder, Lease: cfg.ClaimLease, Clock: a.clock, Logger: log,
		Countdown: a.mirror, Metrics: m})
	ropts := remind.Options{Clock: a.clock, Logger: log, Metrics: m}
	if cfg.SlackPacing {
		// A reminder waits for its turn at the front of its channel's
		// queue of posts (not a lease); the page waits for no Slack turn.
		ropts.Turns = a.surface.Turns(a.mirror)
	}
	a.reminders = remind.New(a.store, a.surface.Reminders(), cfg.schedule, ropts)
	a.buildPager() // ASKSLACK_PAGE: pages at the reminders' escalation step, resolved by an observer of the host
	if cfg.Channel == "" {
		log.Warn("ASKSLACK_CHANNEL is not set: only asks that name a channel reach Slack; others get NO_PROVIDER")
	}
}

// surfaceOptions are where questions go and whom they reach (the reach
// settings of the config).
func (a *App) surfaceOptions() slackbot.SurfaceOptions {
	cfg := a.cfg
	opts := slackbot.SurfaceOptions{Channel: cfg.Channel, TimeScale: a.cfg.SlackTimeScale, Now: a.clock.Now, Logger: a.log, Metrics: a.metrics,
		Mention: cfg.Mention, Principals: &slackbot.Principals{API: a.slack, Now: a.clock.Now}, Delivery: cfg.Delivery,
		Chat: slackbot.NewJSONChat(a.slackHTTP, cfg.APIURL, cfg.BotToken)}
	if cfg.Threads == "session" {
		opts.Threads = a.store
	}
	if len(cfg.schedule.After) > 0 {
		opts.Reminders = cfg.schedule.Armer(a.store)
	}
	return opts
}

// authorizer is who may answer: the allowlist when one is configured, else
// everyone in the channel, narrowed by each ask's approvers.
func (a *App) authorizer() slackbot.Authorizer {
	cfg := a.cfg
	var base slackbot.Authorizer = slackbot.Everyone{}
	if len(cfg.AllowedUsers) != 0 || len(cfg.AllowedGroups) != 0 || cfg.RequirePrincipal {
		base = &slackbot.Allowlist{API: a.slack, Users: cfg.AllowedUsers, Groups: cfg.AllowedGroups,
			RequirePrincipal: cfg.RequirePrincipal, Bindings: cfg.principals, Clock: a.clock}
	}
	// An ask's approvers narrow whoever the configuration admits.
	var authz slackbot.Authorizer = slackbot.NewApprovers(base, a.slack, a.clock)
	if a.workspaces != nil {
		// Several workspaces: only an ask's own workspace answers it.
		authz = slackbot.WorkspaceGate{Next: authz, WS: a.workspaces, Users: a.slack}
	}
	return authz
}

// buildEdges builds what the outside talks to: the host API, the Socket
// Mode connection and the HTTP server.
func (a *App) buildEdges() {
	cfg, log, m := a.cfg, a.log, a.metrics
	hopts := hostapi.Options{Callers: cfg.callers, Principals: cfg.principals, Workspaces: cfg.workspaces, Logger: log, Metrics: m, Leases: a.store,
		Lease: cfg.ClaimLease, Grace: cfg.ReattachGrace, Graces: a.store, Clock: a.clock, Notifier: a.bot, Webhooks: a.webhookAPI(), LoginOff: cfg.loginOff()}
	if a.tokens != nil {
		hopts.Tokens = a.tokens
	}
	if a.installs != nil {
		hopts.Served = a.served
	}
	a.hostAPI = hostapi.NewServer(a.host, hopts)
	switch {
	case cfg.callers.Development():
		log.Warn("DEVELOPMENT MODE: no ASKSLACK_API_TOKENS, ASKSLACK_ANSWER_TOKENS or ASKSLACK_ADMIN_TOKENS are set, so every loopback caller holds every role: " +
			"an agent on this machine can answer its own questions, read and withdraw any ask, and read the audit trail. Set named tokens before anyone relies on an approval.")
	case cfg.bareTokens > 0:
		log.Warn("ASKSLACK_API_TOKENS has secrets without a name: they are agents named token-1, token-2, …; write name:secret so each agent's asks show who asked", "unnamed", cfg.bareTokens)
	}
	if cfg.AppToken != "" {
		a.socket = slackbot.NewSocket(a.slack, a.bot, log)
		a.socket.OnFatal = a.fail
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "askslack_socket_connected",
			Help: "1 when this replica's Slack Socket Mode connection is up.",
		}, func() float64 {
			if a.socket.Connected() {
				return 1
			}
			return 0
		}))
	}
	// Every request must arrive within ReadTimeout (headers and body); the
	// routes that wait (a blocking ask, long polls, the wait stream) lift
	// the deadline once their request is read, so only a stalled request is
	// cut. No WriteTimeout: blocking answers take as long as a person does.
	a.server = &http.Server{
		Handler:           recovering(a.routes(), log, m),
		ReadHeaderTimeout: min(cfg.ReadTimeout, 10*time.Second),
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
	}
	if a.web != nil {
		// The answer page's event streams last as long as their pages: end
		// them when draining starts, or they would hold the drain for all
		// of ASKSLACK_SHUTDOWN_GRACE.
		a.server.RegisterOnShutdown(func() { _ = a.web.Stop(context.Background()) })
	}
}

// apiServices: the host API, and the answer page when configured.
func (a *App) apiServices() []service {
	if a.web == nil {
		return []service{a.hostAPI}
	}
	return []service{a.hostAPI, &serviceFuncs{stop: a.web.Stop}}
}

// routes: the host API, metrics, probes and (HTTP mode) Slack's requests.
func (a *App) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/v1/", a.hostAPI)
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.metrics.reg, promhttp.HandlerOpts{Registry: a.metrics.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", a.ready)
	if a.cfg.PProf {
		mountPProf(mux)
		a.log.Warn("ASKSLACK_PPROF is on: /debug/pprof/ is served on the main listener")
	}
	if a.cfg.SigningSecret != "" {
		mux.Handle("/slack/", slackbot.HTTPHandler(a.bot, a.cfg.SigningSecret, a.log))
	}
	a.installRoutes(mux)
	if a.web != nil {
		mux.Handle(web.Prefix, a.web)
	}
	return mux
}

// Mount serves h at pattern on the bot's listener, beside the bot's routes
// and recovered like them; onShutdown runs when the HTTP server shuts
// down. askslack try mounts its page at "/". Call it before Run.
func (a *App) Mount(pattern string, h http.Handler, onShutdown func()) {
	mux := a.routes()
	mux.Handle(pattern, h)
	a.server.Handler = recovering(mux, a.log, a.metrics)
	a.server.RegisterOnShutdown(onShutdown)
}

// ServeOn makes Run serve on ln instead of listening on ASKSLACK_ADDR
// (askslack try, whose page shares the listener). Call it before Run.
func (a *App) ServeOn(ln net.Listener) { a.ln = ln }

// ready is GET /readyz: the store answers and, in Socket Mode, Slack is
// connected.
func (a *App) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		http.Error(w, "store unreachable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if a.socket != nil && !a.socket.Connected() {
		http.Error(w, "Slack Socket Mode not connected", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// stopBudget is the time each shutdown phase after the HTTP server gets.
const stopBudget = 10 * time.Second

// phases are the bot's services in start order; they stop in reverse: the
// HTTP server first (drain, then the shutdown grace, then force-close), then
// the claims (released for another replica to take over at once), the
// Slack connection, queued interaction work, message updates and the
// reminder sweep (sharing one budget), and the store's change feed last.
func (a *App) phases() []phase {
	return []phase{
		{name: "store", budget: stopBudget, services: []service{a.store}},
		{name: "messages", budget: stopBudget, services: []service{a.mirror, a.bot, a.reminders}},
		{name: "webhooks", budget: stopBudget, services: a.webhookServices()},
		{name: "installs", budget: stopBudget, services: a.installServices()},
		{name: "slack", budget: stopBudget, services: a.slackServices()},
		{name: "claims", budget: stopBudget, services: []service{a.keeper}},
		{name: "api", budget: stopBudget, services: a.apiServices()},
		{name: "http", budget: a.cfg.ShutdownGrace, services: []service{&serviceFuncs{start: a.listen, stop: a.drain}}},
	}
}

// slackServices keep this replica talking to Slack: Socket Mode when
// SLACK_APP_TOKEN is set, and the auth.test watch when Slack was
// unreachable at start.
func (a *App) slackServices() []service {
	out := []service{&serviceFuncs{start: a.watchToken}}
	if a.socket != nil {
		out = append(out, a.socket)
	}
	return out
}

// Run starts the phases in order, serves until ctx ends or something fatal
// happens, then stops them in reverse, each within its budget.
func (a *App) Run(ctx context.Context) error {
	phases := a.phases()
	if err := startPhases(ctx, phases, a.log); err != nil {
		return err
	}
	mode := map[bool]string{true: "socket", false: "http"}[a.socket != nil]
	a.log.Info("askslack is running", "addr", a.addr, "interactivity", mode, "channel", a.cfg.Channel)
	var err error
	select {
	case <-ctx.Done():
		a.log.Info("shutting down: draining")
	case err = <-a.fatal:
		a.log.Error("stopping after a fatal error", "err", err)
	}
	stopPhases(phases, a.log)
	a.log.Info("stopped")
	return err
}

// watchToken repeats auth.test until Slack answers, when it could not be
// reached at start, until the slack phase stops.
func (a *App) watchToken(ctx context.Context) (stop func(), err error) {
	if !a.slackDown {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go slackbot.WatchToken(ctx, a.slack, a.log, a.fatal)
	return cancel, nil
}

// listen opens ASKSLACK_ADDR (or takes the listener set in a.ln) and
// serves on it.
func (a *App) listen(context.Context) (stop func(), err error) {
	ln := a.ln
	if ln == nil {
		if ln, err = net.Listen("tcp", a.cfg.Addr); err != nil {
			return nil, fmt.Errorf("ASKSLACK_ADDR: %w", err)
		}
	}
	a.addr = ln.Addr().String()
	go func() {
		if err := a.server.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			a.fail(err)
		}
	}()
	return nil, nil
}

// drain stops the HTTP side: blocking asks return 503 so harnesses
// re-attach to another replica; in-flight requests get ctx (the shutdown
// grace), then whatever is still open is closed; the questions stay open.
func (a *App) drain(ctx context.Context) error {
	a.hostAPI.Drain()
	if err := a.server.Shutdown(ctx); err != nil {
		// A stalled or slow client is not waited for beyond the grace.
		a.log.Warn("connections still open after the shutdown grace; closing them", "grace", a.cfg.ShutdownGrace.String())
		_ = a.server.Close()
	}
	return nil
}

// fail reports an error that stops the bot; the first one wins.
func (a *App) fail(err error) {
	select {
	case a.fatal <- err:
	default:
		a.log.Error("another fatal error while stopping", "err", err)
	}
}
