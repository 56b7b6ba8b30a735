// Package store holds the stored record of an ask, its sentinels and the
// Store contract, and store.Memory, the embedded single-process store.
// The production store, shared by every replica, is store/redisstore;
// storetest runs one conformance suite against both. This package links
// neither go-redis nor slack-go.
//
// Every transition of one ask is atomic (a Lua script in Redis, a mutex in
// memory) and happens at most once: a losing caller gets a sentinel error
// together with the ask as the winner left it.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Sentinel errors. Transition methods return them together with the ask as it
// stands, so the caller learns who won.
var (
	ErrNotFound    = errors.New("store: no such ask")
	ErrSettled     = errors.New("store: ask already settled")
	ErrAborted     = errors.New("store: ask aborted")
	ErrContinued   = errors.New("store: ask continued; answers are queued as replies")
	ErrOpen        = errors.New("store: ask still open")
	ErrNotDue      = errors.New("store: deadline not reached")
	ErrReplyQueued = errors.New("store: a reply is already queued")
	ErrNoReply     = errors.New("store: no reply queued")
	ErrHeld        = errors.New("store: lease held by another holder")
	// ErrSessionFull refuses a new ask in a session that already has
	// MaxSessionAsks active (open or continued) asks.
	ErrSessionFull = errors.New("store: too many active asks in this session")
)

// MaxSessionAsks caps the active (open or continued) asks of one session.
// An agent session that keeps this many questions unanswered is broken or
// hostile; the cap bounds what one session can make every reader scan and
// store. In Redis the check and the create are in different Cluster slots,
// so concurrent creates may overshoot the cap by at most their number.
const MaxSessionAsks = 1000

// Store is the persistence contract: the union of the roles below, one per
// topic of the conformance suite (store/storetest: transitions.go,
// messages.go, sessions.go, leases.go, feed.go, budget.go, reach.go,
// timers.go, audit.go). Every method is safe for concurrent use by many
// goroutines and, for Redis, by many replicas. A consumer names the roles
// it needs (embedding them in its own small interface) rather than
// repeating their signatures.
type Store interface {
	Reader
	Transitions
	Messages
	Sessions
	Leases
	Waits
	Graces
	Feed
	Budget
	// Votes: the settlement seam, votes recorded with the decision (votes.go).
	Votes
	// Rules: standing rules that answer permission asks (rules.go).
	Rules
	// Tokens: personal agent tokens (askslack login; tokens.go).
	Tokens
	// Reach: active asks across sessions, once-only markers, Home visitors.
	Reach
	// Timers: schedules of asks shared by every replica (reminders).
	Timers
	// Audit: the hash-chained trail every transition appends to
	// (audit.go). Each transition records its event atomically with it.
	Audit
	// AuditTail: the trail read by position, for what follows it entry
	// by entry (webhooks); Lists: small capped lists (dead letters).
	AuditTail
	Lists
	// Ping checks the store is reachable.
	Ping(ctx context.Context) error
}

// Reader reads one ask (storetest/transitions.go).
type Reader interface {
	// Get returns the ask or ErrNotFound.
	Get(ctx context.Context, callID string) (*asktype.Ask, error)
	// Current is Get for a caller holding Changes(callID) (or about to make
	// an atomic transition that decides anyway): it may return, without a
	// read, the newest record this process has seen when the change feed
	// has announced no newer version. A change another replica made a
	// moment ago may not be announced yet; its hint then wakes the caller.
	Current(ctx context.Context, callID string) (*asktype.Ask, error)
	// Versions reads the version of each ask in one round trip (0 for
	// one that is gone): the waiters' safety sweep, which wakes a waiter
	// whose ask moved on without a hint reaching it.
	Versions(ctx context.Context, callIDs []string) ([]int64, error)
}

