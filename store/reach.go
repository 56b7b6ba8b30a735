package store

import (
	"context"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Reach is what finding people in Slack needs from the store beyond the
// life of one ask: the active asks across every session (for /askslack
// list and the Home tab), a once-only marker (Slack redelivers events),
// and who opened their Home tab lately (so any replica can refresh it).
type Reach interface {
	// Active returns up to limit active (open or continued) asks, newest
	// (highest Seq) first, read from their records: an index entry whose
	// ask ended or expired is skipped.
	Active(ctx context.Context, limit int) ([]*asktype.Ask, error)
	// Once reports whether key is new: the first caller within ttl gets
	// true, every other caller (on any replica) false until ttl passes.
	Once(ctx context.Context, key string, ttl time.Duration, now time.Time) (bool, error)
	// Visit records that userID opened their Home tab at now; it is
	// remembered for VisitTTL.
	Visit(ctx context.Context, userID string, now time.Time) error
	// Visitors returns up to limit users who visited at or after since,
	// most recent first. Older visits are forgotten.
	Visitors(ctx context.Context, since time.Time, limit int) ([]string, error)
	Notes
}

// Notes keeps small values every replica shares, by key, for a while: a
// session's thread (slackbot), the last reminder step of an ask (remind).
type Notes interface {
	// Remember stores value under key for ttl unless a value is stored
	// there already, and returns the stored value (value itself when the
	// key was free): of replicas racing to remember, all learn the same
	// winner. An empty value only reads ("" when nothing is stored).
	Remember(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error)
	// Put stores value under key for ttl, replacing whatever is there
	// (the last writer wins); Remember with an empty value reads it.
	Put(ctx context.Context, key, value string, ttl time.Duration, now time.Time) error
	// Forget deletes key and returns the value it held ("" when none):
	// atomically, so of callers racing to forget one key exactly one gets
	// its value (a sign-in's state is spent once, on any replica).
	Forget(ctx context.Context, key string, now time.Time) (string, error)
}

// LaterNotes is a Notes that can send a best-effort Put with its next
// round trip instead of one of its own (redisstore). Remember reads the
// value meanwhile on the same replica; a Put or Forget of the key replaces
// it. Answer memory's write after an answer uses it.
type LaterNotes interface {
	PutLater(key, value string, ttl time.Duration, now time.Time)
}

// VisitTTL bounds how long a Home tab visit is remembered at all.
const VisitTTL = 24 * time.Hour

// memReach is Memory's part of Reach; guarded by Memory.mu.
type memReach struct {
	once   map[string]time.Time // key → until
	visits map[string]time.Time // user → last visit
	kept   map[string]kept      // Remember's keys
}

// kept is a remembered value and when it is forgotten.
type kept struct {
	value string
	until time.Time
}
