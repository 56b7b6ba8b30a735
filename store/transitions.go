package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/askslack/askslack/asktype"
)

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

// Counts are the sizes of the active states.
type Counts struct {
	Open      int64 // waiting for an answer (timed or not)
	Continued int64 // timed window closed; late answers still taken
	TimedOpen int64 // open and timed: the waits someone should hold a claim on
}
