package slackbot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Surface shows asks in Slack for the message mirror (mirror.Surface): a
// question is a Block Kit message carrying its callId in metadata, posted
// to the ask's channel (or the default), updated in place as the ask moves
// on, and found again through conversations.history when a post's answer
// was lost.
type Surface struct {
	api        API
	channel    string
	now        func() time.Time
	log        *slog.Logger
	metrics    Metrics
	mention    []string
	principals *Principals
	delivery   string // waterfall.DeliverChannel or DeliverDM
	dms        dms
}

// SurfaceOptions configure NewSurface.
type SurfaceOptions struct {
	// Channel is where questions go unless an ask names its own.
	Channel string
	// Now is the clock the countdown is rendered with; default time.Now.
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics Metrics
	// Mention lists user (U…, W…) and user-group (S…) ids every question
	// mentions, so their phones ping (ASKSLACK_MENTION). Invalid ids are
	// dropped; check them with IsMentionID where they are configured.
	Mention []string
	// Principals resolves an ask's principal, who is mentioned too (and
	// DMed with Delivery "dm"); nil mentions and DMs nobody.
	Principals *Principals
	// Delivery is where questions go unless an ask says otherwise:
	// waterfall.DeliverChannel (default) or DeliverDM (ASKSLACK_DELIVERY).
	Delivery string
}

// NewSurface returns the Slack surface over api.
func NewSurface(api API, opts SurfaceOptions) *Surface {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	var mention []string
	for _, id := range opts.Mention {
		if IsMentionID(id) {
			mention = append(mention, id)
		}
	}
	return &Surface{api: api, channel: opts.Channel, now: opts.Now, log: opts.Logger, metrics: opts.Metrics,
		mention: mention, principals: opts.Principals, delivery: opts.Delivery}
}

// metaEvent is the metadata event type on every question message; its
// payload carries the callId, so a post whose answer was lost can be found.
const metaEvent = "askslack_question"

// errNoChannel refuses an ask that names no channel when none is configured.
var errNoChannel = errors.New("no channel configured (ASKSLACK_CHANNEL)")

// postPolicy sends chat.postMessage once per attempt: a retry after a lost
// response could post twice, so the mirror (which looks first) retries.
var postPolicy = retryPolicy{attempts: 1}

// ChannelFor is where the ask's message goes ("" when nowhere).
func (s *Surface) ChannelFor(req *waterfall.Request) string {
	if req.Channel != "" {
		return req.Channel
	}
	return s.channel
}

// Post implements mirror.Surface.
func (s *Surface) Post(ctx context.Context, a *store.Ask) (store.MessageRef, error) {
	req, err := waterfall.DecodeRequest(a)
	if err != nil {
		return store.MessageRef{}, err
	}
	channel, note := s.target(ctx, req)
	if channel == "" {
		return store.MessageRef{}, errNoChannel
	}
	msg, err := s.render(a)
	if err != nil {
		return store.MessageRef{Channel: channel}, err
	}
	if note != "" {
		msg.Blocks = append(msg.Blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, note, false, false)))
	}
	// Mentions go in the text, the notification: they ping once, on the
	// post (updates do not notify), and the blocks stay as rendered.
	msg.Text = s.mentionText(ctx, req) + msg.Text
	opts := append(msgOptions(msg), slack.MsgOptionMetadata(slack.SlackMetadata{
		EventType:    metaEvent,
		EventPayload: map[string]any{"callId": a.CallID},
	}))
	var ch, ts string
	err = call(ctx, s.metrics, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		var err error
		ch, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		return store.MessageRef{Channel: channel}, err
	}
	return store.MessageRef{Channel: ch, TS: ts}, nil
}

// Update implements mirror.Surface.
func (s *Surface) Update(ctx context.Context, a *store.Ask) error {
	msg, err := s.render(a)
	if err != nil {
		return err
	}
	return call(ctx, s.metrics, defaultRetry, "chat.update", func(ctx context.Context) error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, a.Message.Channel, a.Message.TS, msgOptions(msg)...)
		return err
	})
}

