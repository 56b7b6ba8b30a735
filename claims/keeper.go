// Package claims keeps the live timed waits: which replica holds each one
// (a renewable lease in the store), the countdown it drives, and the expiry
// at the deadline. Every replica runs a Keeper; a wait whose holder dies is
// taken over by another within one lease period, from the stored deadline,
// so the deadline holds whatever happens to the replica that posted it.
//
// The atomic transitions themselves (acquire/renew/release a lease, expire
// open → continued once) are Lua scripts in redisstore.Store next to the methods
// that run them, with store.Memory doing the same under a mutex; this
// package decides when to run them.
package claims

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/archetype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Store is what a Keeper needs from persistence.
type Store interface {
	store.Reader
	store.Waits
	store.Leases
	store.Feed
}

// Expirer closes a wait's window (engine.Host.Expire): open → continued,
// once across replicas, and it tells the observers.
type Expirer interface {
	Expire(ctx context.Context, callID string) (*waterfall.Record, error)
}

// Countdown is told when the remaining time of a held wait crosses one of
// the milestones, so the message can show a fresh coarse countdown. It must
// not block.
type Countdown interface {
	Tick(r *waterfall.Record)
}

// Metrics counts claims.
type Metrics interface {
	Held(n int)
	Claimed(takeover bool)
	StoreError(op string)
}

type noMetrics struct{}

func (noMetrics) Held(int)          {}
func (noMetrics) Claimed(bool)      {}
func (noMetrics) StoreError(string) {}

// Milestones are the remaining times at which the countdown is refreshed.
// A wait shows its absolute deadline from the start (each reader's local
// time), so these coarse refreshes are few: at most len(Milestones)
// chat.update calls per wait, fewer for short waits.
var Milestones = []time.Duration{time.Hour, 30 * time.Minute, 10 * time.Minute, 5 * time.Minute, 2 * time.Minute, time.Minute}

// Options configure a Keeper.
type Options struct {
	// Holder names this replica; unique per process.
	Holder string
	// Lease is how long a claim lasts without renewal: a dead holder's
	// waits are taken over within one Lease. Default 15s.
	Lease time.Duration
	// Clock times leases, deadlines and the keeper's rounds; nil means
	// real time.
	Clock     clock.Clock
	Logger    *slog.Logger
	Countdown Countdown
	Metrics   Metrics
	// Batch is how many waits go to the store per round trip (claims,
	// renewals) and the most expired per step. Default 500.
	Batch int
}

// Keeper claims, renews, counts down and expires timed waits.
type Keeper struct {
	archetype.Archetype
	st     Store
	expire Expirer
	opts   Options

	mu   sync.Mutex
	held map[string]*wait
	// lapse is when the next claim on a wait runs out, as of the last
	// round: a replica that died leaves claims nobody renews, and they
	// are taken over the moment they lapse, not a round later.
	lapse time.Time

	life startstop.Base
}

type wait struct {
	deadline time.Time
	next     int // index of the next milestone to announce
}

// New returns a Keeper; Start runs it.
func New(st Store, ex Expirer, opts Options) *Keeper {
	if opts.Lease <= 0 {
		opts.Lease = 15 * time.Second
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	if opts.Batch <= 0 {
		opts.Batch = 500
	}
	return &Keeper{Archetype: archetype.Of(opts.Logger, opts.Clock), st: st, expire: ex, opts: opts, held: map[string]*wait{}}
}

// Start runs the keeper in the background, stepping every third of a lease
// (so a claim is renewed twice before it could lapse), at deadlines, and
// whenever a replica releases a claim. Starting twice is an error; after
// Stop, Start does nothing.
func (k *Keeper) Start(ctx context.Context) error {
	var released <-chan struct{}
	var stopReleased func()
	return k.life.Launch(ctx, func(context.Context) error {
		released, stopReleased = k.st.Released()
		return nil
	}, func(ctx context.Context) {
		defer stopReleased()
		k.loop(ctx, released)
	})
}

// loop steps until ctx ends.
func (k *Keeper) loop(ctx context.Context, released <-chan struct{}) {
	tick := k.Clock.NewTicker(k.opts.Lease / 3)
	defer tick.Stop()
	for {
		k.Step(ctx)
		wake := k.Clock.NewTimer(k.NextWake())
		select {
		case <-ctx.Done():
		case <-tick.C:
		case <-released: // another replica let go: take over now
		case <-wake.C:
		}
		wake.Stop()
		if ctx.Err() != nil {
			return
		}
	}
}

// Stop ends the loop and releases every held claim, so another replica
// takes them over at once instead of after a lease; ctx bounds the
// releases (a claim not released lapses after one lease). Safe twice and
// before Start; it returns ctx's error when the budget ran out.
func (k *Keeper) Stop(ctx context.Context) error {
	err := k.life.Halt(ctx, func() { k.releaseAll(ctx) })
	return errors.Join(err, ctx.Err())
}

// releaseAll lets go of every held claim.
func (k *Keeper) releaseAll(ctx context.Context) {
	k.mu.Lock()
	ids := make([]string, 0, len(k.held))
	for id := range k.held {
		ids = append(ids, id)
	}
	k.held = map[string]*wait{}
	k.mu.Unlock()
	for _, id := range ids {
		if err := k.st.Release(ctx, id, store.LeaseWait, k.opts.Holder); err != nil {
			k.Logger.Warn("releasing a claim failed; it lapses after one lease", "callId", id, "err", err)
		}
	}
	k.opts.Metrics.Held(0)
	if len(ids) > 0 {
		k.Logger.Info("released timed-wait claims", "count", len(ids))
	}
}

// Held returns the call ids this keeper holds.
func (k *Keeper) Held() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.held))
	for id := range k.held {
		out = append(out, id)
	}
	return out
}

