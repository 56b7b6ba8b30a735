package hook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askslack/askslack/waterfall"
)

// The decision JSON both agents read from a hook's stdout.
type output struct {
	HookSpecificOutput any `json:"hookSpecificOutput"`
}

type preToolUseOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

type permissionOutput struct {
	HookEventName string   `json:"hookEventName"`
	Decision      decision `json:"decision"`
}

type decision struct {
	Behavior           string            `json:"behavior"`
	UpdatedInput       json.RawMessage   `json:"updatedInput,omitempty"`
	UpdatedPermissions []json.RawMessage `json:"updatedPermissions,omitempty"`
	Message            string            `json:"message,omitempty"`
}

// Decide turns the answer given in Slack into the decision JSON to print.
func (p *Plan) Decide(s waterfall.Settlement) ([]byte, error) {
	if p.Kind != Ask || p.decide == nil {
		return nil, fmt.Errorf("hook: nothing was asked")
	}
	v, err := p.decide(p, s)
	if err != nil {
		return nil, err
	}
	return json.Marshal(output{HookSpecificOutput: v})
}

// Defer is the decision that pauses a headless Claude Code run (claude -p)
// until it is resumed; only a PreToolUse hook may give it.
func Defer() []byte {
	b, _ := json.Marshal(output{HookSpecificOutput: preToolUseOutput{HookEventName: EventPreToolUse, PermissionDecision: "defer"}})
	return b
}

// who names the respondent for a default message.
func who(s waterfall.Settlement) string {
	switch {
	case s.Respondent.UserName != "":
		return " by " + s.Respondent.UserName
	case s.Respondent.UserID != "":
		return " by " + s.Respondent.UserID
	}
	return ""
}

// allowDeny builds a PermissionRequest decision.
func allowDeny(allow bool, d decision) permissionOutput {
	d.Behavior = "deny"
	if allow {
		d.Behavior = "allow"
	}
	return permissionOutput{HookEventName: EventPermissionRequest, Decision: d}
}

// item returns the answer to question id, empty when skipped.
func item(s waterfall.Settlement, id string) waterfall.AnswerItem {
	if it := s.Item(id); it != nil {
		return *it
	}
	return waterfall.AnswerItem{ID: id}
}

// chosen is the answer's one selected label, or "" (typed text, skipped).
func chosen(it waterfall.AnswerItem) string {
	if len(it.Selected) == 1 {
		return it.Selected[0]
	}
	return ""
}

// firstLine is s's first non-empty line, cut to n characters.
func firstLine(s string, n int) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			r := []rune(l)
			if len(r) > n {
				return string(r[:n-1]) + "…"
			}
			return l
		}
	}
	return ""
}