func (s *Surface) render(a *store.Ask) (blocks.Message, error) {
	v, err := view(a, s.now())
	if err != nil {
		return blocks.Message{}, fmt.Errorf("slackbot: cannot render ask %s: %w", a.CallID, err)
	}
	return blocks.Render(v), nil
}

// Refusal implements mirror.Surface: Slack's error when it will not go away
// by retrying.
func (s *Surface) Refusal(err error) string {
	if errors.Is(err, errNoChannel) {
		return err.Error()
	}
	if Permanent(err) {
		return SlackError(err)
	}
	return ""
}

// RetryAfter implements mirror.Surface.
func (s *Surface) RetryAfter(err error) time.Duration {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter
	}
	return 0
}

// historyPages bounds the look-up: a post attempt is recent, so its message
// is within the newest couple of thousand of the channel.
const historyPages = 10

// Find implements mirror.Surface: the message in the ask's channel, posted
// at or after since (less a minute for clock skew), whose metadata names
// the ask. It needs channels:history (groups:history for private channels).
func (s *Surface) Find(ctx context.Context, a *store.Ask, since time.Time) (store.MessageRef, bool, error) {
	req, err := waterfall.DecodeRequest(a)
	if err != nil {
		return store.MessageRef{}, false, err
	}
	channel, _ := s.target(ctx, req)
	p := &slack.GetConversationHistoryParameters{
		ChannelID: channel, Oldest: slackTS(since.Add(-time.Minute)), Limit: 200, IncludeAllMetadata: true,
	}
	for range historyPages {
		var res *slack.GetConversationHistoryResponse
		err := call(ctx, s.metrics, defaultRetry, "conversations.history", func(ctx context.Context) error {
			var err error
			res, err = s.api.GetConversationHistoryContext(ctx, p)
			return err
		})
		if err != nil {
			return store.MessageRef{}, false, err
		}
		for _, m := range res.Messages {
			if m.Metadata.EventType == metaEvent && fmt.Sprint(m.Metadata.EventPayload["callId"]) == a.CallID {
				return store.MessageRef{Channel: channel, TS: m.Timestamp}, true, nil
			}
		}
		if !res.HasMore || res.ResponseMetaData.NextCursor == "" {
			break
		}
		p.Cursor = res.ResponseMetaData.NextCursor
	}
	return store.MessageRef{}, false, nil
}

// slackTS formats t as a Slack message timestamp ("seconds.micros").
func slackTS(t time.Time) string {
	us := t.UnixMicro()
	return strconv.FormatInt(us/1e6, 10) + "." + fmt.Sprintf("%06d", us%1e6)
}

// view turns a stored ask into what its message shows at now.
func view(a *store.Ask, now time.Time) (blocks.View, error) {
	r, err := waterfall.Decode(a)
	if err != nil {
		return blocks.View{}, err
	}
	return blocks.ViewOf(r, now), nil
}

// call runs one Web API call with retries and records its outcome.
func call(ctx context.Context, m Metrics, p retryPolicy, method string, f func(ctx context.Context) error) error {
	start := time.Now()
	err := retry(ctx, p, func() { m.RateLimited(method) }, f)
	m.SlackCall(method, resultOf(err), time.Since(start))
	return err
}

// Answerer claims every ask Slack can show (one with a channel) for the
// host's chain; answers arrive as interactions, through Host.Answer, so it
// returns waterfall.ErrClaimed at once. The post is the mirror's job, which
// the Host's Changed starts (on create and on every re-attach). Asks it
// cannot show go to next (NO_PROVIDER at the tail).
type Answerer struct {
	Surface *Surface
	Logger  *slog.Logger
}

// Answer implements waterfall.Answerer.
func (a Answerer) Answer(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
	if a.Surface.ChannelFor(req) == "" {
		if a.Logger != nil {
			a.Logger.Warn("no Slack channel for the ask; passing it on", "callId", req.CallID)
		}
		return next(ctx)
	}
	return waterfall.Settlement{}, waterfall.ErrClaimed
}
