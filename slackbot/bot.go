// Package slackbot is the Slack side of askslack: the Slack answerer that
// posts questions, the interaction dispatcher that turns clicks and modal
// submissions into answers, and the two transports (Socket Mode, HTTP) that
// feed it. It is the only package that talks to Slack.
package slackbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Store is what the bot needs from persistence beyond the Host.
type Store interface {
	Get(ctx context.Context, callID string) (*store.Ask, error)
	SetMessage(ctx context.Context, callID string, ref store.MessageRef) (*store.Ask, error)
	MarkRendered(ctx context.Context, callID string, ver int64) error
	Acquire(ctx context.Context, callID, name, holder string, ttl time.Duration, now time.Time) (string, error)
	Release(ctx context.Context, callID, name, holder string) error
	Changes(callID string) (<-chan struct{}, func())
	Take(ctx context.Context, budget string, perMinute, burst int, now time.Time) (bool, error)
	Stale(ctx context.Context, before time.Time, limit int) ([]string, error)
}

// Options configure a Bot.
type Options struct {
	// Channel is where questions go unless an ask names its own.
	Channel string
	// Holder names this replica in leases; unique per process.
	Holder string
	Logger *slog.Logger
	// Workers bounds the background Slack calls (message updates,
	// ephemerals). Default 8.
	Workers int
	// Authorizer decides who may answer; nil lets everyone in the channel.
	Authorizer Authorizer
	// Metrics receives counts; nil records nothing.
	Metrics Metrics
}

// Bot posts asks to Slack and takes answers from it. It is a
// waterfall.Answerer (posting) and a waterfall.Observer (keeping each
// message in step with its ask).
type Bot struct {
	api     API
	host    *waterfall.Host
	store   Store
	channel string
	holder  string
	log     *slog.Logger
	pool    *pool
	authz   Authorizer
	metrics Metrics
}

// New returns a Bot. Register it with host.Observe(bot) and put it in the
// host's answerer chain.
func New(api API, host *waterfall.Host, st Store, opts Options) *Bot {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.Holder == "" {
		opts.Holder = fmt.Sprintf("bot-%d", time.Now().UnixNano())
	}
	if opts.Authorizer == nil {
		opts.Authorizer = Everyone{}
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	return &Bot{
		api: api, host: host, store: st, channel: opts.Channel, holder: opts.Holder,
		log: opts.Logger, pool: newPool(opts.Workers), authz: opts.Authorizer, metrics: opts.Metrics,
	}
}

// Stop waits for queued Slack calls to finish (bounded by ctx). Safe twice.
func (b *Bot) Stop(ctx context.Context) { b.pool.stop(ctx) }

// postLease bounds how long a crashed poster blocks others from posting.
const postLease = 30 * time.Second

// postTimeout bounds one post with its retries, independent of the asker.
const postTimeout = 25 * time.Second

// Answer implements waterfall.Answerer. It posts the ask to Slack once (a
// re-attach finds the stored message and posts nothing) and then waits:
// answers arrive as interactions, which settle the ask through the Host.
// When the ask cannot be posted — no channel configured, or Slack refuses
// for good (channel_not_found, not_in_channel, invalid_blocks) — it
// delegates to next.
func (b *Bot) Answer(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
	channel := req.Channel
	if channel == "" {
		channel = b.channel
	}
	if channel == "" {
		b.log.Warn("no Slack channel for the ask; passing it on", "callId", req.CallID)
		return next(ctx)
	}
	if err := b.post(ctx, req.CallID, channel); err != nil {
		if ctx.Err() != nil {
			return waterfall.Settlement{}, ctx.Err()
		}
		b.log.Error("posting the question to Slack failed; passing it on",
			"callId", req.CallID, "channel", channel, "slackError", SlackError(err), "err", err)
		return next(ctx)
	}
	<-ctx.Done()
	return waterfall.Settlement{}, ctx.Err()
}

// post shows the ask in channel unless a message already shows it. A lease
// keeps concurrent re-attaches (on any replica) from posting twice.
func (b *Bot) post(ctx context.Context, callID, channel string) error {
	for {
		a, err := b.store.Get(ctx, callID)
		if err != nil {
			return err
		}
		if a.Message.TS != "" || !a.State.Active() {
			return nil
		}
		_, err = b.store.Acquire(ctx, callID, "post", b.holder, postLease, b.host.Now())
		if errors.Is(err, store.ErrHeld) {
			if err := b.waitChange(ctx, callID, time.Second); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		err = b.postHeld(ctx, callID, channel)
		_ = b.store.Release(context.WithoutCancel(ctx), callID, "post", b.holder)
		return err
	}
}

func (b *Bot) postHeld(ctx context.Context, callID, channel string) error {
	a, err := b.store.Get(ctx, callID)
	if err != nil || a.Message.TS != "" {
		return err
	}
	v, err := b.view(a)
	if err != nil {
		return err
	}
	msg := blocks.Render(v)
	var ch, ts string
	// The post must finish even if the asker goes away meanwhile: Slack may
	// have shown the message already, and only a recorded ts lets a later
	// abort or answer replace its buttons.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), postTimeout)
	defer cancel()
	err = b.call(pctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		ch, ts, err = b.api.PostMessageContext(ctx, channel, msgOptions(msg)...)
		return err
	})
	if err != nil {
		return err
	}
	// The message exists now: record it even if the caller has gone.
	cur, err := b.store.SetMessage(context.WithoutCancel(ctx), callID, store.MessageRef{Channel: ch, TS: ts})
	if err != nil {
		return fmt.Errorf("slackbot: recording posted message %s/%s: %w", ch, ts, err)
	}
	b.log.Info("question posted", "callId", callID, "channel", ch, "ts", ts)
	if cur.State == a.State && len(cur.Reply) == len(a.Reply) {
		return b.store.MarkRendered(context.WithoutCancel(ctx), callID, cur.Version)
	}
	b.Changed(cur) // it changed while we posted: bring the message up to date
	return nil
}

func (b *Bot) waitChange(ctx context.Context, callID string, max time.Duration) error {
	ch, stop := b.store.Changes(callID)
	defer stop()
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
	case <-t.C:
	}
	return nil
}

