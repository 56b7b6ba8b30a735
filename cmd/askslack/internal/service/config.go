package service

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Config is the bot's environment. The Slack names follow Slack's own
// conventions; everything else is ASKSLACK_*. deploy/kubernetes uses exactly
// these names (a test keeps them in step).
type Config struct {
	BotToken      string `envconfig:"SLACK_BOT_TOKEN"`
	AppToken      string `envconfig:"SLACK_APP_TOKEN"`
	SigningSecret string `envconfig:"SLACK_SIGNING_SECRET"`
	APIURL        string `envconfig:"SLACK_API_URL"`
	RedisURL      string `envconfig:"REDIS_URL"`

	Addr             string        `envconfig:"ASKSLACK_ADDR" default:":8080"`
	Channel          string        `envconfig:"ASKSLACK_CHANNEL"`
	APITokens        []string      `envconfig:"ASKSLACK_API_TOKENS"`
	AnswerTokens     []string      `envconfig:"ASKSLACK_ANSWER_TOKENS"`
	AdminTokens      []string      `envconfig:"ASKSLACK_ADMIN_TOKENS"`
	CallerPrincipals []string      `envconfig:"ASKSLACK_CALLER_PRINCIPALS"`
	AllowedUsers     []string      `envconfig:"ASKSLACK_ALLOWED_USERS"`
	AllowedGroups    []string      `envconfig:"ASKSLACK_ALLOWED_GROUPS"`
	RequirePrincipal bool          `envconfig:"ASKSLACK_REQUIRE_PRINCIPAL"`
	Mention          []string      `envconfig:"ASKSLACK_MENTION"`
	Delivery         string        `envconfig:"ASKSLACK_DELIVERY" default:"channel"`
	Threads          string        `envconfig:"ASKSLACK_THREADS" default:"off"`
	Remind           []string      `envconfig:"ASKSLACK_REMIND"`
	Escalate         []string      `envconfig:"ASKSLACK_ESCALATE"`
	Quorum           string        `envconfig:"ASKSLACK_QUORUM"`
	Retention        time.Duration `envconfig:"ASKSLACK_RETENTION" default:"168h"`
	AuditRetention   time.Duration `envconfig:"ASKSLACK_AUDIT_RETENTION" default:"2160h"`
	RedisPrefix      string        `envconfig:"ASKSLACK_REDIS_PREFIX" default:"askslack"`
	// StoreSchema is the stored schema written (docs/upgrading.md): 1,
	// or 2 once no replica of fc987cc or older runs.
	StoreSchema    int           `envconfig:"ASKSLACK_STORE_SCHEMA" default:"1"`
	LogLevel       string        `envconfig:"ASKSLACK_LOG_LEVEL" default:"info"`
	ShutdownGrace  time.Duration `envconfig:"ASKSLACK_SHUTDOWN_GRACE" default:"20s"`
	ClaimLease     time.Duration `envconfig:"ASKSLACK_CLAIM_LEASE" default:"15s"`
	ReconcileAfter time.Duration `envconfig:"ASKSLACK_RECONCILE_AFTER" default:"1m"`
	ReattachGrace  time.Duration `envconfig:"ASKSLACK_REATTACH_GRACE" default:"30s"`
	ReadTimeout    time.Duration `envconfig:"ASKSLACK_READ_TIMEOUT" default:"30s"`
	// RuleAdmins may grant and revoke standing rules (rules.go); empty:
	// whoever may answer an ask. RuleNotices: "thread" or "off".
	RuleAdmins  []string `envconfig:"ASKSLACK_RULE_ADMINS"`
	RuleNotices string   `envconfig:"ASKSLACK_RULE_NOTICES" default:"thread"`
	// PProf mounts net/http/pprof at /debug/pprof/ on the main listener. Off
	// by default: profiles expose internals and cost CPU while taken.
	PProf bool `envconfig:"ASKSLACK_PPROF"`
	// SlackTimeScale is for tests and the bench only: the Slack the bot
	// talks to keeps time this many times faster (a fake enforcing Slack's
	// rate limits at ×20), so Retry-After and the bot's own pacing are
	// read at that scale. Unset or 1 in production.
	SlackTimeScale float64 `envconfig:"ASKSLACK_SLACK_TIME_SCALE" default:"1"`
	// SlackPacing queues posts and updates for Slack's rate limits,
	// sharing the budget through the store (see README "Slack rate
	// limits"); off sends every call at once, as before.
	SlackPacing bool `envconfig:"ASKSLACK_SLACK_PACING" default:"true"`
	// The answer page (web.go): on when WebURL, ClientID and ClientSecret
	// are all set, off (and nothing served under /app/) when none is.
	WebURL       string        `envconfig:"ASKSLACK_WEB_URL"`
	ClientID     string        `envconfig:"SLACK_CLIENT_ID"`
	ClientSecret string        `envconfig:"SLACK_CLIENT_SECRET"`
	WebAdmins    []string      `envconfig:"ASKSLACK_WEB_ADMINS"`
	WebSession   time.Duration `envconfig:"ASKSLACK_WEB_SESSION" default:"12h"`
	// AnswerMemory is how long what people chose is remembered, so the
	// same question asked again says "Last time: alice chose …" and
	// offers it first (0: off). Never typed text, never permissions.
	AnswerMemory time.Duration `envconfig:"ASKSLACK_ANSWER_MEMORY" default:"336h"`
	Paging
	Webhooking
	Login
	Installing

	// schedule is ASKSLACK_REMIND and ASKSLACK_ESCALATE, read by Check.
	schedule remind.Schedule
	// callers and principals are the API tokens and the caller bindings,
	// read by Check; bareTokens counts the unnamed ones (a WARN at start).
	callers    *hostapi.Callers
	principals map[string]string
	bareTokens int
	// quorum is ASKSLACK_QUORUM parsed, by Check (quorum.go).
	quorum waterfall.QuorumConfig
}

