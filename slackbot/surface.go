package slackbot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/waterfall"
)

// Surface shows asks in Slack for the message mirror (mirror.Surface): a
// question is a Block Kit message carrying its callId in metadata, posted
// to the ask's channel (or the default), updated in place as the ask moves
// on, and found again through conversations.history when a post's answer
// was lost.
type Surface struct {
	api        API
	chat       Chat
	channel    string
	ws         *Workspaces // several workspaces (workspace.go); nil: one
	now        func() time.Time
	log        *slog.Logger
	metrics    Metrics
	caller     caller // metrics and time scale of Slack calls
	mention    []string
	principals *Principals
	delivery   string // waterfall.DeliverChannel, DeliverDM or DeliverBoth
	dms        dms
	keeper     ThreadBook // nil: no session threads
	threads    threads    // the parents of session threads, once known
	reminders  Armer      // nil: no reminders
	// clickURLs are clicks' response_urls for the updates they cause
	// (clickurl.go); nil: chat.update only.
	clickURLs *ClickURLs
	// askLink is an ask's page on the answer page; nil: none.
	askLink func(callID string) string
}

// Armer schedules an ask's reminders (remind.Armer).
type Armer interface {
	Arm(ctx context.Context, a *waterfall.Record) error
}

// SurfaceOptions configure NewSurface.
type SurfaceOptions struct {
	// Channel is where questions go unless an ask names its own.
	Channel string
	// Workspaces, when one deployment serves several, gives each its
	// default channel (Channel is then not used); nil with one.
	Workspaces *Workspaces
	// TimeScale is how many times faster than Slack's the Slack at the
	// other end keeps time (a fake at ×20 in tests and the bench); 0 or 1
	// in production. Retry-After is read over it.
	TimeScale float64
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
	// waterfall.DeliverChannel (default), DeliverDM or DeliverBoth
	// (ASKSLACK_DELIVERY).
	Delivery string
	// Threads, when set, keeps each agent session's questions in one
	// thread per channel (ASKSLACK_THREADS=session); the store remembers
	// the threads for every replica.
	Threads ThreadBook
	// Reminders, when set, is told of every question before it is posted
	// (ASKSLACK_REMIND).
	Reminders Armer
	// Chat posts and updates question messages; nil sends them through
	// the API (slack-go, form-encoded). The bot uses NewJSONChat.
	Chat Chat
	// ClickURLs, when set, is the Bot's book of clicks' response_urls: the
	// update a click causes replaces the message through it (clickurl.go).
	ClickURLs *ClickURLs
	// AskLink, when set, is the URL of an ask's page on the answer page
	// (ASKSLACK_WEB_URL): every question message offers "Open in browser".
	AskLink func(callID string) string
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
	if opts.Chat == nil {
		opts.Chat = apiChat{api}
	}
	return &Surface{api: api, chat: opts.Chat, channel: opts.Channel, ws: opts.Workspaces, now: opts.Now, log: opts.Logger, metrics: opts.Metrics,
		caller: caller{opts.Metrics, opts.TimeScale}, mention: mention, principals: opts.Principals, delivery: opts.Delivery, keeper: opts.Threads, reminders: opts.Reminders, clickURLs: opts.ClickURLs,
		askLink: opts.AskLink}
}

// metaEvent is the metadata event type on every question message; its
// payload carries the callId, so a post whose answer was lost can be found.
const metaEvent = "askslack_question"

// errNoChannel refuses an ask that names no channel when none is configured.
var errNoChannel = errors.New("no channel configured (ASKSLACK_CHANNEL)")

// postPolicy sends chat.postMessage once per attempt: a retry after a lost
// response could post twice, so the mirror (which looks first) retries.
var postPolicy = backoff.Policy{Attempts: 1}

// ChannelFor is where the ask's message goes ("" when nowhere).
func (s *Surface) ChannelFor(req *waterfall.Request) string {
	if req.Channel != "" {
		return req.Channel
	}
	if s.ws != nil {
		return s.ws.Channels[req.Workspace]
	}
	return s.channel
}

// Post implements mirror.Surface.
func (s *Surface) Post(ctx context.Context, a *waterfall.Record) (asktype.MessageRef, error) {
	req := a.Request
	ctx = forAsk(ctx, req)
	rt := s.route(ctx, req)
	if rt.channel == "" {
		return asktype.MessageRef{}, errNoChannel
	}
	if s.reminders != nil {
		// Before the post, so a question is never shown without its
		// reminders; arming again (a retried post) changes nothing.
		if err := s.reminders.Arm(ctx, a); err != nil {
			return asktype.MessageRef{Conversation: rt.channel}, fmt.Errorf("slackbot: scheduling reminders: %w", err)
		}
	}
	msg, err := s.render(a)
	if err != nil {
		return asktype.MessageRef{Conversation: rt.channel}, err
	}
	if rt.note != "" {
		msg = blocks.WithNote(msg, rt.note)
	}
	thread, first, err := s.threadOf(ctx, rt.channel, a, req)
	if err != nil {
		return asktype.MessageRef{Conversation: rt.channel}, err
	}
	ref, err := s.postQuestion(ctx, rt.channel, thread, first, a, s.mentionText(ctx, req), msg)
	if err != nil {
		return ref, err
	}
	if rt.copyTo != "" {
		if c, ok := s.postCopy(ctx, rt.copyTo, rt.channel, a, msg); ok {
			ref.Copies = []asktype.MessageRef{c}
		}
	}
	return ref, nil
}

