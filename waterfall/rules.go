package waterfall

import (
	"fmt"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/rules"
)

// GrammarRule is the grammar's view of a stored rule.
func GrammarRule(r asktype.Rule) rules.Rule {
	return rules.Rule{ID: r.ID, Effect: rules.Effect(r.Effect), Tool: r.Tool, Command: r.Command, Path: r.Path, Repo: r.Repo, Caller: r.Caller}
}

// RuleRefOf is the respondent's reference to r.
func RuleRefOf(r asktype.Rule) *RuleRef {
	ref := &RuleRef{ID: r.ID, Effect: r.Effect, Match: GrammarRule(r).String(), GrantedBy: r.GrantedBy, GrantedByName: r.GrantedByName}
	if !r.Until.IsZero() {
		u := r.Until.UTC()
		ref.Until = &u
	}
	return ref
}

// Grant is a standing rule a person grants from an ask.
type Grant struct {
	Rule rules.Rule // ID ignored
	// Until is when it ends; zero lasts until revoked.
	Until time.Time
	// Admin: granted as a rule admin.
	Admin bool
}

// RuleDetail is a rule in words for the audit trail.
func RuleDetail(r asktype.Rule) string {
	s := fmt.Sprintf("rule %d: %s %s", r.ID, r.Effect, GrammarRule(r).String())
	if r.Repo != "" {
		s += " in repo " + r.Repo
	}
	if r.Caller != "" {
		s += " for caller " + r.Caller
	}
	if r.Until.IsZero() {
		return s + ", until revoked"
	}
	return s + ", until " + r.Until.UTC().Format(time.RFC3339)
}