// Transitions move an ask through its lifecycle, each atomically and at
// most once (storetest/transitions.go).
type Transitions interface {
	// Create stores a new ask unless one with the same CallID exists, in
	// which case it returns that one and created=false (and indexes nothing:
	// the stored record, not a, says where the ask belongs). Create assigns
	// Seq, Version and State (Open). ErrSessionFull when a.SessionID already
	// has MaxSessionAsks active asks.
	Create(ctx context.Context, a *asktype.Ask) (cur *asktype.Ask, created bool, err error)
	// Settle moves an open ask to settled with settlement. It fails with
	// ErrSettled, ErrAborted or ErrContinued (and the current ask). An answer
	// at or past a timed ask's deadline is late: Settle then closes the
	// window itself (open → continued, as Expire would) and returns
	// ErrContinued with the continued ask, so the caller queues a reply.
	Settle(ctx context.Context, callID string, settlement json.RawMessage, at time.Time) (*asktype.Ask, error)
	// Expire moves an open, timed ask whose deadline is at or before now to
	// continued. ErrNotDue when the deadline is later. A continued ask is
	// kept until retention after its deadline.
	Expire(ctx context.Context, callID string, now time.Time) (*asktype.Ask, error)
	// Continue closes an open, timed ask's window now, before its deadline:
	// the agent went on without the answer (its own prompt timed out), so
	// a later answer is queued for it as Expire's would be. The deadline
	// becomes now (retention counts from it). ErrNotDue for an untimed ask;
	// a deadline already past continues as Expire does.
	Continue(ctx context.Context, callID string, now time.Time) (*asktype.Ask, error)
	// Abort withdraws an open or continued ask, recording why.
	Abort(ctx context.Context, callID string, at time.Time, why asktype.AbortReason) (*asktype.Ask, error)
	// QueueReply records a late answer on a continued ask. ErrReplyQueued
	// when one is already waiting, ErrOpen when the ask is still open.
	QueueReply(ctx context.Context, callID string, reply json.RawMessage, at time.Time) (*asktype.Ask, error)
	// AckReply settles a continued ask with its queued reply (the agent
	// admitted it). ErrNoReply when none is queued.
	AckReply(ctx context.Context, callID string, at time.Time) (*asktype.Ask, error)
	// Counts returns how many asks are in each active state right now, the
	// same on every replica (for the gauges).
	Counts(ctx context.Context) (Counts, error)
}

// Messages keep the record of the chat message that shows each ask
// (storetest/messages.go).
type Messages interface {
	// SetMessage records the message showing the ask (or, with
	// ref.Refused, that the surface refused it for good).
	SetMessage(ctx context.Context, callID string, ref asktype.MessageRef) (*asktype.Ask, error)
	// BeginPost takes the "post" lease of an ask for h.Holder until
	// h.Now+h.TTL (ErrHeld while another holder has it) and, when a message should be
	// posted (none yet, not refused, the ask active), records the first post
	// attempt. It returns the ask as it was before: a non-zero PostAttempt
	// means an earlier attempt may have posted. One round trip for what
	// Acquire, Get and recording the attempt would. With ErrHeld the ask
	// comes back too, its Poster naming the other holder's lease, so the
	// caller can try again as that lease ends.
	BeginPost(ctx context.Context, callID string, h Hold) (*asktype.Ask, error)
	// FinishPost records the message a post made (or found), releases
	// holder's post lease, and, when shown is the version the message was
	// rendered from and nothing else changed since, marks it rendered.
	// shown 0 means the message's content is unknown (an adopted post).
	// With holder Adopted (a message the surface saw another way than its
	// post's reply, say a click on it) it records ref only when no
	// message is recorded yet, and releases no lease: the post's own
	// record, with everything it knows (DM copies), is never overwritten.
	// A ref equal to the one recorded (the post's reply after a click
	// adopted its message) changes nothing but the lease: no new version,
	// so the message, rendered since through the click, is not behind.
	// A ref naming another message than the one recorded (the ask was
	// posted twice, or a click came from a message the record did not
	// know) never replaces it: it is kept among the copies
	// (asktype.MessageRef.Keeping), with a new version, so renders reach
	// it too and no message of an ended ask keeps live controls.
	FinishPost(ctx context.Context, callID, holder string, ref asktype.MessageRef, shown int64) (*asktype.Ask, error)
	// AbandonPost gives holder's post lease back and forgets the recorded
	// post attempt, when the surface answered that the post was not made
	// (a rate limit): the attempt before it, if any, was looked for first
	// and not found, so the next attempt posts without looking again.
	// Nothing changes unless holder holds the lease.
	AbandonPost(ctx context.Context, callID, holder string) error
	// Refuse records that the surface will never show the ask (why is its
	// reason); an open untimed ask ends there, aborted with NoMessage (the
	// caller's NO_PROVIDER), while a timed one waits out its window.
	Refuse(ctx context.Context, callID, channel, why string, at time.Time) (*asktype.Ask, error)
	// MarkRendered records that version ver of the ask is what users see,
	// and reports whether that is its latest version (false: it changed
	// meanwhile, and its message needs another render).
	MarkRendered(ctx context.Context, callID string, ver int64) (caughtUp bool, err error)
	// Stale lists asks whose message is behind the ask (Rendered <
	// Version) and that last changed at or before before: the updates a
	// crashed or failing replica never made, and the active asks whose post
	// never happened. Entries nothing can be done for are pruned: caught up,
	// expired, refused by the surface, or ended without any attempt to post.
	Stale(ctx context.Context, before time.Time, limit int) ([]string, error)
	// Handoff puts the asks first in line in the stale index — Stale
	// lists them for any before from HandoffBefore on — and tells every
	// replica (HandedOff): a stopping replica gives away the renders and
	// posts it owes and could not make, for another to make at once
	// rather than after its sweep's lag.
	Handoff(ctx context.Context, callIDs []string) error
	// HandedOff signals (coalesced) whenever a replica handed asks over.
	HandedOff() (ch <-chan struct{}, stop func())
}

