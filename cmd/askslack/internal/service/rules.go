package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/waterfall"
)

// checkRules reads ASKSLACK_RULE_ADMINS and ASKSLACK_RULE_NOTICES.
func (c *Config) checkRules() []error {
	var errs []error
	c.RuleAdmins = NonEmpty(c.RuleAdmins)
	for _, id := range c.RuleAdmins {
		if !slackbot.IsMentionID(id) {
			errs = append(errs, fmt.Errorf("ASKSLACK_RULE_ADMINS: %q is not a Slack user id (U…, W…) or user-group id (S…)", id))
		}
	}
	switch c.RuleNotices {
	case "", "thread", "off":
	default:
		errs = append(errs, fmt.Errorf(`ASKSLACK_RULE_NOTICES %q must be "thread" (a line in the session's thread for each ask a rule answered, with ASKSLACK_THREADS=session) or "off"`, c.RuleNotices))
	}
	return errs
}

// buildRules turns standing rules on: the host answers the permission asks
// a live rule covers (reading the rules from the store at every match, so
// a revoke holds on every replica at once), a rule answers only asks its
// granter may answer, and the Slack side grants, lists and revokes them.
func (a *App) buildRules() {
	cfg := a.cfg
	authz := a.authz
	opts := engine.RuleOptions{Store: a.store, MayAnswer: func(ctx context.Context, user string, req *waterfall.Request) (bool, error) {
		if authz == nil {
			return true, nil // everyone in the channel may answer
		}
		ok, _ := authz.Allowed(ctx, user, req)
		return ok, nil
	}}
	if cfg.RuleNotices != "off" {
		opts.Answered = slackbot.NewRuleNotices(a.surface).Answered
	}
	a.host.UseRules(opts)
	var settings slackbot.RuleSettings
	if len(cfg.RuleAdmins) > 0 {
		var users, groups []string
		for _, id := range cfg.RuleAdmins {
			if strings.HasPrefix(id, "S") {
				groups = append(groups, id)
			} else {
				users = append(users, id)
			}
		}
		settings.Admins = &slackbot.Allowlist{API: a.slack, Users: users, Groups: groups, Clock: a.clock}
	}
	a.bot.UseRules(settings)
}