// postQuestion posts a question's message in channel (in thread, when
// set; broadcast to the channel too when it starts the thread). Mentions
// lead the text (phone notifications) and the blocks (desktop ones read
// the blocks first): they ping once, on the post; updates do not notify,
// and are rendered without them.
func (s *Surface) postQuestion(ctx context.Context, channel, thread string, broadcast bool, a *waterfall.Record, mentions string, msg blocks.Message) (asktype.MessageRef, error) {
	m := chatMessage(channel, blocks.WithMentions(msg, mentions))
	m.Metadata = questionMeta(a.CallID)
	m.ThreadTS, m.ReplyBroadcast = thread, thread != "" && broadcast
	var ch, ts string
	err := call(ctx, s.caller, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		var err error
		ch, ts, err = s.chat.PostMessage(ctx, m)
		return err
	})
	if err != nil {
		return asktype.MessageRef{Conversation: channel}, err
	}
	return asktype.MessageRef{Surface: waterfall.SurfaceSlack, Conversation: ch, ID: ts, Thread: thread}, nil
}

// questionMeta names the ask in a question message's metadata, so Find
// sees it.
func questionMeta(callID string) *slack.SlackMetadata {
	return &slack.SlackMetadata{EventType: metaEvent, EventPayload: map[string]any{"callId": callID}}
}

// Update implements mirror.Surface: the message, then its copies.
func (s *Surface) Update(ctx context.Context, a *waterfall.Record) error {
	ctx = forAsk(ctx, a.Request)
	msg, err := s.render(a)
	if err != nil {
		return err
	}
	// The copies are brought up to date whatever became of the message:
	// one deleted in the channel must not freeze the copy in the DMs.
	err = s.updateOne(ctx, a.Message, msg)
	return errors.Join(err, s.updateCopies(ctx, a, msg))
}

// updateOne replaces the content of the message at ref with msg: through
// the response_url of a click on it when one waits (it spends none of
// chat.update's budget, and the click's message is the one to fix first),
// else by chat.update.
func (s *Surface) updateOne(ctx context.Context, ref asktype.MessageRef, msg blocks.Message) error {
	if replied, err := s.replyToClick(ctx, ref, msg); replied {
		return err
	}
	return s.updateMessage(ctx, ref.Conversation, ref.ID, msg)
}

// updateMessage replaces one message's content with msg.
func (s *Surface) updateMessage(ctx context.Context, channel, ts string, msg blocks.Message) error {
	m := chatMessage(channel, msg)
	m.TS = ts
	return call(ctx, s.caller, defaultRetry, "chat.update", func(ctx context.Context) error {
		return s.chat.UpdateMessage(ctx, m)
	})
}

