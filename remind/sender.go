package remind

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/archetype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Store is what reminders need from persistence.
type Store interface {
	store.Timers
	store.Reader
	store.Budget
	// Notes keep which step of an ask was last done, for every replica.
	store.Notes
}

// Nudger sends one reminder (slackbot.Surface).
type Nudger interface {
	Remind(ctx context.Context, r *waterfall.Record, n waterfall.Nudge) error
	// Refusal is the surface's reason when err means it will never send
	// this reminder (the message is gone), or "".
	Refusal(err error) string
}

// Options configure a Sender.
type Options struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// Tick is how often due reminders are looked for when none is due
	// sooner (the sweep wakes when the earliest is due). Default a
	// quarter of the first offset, between 1s and 10s.
	Tick time.Duration
	// Lease is how long a replica sending a reminder holds it; should it
	// die, another sends it after this. Default 1m.
	Lease time.Duration
	// Metrics counts reminders; nil counts nothing.
	Metrics Metrics
	// Turns, when set, gives each reminder its turn in its channel's
	// queue of posts (the mirror's pacing): a reminder waits there, at the
	// front, instead of being sent at once. nil: sent at once.
	Turns Turner
}

// Turner is a channel's queue of posts, for reminders
// (slackbot.Turns over mirror.Mirror's lanes).
type Turner interface {
	// Turn queues the post of n for r under key, ahead of the questions
	// waiting in its channel, and calls run when its turn comes, holding
	// a token of the channel's shared budget; run must not block. Queuing
	// a key again keeps its place and runs the newer run. false: the
	// queue is full (run is never called).
	Turn(r *waterfall.Record, n waterfall.Nudge, key string, run func()) bool
	// Forgo takes key out of the queue of r's reminder n, if it waits there.
	Forgo(r *waterfall.Record, n waterfall.Nudge, key string)
}

// Metrics counts reminders by kind ("reminder", "escalation") and result
// ("sent", "failed", "skipped", and "dropped": a reminder not posted by
// its escalation's time), and the sweeps run.
type Metrics interface {
	Reminded(kind, result string)
	Swept()
}

type noMetrics struct{}

func (noMetrics) Reminded(string, string) {}
func (noMetrics) Swept()                  {}

// The timer and Slack budget reminders use.
const (
	timerName       = "remind"
	budget          = "chat.postMessage.remind"
	budgetPerMinute = 30
	budgetBurst     = 10
	batch           = 100
	// notPosted is how long a reminder due on a question not yet posted
	// waits before it looks again.
	notPosted = 30 * time.Second
)

// Sender sends the reminders Armer scheduled: Start runs the sweep, until
// Stop.
type Sender struct {
	archetype.Archetype
	st    Store
	to    Nudger
	sched Schedule
	steps []step
	opts  Options
	esc   Escalator // nil: none
	turns Turner    // nil: reminders are sent at once

	mu      sync.Mutex
	stopped bool           // no more sends start
	sends   sync.WaitGroup // sends whose turn came

	life startstop.Base
}

// Escalator acts at an ask's escalation step besides the Slack mention
// (pager.Escalation pages the on-call). A Sender given one by EscalateTo
// starts it before its sweep and stops it after, when it has Start and
// Stop.
type Escalator interface {
	// Escalate acts for r at its escalation step n, on the replica that
	// holds the step, at the step's time and before the Slack mention (if
	// any), which waits for its channel's turn; n.Unposted counts the
	// reminders not posted by then. nil: done (it is not called again
	// for the ask), or given up for good. An error leaves it to be tried
	// again after the step's lease, without the mention if that was sent:
	// Escalate must be safe to call again for an ask it acted on.
	Escalate(ctx context.Context, r *waterfall.Record, n waterfall.Nudge) error
}

// EscalateTo makes e act at every ask's escalation step, which the
// schedule then has even when Schedule.Escalate names nobody (the step
// then sends nothing to Slack). Call it before Start.
func (k *Sender) EscalateTo(e Escalator) {
	k.esc = e
	k.steps = k.sched.steps(e != nil)
}

