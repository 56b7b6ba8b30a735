package store

import (
	"context"
	"errors"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Rules are the standing rules a team grants from Slack (package rules
// holds their grammar): each answers the permission asks it matches without
// asking anyone, until it is revoked or its time runs out. Every replica
// reads them from here when it matches an ask, so a revoke on one replica
// holds on every other before its next match.
type Rules interface {
	// AddRule stores r as a new rule live from r.Granted, assigns its ID
	// (increasing across the store) and returns it. ErrTooManyRules when
	// MaxRules rules are live at now.
	AddRule(ctx context.Context, r asktype.Rule, now time.Time) (asktype.Rule, error)
	// LiveRules returns the rules live at now, oldest (lowest ID) first:
	// not revoked, and lasting until revoked (zero Until) or until after
	// now. A rule whose Until has come is gone on its own; it is dropped.
	LiveRules(ctx context.Context, now time.Time) ([]asktype.Rule, error)
	// RevokeRule ends a live rule and returns it as it was; ErrNotFound
	// when no rule with id is live at now.
	RevokeRule(ctx context.Context, id int64, now time.Time) (asktype.Rule, error)
	// UseRule counts one use of a live rule at now, in the same step that
	// checks it is still live, and returns it with the new count;
	// ErrNotFound when it was revoked or ran out meanwhile (the caller
	// matches again). Uses on any number of replicas are all counted.
	UseRule(ctx context.Context, id int64, now time.Time) (asktype.Rule, error)
	// NoteAsk remembers what a permission ask was about, newest first,
	// keeping the latest MaxRecentAsks: the rule form previews which of
	// them a rule would have matched.
	NoteAsk(ctx context.Context, a asktype.RecentAsk) error
	// RecentAsks returns up to limit of the latest noted asks, newest
	// first.
	RecentAsks(ctx context.Context, limit int) ([]asktype.RecentAsk, error)
}

// MaxRecentAsks bounds the asks NoteAsk keeps.
const MaxRecentAsks = 200

// MaxRules caps the live rules: every permission ask reads them all.
const MaxRules = 500

// ErrTooManyRules refuses a rule beyond MaxRules.
var ErrTooManyRules = errors.New("store: too many live rules")