// Changed implements waterfall.Observer: the ask's message is brought up to
// date in the background.
func (b *Bot) Changed(a *store.Ask) {
	b.pool.submit(a.CallID, func(ctx context.Context) { b.sync(ctx, a.CallID, false, 0) })
}

// Tick implements claims.Countdown: the remaining time of a held wait
// crossed a milestone, so its message gets a fresh coarse countdown — if
// the shared chat.update budget allows; the absolute deadline is in the
// message anyway.
func (b *Bot) Tick(a *store.Ask) {
	b.pool.submit(a.CallID, func(ctx context.Context) { b.sync(ctx, a.CallID, true, 0) })
}

// Countdown updates share a token bucket across replicas, kept well under
// chat.update's Tier 3 (50+/min per workspace) so answers always have room.
const (
	countdownBudget    = "chat.update.countdown"
	countdownPerMinute = 20
	countdownBurst     = 10
)

// reconcileAfter is how long a message may lag its ask before any replica
// re-renders it: longer than the retries of the replica that made the change.
const reconcileAfter = time.Minute

// Reconcile re-renders messages that lag their ask by more than a minute:
// the update of a replica that crashed right after a transition, or whose
// retries ran out while Slack was down. Run it periodically on every replica;
// renders are idempotent.
func (b *Bot) Reconcile(ctx context.Context) {
	ids, err := b.store.Stale(ctx, b.host.Now().Add(-reconcileAfter), 200)
	if err != nil {
		b.log.Warn("listing stale messages failed", "err", err)
		return
	}
	for _, id := range ids {
		b.log.Info("re-rendering a message that fell behind its question", "callId", id)
		b.pool.submit(id, func(ctx context.Context) { b.sync(ctx, id, false, syncRetries-1) })
	}
}

// syncRetries bounds how often a failed message update is retried.
const syncRetries = 6