// lifecycle is an Escalator's Start and Stop, when it has them.
type lifecycle interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// New returns a Sender that reminds through to on sched.
func New(st Store, to Nudger, sched Schedule, opts Options) *Sender {
	steps := sched.steps(false)
	if opts.Tick <= 0 {
		opts.Tick = 10 * time.Second
		if len(steps) > 0 {
			opts.Tick = min(max(steps[0].at/4, time.Second), opts.Tick)
		}
	}
	if opts.Lease <= 0 {
		opts.Lease = time.Minute
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	return &Sender{Archetype: archetype.Of(opts.Logger, opts.Clock), st: st, to: to, sched: sched, steps: steps, opts: opts, turns: opts.Turns}
}

// Armer schedules each ask's first reminder (the Slack surface arms
// before it posts, so no question is shown without its reminders).
type Armer struct {
	st    store.Timers
	first time.Duration
}

// Armer returns what schedules asks on st for s.
func (s Schedule) Armer(st store.Timers) Armer {
	var first time.Duration
	if steps := s.steps(false); len(steps) > 0 {
		first = steps[0].at
	}
	return Armer{st: st, first: first}
}

// Arm schedules a's first reminder, unless it is scheduled already.
func (r Armer) Arm(ctx context.Context, a *waterfall.Record) error {
	if r.first <= 0 || !a.State.Active() {
		return nil
	}
	return r.st.Arm(ctx, timerName, a.CallID, a.Created.Add(r.first))
}

// Start runs the sweep in the background. A second Start is an error;
// after Stop it does nothing.
func (k *Sender) Start(ctx context.Context) error {
	if len(k.steps) == 0 {
		return nil // no reminders configured: nothing to sweep
	}
	var prepare func(ctx context.Context) error
	if l, ok := k.esc.(lifecycle); ok {
		prepare = l.Start
	}
	return k.life.Launch(ctx, prepare, func(ctx context.Context) {
		for {
			k.Sweep(ctx)
			k.opts.Metrics.Swept()
			t := k.Clock.NewTimer(k.nextSweep(ctx))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	})
}

// nextSweep is how long the sweep waits: until the earliest step due
// within a tick (a page goes at its time, not up to a tick later), but at
// least a quarter tick (steps left due, such as one whose ask could not
// be read, are looked at again no faster), and at most a tick.
func (k *Sender) nextSweep(ctx context.Context) time.Duration {
	now := k.Clock.Now()
	next, err := k.st.Fired(ctx, timerName, now.Add(k.opts.Tick), 1)
	if err != nil || len(next) == 0 {
		return k.opts.Tick
	}
	return min(max(next[0].At.Sub(now), k.opts.Tick/4), k.opts.Tick)
}

// Stop ends the sweep, waiting for the reminders being sent until ctx
// ends (those still waiting for their channel's turn are left to their
// claims: another replica sends them), then stops the Escalator within
// what is left of ctx. Safe twice and before Start.
func (k *Sender) Stop(ctx context.Context) error {
	var escErr error
	err := k.life.Halt(ctx, func() {
		k.mu.Lock()
		k.stopped = true
		k.mu.Unlock()
		sent := make(chan struct{})
		go func() { k.sends.Wait(); close(sent) }()
		select {
		case <-sent:
		case <-ctx.Done():
		}
		if l, ok := k.esc.(lifecycle); ok {
			escErr = l.Stop(ctx)
		}
	})
	return errors.Join(err, escErr)
}

// Sweep sends every reminder due now (up to a batch). Exported for tests
// that drive it with a fake clock. With Options.Turns, a reminder joins
// its channel's queue and is sent when its turn comes, after Sweep
// returns (Flush waits for those sent meanwhile); the page never waits
// for Slack.
func (k *Sender) Sweep(ctx context.Context) {
	now := k.Clock.Now()
	fired, err := k.st.Fired(ctx, timerName, now, batch)
	if err != nil {
		k.Logger.Warn("reading due reminders failed; trying again next round", "err", err)
		return
	}
	for _, t := range fired {
		if ctx.Err() != nil {
			return
		}
		k.fire(ctx, t)
	}
}

// Flush waits for the reminders whose turn in their channel came and
// that are being sent; those still waiting for their turn are not
// waited for. For tests that drive Sweep and the queue's clock.
func (k *Sender) Flush() { k.sends.Wait() }

// fire handles one due timer: it drops the timer of an ask that no longer
// waits, postpones one whose message is not out yet, and otherwise claims
// the step due (the latest: stale ones are skipped) and does it — a
// reminder is sent, or queued for its channel's turn; the escalation
// pages and mentions.
func (k *Sender) fire(ctx context.Context, t store.Timer) {
	a, err := k.st.Get(ctx, t.CallID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		k.move(ctx, t, time.Time{})
		return
	case err != nil:
		k.Logger.Warn("reading an ask to remind about failed", "callId", t.CallID, "err", err)
		return
	case !waiting(a) || a.Message.Refused != "":
		k.move(ctx, t, time.Time{}) // answered, withdrawn, or never shown: no more reminders
		return
	}
	// The claim's lease runs from now, not from when the sweep began:
	// the sends before this one may have taken most of a lease.
	now := k.Clock.Now()
	i := due(k.steps, now.Sub(a.Created))
	switch {
	case i < 0:
		k.move(ctx, t, a.Created.Add(k.steps[0].at)) // armed early (clock skew): put it back
	case k.steps[i].escalate:
		k.escalation(ctx, t, a, i, now)
	case !a.Message.Posted():
		// Its reminder waits for the message, but never past the
		// escalation, which does not.
		k.move(ctx, t, k.until(a, i, now.Add(k.messageWait(a, i, now))))
	default:
		k.reminder(ctx, t, a, i, now)
	}
}

// until caps at, a time step i of a waits until, at the escalation's due
// time when one follows: the page never waits behind a reminder.
func (k *Sender) until(a *asktype.Ask, i int, at time.Time) time.Time {
	if e := len(k.steps) - 1; e > i && k.steps[e].escalate {
		if due := a.Created.Add(k.steps[e].at); due.Before(at) {
			return due
		}
	}
	return at
}

// messageWait is how long a step due on a question not posted yet waits
// before it looks again: a tick while it is new (the post is likely in
// its channel's queue), longer the longer it has been overdue, at most
// notPosted.
func (k *Sender) messageWait(a *asktype.Ask, i int, now time.Time) time.Duration {
	overdue := now.Sub(a.Created) - k.steps[i].at
	return min(max(overdue, k.opts.Tick), notPosted)
}

// reminder claims reminder step i of a (until the lease ends, or the
// escalation is due, whichever is first) and sends it: at once without
// Options.Turns, or when its channel's turn comes.
func (k *Sender) reminder(ctx context.Context, t store.Timer, a *asktype.Ask, i int, now time.Time) {
	held := store.Timer{CallID: t.CallID, At: k.until(a, i, now.Add(k.opts.Lease))}
	if !k.move(ctx, t, held.At) {
		return // another replica has it
	}
	// The budget after the claim: replicas that lose the claim spend none.
	if !k.budget(ctx, a.CallID, now) {
		k.move(ctx, held, k.until(a, i, now.Add(k.opts.Tick)))
		return
	}
	if k.turns == nil {
		k.deliver(ctx, held, i, false, false)
		return
	}
	k.queue(ctx, held, a, i, false)
}

// budget takes a token of the reminders' own Slack budget.
func (k *Sender) budget(ctx context.Context, callID string, now time.Time) bool {
	ok, err := k.st.Take(ctx, asktype.Bucket{Name: budget, PerMinute: budgetPerMinute, Burst: budgetBurst}, now)
	if err != nil || !ok {
		k.Logger.Debug("reminder postponed: the reminders' Slack budget is spent", "callId", callID, "err", err)
		return false
	}
	return true
}

// queue puts step i of a (held by held) in its channel's queue of posts;
// when its turn comes, it is sent on a goroutine of its own. A full queue
// postpones it by a tick.
func (k *Sender) queue(ctx context.Context, held store.Timer, a *asktype.Ask, i int, escalated bool) {
	r, err := waterfall.Decode(a)
	if err != nil {
		k.Logger.Warn("an ask to remind about does not decode; not reminding", "callId", a.CallID, "err", err)
		k.move(ctx, held, time.Time{})
		return
	}
	run := func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.stopped {
			return // the claim runs out; whoever holds it next sends it
		}
		k.sends.Add(1)
		go func() {
			defer k.sends.Done()
			k.deliver(ctx, held, i, escalated, true)
		}()
	}
	if !k.turns.Turn(r, k.nudge(i, k.Clock.Now().Sub(a.Created)), turnKey(a.CallID), run) {
		k.Logger.Warn("the channel's queue of posts is full; the reminder waits a tick", "callId", a.CallID)
		k.move(ctx, held, k.until(a, i, k.Clock.Now().Add(k.opts.Tick)))
	}
}

// turnKey is an ask's reminder in its channel's queue: one at a time (a
// later step takes the place of an earlier one still waiting).
func turnKey(callID string) string { return "remind:" + callID }

// deliver sends step i of the ask held by held and schedules what follows.
// turned: it waited for its channel's turn, which came now — it looks at
// the ask again, sends the latest reminder due (or none: the escalation
// came first, and the reminder is dropped), and renews its claim, which
// may have run out meanwhile. escalated: the escalation's page is done
// (the mention's step ends once both are).
func (k *Sender) deliver(ctx context.Context, held store.Timer, i int, escalated, turned bool) {
	if ctx.Err() != nil {
		return // shutting down: the claim runs out and another replica sends it
	}
	// Look again right before sending: an answer may have come while the
	// claim and the budget were taken, or the turn awaited.
	a, err := k.st.Get(ctx, held.CallID)
	if err != nil || !waiting(a) || a.Message.Refused != "" {
		if err == nil || errors.Is(err, store.ErrNotFound) {
			k.move(ctx, held, time.Time{})
		}
		return
	}
	now := k.Clock.Now()
	age := now.Sub(a.Created)
	if turned {
		if !k.steps[i].escalate {
			i = max(i, due(k.steps, age)) // the latest due: stale ones are skipped
			if k.steps[i].escalate {
				// The page's time came before the channel's turn: the
				// escalation (any replica's sweep) pages and says the
				// reminder was not posted.
				k.Logger.Info("reminder dropped: its escalation came before the channel's turn", "callId", a.CallID)
				return
			}
		}
		claim := store.Timer{CallID: held.CallID, At: k.until(a, i, now.Add(k.opts.Lease))}
		if !k.move(ctx, held, claim.At) {
			return // the claim ran out and the step was taken again
		}
		held = claim
	}
	done, err := k.doneStep(ctx, a.CallID)
	if err != nil {
		k.Logger.Warn("reading which reminder was last sent failed; trying again after the lease", "callId", a.CallID, "err", err)
		return
	}
	sent := done >= i
	if !sent {
		if sent = k.send(ctx, a, i, age); sent {
			k.markDone(context.WithoutCancel(ctx), a.CallID, i)
		}
	} else {
		// An earlier attempt sent this step (or Slack refused it for good)
		// and then failed to move the timer: only what follows is left.
		k.Logger.Info("reminder already sent; scheduling the next", "callId", a.CallID, "step", i+1)
	}
	if !sent || (k.steps[i].escalate && !escalated) {
		return // the claim runs out and whoever sees it then tries again
	}
	next := time.Time{}
	if i+1 < len(k.steps) {
		next = a.Created.Add(k.steps[i+1].at)
	}
	k.move(context.WithoutCancel(ctx), held, next)
}

// escalation claims the escalation step i of a and does it: the page
// first, at once, whatever became of the reminders before it (those not
// posted are dropped, and the page says how many); then the mention of
// the escalation group, if any, which waits for the message and for its
// channel's turn like a reminder. The step ends when both are done; a
// failed one is tried again after the lease, the other not repeated.
func (k *Sender) escalation(ctx context.Context, t store.Timer, a *asktype.Ask, i int, now time.Time) {
	held := store.Timer{CallID: t.CallID, At: now.Add(k.opts.Lease)}
	if !k.move(ctx, t, held.At) {
		return // another replica has it
	}
	done, err := k.doneStep(ctx, a.CallID)
	if err != nil {
		k.Logger.Warn("reading which reminder was last sent failed; trying again after the lease", "callId", a.CallID, "err", err)
		return
	}
	if k.turns != nil && a.Message.Posted() && (len(k.sched.Escalate) == 0 || done >= i) {
		// A reminder of this ask still waiting in this replica's queue
		// is not sent now (the mention, when there is one, takes its place).
		if r, err := waterfall.Decode(a); err == nil {
			k.turns.Forgo(r, k.nudge(0, now.Sub(a.Created)), turnKey(a.CallID))
		}
	}
	escalated := k.escalate(ctx, a, i, now.Sub(a.Created), done)
	switch {
	case len(k.sched.Escalate) == 0 || done >= i:
		// Nothing (more) to mention in Slack.
		if escalated {
			k.move(context.WithoutCancel(ctx), held, time.Time{})
		}
	case !a.Message.Posted():
		if escalated {
			k.move(ctx, held, now.Add(k.messageWait(a, i, now))) // the mention waits for the message
		}
	case !k.budget(ctx, a.CallID, now):
		if escalated {
			k.move(ctx, held, now.Add(k.opts.Tick))
		}
	case k.turns == nil:
		k.deliver(ctx, held, i, escalated, false)
	default:
		k.queue(ctx, held, a, i, escalated)
	}
}

// doneKey keeps the index of the last step done for an ask: recorded
// after the send and before the timer moves on, so a move that fails
// (the claim runs out and the step is due again) does not send it twice.
func doneKey(callID string) string { return "remind-done:" + callID }

// doneTTL outlives any ask (its record is gone by then).
const doneTTL = store.DefaultRetention + 24*time.Hour

// doneStep is the index of the last step done for callID, -1 for none.
func (k *Sender) doneStep(ctx context.Context, callID string) (int, error) {
	v, err := k.st.Remember(ctx, doneKey(callID), "", doneTTL, k.Clock.Now())
	if err != nil || v == "" {
		return -1, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1, nil // not ours to read: send as if none was done
	}
	return n, nil
}

// markDone records step i of callID as done; failing is only logged (the
// timer's move usually works, and then nothing reads the mark).
func (k *Sender) markDone(ctx context.Context, callID string, i int) {
	if err := k.st.Put(ctx, doneKey(callID), strconv.Itoa(i), doneTTL, k.Clock.Now()); err != nil {
		k.Logger.Warn("recording a sent reminder failed", "callId", callID, "step", i+1, "err", err)
	}
}

// escalatedKey marks an ask whose Escalator acted, so the step's retry
// (its mention failed) does not call it again.
func escalatedKey(callID string) string { return "remind-escalated:" + callID }

// escalate runs the Escalator, if any, for a at its escalation step i
// (done: the last step Slack took), once; false when it failed in a way a
// retry may fix. The reminders after done were not posted: they are
// dropped now, and the Escalator is told (Nudge.Unposted).
func (k *Sender) escalate(ctx context.Context, a *asktype.Ask, i int, age time.Duration, done int) bool {
	now := k.Clock.Now()
	if v, err := k.st.Remember(ctx, escalatedKey(a.CallID), "", doneTTL, now); err == nil && v != "" {
		return true // acted on an earlier try of the step
	}
	unposted := max(i-1-done, 0)
	if k.esc != nil {
		r, err := waterfall.Decode(a)
		if err != nil {
			k.Logger.Warn("an ask to escalate does not decode; not escalating it", "callId", a.CallID, "err", err)
			return true
		}
		n := k.nudge(i, age)
		n.Escalate, n.Unposted = k.sched.Escalate, unposted
		// Within the claim, before the Slack mention.
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.Lease/3)
		defer cancel()
		if err := k.esc.Escalate(ectx, r, n); err != nil {
			k.Logger.Warn("escalating failed; retrying after the lease", "callId", a.CallID, "step", n.Step, "err", err)
			return false
		}
	}
	k.dropped(a.CallID, unposted)
	if err := k.st.Put(ctx, escalatedKey(a.CallID), "1", doneTTL, now); err != nil {
		k.Logger.Warn("recording the escalation failed; it may act again (harmless: it acts once per ask)", "callId", a.CallID, "err", err)
	}
	return true
}

