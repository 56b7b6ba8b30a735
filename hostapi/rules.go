package hostapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
)

const whyRules = "only operators (ASKSLACK_ADMIN_TOKENS) list and revoke standing rules"

// RuleView is a standing rule as the API shows it.
type RuleView struct {
	ID     int64  `json:"id"`
	Effect string `json:"effect"`
	// Match is the rule in words: Bash(npm test *).
	Match         string     `json:"match"`
	Tool          string     `json:"tool"`
	Command       string     `json:"command,omitempty"`
	Path          string     `json:"path,omitempty"`
	Repo          string     `json:"repo,omitempty"`
	Caller        string     `json:"caller,omitempty"`
	GrantedBy     string     `json:"grantedBy"`
	GrantedByName string     `json:"grantedByName,omitempty"`
	Admin         bool       `json:"admin,omitempty"`
	FromCall      string     `json:"fromCall,omitempty"`
	Granted       time.Time  `json:"granted"`
	Until         *time.Time `json:"until,omitempty"` // absent: until revoked
	Uses          int64      `json:"uses"`
	LastUsed      *time.Time `json:"lastUsed,omitempty"`
}

// ViewRule is r as the API shows it.
func ViewRule(r asktype.Rule) RuleView {
	v := RuleView{ID: r.ID, Effect: r.Effect, Match: waterfall.GrammarRule(r).String(), Tool: r.Tool, Command: r.Command, Path: r.Path,
		Repo: r.Repo, Caller: r.Caller, GrantedBy: r.GrantedBy, GrantedByName: r.GrantedByName, Admin: r.Admin, FromCall: r.FromCall,
		Granted: r.Granted.UTC(), Uses: r.Uses}
	if !r.Until.IsZero() {
		u := r.Until.UTC()
		v.Until = &u
	}
	if !r.LastUsed.IsZero() {
		u := r.LastUsed.UTC()
		v.LastUsed = &u
	}
	return v
}

// RulesPage is the JSON of GET /v1/rules.
type RulesPage struct {
	Rules []RuleView `json:"rules"`
}

// rules is GET /v1/rules, for operators only: the live standing rules,
// oldest first.
func (s *Server) rules(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.require(w, r, RoleAdmin, whyRules); !ok {
		return
	}
	rs, err := s.host.Rules(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	page := RulesPage{Rules: make([]RuleView, 0, len(rs))}
	for _, x := range rs {
		page.Rules = append(page.Rules, ViewRule(x))
	}
	writeJSON(w, http.StatusOK, page)
}

// revokeRule is DELETE /v1/rules/{id}, for operators only: the rule ends
// on every replica before their next match. 404 for a rule that is not
// live (unknown, revoked, or run out).
func (s *Server) revokeRule(w http.ResponseWriter, r *http.Request) {
	c, ok := s.require(w, r, RoleAdmin, whyRules)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.fail(w, waterfall.Errorf(waterfall.CodeBadRequest, "a rule id is a positive integer"))
		return
	}
	x, err := s.host.RevokeRule(r.Context(), id, waterfall.Respondent{UserName: c.Name, Surface: waterfall.SurfaceAPI})
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Revoked RuleView `json:"revoked"`
	}{ViewRule(x)})
}
