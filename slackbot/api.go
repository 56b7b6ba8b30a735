package slackbot

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/slack-go/slack"
)

// API is the slice of Slack's Web API the bot calls. *slack.Client
// satisfies it; tests use the project's fake Slack server behind a real
// client, so nothing here is mocked away.
type API interface {
	PostMessageContext(ctx context.Context, channelID string, options ...slack.MsgOption) (string, string, error)
	UpdateMessageContext(ctx context.Context, channelID, timestamp string, options ...slack.MsgOption) (string, string, string, error)
	PostEphemeralContext(ctx context.Context, channelID, userID string, options ...slack.MsgOption) (string, error)
	OpenViewContext(ctx context.Context, triggerID string, view slack.ModalViewRequest) (*slack.ViewResponse, error)
	PushViewContext(ctx context.Context, triggerID string, view slack.ModalViewRequest) (*slack.ViewResponse, error)
	UpdateViewContext(ctx context.Context, view slack.ModalViewRequest, externalID, hash, viewID string) (*slack.ViewResponse, error)
	GetUserGroupMembersContext(ctx context.Context, userGroup string, options ...slack.GetUserGroupMembersOption) ([]string, error)
	GetUserByEmailContext(ctx context.Context, email string) (*slack.User, error)
	GetConversationHistoryContext(ctx context.Context, params *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error)
	OpenConversationContext(ctx context.Context, params *slack.OpenConversationParameters) (*slack.Channel, bool, bool, error)
	// Session threads.
	GetConversationRepliesContext(ctx context.Context, params *slack.GetConversationRepliesParameters) ([]slack.Message, bool, string, error)
	DeleteMessageContext(ctx context.Context, channel, messageTimestamp string) (string, string, error)
	// App Home, /askslack links and answering by mention.
	PublishViewContext(ctx context.Context, req slack.PublishViewContextRequest) (*slack.ViewResponse, error)
	GetPermalinkContext(ctx context.Context, params *slack.PermalinkParameters) (string, error)
	AddReactionContext(ctx context.Context, name string, item slack.ItemRef) error
}

// Permanent reports whether a Slack error will not go away by retrying:
// an `ok:false` answer other than rate limiting or a server-side hiccup.
func Permanent(err error) bool {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return false
		}
		return true
	}
	return false
}

// SlackError returns Slack's error string ("channel_not_found"), or "".
func SlackError(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return "ratelimited"
	}
	return ""
}

// retryPolicy says how often and how long to retry a Web API call.
type retryPolicy struct {
	attempts int
	base     time.Duration
	maxWait  time.Duration
}

var defaultRetry = retryPolicy{attempts: 5, base: 250 * time.Millisecond, maxWait: 30 * time.Second}

// retry runs call until it succeeds, fails permanently, runs out of
// attempts or ctx ends. 429s wait the Retry-After Slack asked for; other
// transient failures (5xx, network) back off exponentially.
func retry(ctx context.Context, p retryPolicy, retryAfter func(error) time.Duration, onRateLimit func(), call func(ctx context.Context) error) error {
	var err error
	wait := p.base
	for attempt := 1; ; attempt++ {
		err = call(ctx)
		if onRateLimit != nil && isRateLimited(err) {
			// Every 429 counts, the last attempt's too: a post (one
			// attempt) refused is the one that matters most.
			onRateLimit()
		}
		if err == nil || Permanent(err) || attempt >= p.attempts || !transient(err) {
			return err
		}
		d := wait
		if ra := retryAfter(err); ra > 0 {
			d = ra
		} else {
			wait *= 2
		}
		if d > p.maxWait {
			return err
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// transient reports errors worth retrying: rate limits, Slack 5xx and
// network failures.
func transient(err error) bool {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return true
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return sc.Code == 429 || sc.Code >= 500
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return !Permanent(err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}
