package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Store is what the Host needs from persistence (redisstore.Store, store.Memory).
type Store interface {
	store.Reader
	store.Transitions
	store.Sessions
	store.Feed
	// Active lists the active asks across sessions (store.Reach).
	Active(ctx context.Context, limit int) ([]*asktype.Ask, error)
	// Votes: the settlement seam's conditional write (settle.go).
	store.Votes
}

// Observer learns about every transition the Host makes, on whichever
// replica makes it, and about every re-attach to an active ask; the Slack
// side posts or re-renders the ask's message from it. Changed must not
// block: it is called inline after the transition.
type Observer interface {
	Changed(r *waterfall.Record)
}

// Poster is an Observer that posts new asks' messages (the mirror). When
// one is registered, Create takes the post lease for it in the same round
// trip that stores the ask (asktype.Ask.Poster), saving the poster its own.
type Poster interface {
	Observer
	PostLease(now time.Time) asktype.PostLease
}

// HostOptions configure NewHost.
type HostOptions struct {
	// Clock is the time of deadlines and polls; nil means real time.
	Clock  clock.Clock
	Logger *slog.Logger
	// Poll bounds Check from above (default 2m). The waiters' safety net
	// (safety.go) reads each waiting ask's version in turn and wakes a
	// waiter whose ask moved on without a wake-up: a safety net only,
	// since every change publishes a hint and a replica whose change feed
	// reconnects wakes all its waiters.
	Poll time.Duration
	// Check is the sweep's tick: each tick reads the next batch of
	// waiting asks in one round trip. With few waiters each is checked
	// every tick, so a wake-up lost between this replica and another (a
	// bug, but the one that hung agents in issue 20) costs a waiter
	// seconds. Default 5s; never above Poll.
	Check time.Duration
	// SweepRate bounds the asks the sweep reads from the store a second (a
	// batch is at most SweepRate·Check): 10,000 idle asks cost a replica
	// about SweepRate reads a second, and each is read every n/SweepRate
	// seconds (a wake-up lost in this process is caught in two ticks
	// without a read; safety.go). Default 5.
	SweepRate float64
	// Metrics counts transitions; nil counts nothing.
	Metrics Metrics
	// Audit is the store's audit trail, read by Audit and Stats and
	// appended to by Refused; nil turns those off (every transition is
	// audited by the store itself).
	Audit store.Audit
	// Policy decides what each answer does (settle.go); nil is
	// FirstAnswer, the first valid answer wins.
	Policy waterfall.Policy
	// Quorum is ASKSLACK_QUORUM: each new ask's Request.Quorum is fixed
	// from it (quorum.go).
	Quorum waterfall.QuorumConfig
}

// Metrics counts the transitions a Host makes: "settled", "expired", "voted" (a vote recorded, the ask waits),
// "aborted", "queued" (a late answer became a steered message), "admitted"
// (the agent acknowledged it); and how long each answered ask waited for
// its answer, once per ask, by kind (question, plan, permission), on the
// replica that settles it (or queues its late answer).
type Metrics interface {
	Transition(kind string)
	Answered(kind string, took time.Duration)
}

type noMetrics struct{}

func (noMetrics) Transition(string) {}

func (noMetrics) Answered(string, time.Duration) {}

// Host runs asks: it stores them, runs the answerer chain, waits (on any
// replica) for the answer, the deadline or an abort, and takes late answers.
type Host struct {
	store     Store
	chain     waterfall.Answerer
	clock     clock.Clock
	log       *slog.Logger
	poll      time.Duration
	check     time.Duration
	observers []Observer
	poster    Poster // the first observer that posts messages, or nil
	metrics   Metrics
	audit     store.Audit
	refusals  refusalLimit           // audit.go
	policy    waterfall.Policy       // settle.go
	quorum    waterfall.QuorumConfig // quorum.go
	// running holds the callIds whose chain Start runs in the background.
	running   sync.Map
	sweep     sweeper // safety.go
	sweepRate float64
	rules     *RuleOptions   // rules.go; nil: no standing rules
	memory    *MemoryOptions // recall.go; nil: no answer memory
}

