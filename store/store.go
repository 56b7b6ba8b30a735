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

// Store is the persistence contract: the union of the roles below. Each
// role lives in a file named for its topic — the interface here
// (transitions.go, messages.go, sessions.go, leases.go, feed.go, budget.go,
// votes.go, rules.go, reach.go, timers.go, audit.go, hooks.go, tokens.go, installs.go),
// its conformance checks in storetest/ and its implementations in
// redisstore/ and memory_<topic>.go under the same name. Every method is
// safe for concurrent use by many goroutines and, for Redis, by many
// replicas. A consumer names the roles
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
	// Installs: the Slack installations of several workspaces (installs.go).
	Installs
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

// StateError is the sentinel for a transition refused because the ask is
// in state s.
func StateError(s asktype.State) error {
	switch s {
	case asktype.Settled:
		return ErrSettled
	case asktype.Aborted:
		return ErrAborted
	case asktype.Continued:
		return ErrContinued
	default:
		return ErrOpen
	}
}