// HandoffBefore is the before for which Stale lists only what was handed
// over (Messages.Handoff): those entries sort before any change's.
var HandoffBefore = time.UnixMilli(1)

// Sessions read the asks of one agent session (storetest/sessions.go).
type Sessions interface {
	// Session returns the asks of one session in creation order: those
	// whose stored SessionID is sessionID.
	Session(ctx context.Context, sessionID string) ([]*asktype.Ask, error)
	// Replies returns the session's continued asks with a queued reply
	// (QueueReply, not yet acknowledged), oldest reply first. It reads only
	// those asks, not the whole session.
	Replies(ctx context.Context, sessionID string) ([]*asktype.Ask, error)
}

// Leases are named, expiring claims on an ask (storetest/leases.go).
type Leases interface {
	// Acquire takes or renews the lease c names on an ask for c.Holder
	// until c.Now+c.TTL. It returns ErrHeld (and the holder) when someone
	// else holds an unexpired lease.
	Acquire(ctx context.Context, callID string, c Claim) (string, error)
	// Release gives the lease up if holder holds it.
	Release(ctx context.Context, callID, name, holder string) error
}

// Claim is what a holder asks of a named lease (Acquire).
type Claim struct {
	Name string
	Hold
}

// Hold is who takes a lease, for how long, from when.
type Hold struct {
	Holder string
	TTL    time.Duration
	Now    time.Time
}

// Waits are the live timed waits every replica shares: which are due,
// which nobody holds, and claiming them (storetest/leases.go).
type Waits interface {
	// Due lists open timed asks whose deadline is at or before until.
	Due(ctx context.Context, until time.Time, limit int) ([]string, error)
	// Unclaimed lists open timed asks whose "wait" lease is free or expired.
	Unclaimed(ctx context.Context, now time.Time, limit int) ([]string, error)
	// NextLapse is the earliest time after after at which a held "wait"
	// lease of an open timed ask runs out, or zero when none does: the
	// moment a dead replica's waits become free to take over.
	NextLapse(ctx context.Context, after time.Time) (time.Time, error)
	// ClaimWaits takes or renews the wait lease (LeaseWait) of each ask
	// for h.Holder until h.Now+h.TTL, where the ask is an open timed wait and no
	// other holder's lease runs: Acquire for a batch, in one round trip,
	// telling the caller what it needs to keep each wait.
	ClaimWaits(ctx context.Context, ids []string, h Hold) ([]WaitClaim, error)
}

// Graces are the re-attach graces of blocking callers that went away: any
// replica ends a grace nobody came back within (storetest/leases.go).
type Graces interface {
	// StartGrace records that the blocking caller of an ask went away and
	// its re-attach grace ends at until (a later call moves it).
	StartGrace(ctx context.Context, callID string, until time.Time) error
	// EndedGraces lists the asks whose grace ended at or before now.
	EndedGraces(ctx context.Context, now time.Time, limit int) ([]string, error)
	// EndGrace drops the entry once what became of the ask is decided.
	EndGrace(ctx context.Context, callID string) error
}

// Feed is the change feed: hints, coalesced, that something changed, on
// any replica (storetest/feed.go). Readers re-read.
type Feed interface {
	// Changes returns a channel that receives a value (coalesced) whenever
	// the ask changes, until stop is called.
	Changes(callID string) (ch <-chan struct{}, stop func())
	// Released signals (coalesced) whenever a wait lease is released, on any
	// replica, so keepers can take it over at once.
	Released() (ch <-chan struct{}, stop func())
	// SessionChanges is Changes for any ask of a session.
	SessionChanges(sessionID string) (ch <-chan struct{}, stop func())
	// Heard is the newest version of the ask this process has heard of
	// (Hub.Heard): local, no store read; 0 when none lately.
	Heard(callID string) int64
}

