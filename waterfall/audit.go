package waterfall

import (
	"errors"

	"github.com/askslack/askslack/asktype"
)

// Refusal is a refused click or API call, for the audit trail: nothing
// about an ask changed, and the trail records who tried and why.
type Refusal struct {
	// Key is who was refused ("api:<caller>", "slack:<user id>"); it
	// keys the rate limit (see Refused).
	Key string
	// CallID is the ask the refused call was about ("" for none).
	CallID string
	// Caller is the API caller refused, or the owner of the ask a refused
	// click was on; Agent is the ask's agent, when known.
	Caller string
	Agent  *asktype.AuditAgent
	// Who is the person whose click was refused (nil for an API call).
	Who *asktype.AuditRespondent
	// Why is what they were told.
	Why string
}

// RefusedClick is the refusal of a person's answer to a.
func RefusedClick(a *Record, who Respondent, why string) Refusal {
	r := Refusal{Key: "slack:" + who.UserID, CallID: a.CallID, Caller: a.Caller, Why: why,
		Who: &asktype.AuditRespondent{UserID: who.UserID, UserName: who.UserName, Surface: who.Surface}}
	if a.AgentID != "" || a.AgentSession != "" {
		r.Agent = &asktype.AuditAgent{ID: a.AgentID, SessionID: a.AgentSession}
	}
	return r
}

// RefusedRule is the audit record of who trying to revoke or grant the
// standing rule of caller (the rule's owner) and why it was refused.
func RefusedRule(caller string, who Respondent, why string) Refusal {
	return Refusal{Key: "slack:" + who.UserID, Caller: caller, Why: why,
		Who: &asktype.AuditRespondent{UserID: who.UserID, UserName: who.UserName, Surface: who.Surface}}
}

// ErrNoAudit: the Host was built without an audit trail.
var ErrNoAudit = errors.New("waterfall: no audit trail configured")
