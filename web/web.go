// Package web is the answer page: a person signs in with Slack (OpenID
// Connect) and answers the asks they may answer from a browser — the whole
// plan rendered, live as asks come and go — through the same Host path as a
// click in Slack, under the same rules (the Slack side's Authorizer). Rule
// admins get an operator console: every open ask, the audit trail with its
// chain verified, time to answer, standing rules with revoke.
//
// It is served by the bot under /app/ and is off unless configured. It
// links no Slack client and no store: it talks to the engine through Host,
// keeps sessions through Keeper (store.Notes), and asks Authorizer who may
// answer.
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/waterfall"
)

// Prefix is where the page is served on the bot's listener.
const Prefix = "/app/"

// CallbackPath is the redirect URL's path: the Slack app's OAuth settings
// (and its manifest) must list the bot's public URL followed by it.
const CallbackPath = "/app/auth/callback"

// Host is what the page asks of the engine (engine.Host).
type Host interface {
	Now() time.Time
	Get(ctx context.Context, callID string) (*waterfall.Record, error)
	Current(ctx context.Context, callID string) (*waterfall.Record, error)
	Active(ctx context.Context, limit int) ([]*waterfall.Record, error)
	Answer(ctx context.Context, callID string, ans waterfall.Answer, who waterfall.Respondent) (waterfall.Outcome, error)
	Refused(ctx context.Context, r waterfall.Refusal)
	Audit(ctx context.Context, q asktype.AuditQuery) ([]asktype.AuditEntry, string, error)
	Stats(ctx context.Context, since time.Time) (waterfall.Stats, error)
	Rules(ctx context.Context) ([]asktype.Rule, error)
	RevokeRule(ctx context.Context, id int64, who waterfall.Respondent) (asktype.Rule, error)
}

// Authorizer decides whether a Slack user may answer an ask: the one the
// Slack clicks meet (slackbot.Authorizer), so the page admits exactly whom
// Slack would.
type Authorizer interface {
	Allowed(ctx context.Context, userID string, req *waterfall.Request) (ok bool, why string)
}

// Keeper is what sessions and sign-ins keep in the store, shared by every
// replica (store.Notes, store.Budget).
type Keeper interface {
	Remember(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error)
	Put(ctx context.Context, key, value string, ttl time.Duration, now time.Time) error
	Forget(ctx context.Context, key string, now time.Time) (string, error)
	Take(ctx context.Context, b asktype.Bucket, now time.Time) (bool, error)
}

// Options configure a Server. Host, Authorizer, Keeper, BaseURL, ClientID
// and ClientSecret are required.
type Options struct {
	Host       Host
	Authorizer Authorizer
	// Admins may open the operator console (ASKSLACK_RULE_ADMINS and
	// ASKSLACK_WEB_ADMINS); nil: nobody.
	Admins Authorizer
	// RuleAdmins may revoke standing rules there, as in Slack
	// (ASKSLACK_RULE_ADMINS); nil: every console admin may.
	RuleAdmins Authorizer
	Keeper     Keeper
	// BaseURL is the bot's public URL ("https://askslack.example.com"):
	// links in Slack messages and the redirect URL start with it.
	BaseURL string
	// ClientID and ClientSecret are the Slack app's (Basic Information →
	// App Credentials).
	ClientID, ClientSecret string
	// Provider is Slack's OpenID Connect endpoints (ProviderFor).
	Provider Provider
	// Team is the bot's workspace: only its members sign in. With
	// several workspaces Member is set instead: a member of any
	// workspace it accepts signs in, to that workspace.
	Team   func(ctx context.Context) (string, error)
	Member func(ctx context.Context, team string) bool
	// SessionTTL is how long a session lasts (default 12h).
	SessionTTL time.Duration
	// HTTP calls Slack's OpenID endpoints (discovery, token, keys); nil: a
	// client with a 10 s timeout.
	HTTP   *http.Client
	Clock  clock.Clock
	Logger *slog.Logger
	// Poll is how often a replica with live pages open reads the active
	// asks, to hear of changes other replicas made (default 2s).
	Poll time.Duration
	// Metrics counts what people do on the page; nil counts nothing.
	Metrics Metrics
	// Devices confirms askslack login's codes on /app/device and lists
	// and revokes agent tokens in the console; nil: login is off.
	Devices Devices
}

// Metrics counts the page's actions (signin, answer, logout, revoke) by
// result: ok, refused (a check said no), invalid (bad input), error (the
// store or Slack failed).
type Metrics interface {
	Web(action, result string)
}

type noMetrics struct{}

func (noMetrics) Web(string, string) {}

// Server serves the page.
type Server struct {
	opts   Options
	host   Host
	authz  Authorizer
	admins Authorizer
	keep   Keeper
	log    *slog.Logger
	clock  clock.Clock
	oidc   *oidcClient
	base   *url.URL
	secure bool // cookies are Secure (anything but http on loopback)
	mux    *http.ServeMux
	feed   *feed
	pages  *template.Template
	m      Metrics
}

//go:embed templates/*.html static/*
var assets embed.FS