// NextWake is how long the keeper sleeps before its next round unless its
// ticker (a third of a lease) or a released claim wakes it first: until the
// nearest deadline still ahead of a held wait or the next claim to run out
// (a dead replica's, taken over right then), at most one lease. A
// deadline already behind is never a reason to wake: its wait was either
// expired and dropped by the last round, or its expiry failed and is
// retried on the ticker, not in a busy loop.
func (k *Keeper) NextWake() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	next := k.opts.Lease
	now := k.Clock.Now()
	if d := k.lapse.Sub(now) + time.Millisecond; !k.lapse.IsZero() && d > 0 && d < next {
		next = d
	}
	for _, w := range k.held {
		if d := w.deadline.Sub(now); d > 0 && d < next {
			next = d
		}
	}
	return next
}

// Step does one round: let go of held waits whose ask is no longer open
// (ended on another replica or by the waiting Host), renew the others,
// claim free ones, expire due waits, announce countdown milestones. Start calls it periodically; tests call it
// directly with an injected clock.
func (k *Keeper) Step(ctx context.Context) {
	now := k.Clock.Now()
	k.renew(ctx, now)
	k.claim(ctx, now)
	k.nextLapse(ctx, now)
	k.expireDue(ctx, now)
	k.countdown(ctx, now)
	k.mu.Lock()
	n := len(k.held)
	k.mu.Unlock()
	k.opts.Metrics.Held(n)
}

// renew keeps the claims on held waits that are still open and lets go of
// the others: a wait can end anywhere (answered, withdrawn, expired by the
// Host waiting on it), and a claim on an ended wait would be renewed
// forever and hide the "timed wait with no holder" alert. Renewals go to
// the store a batch per round trip.
func (k *Keeper) renew(ctx context.Context, now time.Time) {
	held := k.Held()
	for len(held) > 0 {
		batch := held[:min(len(held), k.opts.Batch)]
		held = held[len(batch):]
		res, err := k.st.ClaimWaits(ctx, batch, store.Hold{Holder: k.opts.Holder, TTL: k.opts.Lease, Now: now})
		if err != nil {
			k.opts.Metrics.StoreError("renew")
			k.Logger.Warn("renewing claims failed", "count", len(batch), "err", err)
			continue
		}
		for _, c := range res {
			switch {
			case !c.Open:
				k.letGo(ctx, c.CallID)
			case !c.Held:
				k.Logger.Warn("lost a timed-wait claim to another replica", "callId", c.CallID, "holder", c.Holder)
				k.drop(c.CallID)
			}
		}
	}
}

// nextLapse notes when the next claim runs out, to wake then.
func (k *Keeper) nextLapse(ctx context.Context, now time.Time) {
	at, err := k.st.NextLapse(ctx, now)
	if err != nil {
		k.opts.Metrics.StoreError("lapse")
		k.Logger.Warn("reading when the next claim runs out failed", "err", err)
	}
	k.mu.Lock()
	k.lapse = at
	k.mu.Unlock()
}

// maxClaimRounds bounds the batches one step claims (Batch each), so a
// step that finds a dead replica's waits takes them all at once, yet ends.
const maxClaimRounds = 50

