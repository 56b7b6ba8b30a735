package loadbench

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Slack's rate limits in the fast fake (SlackOptions.RateLimits): the same
// table and buckets as internal/slackfake (internal/slacklimits), and
// the same answer: HTTP 429, Retry-After in whole Slack seconds,
// {"ok":false,"error":"ratelimited"}. A refused call has no effect.

// refused answers 429 when method (into channel, for chat.postMessage) is
// over its limit.
func (s *Slack) refused(w http.ResponseWriter, method, channel string) bool {
	if s.limiter == nil {
		return false
	}
	ra, ok := s.limiter.Allow(method, channel)
	if ok {
		return false
	}
	s.limited.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(ra))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(`{"ok":false,"error":"ratelimited"}`))
	return true
}

// LimitedBy returns the 429s answered so far, by method.
func (s *Slack) LimitedBy() map[string]int64 {
	if s.limiter == nil {
		return map[string]int64{}
	}
	return s.limiter.Limited()
}

// Post is one question message the fake accepted.
type Post struct {
	CallID, Channel, TS string
	At                  time.Time
}

// Journal is what SlackOptions.Journal kept: every accepted post of a
// question (a message with a button naming an ask), when each was clicked,
// and when an update first took its controls away.
type Journal struct {
	Posts  []Post
	Clicks map[string]time.Time // ts → click sent
	Gone   map[string]time.Time // ts → first update without controls
}

type journal struct {
	posts  []Post
	clicks map[string]time.Time
	gone   map[string]time.Time
}

// askOf names the ask a message's first clickable button belongs to.
func (s *Slack) askOf(blocks string) string {
	if s.opts.CallID == nil {
		return ""
	}
	blockID, b, ok := firstButton(blocks, s.opts.Clickable)
	if !ok {
		return ""
	}
	return s.opts.CallID(b.ActionID, blockID, b.Value)
}

func (s *Slack) journalPost(channel, ts, blocks string) {
	if !s.opts.Journal {
		return
	}
	id := s.askOf(blocks)
	if id == "" {
		return // a reminder, a note: not a question
	}
	at := time.Now()
	s.mu.Lock()
	s.journal.posts = append(s.journal.posts, Post{CallID: id, Channel: channel, TS: ts, At: at})
	s.mu.Unlock()
}

func (s *Slack) journalUpdate(ts, blocks string) {
	if !s.opts.Journal || hasControls(blocks) {
		return
	}
	at := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal.gone == nil {
		s.journal.gone = map[string]time.Time{}
	}
	if _, ok := s.journal.gone[ts]; !ok {
		s.journal.gone[ts] = at
	}
}

func (s *Slack) journalClick(ts string, at time.Time) {
	if !s.opts.Journal {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal.clicks == nil {
		s.journal.clicks = map[string]time.Time{}
	}
	s.journal.clicks[ts] = at
}

// Journal returns a copy of the journal so far.
func (s *Slack) Journal() Journal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Journal{Posts: slices.Clone(s.journal.posts), Clicks: maps.Clone(s.journal.clicks), Gone: maps.Clone(s.journal.gone)}
}

// waitToClick waits as ClickDelay and ClickAfter say before a question is
// clicked; false: leave it unanswered (or the fake is closing).
func (s *Slack) waitToClick(blocks string) bool {
	d := time.Duration(s.clickDelay.Load())
	if s.opts.ClickAfter != nil {
		after, ok := s.opts.ClickAfter(s.askOf(blocks))
		if !ok {
			return false
		}
		d += after
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}