func (s *Surface) render(a *waterfall.Record) (blocks.Message, error) {
	v := view(a, s.now())
	if s.askLink != nil {
		v.Link = s.askLink(a.CallID)
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
	return s.caller.retryAfter(err)
}

// historyPages bounds the look-up: a post attempt is recent, so its message
// is within the newest couple of thousand of the channel (or thread).
const historyPages = 10

// Find implements mirror.Surface: the message posted at or after since
// (less a minute for clock skew) whose metadata names the ask, in the
// session's thread or the channel, and its copy in the principal's DMs. It
// needs channels:history (groups:history for private channels, im:history
// for DMs, mpim:history for group DMs).
func (s *Surface) Find(ctx context.Context, a *waterfall.Record, since time.Time) (asktype.MessageRef, bool, error) {
	req := a.Request
	ctx = forAsk(ctx, req)
	rt := s.route(ctx, req)
	ref, ok, err := s.findQuestion(ctx, rt.channel, a, since)
	if err != nil {
		return ref, ok, err
	}
	if !ok {
		// The earlier attempt may have been routed elsewhere: a principal
		// look-up or a DM that failed then sent it to the channel (look
		// there), or one that fails now may have worked then (the DM is
		// unknown: say so, and the mirror asks again later instead of
		// posting a second time).
		if alt := s.otherPlace(rt, req); alt != "" {
			return s.findQuestion(ctx, alt, a, since)
		}
		if rt.unsure {
			return ref, false, errRouteUnsure
		}
		return ref, false, nil
	}
	if rt.copyTo != "" {
		c, found, err := s.findIn(ctx, rt.copyTo, a, since)
		switch {
		case err != nil:
			// The question stands without its copy's updates; say so.
			s.log.Warn("cannot look for the copy of an earlier post", "callId", a.CallID, "dm", rt.copyTo, "err", err)
		case found:
			ref.Copies = []asktype.MessageRef{c}
		default:
			// The attempt stopped before the copy (its channel post's
			// answer was lost): send it now, as that attempt would have.
			msg, err := s.render(a)
			if err == nil {
				if c, ok := s.postCopy(ctx, rt.copyTo, rt.channel, a, msg); ok {
					ref.Copies = []asktype.MessageRef{c}
				}
			}
		}
	}
	return ref, true, nil
}

// otherPlace is where else a question routed by rt may have gone on an
// earlier attempt: the channel, for one now headed to the principal's
// DMs (only a DM route leaves the channel). "" when there is nowhere else.
func (s *Surface) otherPlace(rt route, req *waterfall.Request) string {
	if ch := s.ChannelFor(req); ch != "" && ch != rt.channel {
		return ch
	}
	return ""
}

// errRouteUnsure: Find cannot rule out an earlier post in the principal's
// DMs while Slack will not say which DM that is.
var errRouteUnsure = errors.New("slackbot: cannot look in the principal's DMs just now")

// findQuestion looks for a's message in its session's thread, when it has
// one, then among channel's top-level messages.
func (s *Surface) findQuestion(ctx context.Context, channel string, a *waterfall.Record, since time.Time) (asktype.MessageRef, bool, error) {
	if s.keeper != nil && a.SessionID != "" {
		t, err := s.knownThread(ctx, threadKey(channel, a.SessionID))
		if err != nil {
			return asktype.MessageRef{}, false, err
		}
		if t.ts == "" {
			// The store may have forgotten the thread the attempt went to
			// since (it was a week old): the latest is kept a day longer.
			last, err := s.keeper.Remember(ctx, lastThreadKey(channel, a.SessionID), "", threadTTL+threadCacheMargin, s.now())
			if err != nil {
				return asktype.MessageRef{}, false, err
			}
			t.ts = last
		}
		// The current thread, then the one before it (an attempt made
		// just before the session moved on to a new thread).
		for _, thread := range []string{t.ts, t.prev} {
			if thread == "" {
				continue
			}
			if ref, ok, err := s.findInThread(ctx, channel, thread, a, since); ok || err != nil {
				return ref, ok, err
			}
		}
	}
	return s.findIn(ctx, channel, a, since)
}

// findIn looks for a's message among channel's top-level messages.
func (s *Surface) findIn(ctx context.Context, channel string, a *waterfall.Record, since time.Time) (asktype.MessageRef, bool, error) {
	p := &slack.GetConversationHistoryParameters{
		ChannelID: channel, Oldest: slackTS(since.Add(-time.Minute)), Limit: 200, IncludeAllMetadata: true,
	}
	for range historyPages {
		var res *slack.GetConversationHistoryResponse
		err := call(ctx, s.caller, defaultRetry, "conversations.history", func(ctx context.Context) error {
			var err error
			res, err = s.api.GetConversationHistoryContext(ctx, p)
			return err
		})
		if err != nil {
			return asktype.MessageRef{}, false, err
		}
		if m, ok := carrying(res.Messages, a.CallID); ok {
			thread := m.ThreadTimestamp
			if thread == m.Timestamp {
				thread = "" // a parent (of reminders) names its own thread: it is in none
			}
			return asktype.MessageRef{Surface: waterfall.SurfaceSlack, Conversation: channel, ID: m.Timestamp, Thread: thread}, true, nil
		}
		if !res.HasMore || res.ResponseMetaData.NextCursor == "" {
			break
		}
		p.Cursor = res.ResponseMetaData.NextCursor
	}
	return asktype.MessageRef{}, false, nil
}

// slackTS formats t as a Slack message timestamp ("seconds.micros").
func slackTS(t time.Time) string {
	us := t.UnixMicro()
	return strconv.FormatInt(us/1e6, 10) + "." + fmt.Sprintf("%06d", us%1e6)
}

// view is what the message of an ask shows at now.
func view(r *waterfall.Record, now time.Time) waterfall.View { return waterfall.ViewOf(r, now) }

// call runs one Web API call with retries and records its outcome.
func call(ctx context.Context, c caller, p backoff.Policy, method string, f func(ctx context.Context) error) error {
	start := time.Now()
	err := retry(ctx, p, c.retryAfter, func() { c.metrics.RateLimited(method) }, f)
	c.metrics.SlackCall(method, resultOf(err), time.Since(start))
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
	ctx = forAsk(ctx, req)
	if a.Surface.ChannelFor(req) == "" {
		if a.Logger != nil {
			a.Logger.Warn("no Slack channel for the ask; passing it on", "callId", req.CallID)
		}
		return next(ctx)
	}
	return waterfall.Settlement{}, waterfall.ErrClaimed
}