// NewHost returns a Host that asks through chain and keeps state in st.
func NewHost(st Store, chain waterfall.Answerer, opts HostOptions) *Host {
	opts.Clock = clock.OrReal(opts.Clock)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Minute
	}
	if opts.Check <= 0 {
		opts.Check = 5 * time.Second
	}
	opts.Check = min(opts.Check, opts.Poll)
	if opts.SweepRate <= 0 {
		opts.SweepRate = 5
	}
	if chain == nil {
		chain = waterfall.Chain()
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	if opts.Policy == nil {
		opts.Policy = waterfall.FirstAnswer{}
	}
	return &Host{store: st, chain: chain, clock: opts.Clock, log: opts.Logger, poll: opts.Poll, check: opts.Check, sweepRate: opts.SweepRate,
		metrics: opts.Metrics, audit: opts.Audit, policy: opts.Policy, quorum: opts.Quorum}
}

// Observe registers o for every transition this Host makes; the first that
// is a Poster gets each new ask's post lease at creation. Not safe to call
// concurrently with asks; register observers while wiring.
func (h *Host) Observe(o Observer) {
	h.observers = append(h.observers, o)
	if p, ok := o.(Poster); ok && h.poster == nil {
		h.poster = p
	}
}

// Now is the Host's clock.
func (h *Host) Now() time.Time { return h.clock.Now() }

func (h *Host) changed(a *asktype.Ask) {
	if len(h.observers) == 0 {
		return
	}
	r, err := waterfall.Decode(a)
	if err != nil {
		// Nothing can show an ask whose stored JSON does not decode; the
		// readers that try say so with the ask's id.
		h.log.Error("cannot decode a changed ask", "callId", a.CallID, "err", err)
		return
	}
	h.notify(r)
}

// notify tells the observers that r changed. A record without its
// request (outcomeOn's stand-in for one that did not decode) is not shown.
func (h *Host) notify(r *waterfall.Record) {
	if r.Request == nil {
		h.log.Error("cannot decode a changed ask", "callId", r.CallID)
		return
	}
	for _, o := range h.observers {
		o.Changed(r)
	}
}

