// Package mirror keeps each chat message in step with its ask, independent
// of any request: it posts a new ask's message as a job any replica can run
// (under a post lease, retried with backoff, never blindly sent twice),
// records where the message went, and from then on re-renders it whenever
// the ask moves on — an answer, a withdrawal, the window closing, a
// countdown milestone — retrying failed updates and, on every replica,
// sweeping up what a crashed or failing replica left behind.
//
// It talks to a chat product only through a Surface (post, update, find),
// so Slack is one implementation (slackbot) and another chat surface is a
// new package, not a fork. It links neither slack-go nor go-redis.
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/internal/workpool"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Surface is a chat product that shows asks. The mirror decides when to
// post and update; the surface decides what the message looks like and
// where it goes.
type Surface interface {
	// Post shows the ask as a new message and says where it went. The
	// message must carry the ask's callId so Find can see it later.
	Post(ctx context.Context, r *waterfall.Record) (asktype.MessageRef, error)
	// Update replaces the message's content with the ask as it stands.
	Update(ctx context.Context, r *waterfall.Record) error
	// Find looks for a message an earlier Post may have made (its answer
	// was lost, or its poster died before recording it), posted at or
	// after since. ok=false with a nil error: there is none.
	Find(ctx context.Context, r *waterfall.Record, since time.Time) (ref asktype.MessageRef, ok bool, err error)
	// Refusal returns the surface's reason when err means it will never
	// show the ask (a channel that does not exist, a revoked token), or "".
	Refusal(err error) string
	// RetryAfter is how long the surface asked to wait (a rate limit), or
	// 0. A Post that fails with a RetryAfter posted nothing (the mirror
	// then retries it without Find).
	RetryAfter(err error) time.Duration
}

// Replier is a Surface that can sometimes show a change without spending
// the rate budget the mirror paces (Slack: through the response_url of the
// click that caused it). The mirror sends such an update at once.
type Replier interface {
	// Unmetered reports whether the next Update of the message at ref
	// goes by such a way.
	Unmetered(ref asktype.MessageRef) bool
}

// Store is what the mirror needs from persistence.
type Store interface {
	store.Reader
	store.Messages
	store.Leases
	store.Budget
}

// Options configure a Mirror.
type Options struct {
	// Holder names this replica in post leases; unique per process.
	Holder string
	// Clock times leases, retries and the sweep; nil means real time.
	Clock  clock.Clock
	Logger *slog.Logger
	// Workers bounds the surface calls in flight. Default 8.
	Workers int
	// RetryBase is the first backoff of a failed post or update (drawn
	// between half of it and it), doubling up to 64×. Default 1s; tests
	// shorten it.
	RetryBase time.Duration
	// ReconcileAfter is how long a message may lag its ask (or an ask wait
	// for its post) before any replica's sweep takes it over: longer than
	// the retries of the replica that owns it. Default 1m.
	ReconcileAfter time.Duration
	// OnPanic is told of a job that panicked (logged already); nil ignores.
	OnPanic func(where string)
	// Pace, when set, queues posts and updates for Slack's rate limits
	// (pace.go); nil sends them as they come.
	Pace *Pace
}

// Mirror keeps messages in step with asks. It is an engine.Observer (every
// transition re-renders) and a claims.Countdown (milestones refresh the
// countdown). Start runs the sweep; Stop waits for queued work.
type Mirror struct {
	st      Store
	surface Surface
	clock   clock.Clock
	log     *slog.Logger
	holder  string
	pool    *workpool.Pool
	opts    Options
	pacer   *pacer // nil: no pacing

	life   startstop.Base
	leases atomic.Uint64 // numbers this mirror's post leases (newHolder)
	mu     sync.Mutex
	known  map[string]*asktype.Ask // newest record a local transition handed Changed, until its job reads it
	// fresh are the post leases asks were created with on this replica
	// (Create takes one with the ask, in the same round trip), not yet
	// used: the first post job of the ask takes its lease from here, once
	// (post.go).
	fresh map[string]asktype.PostLease
	// behind are asks this mirror rendered while they moved on (update.go).
	behind map[string]struct{}
	// owed are asks whose job this mirror must still run (a retry due, a
	// job cut short by Stop): a stopping mirror hands them over (stop.go).
	owed map[string]struct{}
}

// New returns a Mirror over st that shows asks on surface.
func New(st Store, surface Surface, opts Options) *Mirror {
	opts.Clock = clock.OrReal(opts.Clock)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = time.Second
	}
	if opts.ReconcileAfter <= 0 {
		opts.ReconcileAfter = time.Minute
	}
	if opts.Holder == "" {
		opts.Holder = fmt.Sprintf("mirror-%d", time.Now().UnixNano())
	}
	m := &Mirror{st: st, surface: surface, clock: opts.Clock, log: opts.Logger, holder: opts.Holder, opts: opts}
	if opts.Pace != nil {
		m.pacer = newPacer(m, *opts.Pace)
	}
	m.pool = workpool.New(opts.Workers, func(r any, stack []byte) {
		m.log.Error("recovered from a panic", "where", "mirror", "panic", fmt.Sprint(r), "stack", string(stack))
		if opts.OnPanic != nil {
			opts.OnPanic("mirror")
		}
	})
	return m
}

// Start runs the sweep that takes over lagging messages, until Stop.
// Calling it twice is an error; after Stop it does nothing.
func (m *Mirror) Start(ctx context.Context) error {
	return m.life.Launch(ctx, nil, m.sweepLoop)
}

