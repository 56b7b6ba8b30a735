package slackbot

import (
	"errors"
	"time"

	"github.com/slack-go/slack"
)

// caller is how the bot calls Slack: the metrics every call reports to,
// and the time scale of the Slack at the other end (Options.TimeScale,
// SurfaceOptions.TimeScale; ASKSLACK_SLACK_TIME_SCALE): 1 in production;
// 20 against a fake that enforces Slack's limits at ×20 (tests, `askslack
// bench --slack-limits`). Slack's Retry-After is whole seconds, so a faster
// fake cannot say "50 ms": it says "1", and the bot reads it as 1/scale.
type caller struct {
	metrics Metrics
	scale   float64 // below 1 means 1
}

// retryAfter is how long a 429 asks the bot to wait, in the bot's time
// (Retry-After over the time scale), or 0 when err is no rate limit.
func (c caller) retryAfter(err error) time.Duration {
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		return 0
	}
	return time.Duration(float64(rl.RetryAfter) / max(c.scale, 1))
}

// isRateLimited reports a 429, with or without Retry-After.
func isRateLimited(err error) bool {
	if err == nil {
		return false
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return true
	}
	var sc slack.StatusCodeError
	return errors.As(err, &sc) && sc.Code == 429
}
