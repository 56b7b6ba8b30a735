package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/slackbot"
	"github.com/askslack/askslack/tokens"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/web"
)

// Login is askslack login's settings: personal agent tokens, connected
// through the answer page.
type Login struct {
	// Login is "on" (the default: on whenever the answer page is) or "off".
	Login string `envconfig:"ASKSLACK_LOGIN" default:"on"`
	// LoginUsers may connect agents (user and user-group ids); empty:
	// whoever may answer (ASKSLACK_ALLOWED_USERS, ASKSLACK_ALLOWED_GROUPS).
	LoginUsers []string `envconfig:"ASKSLACK_LOGIN_USERS"`
	// TokenTTL is how long a personal agent token lasts.
	TokenTTL time.Duration `envconfig:"ASKSLACK_TOKEN_TTL" default:"2160h"`
}

// checkLogin reads ASKSLACK_LOGIN, ASKSLACK_LOGIN_USERS and
// ASKSLACK_TOKEN_TTL.
func (c *Config) checkLogin() []error {
	var errs []error
	switch c.Login.Login {
	case "":
		c.Login.Login = "on" // a Config built without envconfig's defaults
	case "on", "off":
	default:
		errs = append(errs, fmt.Errorf(`ASKSLACK_LOGIN %q must be "on" (people connect their agents with askslack login, through the answer page) or "off"`, c.Login.Login))
	}
	c.LoginUsers = NonEmpty(c.LoginUsers)
	for _, id := range c.LoginUsers {
		if !slackbot.IsMentionID(id) {
			errs = append(errs, fmt.Errorf("ASKSLACK_LOGIN_USERS: %q is not a Slack user id (U…, W…) or user-group id (S…)", id))
		}
	}
	if c.TokenTTL == 0 {
		c.TokenTTL = tokens.DefaultTTL
	}
	if c.TokenTTL < time.Hour || c.TokenTTL > tokens.MaxTTL {
		errs = append(errs, fmt.Errorf("ASKSLACK_TOKEN_TTL %s must be between 1h and %s (default 2160h, 90 days)", c.TokenTTL, tokens.MaxTTL))
	}
	return errs
}

// loginOff says why askslack login is off ("" when it is on).
func (c *Config) loginOff() string {
	switch {
	case c.Login.Login == "off":
		return "this bot's operator turned askslack login off (ASKSLACK_LOGIN=off); ask them for a token (ASKSLACK_API_TOKENS)"
	case !c.webOn():
		return hostapi.LoginOffWhy("ASKSLACK_WEB_URL, SLACK_CLIENT_ID and SLACK_CLIENT_SECRET")
	}
	return ""
}

// maxRevokeScan bounds the active asks a revoke looks through for the
// token's: the newest this many, across every caller.
const maxRevokeScan = 10_000

// buildTokens turns askslack login on when the answer page is: the device
// grant on the host API and /app/device, the people's connected agents in
// Slack, and a revoke that withdraws the token's open asks.
func (a *App) buildTokens() error {
	cfg := a.cfg
	if cfg.loginOff() != "" {
		return nil
	}
	may := a.mayConnect()
	svc, err := tokens.New(tokens.Options{Store: a.store, VerifyURL: cfg.WebURL + web.DevicePath, TTL: cfg.TokenTTL, Clock: a.clock, Logger: a.log,
		MayConnect: may, Withdraw: a.withdrawCaller})
	if err != nil {
		return err
	}
	a.tokens = svc
	a.bot.UseAgents(slackAgents{svc})
	a.log.Info("askslack login is on", "page", cfg.WebURL+web.DevicePath, "tokenTTL", cfg.TokenTTL.String())
	return nil
}

// mayConnect is who may connect agents: ASKSLACK_LOGIN_USERS, or else
// whoever may answer. Both fail closed (an allowlist that cannot ask
// Slack admits nobody).
func (a *App) mayConnect() func(ctx context.Context, user string) (bool, string) {
	if len(a.cfg.LoginUsers) > 0 {
		list := a.idList(a.cfg.LoginUsers)
		return func(ctx context.Context, user string) (bool, string) {
			if ok, why := list.Allowed(ctx, user, &waterfall.Request{}); !ok {
				if strings.Contains(why, "not on the list") {
					why = "you are not on the list of people who may connect agents (ASKSLACK_LOGIN_USERS)."
				}
				return false, why
			}
			return true, ""
		}
	}
	return func(ctx context.Context, user string) (bool, string) {
		return a.authz.Allowed(ctx, user, &waterfall.Request{})
	}
}

// withdrawCaller withdraws caller's open asks (a revoked token's), giving
// the reason; it says how many it withdrew.
func (a *App) withdrawCaller(ctx context.Context, caller string) (int, error) {
	return a.withdrawWhere(ctx, func(r *waterfall.Record) bool { return r.Ask.Caller == caller }, asktype.Revoked)
}

// withdrawWhere withdraws the open asks match picks, for why; it says how
// many it withdrew.
func (a *App) withdrawWhere(ctx context.Context, match func(*waterfall.Record) bool, why asktype.AbortReason) (int, error) {
	recs, err := a.host.Active(ctx, maxRevokeScan)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, r := range recs {
		if !match(r) {
			continue
		}
		if _, err := a.host.Withdraw(ctx, r.CallID, why); err != nil && waterfall.CodeOf(err) != waterfall.CodeAlreadySettled {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// slackAgents is the Slack side's view of the tokens: a person's own.
type slackAgents struct{ svc *tokens.Service }

func (s slackAgents) Agents(ctx context.Context, owner string) ([]asktype.AgentToken, error) {
	return s.svc.List(ctx, owner)
}

func (s slackAgents) RevokeAgent(ctx context.Context, id string, who waterfall.Respondent) (int, error) {
	_, n, err := s.svc.Revoke(ctx, id, tokens.Who{UserID: who.UserID, UserName: who.UserName, Surface: who.Surface}, who.UserID)
	if errors.Is(err, tokens.ErrNotFound) {
		return 0, slackbot.ErrAgentGone
	}
	return n, err
}
