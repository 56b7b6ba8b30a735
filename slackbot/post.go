package slackbot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Posting a question is a job, not part of the request that asked it. The
// request that creates an ask only kicks the job; the job runs on the bot's
// pool under its own context, on whichever replica gets to it (a post lease
// keeps two from posting at once), and it is found again by every replica's
// Reconcile (the store's stale index lists active asks without a message)
// if the replica that started it dies. So an ask that settles, is withdrawn
// or whose window closes while its post is in flight still gets its message,
// and the message is then brought up to date like any other.
//
// chat.postMessage is never blindly sent twice: before the first attempt the
// job records it (MarkPosting); any later attempt first looks for a message
// carrying the ask's callId in its metadata, posted since then, and adopts it.

// postLease bounds how long a crashed poster blocks others from posting.
const postLease = 30 * time.Second

// leasePost names the post lease of an ask.
const leasePost = "post"

// metaEvent is the metadata event type on every question message; its
// payload carries the callId, so a post whose answer was lost can be found.
const metaEvent = "askslack_question"

// postPolicy sends chat.postMessage once per attempt: a retry after a lost
// response could post twice, so the job (which looks first) retries instead.
var postPolicy = retryPolicy{attempts: 1}

// kick queues the ask's message job: post it, or bring it up to date.
func (b *Bot) kick(callID string) {
	b.pool.submit(callID, func(ctx context.Context) { b.sync(ctx, callID, false, 0) })
}

// retryLater runs the message job again after a backoff that grows with
// attempt: 1, 2, 4 … 64 times RetryBase.
func (b *Bot) retryLater(callID string, attempt int) {
	b.retryAfter(callID, b.retryBase<<min(attempt, 6), attempt)
}

func (b *Bot) retryAfter(callID string, d time.Duration, attempt int) {
	time.AfterFunc(d, func() {
		b.pool.submit(callID, func(ctx context.Context) { b.sync(ctx, callID, false, attempt+1) })
	})
}

// ensurePosted runs the post job for an ask that has no message yet.
func (b *Bot) ensurePosted(ctx context.Context, a *store.Ask, attempt int) {
	if a.Message.Refused != "" || (!a.State.Active() && a.PostAttempt.IsZero()) {
		// Nothing can be shown: Slack refused it, or it ended before anyone
		// tried. Mark it rendered so it leaves the stale index.
		b.markRendered(ctx, a)
		return
	}
	_, err := b.store.Acquire(ctx, a.CallID, leasePost, b.holder, postLease, b.host.Now())
	if errors.Is(err, store.ErrHeld) {
		// Another replica is posting; should it die, its lease runs out.
		b.retryAfter(a.CallID, postLease, attempt)
		return
	}
	if err != nil {
		b.log.Warn("taking the post lease failed; retrying", "callId", a.CallID, "err", err)
		b.retryLater(a.CallID, attempt)
		return
	}
	defer func() {
		if err := b.store.Release(context.WithoutCancel(ctx), a.CallID, leasePost, b.holder); err != nil {
			b.log.Warn("releasing the post lease failed", "callId", a.CallID, "err", err)
		}
	}()
	if err := b.postHeld(ctx, a.CallID); err != nil {
		b.log.Warn("posting the question failed; retrying", "callId", a.CallID, "attempt", attempt+1,
			"slackError", SlackError(err), "err", err)
		var rl *slack.RateLimitedError
		if errors.As(err, &rl) && rl.RetryAfter > 0 {
			b.retryAfter(a.CallID, rl.RetryAfter, attempt)
			return
		}
		b.retryLater(a.CallID, attempt)
	}
}

// postHeld posts the ask under the post lease. It returns an error only for
// what a later attempt may fix.
func (b *Bot) postHeld(ctx context.Context, callID string) error {
	a, err := b.store.Get(ctx, callID) // re-read under the lease
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}
	if a.Message.Posted() || a.Message.Refused != "" {
		b.kick(callID) // someone else got there: bring it up to date
		return nil
	}
	req, err := waterfall.DecodeRequest(a)
	if err != nil {
		b.log.Error("cannot decode the stored request; not posting", "callId", callID, "err", err)
		return nil
	}
	channel := b.channelFor(req)
	if channel == "" {
		return b.refuse(ctx, a, "", "no channel configured (ASKSLACK_CHANNEL)")
	}
	if !a.PostAttempt.IsZero() {
		found, err := b.adoptPosted(ctx, a, channel)
		if found || err != nil {
			return err
		}
	}
	if !a.State.Active() {
		b.markRendered(ctx, a) // it ended before it was shown: nothing to show
		return nil
	}
	return b.postNew(ctx, a, req, channel)
}