// New checks opts and returns the page's server.
func New(opts Options) (*Server, error) {
	var missing []string
	for name, v := range map[string]bool{"Host": opts.Host == nil, "Authorizer": opts.Authorizer == nil, "Keeper": opts.Keeper == nil,
		"BaseURL": opts.BaseURL == "", "ClientID": opts.ClientID == "", "ClientSecret": opts.ClientSecret == "", "Team": opts.Team == nil && opts.Member == nil} {
		if v {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, errors.New("web: missing " + strings.Join(missing, ", "))
	}
	base, err := ParseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	if opts.Provider == (Provider{}) {
		opts.Provider = ProviderFor("")
	}
	c := clock.OrReal(opts.Clock)
	s := &Server{opts: opts, host: opts.Host, authz: opts.Authorizer, admins: opts.Admins, keep: opts.Keeper, log: opts.Logger, clock: c,
		base: base, secure: !(base.Scheme == "http" && loopback(base.Hostname())), m: opts.Metrics}
	s.oidc = &oidcClient{provider: opts.Provider, clientID: opts.ClientID, clientSecret: opts.ClientSecret,
		redirect: base.String() + CallbackPath, http: opts.HTTP, now: c.Now}
	s.feed = newFeed(opts.Host, opts.Poll, opts.Logger)
	s.pages = template.Must(template.New("").Funcs(funcs).ParseFS(assets, "templates/*.html"))
	if err := s.routes(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseBaseURL checks the bot's public URL: absolute, http(s), no query.
// Plain http is accepted on loopback only: a session cookie must not cross
// a network in the clear.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	switch {
	case err != nil:
		return nil, errors.New("ASKSLACK_WEB_URL: " + err.Error())
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return nil, errors.New("ASKSLACK_WEB_URL must be an absolute http(s) URL such as https://askslack.example.com")
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return nil, errors.New("ASKSLACK_WEB_URL must use https unless it is on loopback (http://127.0.0.1:8080): session cookies must not cross a network in the clear")
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return nil, errors.New("ASKSLACK_WEB_URL must have no query, fragment or user info")
	case u.Path != "":
		return nil, errors.New("ASKSLACK_WEB_URL must be the bot's origin, without a path: the page is served under /app/")
	}
	// As browsers send it in Origin: the host in lower case, no default
	// port (it is CrossOriginProtection's trusted origin, matched exactly).
	u.Host = strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		u.Host = strings.TrimSuffix(u.Host, ":"+port)
	}
	return u, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// AskURL is the page of one ask, for the "Open in browser" link of its
// Slack message.
func AskURL(base, callID string) string {
	return strings.TrimSuffix(base, "/") + Prefix + "asks/" + url.PathEscape(callID)
}

// Changed implements engine.Observer: pages open on this replica hear of a
// change at once (the poll hears of other replicas' changes).
func (s *Server) Changed(r *waterfall.Record) { s.feed.Changed(r) }

// ServeHTTP serves everything under Prefix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Scripts, styles and fetches from the page's own origin only, nothing
	// inline, never framed (clickjacking an Approve button), forms posted
	// only back here.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if s.secure {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	s.mux.ServeHTTP(w, r)
}

// answerRoute is the answer's post: crossOrigin records its refusals about
// the ask.
const answerRoute = "POST /app/asks/{id}"

func (s *Server) routes() error {
	// Every post goes through http.CrossOriginProtection first: refused
	// when the browser says (Sec-Fetch-Site, or else Origin) that it comes
	// from another origin. ASKSLACK_WEB_URL is trusted as an Origin too:
	// behind a proxy the Host the bot sees may not be the public one.
	xo := http.NewCrossOriginProtection()
	if err := xo.AddTrustedOrigin(s.origin()); err != nil {
		return err
	}
	xo.SetDenyHandler(http.HandlerFunc(s.crossOrigin))
	m := http.NewServeMux()
	post := func(pattern string, h http.HandlerFunc) { m.Handle(pattern, xo.Handler(h)) }
	m.HandleFunc("GET /app/{$}", s.inbox)
	m.HandleFunc("GET /app/login", s.login)
	m.HandleFunc("GET "+CallbackPath, s.callback)
	post("POST /app/logout", s.logout)
	m.HandleFunc("GET /app/asks/{id}", s.askPage)
	post(answerRoute, s.answer)
	m.HandleFunc("GET /app/events", s.events)
	m.HandleFunc("GET /app/console", s.console)
	post("POST /app/console/rules/{id}/revoke", s.revoke)
	m.HandleFunc("GET /app/device", s.device)
	post("POST /app/device", s.confirmDevice)
	post("POST /app/console/tokens/{id}/revoke", s.revokeToken)
	m.Handle("GET /app/static/", http.StripPrefix("/app/", staticFiles()))
	m.HandleFunc("/app/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, "There is no such page.")
	})
	s.mux = m
	return nil
}

// staticFiles serves the page's script and style, cached briefly (they
// change with the binary).
func staticFiles() http.Handler {
	fs := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		fs.ServeHTTP(w, r)
	})
}

// Stop ends the live feed's poll; open event streams end with their
// requests.
func (s *Server) Stop(context.Context) error {
	s.feed.stop()
	return nil
}
