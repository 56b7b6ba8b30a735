package pager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/archetype"
	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/workpool"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Store is what an Escalation needs from persistence: the ask, and small
// markers every replica shares.
type Store interface {
	store.Reader
	store.Notes
}

// EscalationOptions configure an Escalation.
type EscalationOptions struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// Links are the links shown with an ask's incident (its Slack
	// message, its answer page); nil shows none.
	Links func(ctx context.Context, r *waterfall.Record) []Link
	// Severity, when valid, is every incident's; otherwise it follows the
	// ask's kind (SeverityOf).
	Severity Severity
	// Tries bounds the escalation steps that try to open one ask's
	// incident (each retried within by the Pager); default 5.
	Tries int
	// Workers bounds the resolves in flight at once; default 4.
	Workers int
	// Retries bounds the rounds of one resolve (reading the ask, taking
	// the marker, the Pager's call with its own retries), Retry the
	// first wait's ceiling (doubling after, internal/backoff); defaults 3
	// and 2s.
	Retries int
	Retry   time.Duration
}

// markTTL is how long the marker of a paged ask is kept: longer than any
// ask waits for an answer in practice (an open ask never expires, but one
// open for a month has nobody left to page).
const markTTL = 30 * 24 * time.Hour

// pagedKey marks an ask whose incident is open; its value names the
// provider. Taking it (Notes.Forget) is the right to resolve the incident.
func pagedKey(callID string) string { return "page:" + callID }

// triesKey counts the escalation steps that tried to open callID's incident.
func triesKey(callID string) string { return "page-tries:" + callID }

// Escalation pages the on-call at an ask's escalation step and resolves
// the page when the ask ends. It is remind's Escalator (the reminder
// sweep calls Escalate on the one replica that holds the step) and the
// Host's Observer (Changed, on the replica that makes each transition).
//
// Once only, across replicas: an incident is opened by the replica that
// holds the escalation step (remind's timer), and a marker (pagedKey) is
// stored after it opened. Resolving takes the marker away atomically
// (store.Notes.Forget): of the replicas that see the ask end, only the one
// that gets its value resolves, and an ask that was never paged has no
// marker, so nothing is resolved for it. An answer that lands between the
// step's last look at the ask and the marker is caught by a look after the
// marker is stored: whichever of that look and the observer takes the
// marker resolves.
type Escalation struct {
	archetype.Archetype
	st   Store
	p    Pager
	opts EscalationOptions

	mu      sync.Mutex
	pending map[string]job // by callId, waiting for a worker
	pool    *workpool.Pool // nil before Start and after Stop
	stopped bool
}

// job is a resolve to do: check means the ask must be read first (the
// escalation step's look after the marker), note is why it ended.
type job struct {
	check bool
	note  string
}