// Stop ends the sweep, then renders and posts what this replica owes —
// queued updates and posts, retries due — within ctx, and hands what it
// could not to the other replicas at once (stop.go). Safe twice and
// before Start.
func (m *Mirror) Stop(ctx context.Context) error {
	err := m.life.Halt(ctx, func() { m.drain(ctx) })
	return errors.Join(err, ctx.Err())
}

// Kick queues the ask's message job: post it, or bring it up to date.
func (m *Mirror) Kick(callID string) { m.submit(callID, false, 0) }

// submit queues the ask's message job as attempt (a countdown's, with
// refresh). A job cut short by the mirror stopping is owed (stop.go).
func (m *Mirror) submit(callID string, refresh bool, attempt int) {
	if !m.pool.Submit(callID, func(ctx context.Context) {
		m.sync(ctx, callID, refresh, attempt)
		if ctx.Err() != nil {
			m.owe(callID)
		}
	}) {
		m.handOverLate(callID)
	}
}

// Changed implements engine.Observer. The job starts from a (the newest
// such record), without reading the ask again.
func (m *Mirror) Changed(r *waterfall.Record) { m.changed(r.Ask) }

// changed starts the ask's job from a, without reading the ask again. A
// record carrying the post lease Create took for this mirror hands the
// lease to the ask's first post job (keepFresh); the record itself is
// remembered without it, so no later job mistakes it for its own.
func (m *Mirror) changed(a *asktype.Ask) {
	if a.Poster.Holder != "" {
		m.keepFresh(a.CallID, a.Poster)
		b := *a
		b.Poster = asktype.PostLease{}
		a = &b
	}
	m.remember(a)
	m.Kick(a.CallID)
}

// remember keeps a for the ask's next job, unless a newer record waits.
func (m *Mirror) remember(a *asktype.Ask) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known == nil {
		m.known = make(map[string]*asktype.Ask)
	}
	if cur := m.known[a.CallID]; cur == nil || cur.Version < a.Version {
		m.known[a.CallID] = a
	}
}

// Tick implements claims.Countdown: the remaining time of a held wait
// crossed a milestone, so its message gets a fresh coarse countdown — if
// the shared update budget allows; the absolute deadline is in the message
// anyway.
func (m *Mirror) Tick(a *waterfall.Record) {
	m.submit(a.CallID, true, 0)
}

// Countdown updates share a token bucket across replicas, kept well under
// Slack's chat.update Tier 3 (50+/min per workspace) so answers always
// have room.
var countdownBucket = asktype.Bucket{Name: "chat.update.countdown", PerMinute: 20, Burst: 10}

// Sweep re-renders (or posts) what fell behind before before: the update of
// a replica that crashed right after a transition, the post of one that
// died before posting, or retries that ran out while the surface was down.
// Every replica runs it every half ReconcileAfter (from Start) with before
// = now-ReconcileAfter; renders are idempotent.
func (m *Mirror) Sweep(ctx context.Context, before time.Time) {
	m.sweep(ctx, before, syncRetries-1, "re-rendering a message that fell behind its question")
}

// sweep runs the job of each ask Stale lists for before, as attempt.
func (m *Mirror) sweep(ctx context.Context, before time.Time, attempt int, why string) {
	ids, err := m.st.Stale(ctx, before, 200)
	if err != nil {
		m.log.Warn("listing stale messages failed", "err", err)
		return
	}
	for _, id := range ids {
		m.log.Info(why, "callId", id)
		m.submit(id, false, attempt)
	}
}

func (m *Mirror) sweepLoop(ctx context.Context) {
	t := m.clock.NewTicker(m.opts.ReconcileAfter / 2)
	defer t.Stop()
	// What a stopping replica handed over is taken at once, retried as a
	// fresh job's would be (the replica that owed it stops retrying).
	handed, stop := m.st.HandedOff()
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.Sweep(ctx, m.clock.Now().Add(-m.opts.ReconcileAfter))
		case <-handed:
			m.sweep(ctx, store.HandoffBefore, 0, "taking over a message another replica handed over as it stopped")
		}
	}
}

// retryLater runs the message job again after a backoff that grows with
// attempt, up to 64 times RetryBase, with the jitter of every retry
// (internal/backoff): the asks a Slack outage failed together do not all
// come back in the same instant.
func (m *Mirror) retryLater(callID string, attempt int) {
	p := backoff.Policy{Base: m.opts.RetryBase, Max: m.opts.RetryBase << 6}
	m.retryAfter(callID, p.Delay(attempt+1, 0), attempt)
}

// retryAfter runs the message job again after d, as the next attempt.
func (m *Mirror) retryAfter(callID string, d time.Duration, attempt int) {
	m.runAfter(callID, d, attempt+1)
}

// runAfter runs the message job after d as attempt (waiting out another
// replica's lease is not a failed attempt: it keeps the count).
func (m *Mirror) runAfter(callID string, d time.Duration, attempt int) {
	// Owed until the job runs: a replica that stops first hands it over.
	m.owe(callID)
	m.clock.AfterFunc(d, func() {
		if !m.pool.Submit(callID, func(ctx context.Context) {
			m.paid(callID)
			m.sync(ctx, callID, false, attempt)
			if ctx.Err() != nil {
				m.owe(callID)
			}
		}) {
			m.paid(callID)
			m.handOverLate(callID)
		}
	})
}
