package slackfake

import (
	"context"
	"fmt"
)

// auth.teams.list and auth.revoke, the two auth.* methods an app serving
// several workspaces calls besides auth.test.

func init() {
	apiMethods["auth.teams.list"] = (*Server).authTeamsList
	apiMethods["auth.revoke"] = (*Server).authRevoke
}

// authTeamsList lists the workspaces the token's installation serves: for
// an org-wide install, those the org admin added it to; for a workspace's
// install, that workspace (https://docs.slack.dev/reference/methods/auth.teams.list:
// "Obtain a full list of workspaces your org-wide app has been approved
// for"). No pagination: the fake's organizations are small.
func (s *Server) authTeamsList(map[string]string) reply {
	in := s.callerLocked()
	teams := []any{}
	for _, id := range in.servedTeams() {
		t := s.teamLocked(id)
		teams = append(teams, map[string]any{"id": t.ID, "name": t.Name})
	}
	return ok("teams", teams, "response_metadata", map[string]any{"next_cursor": ""})
}

// authRevoke revokes the token the call came with
// (https://docs.slack.dev/reference/methods/auth.revoke: {"ok":true,"revoked":true});
// test=true only says it would.
func (s *Server) authRevoke(p map[string]string) reply {
	if p["test"] == "true" || p["test"] == "1" {
		return ok("revoked", false)
	}
	if t, found := s.ws.tokens[s.callToken]; found {
		t.revoked = true
	}
	return ok("revoked", true)
}

// GrantTeamAccess is an org admin adding an org-wide installation to
// workspaces (AddToWorkspace for each), with the team_access_granted event
// Slack sends the app (https://docs.slack.dev/reference/events/team_access_granted).
func (s *Server) GrantTeamAccess(ctx context.Context, enterpriseID string, teams ...string) (EventReceipt, error) {
	for _, t := range teams {
		s.AddToWorkspace(enterpriseID, t)
	}
	s.mu.Lock()
	rec := s.ws.installs[enterpriseID]
	env := s.installEventLocked(rec, map[string]any{"type": "team_access_granted", "team_ids": teams,
		"event_ts": fmt.Sprintf("%d.000000", s.opts.Now().Unix())})
	target := s.reach.eventsURL
	s.mu.Unlock()
	return s.deliverEvent(ctx, env, env["event_id"].(string), target, Delivery{})
}
