package hostapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// AuditPage is the JSON of GET /v1/audit: entries oldest first, and the
// cursor of the next page ("" when there is no more now).
type AuditPage struct {
	Events []asktype.AuditEntry `json:"events"`
	Next   string               `json:"next"`
}

// maxCursor bounds a cursor's length (a Redis stream id, or a seq).
const maxCursor = 64

// audit is GET /v1/audit?since=&callId=&limit=&cursor=, for operators
// only: the hash-chained audit trail (store.Audit).
func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.require(w, r, RoleAdmin, whyAudit); !ok {
		return
	}
	q, err := auditQuery(r, s.clock.Now())
	if err != nil {
		s.fail(w, err)
		return
	}
	events, next, err := s.host.Audit(r.Context(), q)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, AuditPage{Events: events, Next: next})
}

// auditQuery reads GET /v1/audit's parameters.
func auditQuery(r *http.Request, now time.Time) (asktype.AuditQuery, error) {
	v := r.URL.Query()
	q := asktype.AuditQuery{CallID: v.Get("callId"), Cursor: v.Get("cursor")}
	if len(q.Cursor) > maxCursor {
		return q, waterfall.Errorf(waterfall.CodeBadRequest, "cursor is not one a page of the audit trail returned")
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > store.MaxAuditLimit {
			return q, waterfall.Errorf(waterfall.CodeBadRequest, "limit must be an integer from 1 to %d", store.MaxAuditLimit)
		}
		q.Limit = n
	}
	if since := v.Get("since"); since != "" {
		t, err := ParseSince(since, now)
		if err != nil {
			return q, waterfall.Errorf(waterfall.CodeBadRequest, "since: %v", err)
		}
		q.Since = t
	}
	return q, nil
}

// ParseSince reads a point in time as an RFC 3339 time or as a duration
// back from now ("24h", "90m", "7d").
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := ParseDays(s)
	if err != nil || d <= 0 {
		return time.Time{}, errSince
	}
	return now.Add(-d), nil
}

// ParseDays is time.ParseDuration that also takes whole days ("7d").
func ParseDays(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, errSince
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

type sinceError struct{}

func (sinceError) Error() string {
	return `want an RFC 3339 time (2026-01-02T15:04:05Z) or a duration back from now (24h, 90m, 7d)`
}

var errSince error = sinceError{}
