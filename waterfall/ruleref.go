package waterfall

import (
	"fmt"
	"time"
)

// SurfaceRule is the surface of an answer a standing rule gave.
const SurfaceRule = "rule"

// RuleRef names the standing rule that answered an ask, in its respondent.
type RuleRef struct {
	ID int64 `json:"id"`
	// Effect is "allow" or "deny".
	Effect string `json:"effect"`
	// Match is the rule's match in words: Bash(npm test *), Edit(src/**).
	Match string `json:"match"`
	// GrantedBy and GrantedByName are the person who granted it.
	GrantedBy     string `json:"grantedBy,omitempty"`
	GrantedByName string `json:"grantedByName,omitempty"`
	// Until is when it ends; nil for a rule that lasts until revoked.
	Until *time.Time `json:"until,omitempty"`
}

// Name is how a rule-given answer names its respondent: "rule 12 by
// alice, until 18:00 UTC" (the date too when it is not the day of at).
func (r *RuleRef) Name(at time.Time) string {
	by := r.GrantedByName
	if by == "" {
		by = r.GrantedBy
	}
	s := fmt.Sprintf("rule %d by %s", r.ID, by)
	if r.Until == nil {
		return s + ", until revoked"
	}
	u, a := r.Until.UTC(), at.UTC()
	if u.YearDay() == a.YearDay() && u.Year() == a.Year() {
		return s + ", until " + u.Format("15:04") + " UTC"
	}
	return s + ", until " + u.Format("Jan 2 15:04") + " UTC"
}
