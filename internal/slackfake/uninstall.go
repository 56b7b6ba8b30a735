package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
)

// Uninstalling, as Slack reports it to the app:
//
//   - tokens_revoked (https://docs.slack.dev/reference/events/tokens_revoked):
//     "tokens": {"oauth": [user ids], "bot": [bot user ids]} — ids, "not the
//     actual token strings";
//   - app_uninstalled (https://docs.slack.dev/reference/events/app_uninstalled),
//     sent "whenever a Slack app is completely uninstalled"; "the order of the
//     app_uninstalled and tokens_revoked events are not guaranteed" — the
//     fake sends tokens_revoked first.
//
// Both come in the event_callback envelope of the installation: its
// team_id (null for an org-wide install, whose events name the
// enterprise_id, as team_access_granted's example shows,
// https://api.slack.com/events/team_access_granted) and one authorization.

// Uninstall uninstalls the app from a workspace (or, by enterprise id, an
// org-wide install): every token of the installation is revoked (calls
// answer token_revoked), nothing more is delivered for its workspaces, and
// tokens_revoked and app_uninstalled go to the events URL or over Socket
// Mode. Delivery errors are logged; see UninstallContext.
func (s *Server) Uninstall(teamOrEnterpriseID string) {
	if _, err := s.UninstallContext(context.Background(), teamOrEnterpriseID, Delivery{}); err != nil {
		s.logf("slackfake: uninstall %s: %v", teamOrEnterpriseID, err)
	}
}

// UninstallContext is Uninstall, returning the app's answers to the two
// events (tokens_revoked, then app_uninstalled).
func (s *Server) UninstallContext(ctx context.Context, teamOrEnterpriseID string, d Delivery) ([]EventReceipt, error) {
	s.mu.Lock()
	rec, err := s.revokeLocked(teamOrEnterpriseID, true)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	revoked := s.installEventLocked(rec, s.tokensRevokedJSON(rec))
	uninstalled := s.installEventLocked(rec, map[string]any{"type": "app_uninstalled"})
	target := s.reach.eventsURL
	s.mu.Unlock()
	var out []EventReceipt
	for _, env := range []map[string]any{revoked, uninstalled} {
		r, err := s.deliverEvent(ctx, env, env["event_id"].(string), target, d)
		out = append(out, r)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// RevokeTokens revokes every token of an installation (calls answer
// token_revoked) and sends only tokens_revoked: the app stays installed,
// so events and clicks keep coming. Delivery errors are logged; see
// RevokeTokensContext.
func (s *Server) RevokeTokens(teamOrEnterpriseID string) {
	if _, err := s.RevokeTokensContext(context.Background(), teamOrEnterpriseID, Delivery{}); err != nil {
		s.logf("slackfake: revoke tokens of %s: %v", teamOrEnterpriseID, err)
	}
}

// RevokeTokensContext is RevokeTokens, returning the app's answer.
func (s *Server) RevokeTokensContext(ctx context.Context, teamOrEnterpriseID string, d Delivery) (EventReceipt, error) {
	s.mu.Lock()
	rec, err := s.revokeLocked(teamOrEnterpriseID, false)
	if err != nil {
		s.mu.Unlock()
		return EventReceipt{}, err
	}
	env := s.installEventLocked(rec, s.tokensRevokedJSON(rec))
	target := s.reach.eventsURL
	s.mu.Unlock()
	return s.deliverEvent(ctx, env, env["event_id"].(string), target, d)
}

// revokeLocked revokes every token ever issued to the installation named
// id (a reinstall's older records too) and, uninstall, marks it gone.
func (s *Server) revokeLocked(id string, uninstall bool) (*install, error) {
	rec := s.ws.installs[id]
	if rec == nil && id == s.opts.TeamID && len(s.ws.instList) == 0 {
		rec = s.ws.implicit
	}
	if rec == nil || rec.uninstalled {
		return nil, fmt.Errorf("%w: no installation %q", ErrNotFound, id)
	}
	for _, t := range s.ws.tokens {
		if t.inst.key() == rec.key() {
			t.revoked = true
			if uninstall {
				t.inst.uninstalled = true
			}
		}
	}
	if uninstall {
		rec.uninstalled = true
	}
	s.notifyLocked()
	return rec, nil
}

func (s *Server) tokensRevokedJSON(rec *install) map[string]any {
	oauth := []string{}
	if rec.userToken != "" {
		oauth = append(oauth, rec.Installer)
	}
	return map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": oauth, "bot": []string{rec.BotUserID}}}
}

// installEventLocked wraps an event about an installation in its envelope.
func (s *Server) installEventLocked(rec *install, event map[string]any) map[string]any {
	var team, ent any
	if !rec.OrgWide {
		team = rec.TeamID
	}
	if rec.EnterpriseID != "" {
		ent = rec.EnterpriseID
	}
	env := map[string]any{
		"token": s.opts.VerificationToken, "team_id": team, "api_app_id": s.opts.AppID,
		"event": json.RawMessage(marshal(event)), "type": "event_callback", "event_id": s.newIDLocked("Ev"),
		"event_time": s.opts.Now().Unix(), "is_ext_shared_channel": false,
		"event_context": "4-" + randAlnum(24),
		"authorizations": []any{map[string]any{"enterprise_id": ent, "team_id": team,
			"user_id": rec.BotUserID, "is_bot": true, "is_enterprise_install": rec.OrgWide}},
	}
	if s.multiLocked() {
		env["enterprise_id"], env["context_team_id"], env["context_enterprise_id"] = ent, team, ent
	}
	return env
}
