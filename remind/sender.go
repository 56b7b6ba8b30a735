package remind

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/askslack/askslack/asktype"
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
	// Tick is how often due reminders are looked for. Default a quarter
	// of the first offset, between 1s and 10s.
	Tick time.Duration
	// Lease is how long a replica sending a reminder holds it; should it
	// die, another sends it after this. Default 1m.
	Lease time.Duration
	// Metrics counts reminders; nil counts nothing.
	Metrics Metrics
}

// Metrics counts reminders by kind ("reminder", "escalation") and result
// ("sent", "failed", "skipped").
type Metrics interface {
	Reminded(kind, result string)
}

type noMetrics struct{}

func (noMetrics) Reminded(string, string) {}

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
	st    Store
	to    Nudger
	sched Schedule
	steps []step
	clock clock.Clock
	log   *slog.Logger
	opts  Options
	esc   Escalator // nil: none

	life startstop.Base
}

// Escalator acts at an ask's escalation step besides the Slack mention
// (pager.Escalation pages the on-call). A Sender given one by EscalateTo
// starts it before its sweep and stops it after, when it has Start and
// Stop.
type Escalator interface {
	// Escalate acts for r at its escalation step n, on the replica that
	// holds the step, after the Slack mention (if any) was sent or
	// refused for good. nil: done, or given up for good. An error leaves
	// the step to be tried again after its lease, without the mention:
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
	opts.Clock = clock.OrReal(opts.Clock)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
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
	return &Sender{st: st, to: to, sched: sched, steps: steps, clock: opts.Clock, log: opts.Logger, opts: opts}
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
		tick := k.clock.NewTicker(k.opts.Tick)
		defer tick.Stop()
		for {
			k.Sweep(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

// Stop ends the sweep, waiting for a reminder being sent until ctx ends,
// then stops the Escalator within what is left of ctx. Safe twice and
// before Start.
func (k *Sender) Stop(ctx context.Context) error {
	var escErr error
	err := k.life.Halt(ctx, func() {
		if l, ok := k.esc.(lifecycle); ok {
			escErr = l.Stop(ctx)
		}
	})
	return errors.Join(err, escErr)
}

// Sweep sends every reminder due now (up to a batch). Exported for tests
// that drive it with a fake clock.
func (k *Sender) Sweep(ctx context.Context) {
	now := k.clock.Now()
	fired, err := k.st.Fired(ctx, timerName, now, batch)
	if err != nil {
		k.log.Warn("reading due reminders failed; trying again next round", "err", err)
		return
	}
	for _, t := range fired {
		if ctx.Err() != nil {
			return
		}
		k.fire(ctx, t, now)
	}
}

// fire handles one due timer: it drops the timer of an ask that no longer
// waits, postpones one whose message is not out yet or whose budget is
// spent, and otherwise claims the reminder, sends it and schedules the next.
func (k *Sender) fire(ctx context.Context, t store.Timer, now time.Time) {
	a, err := k.st.Get(ctx, t.CallID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		k.move(ctx, t, time.Time{})
		return
	case err != nil:
		k.log.Warn("reading an ask to remind about failed", "callId", t.CallID, "err", err)
		return
	case !waiting(a) || a.Message.Refused != "":
		k.move(ctx, t, time.Time{}) // answered, withdrawn, or never shown: no more reminders
		return
	case !a.Message.Posted():
		k.move(ctx, t, now.Add(notPosted))
		return
	}
	// The claim's lease runs from now, not from when the sweep began:
	// the sends before this one may have taken most of a lease.
	now = k.clock.Now()
	age := now.Sub(a.Created)
	i := due(k.steps, age)
	if i < 0 {
		k.move(ctx, t, a.Created.Add(k.steps[0].at)) // armed early (clock skew): put it back
		return
	}
	claimed := now.Add(k.opts.Lease)
	if !k.move(ctx, t, claimed) {
		return // another replica has it
	}
	// The budget after the claim: replicas that lose the claim spend none.
	if ok, err := k.st.Take(ctx, asktype.Bucket{Name: budget, PerMinute: budgetPerMinute, Burst: budgetBurst}, now); err != nil || !ok {
		k.log.Debug("reminder postponed: the Slack budget is spent", "callId", a.CallID, "err", err)
		k.move(ctx, store.Timer{CallID: t.CallID, At: claimed}, now.Add(k.opts.Tick))
		return
	}
	// Look again right before sending: an answer may have come while the
	// claim and the budget were taken.
	held := store.Timer{CallID: t.CallID, At: claimed}
	if a, err = k.st.Get(ctx, t.CallID); err != nil || !waiting(a) || a.Message.Refused != "" {
		if err == nil || errors.Is(err, store.ErrNotFound) {
			k.move(ctx, held, time.Time{})
		}
		return
	}
	done, err := k.doneStep(ctx, a.CallID)
	if err != nil {
		k.log.Warn("reading which reminder was last sent failed; trying again after the lease", "callId", a.CallID, "err", err)
		return
	}
	sent := done >= i
	if !sent {
		if sent = k.send(ctx, a, i, age); sent {
			k.markDone(context.WithoutCancel(ctx), a.CallID, i)
		}
	} else {
		// An earlier attempt sent this step (or Slack refused it for good)
		// and then failed to move the timer (or its Escalator failed):
		// only what follows is left to do.
		k.log.Info("reminder already sent; scheduling the next", "callId", a.CallID, "step", i+1)
	}
	// The Escalator acts whether or not Slack took the mention (a page
	// matters most when Slack is down), and each is done once: a step
	// that comes again after the lease sends only what failed.
	escalated := !k.steps[i].escalate || k.escalate(ctx, a, i, age)
	if !sent || !escalated {
		return // the claim runs out and whoever sees it then tries again
	}
	next := time.Time{}
	if i+1 < len(k.steps) {
		next = a.Created.Add(k.steps[i+1].at)
	}
	k.move(context.WithoutCancel(ctx), held, next)
}

// doneKey keeps the index of the last step done for an ask: recorded
// after the send and before the timer moves on, so a move that fails
// (the claim runs out and the step is due again) does not send it twice.
func doneKey(callID string) string { return "remind-done:" + callID }

// doneTTL outlives any ask (its record is gone by then).
const doneTTL = store.DefaultRetention + 24*time.Hour

// doneStep is the index of the last step done for callID, -1 for none.
func (k *Sender) doneStep(ctx context.Context, callID string) (int, error) {
	v, err := k.st.Remember(ctx, doneKey(callID), "", doneTTL, k.clock.Now())
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
	if err := k.st.Put(ctx, doneKey(callID), strconv.Itoa(i), doneTTL, k.clock.Now()); err != nil {
		k.log.Warn("recording a sent reminder failed", "callId", callID, "step", i+1, "err", err)
	}
}

// escalate runs the Escalator for a at its escalation step i; false when
// it failed in a way a retry may fix.
func (k *Sender) escalate(ctx context.Context, a *asktype.Ask, i int, age time.Duration) bool {
	if k.esc == nil {
		return true
	}
	r, err := waterfall.Decode(a)
	if err != nil {
		k.log.Warn("an ask to escalate does not decode; not escalating it", "callId", a.CallID, "err", err)
		return true
	}
	n := waterfall.Nudge{Step: i + 1, Steps: len(k.steps), Waited: age, Escalate: k.sched.Escalate}
	// Within the claim, after the Slack send's half of it.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.Lease/3)
	defer cancel()
	if err := k.esc.Escalate(ectx, r, n); err != nil {
		k.log.Warn("escalating failed; retrying after the lease", "callId", a.CallID, "step", n.Step, "err", err)
		return false
	}
	return true
}

// send sends step i of a's reminders; false when it failed in a way a
// retry may fix (a refusal is final: the step is skipped).
func (k *Sender) send(ctx context.Context, a *asktype.Ask, i int, age time.Duration) bool {
	n := waterfall.Nudge{Step: i + 1, Steps: len(k.steps), Waited: age}
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
		k.log.Info("reminded", "callId", a.CallID, "step", n.Step, "of", n.Steps, "escalation", n.Escalate != nil)
		k.opts.Metrics.Reminded(kind, "sent")
	case k.to.Refusal(err) == "":
		k.log.Warn("sending a reminder failed; retrying after the lease", "callId", a.CallID, "step", n.Step, "err", err)
		k.opts.Metrics.Reminded(kind, "failed")
		return false
	default:
		k.log.Warn("a reminder cannot be sent; skipping it", "callId", a.CallID, "step", n.Step, "reason", k.to.Refusal(err))
		k.opts.Metrics.Reminded(kind, "skipped")
	}
	return true
}

// move moves t to at (zero removes it); false when another replica moved
// it first or the store failed (it is seen again next round).
func (k *Sender) move(ctx context.Context, t store.Timer, at time.Time) bool {
	ok, err := k.st.Move(ctx, timerName, t.CallID, t.At, at)
	if err != nil {
		k.log.Warn("moving a reminder's timer failed", "callId", t.CallID, "err", err)
	}
	return ok && err == nil
}

// waiting reports whether a still waits for an answer: open, or continued
// with no late answer queued.
func waiting(a *asktype.Ask) bool {
	return a.State == asktype.Open || (a.State == asktype.Continued && len(a.Reply) == 0)
}
