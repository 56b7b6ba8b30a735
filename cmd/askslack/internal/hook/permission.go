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
	LabelAlwaysAllow = waterfall.PermissionAlwaysAllow
	LabelDeny        = waterfall.PermissionDeny
)

// maxLabel keeps an option a button (blocks: a longer label turns the
// options into radio buttons, two taps on a phone).
const maxLabel = 30

// maxSuggestions caps the agent's other permission suggestions offered as
// options beside Allow, Always allow and Deny.
const maxSuggestions = 2

type permissionStyle int

const (
	claudePermission permissionStyle = iota
	// codexPermission never echoes updatedInput or updatedPermissions:
	// Codex fails closed on them.
	codexPermission
)

// permission maps a tool permission prompt to a single-select question:
// Allow; Always allow (Claude: a rule of Claude's own for exactly this
// command, so the same command is not asked again); the agent's other
// suggestions, each named by what it does ("Allow, accept edits"); Deny.
// "Other…" denies with the typed reason.
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
	if style == claudePermission {
		for _, o := range claudeUpdates(in) {
			q.Options = append(q.Options, waterfall.Option{Label: o.label, Description: o.description})
		}
	}
	q.Options = append(q.Options, waterfall.Option{Label: LabelDeny, Description: "Don't run it; the agent is told it was denied"})
	p.Kind, p.decide = Ask, decidePermission(style)
	p.Request = &waterfall.Request{Agent: a, Questions: []waterfall.Question{q}, Permission: permissionOf(in)}
	if pm := p.Request.Permission; pm != nil && style == claudePermission {
		pm.Editable = editableOf(in, pm)
		if waterfall.Validate(&waterfall.Request{CallID: "x", Agent: a, Questions: p.Request.Questions, Permission: pm}) != nil {
			pm.Editable = nil // asked without Edit & allow rather than not at all
		}
	}
	return nil
}

// update is an allow option that also changes Claude's permissions.
type update struct {
	label, description string
	permission         json.RawMessage // one updatedPermissions entry
}

// claudeUpdates are the allow options beyond Allow for a Claude permission
// prompt. Always allow is a rule for exactly this call, saved in the
// project's local settings, as the terminal's "don't ask again" does:
// Claude Code 2.1.332 suggested folder access and a mode switch for
// `touch x`, and echoing those did not stop the same command from being
// asked again. The agent's own suggestions follow, named by what they do.
func claudeUpdates(in *Input) []update {
	var out []update
	exact := exactRule(in)
	if exact != nil {
		out = append(out, update{label: LabelAlwaysAllow, permission: exact,
			description: "Run it, and don't ask again for " + ruleText(in) + " in this project (Claude's own rule, in .claude/settings.local.json)"})
	}
	for _, s := range in.PermissionSuggestions {
		if len(out) >= maxSuggestions+1 {
			break
		}
		label := suggestionLabel(s)
		if label == "" || hasLabel(out, label) || exact != nil && sameRule(s, exact) {
			continue
		}
		out = append(out, update{label: label, permission: s, description: "Run it and " + describeSuggestion(s)})
	}
	return out
}

func hasLabel(us []update, label string) bool {
	for _, u := range us {
		if u.label == label {
			return true
		}
	}
	return false
}

// exactRule is the allow rule for exactly this call: Bash(<the command>)
// for a shell command, the tool alone for an MCP tool; nil where no rule
// can name one call (an edit's rule would cover a whole path pattern).
func exactRule(in *Input) json.RawMessage {
	rule := map[string]any{"toolName": in.ToolName}
	switch {
	case in.ToolName == "Bash":
		cmd := commandOf(in.ToolInput)
		if cmd == "" || strings.ContainsAny(cmd, "\n\r") || len(cmd) > 1000 {
			return nil
		}
		rule["ruleContent"] = cmd
	case strings.HasPrefix(in.ToolName, "mcp__"):
	default:
		return nil
	}
	b, _ := json.Marshal(map[string]any{"type": "addRules", "rules": []any{rule}, "behavior": "allow", "destination": "localSettings"})
	return b
}

