package slackbot

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// /askslack stats and the Home tab's line on a person's answers, both read
// from the audit trail (engine.Host.Stats).
const (
	statsDefault = 7 * 24 * time.Hour
	// statsMax is the longest window: the audit trail's default retention.
	statsMax       = 90 * 24 * time.Hour
	textStatsUsage = "Usage: `/askslack stats [window]`, e.g. `/askslack stats 7d` or `/askslack stats 24h` (at most 90d)."
	// homeStatsEvery is how long one summary serves every Home tab on this
	// replica: a round refreshes up to homeVisitors tabs, and each would
	// otherwise read a week of the trail.
	homeStatsEvery = time.Minute
)

// statsFor is /askslack stats [window]: a private summary of how the team
// answered agents over the window (default 7 days).
func (b *Bot) statsFor(ctx context.Context, arg string) blocks.Message {
	window := statsDefault
	if arg != "" {
		d, err := parseWindow(arg)
		if err != nil || d <= 0 || d > statsMax {
			return blocks.Message{Text: textStatsUsage}
		}
		window = d
	}
	s, err := b.host.Stats(ctx, b.host.Now().Add(-window))
	if err != nil {
		b.log.Error("reading the audit trail for stats failed", "err", err)
		return blocks.Message{Text: textUnavailable}
	}
	return blocks.Stats(s, windowName(window))
}

// parseWindow reads "7d", "24h", "90m".
func parseWindow(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(strings.ToLower(s), "d"); ok {
		n, err := strconv.Atoi(days)
		return time.Duration(n) * 24 * time.Hour, err
	}
	return time.ParseDuration(s)
}

// windowName says a window in words: "7 days", "24 hours", "1 hour",
// "1h30m0s".
func windowName(d time.Duration) string {
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	case d == time.Hour:
		return "hour"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + " hours"
	}
	return d.String()
}

// homeStats keeps the last summary of the trail for the Home tabs.
type homeStats struct {
	mu sync.Mutex
	at time.Time
	s  waterfall.Stats
	ok bool
}

// homeStatsBlock is the Home tab's line on userID's own answers over the
// last week, or none when the trail cannot be read.
func (b *Bot) homeStatsBlock(ctx context.Context, userID string) []slack.Block {
	b.stats.mu.Lock()
	defer b.stats.mu.Unlock()
	now := b.host.Now()
	if b.stats.at.IsZero() || now.Sub(b.stats.at) >= homeStatsEvery {
		s, err := b.host.Stats(ctx, now.Add(-statsDefault))
		if err != nil {
			b.log.Warn("reading the audit trail for the Home tab failed", "err", err)
		}
		b.stats.at, b.stats.s, b.stats.ok = now, s, err == nil
	}
	if !b.stats.ok {
		return nil
	}
	g, ok := b.stats.s.Person(userID)
	return []slack.Block{blocks.HomeStats(g, ok, windowName(statsDefault))}
}
