package slackbot

import (
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
)

// timeScale is how many times faster than Slack's the Slack the bot talks
// to keeps time (ASKSLACK_SLACK_TIME_SCALE): 1 in production; 20 against a
// fake that enforces Slack's limits at ×20 (tests, `askslack bench
// --slack-limits`). Slack's Retry-After is whole seconds, so a faster fake
// cannot say "50 ms": it says "1", and the bot reads it as 1/scale.
var timeScale atomic.Uint64 // math.Float64bits; 0 means 1

// SetTimeScale sets the time scale for the process (call once at start);
// values below 1 mean 1.
func SetTimeScale(f float64) {
	timeScale.Store(math.Float64bits(max(f, 1)))
}

// TimeScale is the scale SetTimeScale set (1 unless set).
func TimeScale() float64 {
	if v := timeScale.Load(); v != 0 {
		return math.Float64frombits(v)
	}
	return 1
}

// RetryAfterOf is how long a 429 asks the bot to wait, in the bot's time
// (Retry-After over the time scale), or 0 when err is no rate limit.
func RetryAfterOf(err error) time.Duration {
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		return 0
	}
	return time.Duration(float64(rl.RetryAfter) / TimeScale())
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