// Active returns up to limit active (open or continued) asks across every
// session, newest first (the store's Reach), as records; an ask whose JSON
// does not decode is left out.
func (h *Host) Active(ctx context.Context, limit int) ([]*waterfall.Record, error) {
	asks, err := h.store.Active(ctx, limit)
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([]*waterfall.Record, 0, len(asks))
	for _, a := range asks {
		if r, err := waterfall.Decode(a); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// Ask stores the request (once per callId), runs the chain and waits for the
// outcome. A repeated callId re-attaches to the stored ask instead of asking
// again; a repeat whose content differs is CALL_CONFLICT (see sameRequest:
// the wait is not content). The ask ends with
// the answer, ASK_ABORTED, a pending Result when a timed window closes, or
// ctx's error when the caller goes away (the ask then stays as it is).
func (h *Host) Ask(ctx context.Context, req *waterfall.Request) (waterfall.Result, error) {
	// Watch before creating: no change between the create and the wait
	// goes unnoticed, and the store remembers the created record for the
	// waiter (see store.Store.Current).
	changes, stop := h.store.Changes(req.CallID)
	defer stop()
	cur, req, err := h.create(ctx, req)
	if err != nil {
		return waterfall.Result{}, err
	}
	return h.await(ctx, cur, req, changes)
}

// Resume waits again for an ask this process stored moments ago and was
// waiting for (a blocking ask parked: its handler handed the connection to
// a waiter of its own). It is Ask's re-attach without storing the request
// again: the record is the one this process holds (store.Current), its
// indexes and its message were seen to by the Ask that stored it, and the
// request run is the stored one. An ask not stored (the handler's Ask was
// cut short before its create was sent) is asked, as Ask does.
func (h *Host) Resume(ctx context.Context, req *waterfall.Request) (waterfall.Result, error) {
	changes, stop := h.store.Changes(req.CallID)
	cur, err := h.store.Current(ctx, req.CallID)
	if errors.Is(err, store.ErrNotFound) {
		stop()
		return h.Ask(ctx, req)
	}
	defer stop()
	switch {
	case err != nil:
		return waterfall.Result{}, unavailable(err)
	case cur.Caller != req.Caller:
		return waterfall.Result{}, waterfall.Errorf(waterfall.CodeCallConflict, "callId %q was already used for a different ask", req.CallID)
	}
	stored, err := waterfall.DecodeRequest(cur)
	if err != nil {
		return waterfall.Result{}, err
	}
	return h.await(ctx, cur, stored, changes)
}

// Open stores the request like Ask and runs the answerer chain in the
// background, with nobody waiting: the chain runs until the ask ends or ctx
// ends, so ctx must be one that outlives the request (a server's lifetime
// context), never the request's own. A repeated callId re-attaches; the
// chain is kicked again unless this Host already runs it for that call. It
// returns the ask as stored; the outcome is read with Get or WaitChange.
func (h *Host) Open(ctx context.Context, req *waterfall.Request) (*waterfall.Record, error) {
	cur, req, err := h.create(ctx, req)
	if err != nil {
		return nil, err
	}
	rec, err := waterfall.Decode(cur)
	if err != nil {
		return nil, err
	}
	if cur.State == asktype.Open {
		if _, running := h.running.LoadOrStore(cur.CallID, true); !running {
			// Only the chain runs: nobody waits for the outcome here (GET
			// reads it from the store) and the claims keeper closes a timed
			// window, so an answerer that claims (ErrClaimed) leaves no
			// goroutine behind while the question is open.
			go func() {
				defer h.running.Delete(cur.CallID)
				s, err := h.chain.Answer(ctx, req, noProvider)
				if err := h.chainFinished(ctx, cur, req, chainResult{s, err}); err != nil && ctx.Err() == nil {
					h.log.Debug("background ask ended", "callId", cur.CallID, "err", err)
				}
			}()
		}
	}
	return rec, nil
}

// create validates req and stores it once per callId; a repeat must ask the
// same thing (else CALL_CONFLICT) and returns the stored ask. The request
// returned is the one to run: req when it was stored now, else the stored
// one, so a re-attach keeps the first ask's wait everywhere.
func (h *Host) create(ctx context.Context, req *waterfall.Request) (*asktype.Ask, *waterfall.Request, error) {
	if err := waterfall.Validate(req); err != nil {
		return nil, nil, err
	}
	req = h.withRecall(ctx, withQuorum(req, h.quorum))
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	now := h.clock.Now()
	rec := &asktype.Ask{CallID: req.CallID, SessionID: waterfall.SessionKey(req.Caller, req.Agent.SessionID), Caller: req.Caller, Request: raw, Created: now,
		Kind: req.Kind(), AgentID: req.Agent.ID, AgentSession: req.Agent.SessionID}
	if t := req.Timeout(); t > 0 {
		rec.Deadline = now.Add(t)
	}
	rule, byRule := h.coveringRule(ctx, req, now)
	if h.poster != nil && !byRule {
		// An ask a rule answers is never posted: no post lease.
		rec.Poster = h.poster.PostLease(now)
	}
	cur, created, err := h.store.Create(ctx, rec)
	if errors.Is(err, store.ErrSessionFull) {
		return nil, nil, waterfall.Errorf(waterfall.CodeSessionFull, "session %q already has %d unanswered questions; answer or withdraw some before asking more", req.Agent.SessionID, store.MaxSessionAsks)
	}
	if err != nil {
		return nil, nil, unavailable(err)
	}
	if !created {
		if cur.Caller != req.Caller {
			// Another caller's call id: the same answer as a different
			// ask of one's own, so nothing about the other ask shows.
			h.Refused(ctx, waterfall.Refusal{Key: "api:" + req.Caller, CallID: req.CallID, Caller: req.Caller,
				Agent: &asktype.AuditAgent{ID: req.Agent.ID, SessionID: req.Agent.SessionID}, Why: "asked with the callId of another caller's ask"})
			return nil, nil, waterfall.Errorf(waterfall.CodeCallConflict, "callId %q was already used for a different ask", req.CallID)
		}
		if req, err = sameRequest(cur, req); err != nil {
			return nil, nil, err
		}
	}
	if created {
		h.noteAsk(ctx, req, now)
	}
	if created && byRule {
		if settled, ok := h.answerByRule(ctx, cur, req, rule); ok {
			return settled, req, nil
		}
	}
	if created || cur.State.Active() {
		// A re-attach too: its message may never have been posted (the
		// replica that created it died), and this is the moment to check.
		h.changed(cur)
	}
	return cur, req, nil
}

// sameRequest checks that a repeated callId asks the same thing, and returns
// the stored request. How long a timed ask waits, and what its caller does
// when the wait ends (OnTimeout), are not part of what it asks: a caller
// re-run with another wait (an agent hook resumed after its --wait
// changed) re-attaches, and the stored deadline stands — it was fixed when
// the ask was created. Whether it is timed is: an untimed caller cannot be
// handed {pending:true}.
func sameRequest(cur *asktype.Ask, req *waterfall.Request) (*waterfall.Request, error) {
	prev, err := waterfall.DecodeRequest(cur)
	if err != nil {
		return nil, err
	}
	if !sameQuestions(prev.Questions, req.Questions) || prev.Agent != req.Agent ||
		(prev.Timeout() > 0) != (req.Timeout() > 0) || prev.Channel != req.Channel || prev.Delivery != req.Delivery ||
		prev.Approvals != req.Approvals || !slices.Equal(prev.Approvers, req.Approvers) ||
		!waterfall.SamePermission(prev.Permission, req.Permission) {
		return nil, waterfall.Errorf(waterfall.CodeCallConflict, "callId %q was already used for a different ask", req.CallID)
	}
	return prev, nil
}

// sameQuestions compares questions as stored: the stored copy went through
// JSON, which keeps no difference between an empty list and none ("options":
// [] of a free-text question), so neither does the comparison.
func sameQuestions(a, b []waterfall.Question) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// noProvider is the tail of every chain: nobody claimed the request.
func noProvider(context.Context) (waterfall.Settlement, error) {
	return waterfall.Settlement{}, waterfall.Errorf(waterfall.CodeNoProvider, waterfall.NoProviderMessage)
}

type chainResult struct {
	s   waterfall.Settlement
	err error
}

func (h *Host) await(ctx context.Context, a *asktype.Ask, req *waterfall.Request, changes <-chan struct{}) (waterfall.Result, error) {
	if res, done, err := h.outcome(a); done {
		return res, err
	}
	chainCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	chainDone := make(chan chainResult, 1)
	go func() {
		s, err := h.chain.Answer(chainCtx, req, noProvider)
		chainDone <- chainResult{s, err}
	}()
	var deadline <-chan time.Time
	if !a.Deadline.IsZero() {
		t := h.clock.NewTimer(a.Deadline.Sub(h.clock.Now()))
		defer t.Stop()
		deadline = t.C
	}
	w, unpark := h.park(a.CallID, a.Version)
	defer unpark()
	fresh := false
	for {
		select {
		case <-ctx.Done():
			return waterfall.Result{}, ctx.Err()
		case r := <-chainDone:
			chainDone = nil
			if err := h.chainFinished(ctx, a, req, r); err != nil {
				return waterfall.Result{}, err
			}
		case <-deadline:
			deadline = nil
			if _, err := h.Expire(ctx, a.CallID); err != nil && !errors.Is(err, store.ErrNotDue) && !isStateErr(err) {
				h.log.Warn("expiring a timed ask failed", "callId", a.CallID, "err", err)
			}
		case <-changes:
		case <-w.wake:
			fresh = w.woken()
		}
		cur, err := h.read(ctx, a.CallID, fresh)
		fresh = false
		if err == nil {
			w.seen(cur.Version)
		}
		if err != nil {
			if waterfall.CodeOf(err) == waterfall.CodeNotFound {
				return waterfall.Result{}, waterfall.Errorf(waterfall.CodeAskAborted, "the question was withdrawn")
			}
			if ctx.Err() != nil {
				return waterfall.Result{}, ctx.Err()
			}
			h.log.Warn("reading ask failed; retrying", "callId", a.CallID, "err", err)
			continue
		}
		if res, done, err := h.outcome(cur); done {
			return res, err
		}
	}
}

// chainFinished handles the chain's return: an answer settles the ask. A
// failure means no answerer could take it: an untimed ask ends with that
// error (NO_PROVIDER), a timed one waits out its window and returns pending
// like any other (seed 000: also when no client claimed the request), so a
// late answer from another surface still reaches the agent.
func (h *Host) chainFinished(ctx context.Context, a *asktype.Ask, req *waterfall.Request, r chainResult) error {
	if errors.Is(r.err, waterfall.ErrClaimed) {
		return nil // the answer comes later, through Answer; keep waiting
	}
	if r.err == nil {
		// An answerer's answer that comes too late is dropped, as ever:
		// the window closed, and the agent moved on without it.
		rec, err := waterfall.Decode(a)
		if err == nil {
			_, err = h.decideAndApply(ctx, rec, r.s, false)
		}
		if err != nil && !errors.Is(err, waterfall.ErrAlreadySettled) && !errors.Is(err, store.ErrContinued) {
			return err
		}
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	h.log.Info("no answerer took the ask", "callId", a.CallID, "timed", !a.Deadline.IsZero(), "err", r.err)
	if !a.Deadline.IsZero() {
		return nil
	}
	if _, err := h.Withdraw(context.WithoutCancel(ctx), a.CallID, asktype.NoMessage); err != nil {
		h.log.Warn("ending an ask nobody could take failed", "callId", a.CallID, "err", err)
	}
	if waterfall.CodeOf(r.err) != "" {
		return r.err
	}
	return &waterfall.Error{Code: waterfall.CodeNoProvider, Message: waterfall.NoProviderMessage, Err: r.err}
}

// outcome maps a stored ask to the result of a waiting Ask, if it has one.
func (h *Host) outcome(a *asktype.Ask) (waterfall.Result, bool, error) {
	switch a.State {
	case asktype.Settled:
		r, err := waterfall.Decode(a)
		if err != nil {
			return waterfall.Result{}, true, err
		}
		return waterfall.Result{Settlement: r.Settlement, CallID: a.CallID}, true, nil
	case asktype.Continued:
		return waterfall.Result{CallID: a.CallID}, true, nil
	case asktype.Aborted:
		return waterfall.Result{}, true, abortedError(a)
	}
	if !a.Deadline.IsZero() && !h.clock.Now().Before(a.Deadline) {
		// A re-attach after the deadline: expire now rather than wait for a sweeper.
		if cur, err := h.Expire(context.Background(), a.CallID); (err == nil || errors.Is(err, store.ErrContinued)) && cur != nil {
			return h.outcome(cur.Ask)
		}
	}
	return waterfall.Result{}, false, nil
}

// abortedError is what a waiting Ask returns for an aborted ask: Slack
// refusing the question for good is NO_PROVIDER (retrying the callId gets
// the same answer), anything else ASK_ABORTED.
func abortedError(a *asktype.Ask) error {
	switch a.AbortReason {
	case asktype.NoMessage:
		return waterfall.Errorf(waterfall.CodeNoProvider, waterfall.NoProviderMessage)
	case asktype.Abandoned:
		return waterfall.Errorf(waterfall.CodeAskAborted, "the question was withdrawn: its caller went away and did not re-attach in time")
	case asktype.Elsewhere:
		return waterfall.Errorf(waterfall.CodeAskAborted, "the question was withdrawn: it was answered in the agent's terminal")
	case asktype.Revoked:
		return waterfall.Errorf(waterfall.CodeAskAborted, "the question was withdrawn: the agent token that asked it was revoked; run `askslack login` to connect again")
	case asktype.Uninstalled:
		return waterfall.Errorf(waterfall.CodeAskAborted, "the question was withdrawn: askslack was uninstalled from its Slack workspace (or its bot token revoked), so nobody there can answer it; reinstall it with Add to Slack")
	}
	return waterfall.Errorf(waterfall.CodeAskAborted, "the question was withdrawn")
}

// isStateErr reports a transition refused because the ask had moved on
// (another replica or surface got there first): nothing went wrong.
func isStateErr(err error) bool {
	return errors.Is(err, store.ErrContinued) || errors.Is(err, store.ErrSettled) || errors.Is(err, store.ErrAborted)
}

// Expire closes the window of a timed ask whose deadline has passed (open →
// continued, once across replicas).
func (h *Host) Expire(ctx context.Context, callID string) (*waterfall.Record, error) {
	a, err := h.store.Expire(ctx, callID, h.clock.Now())
	if err == nil {
		h.metrics.Transition("expired")
		h.changed(a)
	}
	return decodeWith(a, err)
}

// Continue closes a timed ask's window now, before its deadline: the agent
// went on without the answer (its own prompt timed out), and an answer given
// later reaches it as a steered message. Continuing a continued ask is not
// an error; an untimed ask is BAD_REQUEST (its late answer would have no
// session to go to), an answered one ALREADY_SETTLED, a withdrawn one
// ASK_ABORTED.
func (h *Host) Continue(ctx context.Context, callID string) (*waterfall.Record, error) {
	a, err := h.store.Continue(ctx, callID, h.clock.Now())
	switch {
	case err == nil:
		h.metrics.Transition("expired")
		h.changed(a)
	case errors.Is(err, store.ErrNotFound):
		return nil, waterfall.Errorf(waterfall.CodeNotFound, "no ask with callId %q", callID)
	case errors.Is(err, store.ErrContinued):
		err = nil
	case errors.Is(err, store.ErrNotDue):
		err = waterfall.Errorf(waterfall.CodeBadRequest, "only a timed ask (timeoutMs and agent.sessionId) can go on without its answer")
	case errors.Is(err, store.ErrSettled):
		err = waterfall.Errorf(waterfall.CodeAlreadySettled, "the question was already answered")
	case errors.Is(err, store.ErrAborted):
		err = waterfall.Errorf(waterfall.CodeAskAborted, "the agent withdrew the question")
	default:
		err = unavailable(err)
	}
	return decodeWith(a, err)
}

// decodeWith decodes the ask a store call returned along with its error:
// a losing transition's ask (the winner's) is decoded too, and a decode
// failure only replaces a nil error.
func decodeWith(a *asktype.Ask, err error) (*waterfall.Record, error) {
	if a == nil {
		return nil, err
	}
	r, derr := waterfall.Decode(a)
	if derr != nil {
		return nil, errors.Join(err, derr)
	}
	return r, err
}

// Get returns the ask as stored.
func (h *Host) Get(ctx context.Context, callID string) (*waterfall.Record, error) {
	return decodeWith(h.read(ctx, callID, true))
}

// Current is Get for a caller that watches the ask (holds its Changes) or
// whose next step is an atomic transition anyway: the store may answer from
// the newest record this replica has seen when its change feed announced
// nothing newer, without a read.
func (h *Host) Current(ctx context.Context, callID string) (*waterfall.Record, error) {
	return decodeWith(h.read(ctx, callID, false))
}

// read is Get (fresh) or Current, with Get's errors.
func (h *Host) read(ctx context.Context, callID string, fresh bool) (*asktype.Ask, error) {
	var a *asktype.Ask
	var err error
	if fresh {
		a, err = h.store.Get(ctx, callID)
	} else {
		a, err = h.store.Current(ctx, callID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, waterfall.Errorf(waterfall.CodeNotFound, "no ask with callId %q", callID)
	}
	return a, unavailable(err)
}

// WaitChange returns the ask once its version differs from ver or ctx ends
// (then it returns the ask as it stands).
func (h *Host) WaitChange(ctx context.Context, callID string, ver int64) (*waterfall.Record, error) {
	changes, stop := h.store.Changes(callID)
	defer stop()
	w, unpark := h.park(callID, ver)
	defer unpark()
	fresh := false
	for {
		a, err := h.read(context.WithoutCancel(ctx), callID, fresh)
		if err != nil || a.Version != ver || ctx.Err() != nil {
			return decodeWith(a, err)
		}
		fresh = false
		select {
		case <-ctx.Done():
			fresh = true // the caller gets the ask as it stands
		case <-changes:
		case <-w.wake:
			fresh = w.woken()
		}
	}
}

// Abort withdraws an open or continued ask (the harness cancelled).
func (h *Host) Abort(ctx context.Context, callID string) (*waterfall.Record, error) {
	return h.Withdraw(ctx, callID, asktype.Withdrawn)
}

// Withdraw ends an open or continued ask for the reason given: the harness
// withdrew it, its caller went away for good, or no surface can show it.
// Withdrawing twice is not an error; withdrawing an answered ask is
// ALREADY_SETTLED.
func (h *Host) Withdraw(ctx context.Context, callID string, why asktype.AbortReason) (*waterfall.Record, error) {
	return decodeWith(h.withdraw(ctx, callID, why))
}

func (h *Host) withdraw(ctx context.Context, callID string, why asktype.AbortReason) (*asktype.Ask, error) {
	a, err := h.store.Abort(ctx, callID, h.clock.Now(), why)
	switch {
	case err == nil:
		h.metrics.Transition("aborted")
		h.changed(a)
		return a, nil
	case errors.Is(err, store.ErrNotFound):
		return nil, waterfall.Errorf(waterfall.CodeNotFound, "no ask with callId %q", callID)
	case errors.Is(err, store.ErrAborted):
		return a, nil // withdrawing twice is not an error
	case errors.Is(err, store.ErrSettled):
		return a, waterfall.Errorf(waterfall.CodeAlreadySettled, "the question was already answered")
	}
	return a, unavailable(err)
}

// Answer answers an ask from any surface (Slack, another UI). Inside the
// window (or untimed) it settles the ask; after the window it queues a
// steered user message for the agent. Errors: BAD_ANSWER, NOT_FOUND,
// ALREADY_SETTLED (Outcome names the winner), REPLY_QUEUED, ASK_ABORTED.
func (h *Host) Answer(ctx context.Context, callID string, ans waterfall.Answer, who waterfall.Respondent) (waterfall.Outcome, error) {
	// Current is enough: states only move forward, and the conditional
	// write the decision ends in (settle.go) checks the stored ask.
	r, err := h.Current(ctx, callID)
	if err != nil {
		return waterfall.Outcome{}, err
	}
	return h.AnswerRecord(ctx, r, ans, who)
}

// AnswerRecord is Answer on r, the ask as the caller read it a moment ago
// (a click read against its ask): the ask is not read or decoded again.
// States only move forward, and the conditional write the decision ends in
// checks the stored ask, deciding again on what it finds.
func (h *Host) AnswerRecord(ctx context.Context, r *waterfall.Record, ans waterfall.Answer, who waterfall.Respondent) (waterfall.Outcome, error) {
	if who.At.IsZero() {
		who.At = h.clock.Now()
	}
	return h.decideAndApply(ctx, r, waterfall.Settlement{Answer: ans, Respondent: who}, true)
}

// answered observes how long a took to answer (once per ask: the
// transition that settles it, or queues its late answer, happens once).
func (h *Host) answered(a *asktype.Ask, at time.Time) {
	kind := a.Kind
	if kind == "" {
		kind = waterfall.KindQuestion // stored before asks had kinds
	}
	h.metrics.Answered(kind, max(0, at.Sub(a.Created)))
}

// refused maps a lost transition to the caller's error, naming the winner.
func (h *Host) refused(rec *waterfall.Record, err error) (waterfall.Outcome, error) {
	out := waterfall.Outcome{Record: rec}
	decoded := rec != nil && rec.Request != nil // not outcomeOn's stand-in
	switch {
	case errors.Is(err, store.ErrNotFound):
		return out, waterfall.Errorf(waterfall.CodeNotFound, "no such ask")
	case errors.Is(err, store.ErrSettled):
		if decoded {
			out.Settlement = rec.Settlement
		}
		return out, waterfall.Errorf(waterfall.CodeAlreadySettled, "the question was already answered")
	case errors.Is(err, store.ErrAborted):
		return out, waterfall.Errorf(waterfall.CodeAskAborted, "the agent withdrew the question")
	case errors.Is(err, store.ErrReplyQueued):
		if decoded {
			out.Settlement = rec.Answered()
		}
		out.Queued = true
		return out, waterfall.Errorf(waterfall.CodeReplyQueued, "a reply to this question is already waiting for the agent")
	case errors.Is(err, store.ErrContinued):
		return out, err
	}
	return out, unavailable(err)
}

func unavailable(err error) error {
	if err == nil || waterfall.CodeOf(err) != "" || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &waterfall.Error{Code: waterfall.CodeUnavailable, Message: "the store is unavailable", Err: err}
}

// withQuorum is req with the approvals it needs fixed (Request.Quorum), a
// copy: the caller's request is not changed.
func withQuorum(req *waterfall.Request, q waterfall.QuorumConfig) *waterfall.Request {
	r := *req
	r.Quorum = waterfall.RequiredApprovals(req, q)
	if r.Quorum <= 1 {
		r.Quorum = 0 // stored as before quorum existed
	}
	return &r
}