// Budget is rate budgets every replica shares (storetest/budget.go).
type Budget interface {
	// Take takes one token from bucket b, shared by every replica. It
	// reports whether a token was available at now.
	Take(ctx context.Context, b asktype.Bucket, now time.Time) (bool, error)
	// Drain empties bucket b until until (later, if it was drained
	// further): no replica takes a token before then, and it refills from
	// then on. A rate limit's Retry-After, shared.
	Drain(ctx context.Context, b asktype.Bucket, until time.Time) error
	// TakeTurn takes a token of t.Bucket fairly between groups (agent
	// sessions) whichever replica holds their work: it registers
	// t.Groups as waiting on the bucket until t.Now+t.Wait, each with the
	// class of its most urgent work, and when a token is free gives it to
	// the group whose turn it is among every group registered and not
	// expired — of the most urgent class, the one served longest ago
	// (never served first; ties by name). If that is one of t.Groups it
	// takes the token, records the group served at t.Now and returns it;
	// otherwise it returns "" and takes nothing (free reports that a
	// token was there: another caller's group is due). A first-come
	// bucket lets the replica with the longest queue win every token.
	TakeTurn(ctx context.Context, t Turn) (group string, free bool, err error)
}

// Turn is one TakeTurn call.
type Turn struct {
	Bucket asktype.Bucket
	// Groups are the caller's groups with work waiting for the bucket.
	Groups []TurnGroup
	Now    time.Time
	// Wait is how long the registration of Groups lasts unless renewed:
	// a group whose replica died loses its turns after it.
	Wait time.Duration
	// Left are groups whose work the caller finished: their registration
	// ends now (another caller still waiting for one registers it again).
	Left []string
}

// TurnGroup is a group waiting for a bucket and the class of its most
// urgent work (0 first).
type TurnGroup struct {
	Name  string
	Class int
}

// WaitClaim is the outcome of claiming (or renewing) one timed wait.
type WaitClaim struct {
	CallID string
	// Open is false when the ask is not an open timed wait (it ended, or
	// is gone): nothing was claimed.
	Open bool
	// Held: the claimant holds the lease now. When false on an open wait,
	// Holder has an unexpired lease on it.
	Held   bool
	Holder string
	// Prev names another holder whose lease on the wait had lapsed when it
	// was claimed: the claim is a takeover. "" for a fresh or released
	// wait, or a renewal.
	Prev              string
	Deadline, Created time.Time
}

// Counts are the sizes of the active states.
type Counts struct {
	Open      int64 // waiting for an answer (timed or not)
	Continued int64 // timed window closed; late answers still taken
	TimedOpen int64 // open and timed: the waits someone should hold a claim on
}

// AuditTail reads the audit trail by position, for a consumer that follows
// it entry by entry and keeps where it is (webhook delivery keeps one
// position per endpoint): unlike Audit's pages, each entry comes with its
// own position, so the consumer may stop after any of them
// (storetest/hooks.go). Positions are the store's own strings (a seq in
// Memory, a stream id in Redis); they only ever grow.
type AuditTail interface {
	// AuditFrom returns up to limit entries after position pos ("" from
	// the oldest kept), oldest first, each with its position. Entries
	// retention trimmed are gone (their seqs are missing). It does not
	// wait for events still on their way to the chain: they come on a
	// later read.
	AuditFrom(ctx context.Context, pos string, limit int) ([]TrailEntry, error)
	// AuditEnd returns the position and seq of the newest entry ("" and 0
	// while the trail is empty), once what transitions that have returned
	// recorded is chained: reading from it yields only what comes later.
	AuditEnd(ctx context.Context) (pos string, seq int64, err error)
}

// TrailEntry is an audit entry and its position in the trail (AuditTail).
type TrailEntry struct {
	asktype.AuditEntry
	Pos string
}

// Lists keep small lists every replica shares, by key: each capped, and
// kept for a while after its last push (a webhook endpoint's dead letters;
// storetest/hooks.go).
type Lists interface {
	// ListPush appends value to the list at key, drops its oldest values
	// beyond max, and keeps the list until ttl after now.
	ListPush(ctx context.Context, key, value string, max int, ttl time.Duration, now time.Time) error
	// ListRange returns up to limit of the list's values (0: all), oldest
	// first; none when the list is unknown or expired.
	ListRange(ctx context.Context, key string, limit int, now time.Time) ([]string, error)
	// ListRemove removes the oldest value equal to value and reports
	// whether there was one: of callers racing to remove one value, one
	// gets true.
	ListRemove(ctx context.Context, key, value string, now time.Time) (bool, error)
}

// LeaseWait is the lease name for the live timed wait of an ask.
const LeaseWait = "wait"

// DefaultRetention is how long settled and aborted asks are kept (and
// continued ones after their deadline).
const DefaultRetention = 7 * 24 * time.Hour

// Millis and FromMillis store times as Unix milliseconds, the zero time
// as 0 (both stores keep times this way).
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis reverses Millis.
func FromMillis(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}
