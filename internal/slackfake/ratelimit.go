package slackfake

import (
	"net/http"

	"github.com/askslack/askslack/internal/slacklimits"
)

// newLimiter is the limiter Options.RateLimits asks for, or nil.
func newLimiter(opts Options) *slacklimits.Limiter {
	if opts.RateLimits <= 0 {
		return nil
	}
	return slacklimits.New(slacklimits.Slack(), opts.RateLimits, opts.Now)
}

// rateLimitedLocked answers a call over Slack's limits as Slack does: HTTP
// 429, Retry-After (whole Slack seconds), {"ok":false,"error":"ratelimited"}.
// Slack counts the call before it looks at the token or the arguments, so
// the check comes first; a refused call changes nothing.
func (s *Server) rateLimitedLocked(method string, p map[string]string) (reply, bool) {
	if s.limits == nil {
		return reply{}, false
	}
	ra, ok := s.limiterLocked().Allow(method, p["channel"])
	if ok {
		return reply{}, false
	}
	rep := fail("ratelimited")
	rep.status = http.StatusTooManyRequests
	rep.retryAfter = ra
	return rep, true
}

// RateLimited returns how many calls of each method the fake refused with
// 429 (Options.RateLimits).
func (s *Server) RateLimited() map[string]int64 {
	if s.limits == nil {
		return map[string]int64{}
	}
	s.mu.Lock()
	all := []*slacklimits.Limiter{s.limits}
	for _, l := range s.teamLimits {
		all = append(all, l)
	}
	s.mu.Unlock()
	out := map[string]int64{}
	for _, l := range all {
		for m, n := range l.Limited() {
			out[m] += n
		}
	}
	return out
}

// limiterLocked is the limiter of the call's workspace: Slack's limits are
// per app per workspace, so each installation other than the default
// one has its own buckets. The token is only looked up, not checked —
// Slack counts a call before it looks at the token.
func (s *Server) limiterLocked() *slacklimits.Limiter {
	if !s.multiLocked() {
		return s.limits
	}
	t, ok := s.ws.tokens[s.callToken]
	if !ok || t.inst == s.ws.implicit {
		return s.limits
	}
	k := t.inst.key()
	if s.teamLimits == nil {
		s.teamLimits = map[string]*slacklimits.Limiter{}
	}
	l := s.teamLimits[k]
	if l == nil {
		l = newLimiter(s.opts)
		s.teamLimits[k] = l
	}
	return l
}
