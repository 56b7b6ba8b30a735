package slackbot

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// The Web API's retries: what is transient is tried again, a refusal for
// good is not; a 429 waits Slack's Retry-After read at the time scale, and
// one past the policy's bound is left to the caller's paced queue.
func TestRetryOfWebAPICalls(t *testing.T) {
	t.Parallel()
	p := defaultRetry
	p.Base = time.Microsecond
	c := caller{scale: 20}
	for _, tc := range []struct {
		name            string
		errs            []error
		calls, limited  int
		atLeast         time.Duration
		wantErr, wantRL bool
	}{
		{"a 5xx, then success", []error{slack.StatusCodeError{Code: 502}, nil}, 2, 0, 0, false, false},
		{"a refusal for good", []error{slack.SlackErrorResponse{Err: "channel_not_found"}, nil}, 1, 0, 0, true, false},
		{"internal_error is transient", []error{slack.SlackErrorResponse{Err: "internal_error"}, nil}, 2, 0, 0, false, false},
		// Retry-After: 1 at ×20 is 50ms, waited.
		{"a 429 waits its Retry-After", []error{&slack.RateLimitedError{RetryAfter: time.Second}, nil}, 2, 1, 50 * time.Millisecond, false, false},
		// Retry-After: 20 min at ×20 is 1 min: past 30s, not waited here.
		{"a 429 past the bound", []error{&slack.RateLimitedError{RetryAfter: 20 * time.Minute}, nil}, 1, 1, 0, true, true},
		{"attempts run out", []error{slack.StatusCodeError{Code: 500}, slack.StatusCodeError{Code: 500}, slack.StatusCodeError{Code: 500},
			slack.StatusCodeError{Code: 500}, slack.StatusCodeError{Code: 500}, nil}, 5, 0, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, limited := 0, 0
			var last time.Time
			err := retry(context.Background(), p, c.retryAfter, func() { limited++ }, func(context.Context) error {
				if calls > 0 && time.Since(last) < tc.atLeast {
					t.Errorf("retried after %s; Slack asked for %s", time.Since(last), tc.atLeast)
				}
				calls++
				last = time.Now()
				return tc.errs[calls-1]
			})
			var rl *slack.RateLimitedError
			if (err != nil) != tc.wantErr || errors.As(err, &rl) != tc.wantRL || calls != tc.calls || limited != tc.limited {
				t.Fatalf("err %v after %d calls, %d rate limited; want error %v after %d calls, %d rate limited", err, calls, limited, tc.wantErr, tc.calls, tc.limited)
			}
		})
	}
}