// LoadConfig reads and checks the environment. Errors name the variable
// and say what to do.
func LoadConfig() (*Config, error) {
	var c Config
	if err := envconfig.Process("", &c); err != nil {
		return nil, fmt.Errorf("reading the environment: %w", err)
	}
	return &c, c.Check()
}

// Check checks the configuration read into c and fills in what is derived
// from it (the schedule, the callers, the quorum). Errors name the variable.
func (c *Config) Check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	errs = append(errs, c.checkInstalling()...)
	errs = append(errs, c.checkTokens()...)
	errs = append(errs, c.checkCallers()...)
	errs = append(errs, c.checkWeb()...)
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("SLACK_API_URL %q is not an http(s) URL", c.APIURL)
		} else if !strings.HasSuffix(c.APIURL, "/") {
			c.APIURL += "/" // slack-go appends method names directly
		}
	}
	if c.RedisURL != "" {
		if _, err := redisOptions(c.RedisURL); err != nil {
			bad("REDIS_URL: %v", err)
		}
	}
	if c.AnswerMemory < 0 || c.AnswerMemory > 8760*time.Hour {
		bad("ASKSLACK_ANSWER_MEMORY %s must be 0 (off) to 8760h (a year); default 336h (14 days)", c.AnswerMemory)
	}
	if c.ReconcileAfter < time.Second {
		bad("ASKSLACK_RECONCILE_AFTER %s is too short: it must outlast a replica's own retries (default 1m)", c.ReconcileAfter)
	}
	if c.StoreSchema < 0 || c.StoreSchema > 2 { // 0: a Config built in code, schema 1
		bad("ASKSLACK_STORE_SCHEMA %d must be 1 (default) or 2 (once no replica of fc987cc or older runs; see docs/upgrading.md)", c.StoreSchema)
	}
	if strings.ContainsAny(c.RedisPrefix, "{} ") || c.RedisPrefix == "" {
		bad("ASKSLACK_REDIS_PREFIX must be non-empty without braces or spaces")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("ASKSLACK_ADDR %q is not host:port (e.g. :8080): %v", c.Addr, err)
	}
	if c.Retention < time.Hour {
		bad("ASKSLACK_RETENTION %s is too short; settled questions must outlive any harness re-attach (at least 1h)", c.Retention)
	}
	if c.AuditRetention == 0 {
		c.AuditRetention = store.DefaultAuditRetention // a Config built without envconfig's defaults
	}
	if c.AuditRetention < 24*time.Hour {
		bad("ASKSLACK_AUDIT_RETENTION %s is too short; keep the audit trail at least 24h (default 2160h, 90 days), and ship it elsewhere (askslack audit) for longer", c.AuditRetention)
	}
	if c.ClaimLease < 300*time.Millisecond || c.ClaimLease > 5*time.Minute {
		bad("ASKSLACK_CLAIM_LEASE %s must be between 300ms and 5m: a dead replica's timed waits are taken over within one lease", c.ClaimLease)
	}
	if c.ReattachGrace < 100*time.Millisecond || c.ReattachGrace > 24*time.Hour {
		bad("ASKSLACK_REATTACH_GRACE %s must be between 100ms and 24h: it is how long a question whose blocking request dropped waits for the same callId to come back", c.ReattachGrace)
	}
	if c.ReadTimeout < 100*time.Millisecond || c.ReadTimeout > 10*time.Minute {
		bad("ASKSLACK_READ_TIMEOUT %s must be between 100ms and 10m: it bounds reading a request's headers and body", c.ReadTimeout)
	}
	if c.ShutdownGrace <= 0 {
		bad("ASKSLACK_SHUTDOWN_GRACE %s must be positive", c.ShutdownGrace)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		bad("ASKSLACK_LOG_LEVEL: %v", err)
	}
	c.APITokens = NonEmpty(c.APITokens)
	c.AllowedUsers = NonEmpty(c.AllowedUsers)
	c.AllowedGroups = NonEmpty(c.AllowedGroups)
	errs = append(errs, c.checkReach()...)
	errs = append(errs, c.Paging.check(c.Remind)...)
	errs = append(errs, c.Webhooking.check()...)
	errs = append(errs, c.checkQuorum()...)
	errs = append(errs, c.checkRules()...)
	errs = append(errs, c.checkLogin()...)
	return errors.Join(errs...)
}

