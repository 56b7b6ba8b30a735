package store

import (
	"context"
	"time"

	"github.com/askslack/askslack/asktype"
)

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
