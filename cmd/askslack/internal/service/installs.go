package service

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/installs"
	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/waterfall"
)

// Installing is the configuration of a deployment that serves several
// workspaces ("Add to Slack", OAuth v2): on when ASKSLACK_INSTALL_KEYS is
// set (and SLACK_BOT_TOKEN is not). See docs/operations.md, "Several
// workspaces".
type Installing struct {
	// InstallKeys seal the installations in the store (base64 of 32
	// bytes each): the first seals, all open (rotation).
	InstallKeys []string `envconfig:"ASKSLACK_INSTALL_KEYS"`
	// InstallTeams are the workspace and enterprise ids that may install;
	// "*" any (the operator must say so).
	InstallTeams []string `envconfig:"ASKSLACK_INSTALL_TEAMS"`
	// InstallURL is this deployment's public base URL: Slack redirects
	// installers to <InstallURL>/slack/oauth_redirect.
	InstallURL string `envconfig:"ASKSLACK_INSTALL_URL"`
	// WorkspaceChannels: each workspace's default channel, T…=C…,…
	WorkspaceChannels []string `envconfig:"ASKSLACK_WORKSPACE_CHANNELS"`
	// CallerWorkspaces binds API callers to their workspace, name=T…,…
	CallerWorkspaces []string `envconfig:"ASKSLACK_CALLER_WORKSPACES"`
	// ConnectTeams are other organizations (team or enterprise ids) whose
	// people may answer in channels shared with them (Slack Connect).
	ConnectTeams []string `envconfig:"ASKSLACK_CONNECT_TEAMS"`

	sealer     *installs.Sealer
	channels   map[string]string
	workspaces map[string]string
}

// several reports whether the deployment serves several workspaces.
func (c *Config) several() bool { return len(c.InstallKeys) > 0 }

// botScopes are the bot scopes of deploy/slack-app-manifest.yaml: what
// Add to Slack asks for (a test keeps them in step with the manifest).
var botScopes = []string{"app_mentions:read", "channels:history", "chat:write", "commands", "groups:history", "im:history", "im:write",
	"mpim:history", "reactions:write", "team:read", "usergroups:read", "users:read", "users:read.email"}

// checkInstalling reads the several-workspaces settings. Errors name the
// variable.
func (c *Config) checkInstalling() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c.InstallKeys, c.InstallTeams = NonEmpty(c.InstallKeys), NonEmpty(c.InstallTeams)
	if !c.several() {
		for name, v := range map[string][]string{"ASKSLACK_INSTALL_TEAMS": c.InstallTeams, "ASKSLACK_WORKSPACE_CHANNELS": c.WorkspaceChannels,
			"ASKSLACK_CALLER_WORKSPACES": c.CallerWorkspaces, "ASKSLACK_CONNECT_TEAMS": c.ConnectTeams} {
			if len(NonEmpty(v)) > 0 {
				bad("%s is set but ASKSLACK_INSTALL_KEYS is not: it only means something when the deployment serves several workspaces", name)
			}
		}
		return errs
	}
	var err error
	if c.sealer, err = installs.ParseKeys(c.InstallKeys); err != nil {
		bad("ASKSLACK_INSTALL_KEYS: %v", err)
	}
	if c.BotToken != "" {
		bad("SLACK_BOT_TOKEN and ASKSLACK_INSTALL_KEYS are both set: a deployment serves one workspace with its bot token, or several installed with Add to Slack; unset one")
	}
	if c.ClientID == "" || c.ClientSecret == "" {
		bad("ASKSLACK_INSTALL_KEYS needs SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (Basic Information → App Credentials): Add to Slack redeems its codes with them")
	}
	if len(c.InstallTeams) == 0 {
		bad("ASKSLACK_INSTALL_TEAMS is not set: name the workspace (T…) and Enterprise Grid (E…) ids that may install askslack, or * to let any workspace install it")
	}
	if u, err := url.Parse(c.InstallURL); c.InstallURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		bad("ASKSLACK_INSTALL_URL %q must be this deployment's public base URL (https://askslack.example.com): Slack sends installers back to its /slack/oauth_redirect", c.InstallURL)
	} else {
		c.InstallURL = strings.TrimSuffix(c.InstallURL, "/")
	}
	if c.channels, err = pairs(c.WorkspaceChannels, "ASKSLACK_WORKSPACE_CHANNELS", "T", "C", "G"); err != nil {
		errs = append(errs, err)
	}
	if c.workspaces, err = pairs(c.CallerWorkspaces, "ASKSLACK_CALLER_WORKSPACES", "", "T"); err != nil {
		errs = append(errs, err)
	}
	c.ConnectTeams = NonEmpty(c.ConnectTeams)
	if c.Channel != "" {
		bad("ASKSLACK_CHANNEL is set with ASKSLACK_INSTALL_KEYS: a channel belongs to one workspace; give each workspace its own with ASKSLACK_WORKSPACE_CHANNELS=T…=C…")
	}
	return errs
}