// claim takes free waits (never claimed, released, or whose holder's
// lease lapsed), a batch per round trip, until none are left.
func (k *Keeper) claim(ctx context.Context, now time.Time) {
	took, fresh := 0, 0
	for range maxClaimRounds {
		ids, err := k.st.Unclaimed(ctx, now, k.opts.Batch)
		if err != nil {
			k.opts.Metrics.StoreError("unclaimed")
			k.Logger.Warn("listing unclaimed waits failed", "err", err)
			break
		}
		if len(ids) == 0 {
			break
		}
		res, err := k.st.ClaimWaits(ctx, ids, store.Hold{Holder: k.opts.Holder, TTL: k.opts.Lease, Now: now})
		if err != nil {
			k.opts.Metrics.StoreError("acquire")
			k.Logger.Warn("claiming waits failed", "count", len(ids), "err", err)
			break
		}
		t, f := k.keep(res, now)
		took, fresh = took+t, fresh+f
		if len(ids) < k.opts.Batch {
			break
		}
	}
	if took > 0 {
		k.Logger.Info("took over timed waits whose holder's lease lapsed", "count", took)
	}
	if fresh > 0 {
		k.Logger.Debug("claimed timed waits", "count", fresh)
	}
}

// keep records the waits a claim round took and counts them: takeovers
// (another holder's lease had lapsed) and fresh claims.
func (k *Keeper) keep(res []store.WaitClaim, now time.Time) (took, fresh int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range res {
		if !c.Held {
			continue
		}
		takeover := c.Prev != ""
		k.opts.Metrics.Claimed(takeover)
		if takeover {
			took++
			k.Logger.Debug("took over a timed wait", "callId", c.CallID, "from", c.Prev, "deadline", c.Deadline)
		} else {
			fresh++
		}
		w := &wait{deadline: c.Deadline}
		// Milestones already behind us were shown by the first render.
		for w.next < len(Milestones) && c.Deadline.Sub(now) <= Milestones[w.next] {
			w.next++
		}
		k.held[c.CallID] = w
	}
	return took, fresh
}

// expireDue closes every wait past its deadline, held or not: expiry is
// once-only in the store, so racing replicas are harmless, and a wait
// nobody holds still ends on time.
func (k *Keeper) expireDue(ctx context.Context, now time.Time) {
	ids, err := k.st.Due(ctx, now, k.opts.Batch)
	if err != nil {
		k.opts.Metrics.StoreError("due")
		return
	}
	for _, id := range ids {
		_, err := k.expire.Expire(ctx, id)
		switch {
		case err == nil:
			k.Logger.Info("timed wait ended; the question continues", "callId", id)
		case errors.Is(err, store.ErrNotDue):
			continue
		case errors.Is(err, store.ErrContinued), errors.Is(err, store.ErrSettled),
			errors.Is(err, store.ErrAborted), errors.Is(err, store.ErrNotFound):
		default:
			k.opts.Metrics.StoreError("expire")
			k.Logger.Warn("expiring a wait failed", "callId", id, "err", err)
			continue
		}
		k.letGo(ctx, id)
	}
}

func (k *Keeper) countdown(ctx context.Context, now time.Time) {
	if k.opts.Countdown == nil {
		return
	}
	var due []string
	k.mu.Lock()
	for id, w := range k.held {
		crossed := false
		for w.next < len(Milestones) && w.deadline.Sub(now) <= Milestones[w.next] {
			w.next++
			crossed = true
		}
		if crossed && now.Before(w.deadline) {
			due = append(due, id)
		}
	}
	k.mu.Unlock()
	for _, id := range due {
		a, err := k.st.Get(ctx, id)
		if err != nil {
			continue
		}
		if a.State != asktype.Open {
			k.letGo(ctx, id)
			continue
		}
		if r, err := waterfall.Decode(a); err == nil {
			k.opts.Countdown.Tick(r)
		}
	}
}

func (k *Keeper) drop(id string) {
	k.mu.Lock()
	delete(k.held, id)
	k.mu.Unlock()
}

// letGo drops a wait that ended and releases its claim. Release only
// deletes a lease this keeper holds, so letting go of a wait that was
// never (or is no longer) held is harmless.
func (k *Keeper) letGo(ctx context.Context, id string) {
	k.drop(id)
	if err := k.st.Release(ctx, id, store.LeaseWait, k.opts.Holder); err != nil {
		k.Logger.Warn("releasing an ended wait failed; it lapses after one lease", "callId", id, "err", err)
	}
}