// sync re-renders the ask's message if it is behind the ask (or, with
// refresh, to show a fresh countdown on an open ask). A failed update leaves
// the answer standing and is retried with backoff. Replicas may race to
// render the same ask; whoever finishes re-reads it and renders again when
// it moved on meanwhile, so the last word is always the latest state.
func (b *Bot) sync(ctx context.Context, callID string, refresh bool, attempt int) {
	for range 3 {
		a, err := b.store.Get(ctx, callID)
		if err != nil || a.Message.TS == "" {
			return
		}
		behind := a.Rendered < a.Version
		if !behind && !(refresh && a.State == store.Open) {
			return
		}
		if !behind {
			ok, err := b.store.Take(ctx, countdownBudget, countdownPerMinute, countdownBurst, b.host.Now())
			if err != nil || !ok {
				b.log.Debug("countdown update skipped: budget spent", "callId", callID, "err", err)
				return
			}
		}
		refresh = false
		if !b.update(ctx, a, attempt) {
			return
		}
		cur, err := b.store.Get(ctx, callID)
		if err != nil || cur.Version == a.Version {
			return
		}
	}
}

// update renders a into its message; on failure it schedules a retry.
func (b *Bot) update(ctx context.Context, a *store.Ask, attempt int) bool {
	v, err := b.view(a)
	if err != nil {
		b.log.Error("cannot render ask", "callId", a.CallID, "err", err)
		return false
	}
	msg := blocks.Render(v)
	err = b.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, a.Message.Channel, a.Message.TS, msgOptions(msg)...)
		return err
	})
	if err != nil {
		b.log.Warn("updating the question message failed", "callId", a.CallID, "attempt", attempt+1,
			"slackError", SlackError(err), "err", err)
		if attempt+1 < syncRetries && !Permanent(err) && ctx.Err() == nil {
			callID := a.CallID
			time.AfterFunc(time.Duration(1<<attempt)*time.Second, func() {
				b.pool.submit(callID, func(ctx context.Context) { b.sync(ctx, callID, false, attempt+1) })
			})
		}
		return false
	}
	if err := b.store.MarkRendered(ctx, a.CallID, a.Version); err != nil {
		b.log.Warn("recording the rendered version failed", "callId", a.CallID, "err", err)
	}
	return true
}

// view turns a stored ask into what its message shows.
func (b *Bot) view(a *store.Ask) (blocks.View, error) {
	req, err := waterfall.DecodeRequest(a)
	if err != nil {
		return blocks.View{}, err
	}
	v := blocks.View{CallID: a.CallID, Request: req, Deadline: a.Deadline, Now: b.host.Now()}
	switch a.State {
	case store.Open:
		v.Phase = blocks.PhaseOpen
	case store.Continued:
		v.Phase = blocks.PhaseContinued
		if len(a.Reply) > 0 {
			var m waterfall.SteeredMessage
			if err := json.Unmarshal(a.Reply, &m); err != nil {
				return v, err
			}
			s := m.Settlement()
			v.Phase, v.Settlement = blocks.PhaseQueued, &s
		}
	case store.Settled:
		s, err := waterfall.DecodeSettlement(a)
		if err != nil {
			return v, err
		}
		v.Phase, v.Settlement = blocks.PhaseSettled, &s
		if !a.ReplyAt.IsZero() {
			v.Phase = blocks.PhaseDelivered
		}
	case store.Aborted:
		v.Phase = blocks.PhaseAborted
	}
	return v, nil
}

// call runs one Web API call with retries and records its outcome.
func (b *Bot) call(ctx context.Context, method string, f func(ctx context.Context) error) error {
	start := time.Now()
	err := retry(ctx, defaultRetry, func() { b.metrics.RateLimited(method) }, f)
	b.metrics.SlackCall(method, resultOf(err), time.Since(start))
	return err
}

// resultOf labels a call's result for metrics: "ok" or Slack's error.
func resultOf(err error) string {
	if err == nil {
		return "ok"
	}
	if s := SlackError(err); s != "" {
		return s
	}
	return "error"
}

func msgOptions(m blocks.Message) []slack.MsgOption {
	return []slack.MsgOption{
		slack.MsgOptionText(m.Text, false),
		slack.MsgOptionBlocks(m.Blocks...),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	}
}

// ephemeral tells one user something only they see, in the background.
func (b *Bot) ephemeral(channel, user, text string) {
	if channel == "" || user == "" {
		return
	}
	b.pool.submit("", func(ctx context.Context) {
		err := b.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
			_, err := b.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false))
			return err
		})
		if err != nil {
			b.log.Warn("ephemeral message failed", "channel", channel, "user", user, "slackError", SlackError(err), "err", err)
		}
	})
}