// pairs reads k=v,… where keys start with keyPrefix ("" any) and values
// with one of valuePrefixes.
func pairs(list []string, name, keyPrefix string, valuePrefixes ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, e := range NonEmpty(list) {
		k, v, ok := strings.Cut(e, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || !strings.HasPrefix(k, keyPrefix) || !slices.ContainsFunc(valuePrefixes, func(p string) bool { return strings.HasPrefix(v, p) }) {
			return nil, fmt.Errorf("%s: %q is not %s…=%s…", name, e, keyPrefix, valuePrefixes[0])
		}
		if old, dup := out[k]; dup && old != v {
			return nil, fmt.Errorf("%s names %s twice (%s and %s)", name, k, old, v)
		}
		out[k] = v
	}
	return out, nil
}

// buildInstalls builds, with several workspaces, the installations'
// keeper and the transport every Slack call goes out through; nothing
// with one workspace.
func (a *App) buildInstalls() {
	if !a.cfg.several() {
		return
	}
	cfg := a.cfg
	a.installs = installs.NewKeeper(a.store, cfg.sealer, installs.KeeperOptions{Now: a.clock.Now, Log: a.log})
	api := cfg.APIURL
	if api == "" {
		api = "https://slack.com/api/"
	}
	a.slackHTTP.Transport = installs.NewTransport(api, a.slackHTTP.Transport, a.installs)
	a.workspaces = &slackbot.Workspaces{Installs: a.installs, Channels: cfg.channels, Connect: cfg.ConnectTeams}
	a.refreshes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askslack_install_token_refreshes_total",
		Help: "Refreshes of rotating Slack tokens by this replica, by result (refreshed, failed): alert on failed."}, []string{"result"})
	a.installCount = prometheus.NewCounter(prometheus.CounterOpts{Name: "askslack_installs_total",
		Help: "Installations (Add to Slack) completed on this replica."})
	a.workspaceRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "askslack_workspace_requests_total",
		Help: "Host API asks and notices by the workspace their caller belongs to: served, or not_installed (refused with NO_PROVIDER)."}, []string{"workspace", "result"})
	a.metrics.reg.MustRegister(a.refreshes, a.installCount, a.workspaceRequests, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "askslack_installations",
		Help: "Workspaces and org-wide installs this deployment serves, as this replica last read them."}, func() float64 {
		all, err := a.installs.All(context.Background())
		if err != nil {
			return -1
		}
		return float64(len(all))
	}))
}

// oauth is the Slack side of installs: its own plain HTTP client (these
// calls carry the app's credentials, not a workspace's token).
func (a *App) oauth() *slackbot.OAuth {
	return &slackbot.OAuth{ClientID: a.cfg.ClientID, ClientSecret: a.cfg.ClientSecret, APIURL: a.cfg.APIURL, HTTP: slackHTTPClient(), Now: a.clock.Now}
}

// installFlow is Add to Slack's two routes.
func (a *App) installFlow() *installs.Flow {
	cfg := a.cfg
	api := cfg.APIURL
	if api == "" {
		api = "https://slack.com/api/"
	}
	secret := sha256.Sum256([]byte("askslack install state\x00" + cfg.ClientSecret + "\x00" + strings.Join(cfg.InstallKeys, ",")))
	return &installs.Flow{Keeper: a.installs, Slack: a.oauth(), States: a.store, ClientID: cfg.ClientID, Scopes: botScopes,
		AuthorizeURL: strings.TrimSuffix(api, "api/") + "oauth/v2/authorize", RedirectURL: cfg.InstallURL + "/slack/oauth_redirect",
		Allow: cfg.InstallTeams, Secret: secret[:], Now: a.clock.Now, Log: a.log,
		Installed: func(context.Context, installs.Installation) { a.installCount.Inc() }}
}

// refresher keeps the rotating tokens fresh.
func (a *App) refresher(holder string) *installs.Refresher {
	return &installs.Refresher{Keeper: a.installs, Slack: a.oauth(), Leases: a.store, Holder: holder, Now: a.clock.Now, Log: a.log,
		Failed:    func(string, error) { a.refreshes.WithLabelValues("failed").Inc() },
		Refreshed: func(string) { a.refreshes.WithLabelValues("refreshed").Inc() }}
}

