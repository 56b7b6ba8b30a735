package slackfake

import (
	"slices"
)

// Token rotation, as https://docs.slack.dev/authentication/using-token-rotation
// says it works:
//
//   - a refresh (oauth.v2.access, grant_type=refresh_token) answers a new
//     access token (xoxe.xoxb-1-…, expires_in 43200) and a new refresh
//     token (xoxe-1-…);
//   - "Calling oauth.v2.access will not immediately invalidate your
//     existing access token": the old access token keeps working until its
//     own expiry;
//   - "the refresh token you used is revoked after a short grace period"
//     (Options.RefreshGrace; within it the old refresh token refreshes
//     again), after which it answers invalid_refresh_token;
//   - "we will enforce a limit of 2 active tokens. If more than 2 tokens
//     exist after the refresh, the oldest additional token will be
//     revoked": its calls then answer token_revoked;
//   - an expired access token answers token_expired.

// refreshLocked issues a new token pair for a refresh token.
func (s *Server) refreshLocked(rt string) reply {
	t, ok := s.ws.tokens[rt]
	now := s.opts.Now()
	if !ok || !t.refresh || t.revoked || t.inst.uninstalled || (!t.revokeAt.IsZero() && !now.Before(t.revokeAt)) {
		return fail("invalid_refresh_token")
	}
	if t.revokeAt.IsZero() {
		t.revokeAt = now.Add(s.opts.RefreshGrace)
	}
	rec := t.inst
	rec.BotToken = s.newAccessTokenLocked(rec)
	rec.ExpiresAt = now.Add(s.opts.TokenTTL)
	s.ws.tokens[rec.BotToken] = &token{inst: rec, issued: now, expires: rec.ExpiresAt}
	rec.RefreshToken = s.newRefreshTokenLocked()
	s.ws.tokens[rec.RefreshToken] = &token{inst: rec, issued: now, refresh: true}
	rec.refreshes++
	s.enforceActiveLimitLocked(rec)
	s.callTeam = rec.key()
	s.notifyLocked()
	s.logf("slackfake: oauth.v2.access: refreshed %s's token (refresh %d)", rec.key(), rec.refreshes)
	return s.tokenReplyLocked(rec)
}

// enforceActiveLimitLocked revokes the oldest of rec's live bot access
// tokens beyond maxActiveTokens.
func (s *Server) enforceActiveLimitLocked(rec *install) {
	now := s.opts.Now()
	type live struct {
		tok string
		t   *token
	}
	var active []live
	for k, t := range s.ws.tokens {
		if t.inst == rec && !t.refresh && !t.user && !t.revoked && (t.expires.IsZero() || now.Before(t.expires)) {
			active = append(active, live{k, t})
		}
	}
	slices.SortFunc(active, func(a, b live) int {
		if c := a.t.issued.Compare(b.t.issued); c != 0 {
			return c
		}
		// Issued in the same instant: the current token is the newest.
		switch {
		case a.tok == rec.BotToken:
			return 1
		case b.tok == rec.BotToken:
			return -1
		}
		return 0
	})
	for len(active) > maxActiveTokens {
		active[0].t.revoked = true
		active = active[1:]
	}
}

// ExpireTokens makes the current access token of an installation (by team
// id, or enterprise id for an org-wide install) expire now: its calls
// answer token_expired until the app refreshes it.
func (s *Server) ExpireTokens(teamOrEnterpriseID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.ws.installs[teamOrEnterpriseID]
	if rec == nil {
		return
	}
	now := s.opts.Now()
	rec.ExpiresAt = now
	if t := s.ws.tokens[rec.BotToken]; t != nil {
		t.expires = now
	}
	s.notifyLocked()
}

// Refreshes is how many times an installation's token was refreshed.
func (s *Server) Refreshes(teamOrEnterpriseID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.ws.installs[teamOrEnterpriseID]; rec != nil {
		return rec.refreshes
	}
	return 0
}
