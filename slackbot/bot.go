// Package slackbot is the Slack side of askslack: the Slack answerer that
// posts questions, the interaction dispatcher that turns clicks and modal
// submissions into answers, and the two transports (Socket Mode, HTTP) that
// feed it. It is the only package that talks to Slack.
package slackbot

import (
	"context"
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
	MarkPosting(ctx context.Context, callID string, at time.Time) error
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
	// RetryBase is the first backoff of a failed post or update (doubling
	// up to 64×). Default 1s; tests shorten it.
	RetryBase time.Duration
	// ReconcileAfter is how long a message may lag its ask (or an ask wait
	// for its post) before any replica's ReconcileLoop takes it over: longer
	// than the retries of the replica that owns it. Default 1m.
	ReconcileAfter time.Duration
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
	// retryBase is the first backoff of a failed message job.
	retryBase      time.Duration
	reconcileAfter time.Duration
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
	if opts.RetryBase <= 0 {
		opts.RetryBase = time.Second
	}
	if opts.ReconcileAfter <= 0 {
		opts.ReconcileAfter = time.Minute
	}
	b := &Bot{
		api: api, host: host, store: st, channel: opts.Channel, holder: opts.Holder,
		log: opts.Logger, authz: opts.Authorizer, metrics: opts.Metrics,
		retryBase: opts.RetryBase, reconcileAfter: opts.ReconcileAfter,
	}
	b.pool = newPool(opts.Workers, func(r any, stack []byte) { b.panicked("job", r, stack) })
	return b
}

// panicked logs a recovered panic with its stack and counts it: hostile
// input must never kill the process.
func (b *Bot) panicked(where string, r any, stack []byte) {
	b.log.Error("recovered from a panic", "where", where, "panic", fmt.Sprint(r), "stack", string(stack))
	b.metrics.Panic(where)
}

// Stop waits for queued Slack calls to finish (bounded by ctx). Safe twice.
func (b *Bot) Stop(ctx context.Context) { b.pool.stop(ctx) }

// Answer implements waterfall.Answerer. It claims every ask it can show:
// posting is not part of the request but a job any replica runs (see
// post.go), so the request only kicks it and waits; answers arrive as
// interactions, which settle the ask through the Host. With no channel to
// post to it delegates to next.
func (b *Bot) Answer(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
	if b.channelFor(req) == "" {
		b.log.Warn("no Slack channel for the ask; passing it on", "callId", req.CallID)
		return next(ctx)
	}
	b.kick(req.CallID)
	<-ctx.Done()
	return waterfall.Settlement{}, ctx.Err()
}

// channelFor is where the ask's message goes.
func (b *Bot) channelFor(req *waterfall.Request) string {
	if req.Channel != "" {
		return req.Channel
	}
	return b.channel
}

// Changed implements waterfall.Observer: the ask's message is posted, or
// brought up to date, in the background.
func (b *Bot) Changed(a *store.Ask) { b.kick(a.CallID) }

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

// Reconcile re-renders messages that lag their ask by more than a minute:
// the update of a replica that crashed right after a transition, or whose
// retries ran out while Slack was down. Run it periodically on every replica;
// renders are idempotent.
func (b *Bot) Reconcile(ctx context.Context) { b.reconcile(ctx, b.host.Now().Add(-b.reconcileAfter)) }

// ReconcileLoop runs Reconcile every half ReconcileAfter until ctx ends, so
// a message lags its ask at most one and a half times ReconcileAfter.
func (b *Bot) ReconcileLoop(ctx context.Context) {
	t := time.NewTicker(b.reconcileAfter / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.Reconcile(ctx)
		}
	}
}

// reconcile re-renders (or posts) what fell behind before before.
func (b *Bot) reconcile(ctx context.Context, before time.Time) {
	ids, err := b.store.Stale(ctx, before, 200)
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
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				b.log.Warn("reading the ask to update its message failed", "callId", callID, "err", err)
				b.retryLater(callID, attempt)
			}
			return
		}
		if !a.Message.Posted() {
			b.ensurePosted(ctx, a, attempt)
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
			b.retryLater(a.CallID, attempt)
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
	r, err := waterfall.Decode(a)
	if err != nil {
		return blocks.View{}, err
	}
	return blocks.ViewOf(r, b.host.Now()), nil
}

// call runs one Web API call with retries and records its outcome.
func (b *Bot) call(ctx context.Context, method string, f func(ctx context.Context) error) error {
	return b.callWith(ctx, defaultRetry, method, f)
}

func (b *Bot) callWith(ctx context.Context, p retryPolicy, method string, f func(ctx context.Context) error) error {
	start := time.Now()
	err := retry(ctx, p, func() { b.metrics.RateLimited(method) }, f)
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
