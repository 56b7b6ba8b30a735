package store

import (
	"context"
	"time"

	"github.com/askslack/askslack/asktype"
)

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