// NewEscalation returns an Escalation paging through p and keeping its
// markers in st.
func NewEscalation(st Store, p Pager, opts EscalationOptions) *Escalation {
	if opts.Tries <= 0 {
		opts.Tries = 5
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Retries <= 0 {
		opts.Retries = 3
	}
	if opts.Retry <= 0 {
		opts.Retry = 2 * time.Second
	}
	a := archetype.Of(opts.Logger, opts.Clock)
	a.Logger = a.Logger.With("provider", p.Provider())
	return &Escalation{Archetype: a, st: st, p: p, opts: opts,
		pending: map[string]job{}}
}

// Escalate implements remind.Escalator: it opens r's incident unless it
// is open already. An error leaves the step to be tried again after its
// lease (opening twice is harmless: the same dedup key); after Tries
// steps, or a refusal, it gives up (logged) and returns nil. A continued
// ask is not paged: the agent stopped waiting for it.
func (e *Escalation) Escalate(ctx context.Context, r *waterfall.Record, n waterfall.Nudge) error {
	if r.State != asktype.Open || r.Request == nil {
		return nil
	}
	log := e.Logger.With("callId", r.CallID, "dedupKey", DedupKey(r.CallID))
	paged, err := e.st.Remember(ctx, pagedKey(r.CallID), "", markTTL, e.Clock.Now())
	if err != nil {
		return fmt.Errorf("reading whether the ask was paged: %w", err)
	}
	if paged == "" {
		tries, err := e.tried(ctx, r.CallID)
		if err != nil {
			return err
		}
		if tries > e.opts.Tries {
			log.Error("paging the on-call failed too often; giving up", "tries", tries-1)
			return nil
		}
		if err := e.p.Open(ctx, e.incident(ctx, r, n)); err != nil {
			if errors.Is(err, ErrRejected) {
				return nil // logged by the pager; retrying cannot help
			}
			return err
		}
		if err := e.st.Put(ctx, pagedKey(r.CallID), e.p.Provider(), markTTL, e.Clock.Now()); err != nil {
			return fmt.Errorf("recording the page: %w", err)
		}
		log.Info("paged the on-call", "waited", n.Waited.Round(time.Second).String())
	}
	// Was it answered meanwhile, after the step's last look? Its
	// observer found no marker then: look again now that there is one.
	e.enqueue(r.CallID, job{check: true})
	return nil
}

// tried counts one more try to open callID's incident and returns the count.
func (e *Escalation) tried(ctx context.Context, callID string) (int, error) {
	now := e.Clock.Now()
	v, err := e.st.Remember(ctx, triesKey(callID), "", markTTL, now)
	if err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(v)
	n++
	if err := e.st.Put(ctx, triesKey(callID), strconv.Itoa(n), markTTL, now); err != nil {
		return 0, err
	}
	return n, nil
}

// Changed implements engine.Observer: an ask that no longer waits in its
// window (answered, withdrawn, continued) has its page resolved, if it
// was paged. It never blocks: the resolve runs on a worker.
func (e *Escalation) Changed(r *waterfall.Record) {
	if r.State == asktype.Open {
		return
	}
	e.enqueue(r.CallID, job{note: Note(r)})
}

// enqueue queues a resolve of callID for the workers (merged with one
// queued already). Before Start and after Stop it is dropped.
func (e *Escalation) enqueue(callID string, j job) {
	e.mu.Lock()
	pool := e.pool
	if pool == nil {
		e.mu.Unlock()
		e.Logger.Debug("not resolving: the pager is not running", "callId", callID)
		return
	}
	if old, ok := e.pending[callID]; ok {
		j.check = j.check && old.check // an ask seen ended needs no look
		if j.note == "" {
			j.note = old.note
		}
	}
	e.pending[callID] = j
	e.mu.Unlock()
	// One job per ask at a time (the pool coalesces by key); it takes
	// what is pending for the ask when it runs.
	pool.Submit(callID, func(ctx context.Context) {
		e.mu.Lock()
		j, ok := e.pending[callID]
		delete(e.pending, callID)
		e.mu.Unlock()
		if ok {
			e.resolve(ctx, callID, j)
		}
	})
}

// Start runs the resolve workers until Stop.
func (e *Escalation) Start(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pool == nil && !e.stopped {
		e.pool = workpool.New(e.opts.Workers, func(r any, stack []byte) {
			e.Logger.Error("recovered from a panic", "where", "pager", "panic", fmt.Sprint(r), "stack", string(stack))
		})
	}
	return nil
}

// Stop takes no more resolves, gives those queued or in flight until ctx
// ends, then cancels them. Safe twice and before Start.
func (e *Escalation) Stop(ctx context.Context) error {
	e.mu.Lock()
	pool := e.pool
	e.pool, e.stopped = nil, true
	e.mu.Unlock()
	if pool == nil {
		return nil
	}
	pool.Stop(ctx)
	e.mu.Lock()
	left := len(e.pending)
	e.mu.Unlock()
	if left > 0 {
		e.Logger.Error("stopping with pages not resolved; resolve them by hand", "left", left)
	}
	return ctx.Err()
}

// resolve resolves callID's incident if it was paged and this replica
// takes the marker, retrying a failed round (a store error, the Pager's
// retries running out) up to Retries rounds.
func (e *Escalation) resolve(ctx context.Context, callID string, j job) {
	key := DedupKey(callID)
	log := e.Logger.With("callId", callID, "dedupKey", key)
	owned, note, rounds := false, j.note, 0
	err := backoff.Policy{Attempts: e.opts.Retries, Base: e.opts.Retry, Max: 30 * time.Second, After: e.Clock.After}.Retry(ctx, func(ctx context.Context) (time.Duration, error) {
		rounds++
		var err error
		if !owned {
			if owned, note, err = e.take(ctx, callID, j); err == nil && !owned {
				return 0, nil // never paged, still waiting, or another replica resolves it
			}
		}
		if owned {
			if err = e.p.Resolve(ctx, key, note); errors.Is(err, ErrRejected) {
				return 0, backoff.Final(err)
			}
		}
		if err != nil && rounds < e.opts.Retries {
			log.Warn("resolving the page failed; trying again", "round", rounds, "err", err)
		}
		return 0, err
	})
	switch {
	case err == nil && owned:
		log.Info("resolved the page", "why", note)
	case err == nil:
	case errors.Is(err, ErrRejected):
		log.Error("the pager refused to resolve the page; resolve it by hand", "err", err)
	case owned:
		log.Error("resolving the page failed; resolve it by hand", "rounds", rounds, "err", err)
	default:
		log.Error("could not tell whether the ask was paged; if it was, resolve its page by hand", "rounds", rounds, "err", err)
	}
}

// take reads the ask when j says to (nothing to do while it is open) and
// takes its marker: owned is whether this replica resolves the page.
func (e *Escalation) take(ctx context.Context, callID string, j job) (owned bool, note string, err error) {
	note = j.note
	if j.check {
		a, err := e.st.Get(ctx, callID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			note = "the question is gone"
		case err != nil:
			return false, "", err
		case a.State == asktype.Open:
			return false, "", nil
		default:
			if r, err := waterfall.Decode(a); err == nil {
				note = Note(r)
			} else {
				note = string(a.State)
			}
		}
	}
	provider, err := e.st.Forget(ctx, pagedKey(callID), e.Clock.Now())
	if err != nil {
		return false, "", err
	}
	if provider != "" && provider != e.p.Provider() {
		e.Logger.Warn("the page was opened with another provider; resolving it with this one", "callId", callID, "openedWith", provider)
	}
	return provider != "", note, nil
}

// Note says why an ask no longer needs its page, for the provider's log.
func Note(r *waterfall.Record) string {
	switch r.State {
	case asktype.Settled:
		return "answered"
	case asktype.Continued:
		if r.Reply != nil {
			return "answered late; the answer is on its way to the agent"
		}
		return "the agent stopped waiting (its window closed); a late answer still reaches it"
	case asktype.Aborted:
		switch r.AbortReason {
		case asktype.Abandoned:
			return "withdrawn: the agent went away"
		case asktype.Elsewhere:
			return "withdrawn: answered in the agent's terminal"
		case asktype.NoMessage:
			return "withdrawn: Slack refused the question"
		}
		return "withdrawn by the agent"
	}
	return string(r.State)
}

// incident is the page for r at its escalation step n.
func (e *Escalation) incident(ctx context.Context, r *waterfall.Record, n waterfall.Nudge) Incident {
	req := r.Request
	kind := req.Kind()
	sev := e.opts.Severity
	if !sev.Valid() {
		sev = SeverityOf(kind)
	}
	var qs []string
	for _, q := range req.Questions {
		text := strings.TrimSpace(q.Question)
		if q.Header != "" {
			text = strings.TrimSpace(q.Header) + ": " + text
		}
		qs = append(qs, text)
	}
	summary := "(no question)"
	if len(qs) > 0 {
		summary = qs[0]
	}
	if len(qs) > 1 {
		summary += fmt.Sprintf(" (and %d more)", len(qs)-1)
	}
	waited := n.Waited.Round(time.Second).String()
	details := map[string]string{"callId": r.CallID, "kind": kind, "waited": waited,
		"agent": req.Agent.ID, "session": req.Agent.SessionID, "principal": req.Agent.Principal, "caller": r.Ask.Caller}
	for k, v := range details {
		if v == "" {
			delete(details, k)
		}
	}
	who := req.Agent.ID
	if who == "" {
		who = "an agent"
	}
	desc := fmt.Sprintf("%s has waited %s for an answer in Slack (a %s).\n\n%s", who, waited, kind, strings.Join(qs, "\n\n"))
	if reminders := n.Steps - 1; n.Unposted > 0 && reminders > 0 {
		// The page did not wait for them: say so, the on-call should not
		// assume Slack reminded anyone.
		note := fmt.Sprintf("%d of %d not posted in Slack by the page's time (the channel's posting budget was spent, or Slack failed); dropped", n.Unposted, reminders)
		details["reminders"] = note
		desc += "\n\nReminders: " + note + "."
	}
	var links []Link
	if e.opts.Links != nil {
		links = e.opts.Links(ctx, r)
	}
	return Incident{DedupKey: DedupKey(r.CallID), Summary: summary, Description: desc, Severity: sev, Source: "askslack",
		Component: req.Agent.ID, Group: req.Agent.SessionID, Class: kind, Links: links, Details: details}
}