// dropped counts the reminders of callID not posted by its escalation's
// time: they never will be.
func (k *Sender) dropped(callID string, n int) {
	if n == 0 {
		return
	}
	k.Logger.Warn("reminders dropped: the escalation came before they could be posted (the channel's posting budget was spent, or Slack failed)", "callId", callID, "dropped", n)
	for range n {
		k.opts.Metrics.Reminded("reminder", "dropped")
	}
}

// nudge is step i at age.
func (k *Sender) nudge(i int, age time.Duration) waterfall.Nudge {
	return waterfall.Nudge{Step: i + 1, Steps: len(k.steps), Waited: age}
}

// send sends step i of a's reminders; false when it failed in a way a
// retry may fix (a refusal is final: the step is skipped).
func (k *Sender) send(ctx context.Context, a *asktype.Ask, i int, age time.Duration) bool {
	n := k.nudge(i, age)
	if k.steps[i].escalate {
		if len(k.sched.Escalate) == 0 {
			return true // the Escalator's step alone: nobody to mention in Slack
		}
		n.Escalate = k.sched.Escalate
	}
	kind := map[bool]string{false: "reminder", true: "escalation"}[n.Escalate != nil]
	// The send outlives neither its claim (another replica would send it
	// too) nor a shutdown that begins meanwhile (a post Slack made but the
	// bot gave up on is sent again).
	r, err := waterfall.Decode(a)
	if err == nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.Lease/2)
		err = k.to.Remind(sctx, r, n)
		cancel()
	}
	switch {
	case err == nil:
		k.Logger.Info("reminded", "callId", a.CallID, "step", n.Step, "of", n.Steps, "escalation", n.Escalate != nil)
		k.opts.Metrics.Reminded(kind, "sent")
	case k.to.Refusal(err) == "":
		k.Logger.Warn("sending a reminder failed; retrying after the lease", "callId", a.CallID, "step", n.Step, "err", err)
		k.opts.Metrics.Reminded(kind, "failed")
		return false
	default:
		k.Logger.Warn("a reminder cannot be sent; skipping it", "callId", a.CallID, "step", n.Step, "reason", k.to.Refusal(err))
		k.opts.Metrics.Reminded(kind, "skipped")
	}
	return true
}

// move moves t to at (zero removes it); false when another replica moved
// it first or the store failed (it is seen again next round).
func (k *Sender) move(ctx context.Context, t store.Timer, at time.Time) bool {
	ok, err := k.st.Move(ctx, timerName, t.CallID, t.At, at)
	if err != nil {
		k.Logger.Warn("moving a reminder's timer failed", "callId", t.CallID, "err", err)
	}
	return ok && err == nil
}

// waiting reports whether a still waits for an answer: open, or continued
// with no late answer queued.
func waiting(a *asktype.Ask) bool {
	return a.State == asktype.Open || (a.State == asktype.Continued && len(a.Reply) == 0)
}