// ruleText names exactRule's rule for a person.
func ruleText(in *Input) string {
	if c := commandOf(in.ToolInput); in.ToolName == "Bash" && c != "" {
		return "`" + truncate(c, 200) + "`"
	}
	return in.ToolName
}

func commandOf(raw json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(raw, &in)
	return in.Command
}

// sameRule reports whether suggestion s adds the same allow rules as ours.
func sameRule(s, ours json.RawMessage) bool {
	type rules struct {
		Type     string `json:"type"`
		Behavior string `json:"behavior"`
		Rules    []struct {
			ToolName    string `json:"toolName"`
			RuleContent string `json:"ruleContent"`
		} `json:"rules"`
	}
	var a, b rules
	if json.Unmarshal(s, &a) != nil || json.Unmarshal(ours, &b) != nil || a.Type != "addRules" || orDefault(a.Behavior, "allow") != "allow" {
		return false
	}
	return len(a.Rules) == 1 && len(b.Rules) == 1 && a.Rules[0] == b.Rules[0]
}

// suggestionLabel is a short button label saying what a suggestion does,
// always starting "Allow, " (waterfall.AllowsPermission); "" for one that
// does not allow (a deny rule) or that cannot be read.
func suggestionLabel(raw json.RawMessage) string {
	var s struct {
		Type     string `json:"type"`
		Behavior string `json:"behavior"`
		Mode     string `json:"mode"`
		Rules    []struct {
			ToolName    string `json:"toolName"`
			RuleContent string `json:"ruleContent"`
		} `json:"rules"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	switch s.Type {
	case "addRules", "replaceRules":
		if orDefault(s.Behavior, "allow") != "allow" || len(s.Rules) == 0 {
			return ""
		}
		return "Allow, add rule" // the rule is in the description
	case "setMode":
		switch s.Mode {
		case "acceptEdits":
			return "Allow, accept edits"
		case "":
			return ""
		}
		return truncate("Allow, "+s.Mode+" mode", maxLabel)
	case "addDirectories":
		return "Allow, add folder"
	}
	return ""
}

func decidePermission(style permissionStyle) func(p *Plan, s waterfall.Settlement) (any, error) {
	return func(p *Plan, s waterfall.Settlement) (any, error) {
		it := item(s, waterfall.PermissionQuestionID)
		if c := strings.TrimSpace(it.Custom); c != "" {
			return allowDeny(false, decision{Message: c}), nil
		}
		label := chosen(it)
		if len(it.Edited) > 0 {
			// Only Claude's asks list editable fields; Codex fails closed
			// on updatedInput, so an edit that reaches it anyway denies
			// rather than running the call as asked.
			if style != claudePermission || label != LabelAllow {
				return allowDeny(false, decision{Message: "Allowed with changes in Slack" + who(s) + ", but this agent cannot run an edited call: ask again."}), nil
			}
			input, err := editedInput(p.in, it.Edited)
			if err != nil {
				return allowDeny(false, decision{Message: "Allowed with changes in Slack" + who(s) + ", but the changes could not be applied: ask again."}), nil
			}
			return allowDeny(true, decision{UpdatedInput: input, Message: "Allowed with changes in Slack" + who(s) + "."}), nil
		}
		switch label {
		case LabelAllow:
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
		if style == claudePermission {
			for _, u := range claudeUpdates(p.in) {
				if u.label == label {
					return allowDeny(true, decision{UpdatedPermissions: []json.RawMessage{u.permission}, Message: approvedBy(s)}), nil
				}
			}
		}
		if waterfall.AllowsPermission(label) {
			// An allow option this run did not offer (the question was
			// asked by an earlier run): allow, changing nothing else.
			return allowDeny(true, decision{Message: approvedBy(s)}), nil
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