// checkCallers reads the host API's tokens, one role per variable, and the
// principals bound to callers. Errors name the variable.
func (c *Config) checkCallers() []error {
	var errs []error
	var creds []hostapi.Credential
	for _, v := range []struct {
		name    string
		role    hostapi.Role
		entries []string
	}{
		{"ASKSLACK_API_TOKENS", hostapi.RoleAgent, c.APITokens},
		{"ASKSLACK_ANSWER_TOKENS", hostapi.RoleAnswer, c.AnswerTokens},
		{"ASKSLACK_ADMIN_TOKENS", hostapi.RoleAdmin, c.AdminTokens},
	} {
		got, err := hostapi.ParseCredentials(v.name, v.role, NonEmpty(v.entries), v.role == hostapi.RoleAgent, &c.bareTokens)
		if err != nil {
			errs = append(errs, err)
		}
		creds = append(creds, got...)
	}
	callers, err := hostapi.NewCallers(creds, map[hostapi.Role]string{hostapi.RoleAgent: "ASKSLACK_API_TOKENS",
		hostapi.RoleAnswer: "ASKSLACK_ANSWER_TOKENS", hostapi.RoleAdmin: "ASKSLACK_ADMIN_TOKENS"})
	if err != nil {
		errs = append(errs, err)
	}
	c.callers = callers
	roles := map[string]hostapi.Role{}
	for _, cr := range creds {
		roles[cr.Name] = cr.Role
	}
	c.principals = map[string]string{}
	for _, e := range NonEmpty(c.CallerPrincipals) {
		name, p, ok := strings.Cut(e, "=")
		name, p = strings.TrimSpace(name), strings.TrimSpace(p)
		switch {
		case !ok || name == "" || p == "":
			errs = append(errs, fmt.Errorf("ASKSLACK_CALLER_PRINCIPALS: %q is not caller=principal (a Slack user id or an email)", e))
		case roles[name] != hostapi.RoleAgent:
			errs = append(errs, fmt.Errorf("ASKSLACK_CALLER_PRINCIPALS: %q is not an agent caller of ASKSLACK_API_TOKENS", name))
		case c.principals[name] != "" && !strings.EqualFold(c.principals[name], p):
			errs = append(errs, fmt.Errorf("ASKSLACK_CALLER_PRINCIPALS: %q is bound twice", name))
		default:
			c.principals[name] = p
		}
	}
	return errs
}

// checkTokens checks the Slack credentials.
func (c *Config) checkTokens() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case c.BotToken == "" && c.several():
		// Several workspaces: each installation has its own token.
	case c.BotToken == "":
		bad("SLACK_BOT_TOKEN is not set: create a Slack app from deploy/slack-app-manifest.yaml, install it, and copy its Bot User OAuth Token (xoxb-…)")
	case !strings.HasPrefix(c.BotToken, "xoxb-"):
		bad("SLACK_BOT_TOKEN must be a bot token starting with xoxb-")
	}
	if c.AppToken != "" && !strings.HasPrefix(c.AppToken, "xapp-") {
		bad("SLACK_APP_TOKEN must be an app-level token starting with xapp- (Basic Information → App-Level Tokens, scope connections:write)")
	}
	if c.AppToken == "" && c.SigningSecret == "" {
		bad("neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP interactivity) is set: the bot could post questions but never receive an answer")
	}
	return errs
}

