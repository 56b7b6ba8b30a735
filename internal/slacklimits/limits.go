// Package slacklimits is Slack's published Web API rate limits as token
// buckets: the table (Slack), a Limiter that enforces it the way Slack does
// (per method per workspace, and per channel for chat.postMessage, answering
// with a Retry-After in whole seconds), and a time scale so that a test or
// the bench lives through a minute of Slack's limits in three seconds.
//
// The fakes (internal/slackfake, internal/loadbench) enforce it; the
// bot paces itself by the same table (see README "Slack rate limits"). The
// table and its sources are in internal/slackfake/README.md.
package slacklimits

import (
	"math"
	"sync"
	"time"
)

// Rule is a token bucket: PerMinute tokens a minute, at most Burst saved up.
type Rule struct {
	PerMinute float64
	Burst     int
}

// Zero reports whether the rule limits nothing.
func (r Rule) Zero() bool { return r.PerMinute <= 0 }

// Table is the limits of one app in one workspace.
type Table struct {
	// Methods limits each method across the workspace (Slack's tiers).
	// A method not listed is not limited.
	Methods map[string]Rule
	// PostPerChannel limits chat.postMessage in each channel (a DM is a
	// channel too).
	PostPerChannel Rule
}

// Slack's tiers (https://api.slack.com/apis/rate-limits, now
// docs.slack.dev/apis/web-api/rate-limits): Tier 1/2/3/4 allow 1+/20+/
// 50+/100+ requests per minute with "bursts tolerated". How big a burst is
// Slack does not publish; these are the modelled ones (a tenth of a minute's
// allowance, at least one), so a client that bursts past a few is refused.
var (
	Tier1 = Rule{PerMinute: 1, Burst: 1}
	Tier2 = Rule{PerMinute: 20, Burst: 2}
	Tier3 = Rule{PerMinute: 50, Burst: 5}
	Tier4 = Rule{PerMinute: 100, Burst: 10}
	// PostMessage is chat.postMessage's special limit: "1 message per
	// second per channel, short bursts above that allowed" (modelled as 3).
	PostMessage = Rule{PerMinute: 60, Burst: 3}
)

// Slack returns the modelled table. chat.postMessage's workspace-wide cap is
// not modelled: Slack gives no figure for it (api.slack.com/apis/rate-limits).
func Slack() Table {
	return Table{
		Methods: map[string]Rule{
			"chat.update":           Tier3,
			"chat.delete":           Tier3,
			"conversations.history": Tier3,
			"conversations.replies": Tier3,
			"conversations.open":    Tier3,
			"users.lookupByEmail":   Tier3,
			"reactions.add":         Tier3,
			"chat.postEphemeral":    Tier4,
			"views.open":            Tier4,
			"views.push":            Tier4,
			"views.update":          Tier4,
			"views.publish":         Tier4,
			"users.info":            Tier4,
			"usergroups.users.list": Tier2,
		},
		PostPerChannel: PostMessage,
	}
}

// Rate is r on a clock scale times faster: a minute of Slack's limits passes
// in a minute/scale.
func (r Rule) Rate(scale float64) float64 { return r.PerMinute * max(scale, 1) }

// Limiter enforces a Table. Safe for concurrent use.
type Limiter struct {
	table Table
	scale float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	limited map[string]int64 // 429s answered, by method
}

type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a Limiter of t on the clock now (nil: time.Now), scale times
// faster than Slack (at most 1000; below 1 means 1): at ×20 a channel takes
// one post per 50 ms, and Retry-After: 1 means 50 ms.
func New(t Table, scale float64, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{table: t, scale: min(max(scale, 1), 1000), now: now,
		buckets: map[string]*bucket{}, limited: map[string]int64{}}
}

// Scale is the limiter's time scale.
func (l *Limiter) Scale() float64 { return l.scale }

// Allow takes a token for one call of method (chat.postMessage: into
// channel). When the call is over a limit it returns ok=false and the
// Retry-After Slack would send: whole Slack seconds until a token is there,
// at least 1 (a client waits retryAfter/Scale of real time).
func (l *Limiter) Allow(method, channel string) (retryAfter int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	var take []*bucket
	check := func(key string, r Rule) {
		if r.Zero() {
			return
		}
		b := l.bucketLocked(key, r, now)
		if b.tokens >= 1 {
			take = append(take, b)
			return
		}
		perToken := time.Duration(float64(time.Minute) / r.Rate(l.scale))
		wait = max(wait, time.Duration((1-b.tokens)*float64(perToken)))
	}
	check(method, l.table.Methods[method])
	if method == "chat.postMessage" {
		check(method+"/"+channel, l.table.PostPerChannel)
	}
	if wait > 0 {
		// Refused calls cost nothing, as on Slack: the buckets keep their
		// tokens.
		l.limited[method]++
		slackSecs := wait.Seconds() * l.scale
		return max(1, int(math.Ceil(slackSecs-1e-9))), false
	}
	for _, b := range take {
		b.tokens--
	}
	return 0, true
}

func (l *Limiter) bucketLocked(key string, r Rule, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: float64(r.Burst), at: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(float64(r.Burst), b.tokens+el.Minutes()*r.Rate(l.scale))
		b.at = now
	}
	return b
}

// Limited returns how many calls of each method were refused so far.
func (l *Limiter) Limited() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int64, len(l.limited))
	for k, v := range l.limited {
		out[k] = v
	}
	return out
}
