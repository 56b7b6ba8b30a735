package hook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askslack/askslack/waterfall"
)

// Tool permission labels. Typed "Other…" text denies with that text as the
// reason: the message has no separate "Deny with reason…" control, and the
// Other path is the one that carries text.
const (
	LabelAllow       = waterfall.PermissionAllow
	LabelAlwaysAllow = "Always allow"
	LabelDeny        = waterfall.PermissionDeny
)

type permissionStyle int

const (
	claudePermission permissionStyle = iota
	// codexPermission never echoes updatedInput or updatedPermissions:
	// Codex fails closed on them.
	codexPermission
)

// permission maps a tool permission prompt to a single-select question:
// Allow, Always allow (Claude, when it suggested a permission update),
// Deny; "Other…" denies with the typed reason.
func (p *Plan) permission(style permissionStyle) error {
	in := p.in
	if in.ToolName == "" {
		return fmt.Errorf("%w: PermissionRequest without tool_name", ErrBadInput)
	}
	a := agentOf(p.agent, in)
	where := ""
	if b := cwdBase(in.Cwd); b != "" {
		where = " in " + b
	}
	q := waterfall.Question{ID: waterfall.PermissionQuestionID, Header: in.ToolName,
		Question: fmt.Sprintf("%s wants to use %s%s. Allow it?", p.agent, in.ToolName, where),
		Detail:   Describe(in.ToolName, in.ToolInput) + "\n\n_Other… denies with the reason you type, which the agent reads._"}
	q.Options = append(q.Options, waterfall.Option{Label: LabelAllow, Description: "Run it this once"})
	if style == claudePermission && len(in.PermissionSuggestions) > 0 {
		q.Options = append(q.Options, waterfall.Option{Label: LabelAlwaysAllow,
			Description: "Run it and " + describeSuggestion(in.PermissionSuggestions[0])})
	}
	q.Options = append(q.Options, waterfall.Option{Label: LabelDeny, Description: "Don't run it; the agent is told it was denied"})
	p.Kind, p.decide = Ask, decidePermission(style)
	p.Request = &waterfall.Request{Agent: a, Questions: []waterfall.Question{q}, Permission: permissionOf(in)}
	return nil
}

func decidePermission(style permissionStyle) func(p *Plan, s waterfall.Settlement) (any, error) {
	return func(p *Plan, s waterfall.Settlement) (any, error) {
		it := item(s, waterfall.PermissionQuestionID)
		if c := strings.TrimSpace(it.Custom); c != "" {
			return allowDeny(false, decision{Message: c}), nil
		}
		switch chosen(it) {
		case LabelAllow:
			return allowDeny(true, decision{Message: approvedBy(s)}), nil
		case LabelAlwaysAllow:
			if style == claudePermission && len(p.in.PermissionSuggestions) > 0 {
				return allowDeny(true, decision{UpdatedPermissions: p.in.PermissionSuggestions[:1], Message: approvedBy(s)}), nil
			}
			return allowDeny(true, decision{Message: approvedBy(s)}), nil
		case LabelDeny:
			if r := s.Respondent.Rule; r != nil {
				// No person saw this call: say which standing rule
				// refused it, so the agent (and its user) can ask for
				// the rule to be revoked rather than retry.
				return allowDeny(false, decision{Message: fmt.Sprintf("Denied by askslack standing rule %d (deny %s, granted by %s).",
					r.ID, r.Match, orDefault(r.GrantedByName, r.GrantedBy))}), nil
			}
			return allowDeny(false, decision{Message: "Denied in Slack" + who(s) + "."}), nil
		}
		return nil, fmt.Errorf("hook: unexpected answer %+v to a permission request", it)
	}
}

// describeSuggestion says in words what a permission_suggestions entry
// does, e.g. "add the allow rule Bash(npm test) to local settings".
func describeSuggestion(raw json.RawMessage) string {
	var s struct {
		Type        string `json:"type"`
		Behavior    string `json:"behavior"`
		Destination string `json:"destination"`
		Mode        string `json:"mode"`
		Rules       []struct {
			ToolName    string `json:"toolName"`
			RuleContent string `json:"ruleContent"`
		} `json:"rules"`
		Directories []string `json:"directories"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return "apply the agent's suggested permission update"
	}
	to := ""
	if s.Destination != "" {
		to = " (" + s.Destination + ")"
	}
	switch s.Type {
	case "addRules", "replaceRules":
		var rules []string
		for _, r := range s.Rules {
			rule := r.ToolName
			if r.RuleContent != "" {
				rule += "(" + r.RuleContent + ")"
			}
			rules = append(rules, rule)
		}
		return fmt.Sprintf("add the %s rule %s%s", orDefault(s.Behavior, "allow"), strings.Join(rules, ", "), to)
	case "setMode":
		return "switch to " + s.Mode + " mode" + to
	case "addDirectories":
		return "allow the directories " + strings.Join(s.Directories, ", ") + to
	}
	return "apply the permission update " + truncate(string(raw), 200)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
