package slackbot

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/workspace"
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
	if notServed(err) {
		return true
	}
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
	switch {
	case errors.Is(err, workspace.ErrNotInstalled):
		return "not_installed"
	case errors.Is(err, workspace.ErrNoWorkspace):
		return "no_workspace"
	}
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

// defaultRetry is how a Web API call is retried: 5 attempts, waits from
// 250ms doubling, up to 30s.
var defaultRetry = backoff.Policy{Attempts: 5, Base: 250 * time.Millisecond, Max: 30 * time.Second}

// retry runs call under p until it succeeds, fails for good, runs out of
// attempts or ctx ends. 429s wait at least the Retry-After Slack asked for
// (retryAfter reads it); one past p.Max is not waited here: the caller's
// paced queue waits it without holding a goroutine. onRateLimit counts
// every 429, the last attempt's too: a post (one attempt) refused is the
// one that matters most.
func retry(ctx context.Context, p backoff.Policy, retryAfter func(error) time.Duration, onRateLimit func(), call func(ctx context.Context) error) error {
	return p.Retry(ctx, func(ctx context.Context) (time.Duration, error) {
		err := call(ctx)
		if onRateLimit != nil && isRateLimited(err) {
			onRateLimit()
		}
		after := retryAfter(err)
		if err != nil && (!transient(err) || after > p.Max) {
			return 0, backoff.Final(err)
		}
		return after, err
	})
}

// transient reports errors worth retrying: rate limits, Slack 5xx and
// network failures.
func transient(err error) bool {
	if notServed(err) {
		return false
	}
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

// notServed reports a call the installs transport refused before it left:
// no workspace named, or none installed (several workspaces only). No
// retry brings the installation back.
func notServed(err error) bool {
	return errors.Is(err, workspace.ErrNotInstalled) || errors.Is(err, workspace.ErrNoWorkspace)
}
