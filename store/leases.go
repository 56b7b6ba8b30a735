package store

import (
	"context"
	"time"
)

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

// LeaseWait is the lease name for the live timed wait of an ask.
const LeaseWait = "wait"
