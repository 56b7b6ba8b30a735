package hostapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/askslack/askslack/waterfall"
)

// Refusals of a caller's role, each saying what the role is for.
const (
	whyAgentsAsk    = "only agent callers (ASKSLACK_API_TOKENS) may ask"
	whyPeopleAnswer = "answers come from people, not agents: answer in Slack, or through an answer surface's token (ASKSLACK_ANSWER_TOKENS)"
	whyNoWithdraw   = "an answer surface reads and answers asks; only the agent that asked, or an operator, withdraws one"
	whyAgentsAck    = "only the agent that asked admits its late answers"
	whyAgentsGoOn   = "only the agent that asked says it went on without the answer"
	whyAudit        = "only operators (ASKSLACK_ADMIN_TOKENS) read the audit trail"
)

// require refuses the request (403 FORBIDDEN, nothing changes) unless its
// caller holds role.
func (s *Server) require(w http.ResponseWriter, r *http.Request, role Role, why string) (Caller, bool) {
	c := callerOf(r)
	if !c.Can(role) {
		s.log.Info("host API: refused a caller's role", "caller", c.Name, "role", c.Role.String(), "route", r.Pattern)
		s.refused(r, c, fmt.Sprintf("%s (%s is %s)", why, c.Name, c.Role))
		s.fail(w, waterfall.Errorf(waterfall.CodeForbidden, "%s (%s is %s)", why, c.Name, c.Role))
		return c, false
	}
	return c, true
}

// refused records a refused call in the audit trail (rate-limited per
// caller: see engine.Host.Refused). Calls without a valid token are
// not recorded: anyone on the network can make them.
func (s *Server) refused(r *http.Request, c Caller, why string) {
	s.host.Refused(r.Context(), waterfall.Refusal{Key: "api:" + c.Name, CallID: r.PathValue("callId"), Caller: c.Name,
		Why: r.Pattern + ": " + why})
}

// mine reads an ask for its caller: another agent's ask is NOT_FOUND,
// worded as an unknown call id is, so a caller learns nothing of it (the
// audit trail records the try).
func (s *Server) mine(r *http.Request, c Caller, callID string) (*waterfall.Record, error) {
	a, err := s.host.Get(r.Context(), callID)
	if err == nil && !c.owns(a.Caller) {
		s.refused(r, c, "another caller's ask")
		return nil, waterfall.Errorf(waterfall.CodeNotFound, "no ask with callId %q", callID)
	}
	return a, err
}

// sessionOf is the store's session of the path's sessionId for the caller:
// an agent's own, always; an answer surface or operator names the owner
// with ?caller= (sessions of different callers never mix).
func sessionOf(r *http.Request, c Caller) string {
	sid := r.PathValue("sessionId")
	owner := c.Name
	if !c.Can(RoleAgent) {
		owner = strings.TrimSpace(r.URL.Query().Get("caller"))
	}
	return waterfall.SessionKey(owner, sid)
}

// bindPrincipal gives an agent's ask the principal the operator bound to
// its caller; an ask that names another is PRINCIPAL_MISMATCH. An unbound
// caller's principal stays a hint (a mention, where a DM goes): it grants
// nothing (see slackbot.Allowlist).
func (s *Server) bindPrincipal(c Caller, req *waterfall.Request) error {
	bound, by := s.principals[c.Name], "ASKSLACK_CALLER_PRINCIPALS"
	if c.Principal != "" {
		bound, by = c.Principal, "its agent token's owner"
	}
	if bound == "" {
		return nil
	}
	if p := req.Agent.Principal; p != "" && !strings.EqualFold(p, bound) {
		return waterfall.Errorf(waterfall.CodePrincipalMismatch, "caller %s asks on behalf of %s (%s), not %s", c.Name, bound, by, p)
	}
	req.Agent.Principal = bound
	return nil
}

// bindWorkspace gives an agent's ask its caller's workspace when the
// deployment serves several: the one ASKSLACK_CALLER_WORKSPACES binds, or
// the one a personal token's owner signed in to. An ask naming another
// workspace, a caller bound to none, and a workspace no installation
// serves are refused before anything is stored or posted. With one
// workspace an ask names none.
func (s *Server) bindWorkspace(ctx context.Context, c Caller, req *waterfall.Request) error {
	if s.served == nil {
		req.Workspace = ""
		return nil
	}
	bound, by := s.workspaces[c.Name], "ASKSLACK_CALLER_WORKSPACES"
	if c.Token != nil && c.Token.Team != "" {
		bound, by = c.Token.Team, "the workspace its agent token's owner signed in to"
	}
	if bound == "" {
		return waterfall.Errorf(waterfall.CodeForbidden, "caller %s belongs to no Slack workspace: this deployment serves several, so bind it with ASKSLACK_CALLER_WORKSPACES=%s=T… (or connect with askslack login)", c.Name, c.Name)
	}
	if w := req.Workspace; w != "" && w != bound {
		return waterfall.Errorf(waterfall.CodeForbidden, "caller %s asks in workspace %s (%s), not %s", c.Name, bound, by, w)
	}
	if err := s.served(ctx, bound); err != nil {
		return waterfall.Errorf(waterfall.CodeNoProvider, "askslack is not installed in workspace %s (%v): install it there with Add to Slack", bound, err)
	}
	req.Workspace = bound
	return nil
}
