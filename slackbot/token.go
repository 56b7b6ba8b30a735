package slackbot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/slack-go/slack"
)

// Slack's answers to auth.test that no retry can fix: the token is wrong.
var badTokenErrors = map[string]bool{"invalid_auth": true, "token_revoked": true, "not_authed": true, "account_inactive": true,
	"token_expired": true}

// tokenError says which token Slack refused and what to do.
func tokenError(code string) error {
	return fmt.Errorf("SLACK_BOT_TOKEN was refused by Slack (%s): the token is wrong, revoked or belongs to an app that was uninstalled; "+
		"copy the Bot User OAuth Token (xoxb-…) from your Slack app's OAuth & Permissions page into SLACK_BOT_TOKEN and start again", code)
}

// CheckToken calls auth.test once at start-up. A refused token is fatal; an
// unreachable Slack is not (WatchToken keeps trying and says so).
// It reports whether Slack could not be asked.
func CheckToken(ctx context.Context, api *slack.Client, log *slog.Logger) (down bool, err error) {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := api.AuthTestContext(actx)
	if err == nil {
		log.Info("Slack accepted the bot token", "team", resp.Team, "bot", resp.User, "botId", resp.BotID)
		return false, nil
	}
	if code := SlackError(err); badTokenErrors[code] {
		return false, tokenError(code)
	}
	log.Warn("cannot reach Slack to check SLACK_BOT_TOKEN (auth.test); serving the API anyway and retrying", "err", err)
	return true, nil
}

// WatchToken repeats auth.test with backoff while Slack is unreachable,
// logging every failure at WARN with its cause and the recovery at INFO. A
// token Slack refuses stops the bot (errc).
func WatchToken(ctx context.Context, api *slack.Client, log *slog.Logger, errc chan<- error) {
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
		case badTokenErrors[SlackError(err)]:
			select {
			case errc <- tokenError(SlackError(err)):
			case <-ctx.Done():
			}
			return
		}
		backoff = min(backoff*2, time.Minute)
		log.Warn("Slack is still unreachable (auth.test); retrying", "attempt", attempt, "retryIn", backoff, "err", err)
	}
}
