package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/web"
)

// checkWeb reads the answer page's settings: all of ASKSLACK_WEB_URL,
// SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, or none.
func (c *Config) checkWeb() []error {
	var errs []error
	set := map[string]bool{"ASKSLACK_WEB_URL": c.WebURL != "", "SLACK_CLIENT_ID": c.ClientID != "", "SLACK_CLIENT_SECRET": c.ClientSecret != ""}
	var missing []string
	for _, name := range []string{"ASKSLACK_WEB_URL", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"} {
		if !set[name] {
			missing = append(missing, name)
		}
	}
	// Several workspaces need the client id and secret for Add to Slack,
	// with or without the page: then only the URL missing means no page.
	onlyInstalling := len(NonEmpty(c.InstallKeys)) > 0 && len(missing) == 1 && missing[0] == "ASKSLACK_WEB_URL"
	if len(missing) > 0 && len(missing) < 3 && !onlyInstalling {
		errs = append(errs, fmt.Errorf("the answer page needs ASKSLACK_WEB_URL, SLACK_CLIENT_ID and SLACK_CLIENT_SECRET together; %s %s not set "+
			"(or unset all three to turn it off)", strings.Join(missing, " and "), map[bool]string{true: "is", false: "are"}[len(missing) == 1]))
	}
	if c.WebURL != "" && len(NonEmpty(c.AllowedUsers)) == 0 && len(NonEmpty(c.AllowedGroups)) == 0 {
		// In Slack, who can see a question's channel can click it; the page
		// cannot see channels, so without a list it would admit the whole
		// workspace, guests included, to every ask.
		errs = append(errs, errors.New("the answer page (ASKSLACK_WEB_URL) needs ASKSLACK_ALLOWED_USERS or ASKSLACK_ALLOWED_GROUPS: "+
			"without an allowlist, Slack's channel membership decides who may answer, which the page cannot check"))
	}
	if c.WebURL != "" {
		u, err := web.ParseBaseURL(c.WebURL)
		if err != nil {
			errs = append(errs, err)
		} else {
			c.WebURL = u.String()
		}
	}
	c.WebAdmins = NonEmpty(c.WebAdmins)
	for _, id := range c.WebAdmins {
		if !slackbot.IsMentionID(id) {
			errs = append(errs, fmt.Errorf("ASKSLACK_WEB_ADMINS: %q is not a Slack user id (U…, W…) or user-group id (S…)", id))
		}
	}
	if c.WebSession == 0 {
		c.WebSession = 12 * time.Hour // a Config built without envconfig's defaults
	}
	if c.WebSession < 5*time.Minute || c.WebSession > 24*time.Hour {
		// A session does not see Slack deactivate its person: keep it short.
		errs = append(errs, fmt.Errorf("ASKSLACK_WEB_SESSION %s must be between 5m and 24h", c.WebSession))
	}
	return errs
}

// webOn reports whether the answer page is configured.
func (c *Config) webOn() bool { return c.WebURL != "" }

// buildWeb builds the answer page when configured: the same Authorizer
// the Slack clicks meet, the console for rule admins and web admins,
// sessions in the store.
func (a *App) buildWeb() error {
	cfg := a.cfg
	if !cfg.webOn() {
		return nil
	}
	opts := web.Options{Host: a.host, Authorizer: a.authz, Admins: a.webAdmins(), RuleAdmins: a.ruleAdmins(), Keeper: a.store,
		BaseURL: cfg.WebURL, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Provider: web.ProviderFor(cfg.APIURL),
		Team: a.team, SessionTTL: cfg.WebSession, Clock: a.clock, Logger: a.log, Metrics: a.metrics, Devices: a.devices()}
	if a.installs != nil {
		opts.Team, opts.Member = nil, a.member // several workspaces: a member of any installed one
	}
	srv, err := web.New(opts)
	if err != nil {
		return err
	}
	a.web = srv
	a.host.Observe(srv)
	a.log.Info("the answer page is on", "url", cfg.WebURL+web.Prefix, "redirectUrl", cfg.WebURL+web.CallbackPath)
	return nil
}

// devices is the page's side of askslack login; nil when it is off.
func (a *App) devices() web.Devices {
	if a.tokens == nil {
		return nil
	}
	return a.tokens
}

// webAdmins may open the console: ASKSLACK_RULE_ADMINS and
// ASKSLACK_WEB_ADMINS (user and user-group ids); nil when neither is set.
func (a *App) webAdmins() web.Authorizer {
	return a.idList(append(append([]string(nil), a.cfg.RuleAdmins...), a.cfg.WebAdmins...))
}

// ruleAdmins may revoke standing rules from the console, as in Slack:
// ASKSLACK_RULE_ADMINS; nil when unset (then the console's admins may).
func (a *App) ruleAdmins() web.Authorizer { return a.idList(a.cfg.RuleAdmins) }

// idList admits the listed users and the members of the listed user
// groups (S…); nil for an empty list.
func (a *App) idList(ids []string) web.Authorizer {
	if len(ids) == 0 {
		return nil
	}
	var users, groups []string
	for _, id := range ids {
		if strings.HasPrefix(id, "S") {
			groups = append(groups, id)
		} else {
			users = append(users, id)
		}
	}
	return &slackbot.Allowlist{API: a.slack, Users: users, Groups: groups, Clock: a.clock}
}

// teamCache is the bot's workspace, from auth.test, asked when first
// needed and kept once known (Slack may be down when the bot starts).
type teamCache struct {
	mu   sync.Mutex
	team string
}

// team is the workspace people sign in to the answer page from.
func (a *App) team(ctx context.Context) (string, error) {
	a.teamID.mu.Lock()
	defer a.teamID.mu.Unlock()
	if a.teamID.team != "" {
		return a.teamID.team, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := a.slack.AuthTestContext(ctx)
	if err != nil {
		return "", fmt.Errorf("auth.test: %w", err)
	}
	if resp.TeamID == "" {
		return "", errors.New("auth.test named no team")
	}
	a.teamID.team = resp.TeamID
	return resp.TeamID, nil
}