// served says whether an installation serves team (the host API asks it
// before storing an ask).
func (a *App) served(ctx context.Context, team string) error {
	_, err := a.installs.For(ctx, team)
	result := "served"
	if err != nil {
		result = "not_installed"
	}
	a.workspaceRequests.WithLabelValues(team, result).Inc()
	return err
}

// uninstaller is slackbot.Uninstaller: Slack said an installation is gone.
type uninstaller struct{ a *App }

// Uninstalled removes the installation and, on the replica whose removal
// won, withdraws the open asks of its workspaces.
func (u uninstaller) Uninstalled(ctx context.Context, team, enterprise string, orgWide bool, why string) {
	a := u.a
	key := team
	if orgWide || key == "" {
		key = enterprise
	}
	in, won, err := a.installs.Remove(ctx, key)
	if err != nil {
		a.log.Error("an uninstall could not be recorded", "key", key, "err", err)
		return
	}
	if !won {
		return
	}
	teams := in.Teams
	if !in.OrgWide {
		teams = []string{key}
	}
	n, err := a.withdrawWorkspaces(ctx, teams)
	a.log.Warn("askslack was removed from a workspace: its installation is gone and its open asks withdrawn", "key", key, "why", why, "withdrawn", n, "err", err)
}

// TeamAccess follows an org admin adding the org-wide install to
// workspaces or taking it away; asks of a workspace taken away are
// withdrawn.
func (u uninstaller) TeamAccess(ctx context.Context, enterprise string, teams []string, granted bool) {
	a := u.a
	in, err := a.installs.Get(ctx, enterprise)
	if err != nil || !in.OrgWide {
		a.log.Warn("team access changed for an org-wide install this deployment does not keep", "enterprise", enterprise, "err", err)
		return
	}
	if granted {
		for _, t := range teams {
			if !slices.Contains(in.Teams, t) {
				in.Teams = append(in.Teams, t)
			}
		}
	} else {
		in.Teams = slices.DeleteFunc(in.Teams, func(t string) bool { return slices.Contains(teams, t) })
	}
	if err := a.installs.Save(ctx, in); err != nil {
		a.log.Error("an org-wide install's workspaces could not be stored", "enterprise", enterprise, "err", err)
		return
	}
	a.log.Info("an org-wide install's workspaces changed", "enterprise", enterprise, "granted", granted, "teams", teams)
	if !granted {
		n, err := a.withdrawWorkspaces(ctx, teams)
		a.log.Warn("asks of workspaces taken away from the org-wide install were withdrawn", "withdrawn", n, "err", err)
	}
}

// withdrawWorkspaces withdraws the open asks of teams (uninstalled).
func (a *App) withdrawWorkspaces(ctx context.Context, teams []string) (int, error) {
	return a.withdrawWhere(ctx, func(r *waterfall.Record) bool { return r.Request != nil && slices.Contains(teams, r.Request.Workspace) },
		asktype.Uninstalled)
}

// member is the answer page's sign-in check with several workspaces.
func (a *App) member(ctx context.Context, team string) bool {
	_, err := a.installs.For(ctx, team)
	return err == nil
}

// installRoutes mounts Add to Slack.
func (a *App) installRoutes(mux *http.ServeMux) {
	if a.installs != nil {
		a.installFlow().Register(mux)
	}
}

// installsStartup reseals what an older key sealed and says how many
// workspaces are installed.
func (a *App) installsStartup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, err := a.installs.Reseal(ctx); err != nil {
		a.log.Warn("installations sealed with an older key could not be sealed again yet", "err", err)
	} else if n > 0 {
		a.log.Info("installations sealed with an older key were sealed with the first of ASKSLACK_INSTALL_KEYS", "resealed", n)
	}
	all, err := a.installs.All(ctx)
	if err != nil {
		a.log.Warn("cannot read the installations yet", "err", err)
		return
	}
	a.log.Info("serving several workspaces: install with "+a.cfg.InstallURL+"/slack/install", "installed", len(all))
}

func (a *App) uninstaller() slackbot.Uninstaller {
	if a.installs == nil {
		return nil
	}
	return uninstaller{a}
}

// installServices: the token refresher, with several workspaces.
func (a *App) installServices() []service {
	if a.refresh == nil {
		return nil
	}
	return []service{a.refresh}
}