// checkReach checks where questions go and whom they ping.
func (c *Config) checkReach() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Delivery {
	case waterfall.DeliverChannel, waterfall.DeliverDM, waterfall.DeliverBoth:
	default:
		bad(`ASKSLACK_DELIVERY %q must be "channel" (every question in ASKSLACK_CHANNEL), "dm" (a direct message to the ask's principal) or "both" (the channel, and a copy in the principal's DMs)`, c.Delivery)
	}
	switch c.Threads {
	case "", "off", "session":
	default:
		bad(`ASKSLACK_THREADS %q must be "session" (one thread per agent session) or "off"`, c.Threads)
	}
	c.Mention = NonEmpty(c.Mention)
	c.Escalate = NonEmpty(c.Escalate)
	for _, v := range []struct {
		name string
		ids  []string
	}{{"ASKSLACK_MENTION", c.Mention}, {"ASKSLACK_ESCALATE", c.Escalate}} {
		for _, id := range v.ids {
			if !slackbot.IsMentionID(id) {
				bad("%s: %q is not a Slack user id (U…, W…) or user-group id (S…); find them in a profile's or group's \"Copy member ID\"", v.name, id)
			}
		}
	}
	if c.SlackTimeScale != 0 && (c.SlackTimeScale < 1 || c.SlackTimeScale > 1000) { // 0: built without defaults, as 1
		bad("ASKSLACK_SLACK_TIME_SCALE: %v is not between 1 and 1000 (leave it unset against the real Slack)", c.SlackTimeScale)
	}
	after, err := remind.ParseOffsets(c.Remind)
	if err != nil {
		bad("ASKSLACK_REMIND: %v", err)
	}
	c.schedule = remind.Schedule{After: after, Escalate: c.Escalate}
	if err := c.schedule.Validate(); err != nil {
		bad("ASKSLACK_ESCALATE: %v", err)
	}
	return errs
}

// NonEmpty is ss trimmed, without its empty entries (how a list variable is
// read).
func NonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// redisOptions maps REDIS_URL to go-redis options:
//
//	redis://[:password@]host:6379/0                    a single server
//	rediss://…                                           the same over TLS
//	redis://host:26379?master_name=mymaster&addr=h2:26379 Sentinel
//	redis+cluster://host1:6379?addr=host2:6379            Cluster
//
// Its errors never contain the URL's password (nor a *password query
// parameter): it is masked wherever the parser quoted the URL.
func redisOptions(raw string) (*redis.UniversalOptions, error) {
	o, err := parseRedisURL(raw)
	if err != nil {
		return nil, redactRedisError(raw, err)
	}
	return o, nil
}

func parseRedisURL(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasSuffix(u.Scheme, "+cluster"):
		u.Scheme = strings.TrimSuffix(u.Scheme, "+cluster")
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, err
		}
		return &redis.UniversalOptions{Addrs: o.Addrs, Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig, IsClusterMode: true}, nil
	case u.Query().Get("master_name") != "":
		o, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, err
		}
		return &redis.UniversalOptions{Addrs: o.SentinelAddrs, MasterName: o.MasterName, Username: o.Username, Password: o.Password,
			SentinelUsername: o.SentinelUsername, SentinelPassword: o.SentinelPassword, DB: o.DB, TLSConfig: o.TLSConfig}, nil
	default:
		o, err := redis.ParseURL(raw)
		if err != nil {
			return nil, err
		}
		return &redis.UniversalOptions{Addrs: []string{o.Addr}, Username: o.Username, Password: o.Password, DB: o.DB, TLSConfig: o.TLSConfig}, nil
	}
}

// redactRedisError rebuilds err's text with every secret of raw masked. The
// original error is dropped, not wrapped: *url.Error and friends carry the
// whole URL.
func redactRedisError(raw string, err error) error {
	msg := err.Error()
	for _, secret := range redisSecrets(raw) {
		msg = strings.ReplaceAll(msg, secret, "xxxxx")
	}
	return errors.New(msg)
}

// redisSecrets returns the password of a Redis URL as it appears raw, and
// decoded, found without a URL parser (the URL may not parse), longest first.
func redisSecrets(raw string) []string {
	var secrets []string
	add := func(s string) {
		if s == "" {
			return
		}
		secrets = append(secrets, s)
		if q := strconv.Quote(s); q[1:len(q)-1] != s {
			secrets = append(secrets, q[1:len(q)-1]) // as %q prints it
		}
		if d, err := url.PathUnescape(s); err == nil && d != s {
			secrets = append(secrets, d)
		}
		if d, err := url.QueryUnescape(s); err == nil && d != s {
			secrets = append(secrets, d)
		}
	}
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	authority := rest
	if i := strings.IndexAny(authority, "/?#"); i >= 0 {
		authority = authority[:i]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		if _, pw, ok := strings.Cut(authority[:at], ":"); ok {
			add(pw)
		}
	}
	if i := strings.Index(rest, "?"); i >= 0 {
		for _, kv := range strings.Split(rest[i+1:], "&") {
			if k, v, ok := strings.Cut(kv, "="); ok && strings.Contains(strings.ToLower(k), "password") {
				add(v)
			}
		}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	return secrets
}