// postNew sends chat.postMessage once and records the outcome.
func (b *Bot) postNew(ctx context.Context, a *store.Ask, req *waterfall.Request, channel string) error {
	if err := b.store.MarkPosting(ctx, a.CallID, b.host.Now()); err != nil {
		return err
	}
	v, err := b.view(a)
	if err != nil {
		b.log.Error("cannot render ask", "callId", a.CallID, "err", err)
		return nil
	}
	msg := blocks.Render(v)
	opts := append(msgOptions(msg), slack.MsgOptionMetadata(slack.SlackMetadata{
		EventType:    metaEvent,
		EventPayload: map[string]any{"callId": a.CallID},
	}))
	var ch, ts string
	err = b.callWith(ctx, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		var err error
		ch, ts, err = b.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	switch {
	case err == nil:
		return b.recordPosted(ctx, a, store.MessageRef{Channel: ch, TS: ts}, true)
	case Permanent(err):
		return b.refuse(ctx, a, channel, SlackError(err))
	}
	return err
}

// recordPosted stores the message of a and, unless it is known to show a
// (shows) and nothing changed since, brings the message up to date.
func (b *Bot) recordPosted(ctx context.Context, a *store.Ask, ref store.MessageRef, shows bool) error {
	// The message exists now: record it whatever happens to ctx. Should this
	// fail, the recorded post attempt makes the next poster find it.
	cur, err := b.store.SetMessage(context.WithoutCancel(ctx), a.CallID, ref)
	if err != nil {
		return fmt.Errorf("slackbot: recording posted message %s/%s: %w", ref.Channel, ref.TS, err)
	}
	b.log.Info("question posted", "callId", a.CallID, "channel", ref.Channel, "ts", ref.TS)
	if shows && cur.Version == a.Version+1 { // recording the message is the only change since a
		b.markRendered(ctx, cur)
		return nil
	}
	b.kick(a.CallID) // it changed while we posted, or shows an older state
	return nil
}

// refuse records that Slack will not show the ask. An untimed ask then ends
// with NO_PROVIDER; a timed one waits out its window and returns pending
// (seed 000), and late answers may still come from another surface.
func (b *Bot) refuse(ctx context.Context, a *store.Ask, channel, why string) error {
	b.log.Error("Slack refused the question for good; not retrying", "callId", a.CallID, "channel", channel,
		"slackError", why, "timed", !a.Deadline.IsZero())
	if _, err := b.store.SetMessage(ctx, a.CallID, store.MessageRef{Channel: channel, Refused: why}); err != nil {
		return err
	}
	if a.Deadline.IsZero() {
		if _, err := b.host.Withdraw(ctx, a.CallID, store.NoMessage); err != nil && waterfall.CodeOf(err) != waterfall.CodeAlreadySettled {
			b.log.Warn("ending the refused ask failed", "callId", a.CallID, "err", err)
		}
	}
	return nil
}

// adoptPosted looks for a message an earlier attempt posted (its response
// was lost, or the poster died before recording it) and records it.
// found=false with a nil error means there is none: post.
func (b *Bot) adoptPosted(ctx context.Context, a *store.Ask, channel string) (bool, error) {
	ts, err := b.findPosted(ctx, channel, a.CallID, a.PostAttempt)
	if err != nil {
		if Permanent(err) {
			// Without channels:history we cannot look; posting again risks
			// a duplicate, not posting loses the question. Post.
			b.log.Warn("cannot look for an earlier post of the question (grant channels:history); posting again",
				"callId", a.CallID, "slackError", SlackError(err))
			return false, nil
		}
		return false, err
	}
	if ts == "" {
		return false, nil
	}
	b.log.Info("found the question's earlier post; adopting it", "callId", a.CallID, "ts", ts)
	// It shows the ask as it was when posted, whatever that was.
	return true, b.recordPosted(ctx, a, store.MessageRef{Channel: channel, TS: ts}, false)
}

// historyPages bounds the look-up: a post attempt is recent, so its message
// is within the newest couple of thousand of the channel.
const historyPages = 10

// findPosted returns the ts of the message in channel, posted at or after
// since (less a margin for clock skew), whose metadata names callID.
func (b *Bot) findPosted(ctx context.Context, channel, callID string, since time.Time) (string, error) {
	p := &slack.GetConversationHistoryParameters{
		ChannelID:          channel,
		Oldest:             slackTS(since.Add(-time.Minute)),
		Limit:              200,
		IncludeAllMetadata: true,
	}
	for range historyPages {
		var res *slack.GetConversationHistoryResponse
		err := b.call(ctx, "conversations.history", func(ctx context.Context) error {
			var err error
			res, err = b.api.GetConversationHistoryContext(ctx, p)
			return err
		})
		if err != nil {
			return "", err
		}
		for _, m := range res.Messages {
			if m.Metadata.EventType == metaEvent && fmt.Sprint(m.Metadata.EventPayload["callId"]) == callID {
				return m.Timestamp, nil
			}
		}
		if !res.HasMore || res.ResponseMetaData.NextCursor == "" {
			return "", nil
		}
		p.Cursor = res.ResponseMetaData.NextCursor
	}
	return "", nil
}

// slackTS formats t as a Slack message timestamp ("seconds.micros").
func slackTS(t time.Time) string {
	us := t.UnixMicro()
	return strconv.FormatInt(us/1e6, 10) + "." + fmt.Sprintf("%06d", us%1e6)
}

// markRendered records that the message shows a's version (or that there
// is nothing to show), so the ask leaves the stale index.
func (b *Bot) markRendered(ctx context.Context, a *store.Ask) {
	if err := b.store.MarkRendered(ctx, a.CallID, a.Version); err != nil && !errors.Is(err, store.ErrNotFound) {
		b.log.Warn("recording the rendered version failed", "callId", a.CallID, "err", err)
	}
}
