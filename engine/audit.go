package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Refusals recorded in the audit trail per refused party (Refusal.Key),
// per replica: a token bucket of refusalBurst refilled refusalsPerMinute.
// Beyond it refusals are counted, not recorded, and the next recorded one
// says how many were left out, so a hostile agent hammering a route it may
// not use costs the trail at most this, and costs the store nothing while
// it is over (the limit is checked in the process, before any write).
const (
	refusalsPerMinute = 30
	refusalBurst      = 10
	// maxRefusalKeys bounds the limiter's memory; past it, it starts over.
	maxRefusalKeys = 10_000
)

// refusalLimit is the per-replica rate limit of recorded refusals.
type refusalLimit struct {
	mu      sync.Mutex
	buckets map[string]*refusalBucket
}

type refusalBucket struct {
	tokens  float64
	at      time.Time
	dropped int // refusals not recorded since the last one that was
}

// take reports whether key may record a refusal at now, and how many of
// its refusals went unrecorded before this one.
func (l *refusalLimit) take(key string, now time.Time) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil || len(l.buckets) >= maxRefusalKeys {
		l.buckets = map[string]*refusalBucket{}
	}
	b := l.buckets[key]
	if b == nil {
		b = &refusalBucket{tokens: refusalBurst, at: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(refusalBurst, b.tokens+el.Minutes()*refusalsPerMinute)
		b.at = now
	}
	if b.tokens < 1 {
		b.dropped++
		return false, 0
	}
	b.tokens--
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

// Refused records r in the audit trail (within the rate limit above). It
// never fails the caller: a store error is logged.
func (h *Host) Refused(ctx context.Context, r waterfall.Refusal) {
	if h.audit == nil {
		return
	}
	now := h.clock.Now()
	ok, dropped := h.refusals.take(r.Key, now)
	if !ok {
		h.log.Debug("refusal not recorded: over the audit trail's rate limit", "key", r.Key, "callId", r.CallID)
		return
	}
	detail := r.Why
	if dropped > 0 {
		detail += fmt.Sprintf(" (and %d earlier refusals of %s not recorded: over %d a minute)", dropped, r.Key, refusalsPerMinute)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := h.audit.Append(ctx, asktype.AuditEntry{At: now, CallID: r.CallID, Event: asktype.EventRefused, Caller: r.Caller,
		Agent: r.Agent, Respondent: r.Who, Detail: detail})
	if err != nil {
		h.log.Warn("recording a refusal in the audit trail failed", "key", r.Key, "callId", r.CallID, "err", err)
	}
}

// Audit reads a page of the audit trail (see store.Audit). A bad cursor is
// BAD_REQUEST.
func (h *Host) Audit(ctx context.Context, q asktype.AuditQuery) ([]asktype.AuditEntry, string, error) {
	if h.audit == nil {
		return nil, "", &waterfall.Error{Code: waterfall.CodeUnavailable, Message: "no audit trail is configured", Err: waterfall.ErrNoAudit}
	}
	entries, next, err := h.audit.Audit(ctx, q)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", waterfall.Errorf(waterfall.CodeBadRequest, "cursor is not one a page of the audit trail returned")
	}
	return entries, next, unavailable(err)
}

// maxStatsEntries bounds what one Stats reads of the trail; past it the
// summary says it is partial.
const maxStatsEntries = 200_000

// Stats summarises the asks of the trail asked at or after since (see
// Summarize).
func (h *Host) Stats(ctx context.Context, since time.Time) (waterfall.Stats, error) {
	q := asktype.AuditQuery{Since: since, Limit: store.MaxAuditLimit}
	var all []asktype.AuditEntry
	partial := false
	for {
		page, next, err := h.Audit(ctx, q)
		if err != nil {
			return waterfall.Stats{}, err
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		if len(all) >= maxStatsEntries {
			partial = true
			break
		}
		q.Cursor = next
	}
	s := waterfall.Summarize(all, since, h.clock.Now())
	s.Partial = partial
	return s, nil
}
