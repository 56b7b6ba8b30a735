package hook

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/askslack/askslack/waterfall"
)

// auqQuestion is one question of AskUserQuestion's tool_input.
type auqQuestion struct {
	Question    string `json:"question"`
	Header      string `json:"header"`
	MultiSelect bool   `json:"multiSelect"`
	Options     []struct {
		Label       string `json:"label"`
		Description string `json:"description"`
		Preview     string `json:"preview"`
	} `json:"options"`
}

func auqQuestions(raw json.RawMessage) ([]auqQuestion, error) {
	var in struct {
		Questions []auqQuestion `json:"questions"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%w: AskUserQuestion tool_input: %v", ErrBadInput, err)
	}
	if len(in.Questions) == 0 {
		return nil, fmt.Errorf("%w: AskUserQuestion tool_input has no questions", ErrBadInput)
	}
	return in.Questions, nil
}

// questions maps AskUserQuestion to one ask holding all its questions
// (one message, one Submit when there are several).
func (p *Plan) questions() error {
	qs, err := auqQuestions(p.in.ToolInput)
	if err != nil {
		return err
	}
	req := &waterfall.Request{Agent: agentOf(p.agent, p.in)}
	for i, q := range qs {
		wq := waterfall.Question{ID: fmt.Sprintf("q%d", i), Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			wq.Options = append(wq.Options, waterfall.Option{Label: o.Label, Description: o.Description, Preview: o.Preview})
		}
		req.Questions = append(req.Questions, wq)
	}
	p.Kind, p.Request, p.decide = Ask, req, decideQuestions
	return nil
}

// decideQuestions answers AskUserQuestion: allow with the input's questions
// unchanged plus answers keyed by question text. Several labels are joined
// with ", "; typed "Other" text is the value itself. A question skipped in
// a batch has no entry; when every question was skipped the call is denied,
// never allowed without answers.
func decideQuestions(p *Plan, s waterfall.Settlement) (any, error) {
	qs, err := auqQuestions(p.in.ToolInput)
	if err != nil {
		return nil, err
	}
	answers := map[string]string{}
	for i, q := range qs {
		it := item(s, fmt.Sprintf("q%d", i))
		parts := append([]string{}, it.Selected...)
		if c := strings.TrimSpace(it.Custom); c != "" {
			parts = append(parts, it.Custom)
		}
		if len(parts) > 0 {
			answers[q.Question] = strings.Join(parts, ", ")
		}
	}
	permission := p.in.HookEventName == EventPermissionRequest
	if len(answers) == 0 {
		why := "The user skipped these questions in Slack" + who(s) + "; decide without their answer or ask again."
		if permission {
			return allowDeny(false, decision{Message: why}), nil
		}
		return preToolUseOutput{HookEventName: EventPreToolUse, PermissionDecision: "deny", PermissionDecisionReason: why}, nil
	}
	updated, err := withField(p.in.ToolInput, "answers", answers)
	if err != nil {
		return nil, err
	}
	if permission {
		return allowDeny(true, decision{UpdatedInput: updated}), nil
	}
	return preToolUseOutput{HookEventName: EventPreToolUse, PermissionDecision: "allow", UpdatedInput: updated}, nil
}

// withField returns the JSON object raw with key set to v; every other
// field stays as it was (updatedInput replaces the whole input).
func withField(raw json.RawMessage, key string, v any) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: tool_input is not an object: %v", ErrBadInput, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	obj[key] = b
	return json.Marshal(obj)
}

// Plan review labels.
const (
	LabelApprove = "Approve"
	LabelDecline = "Decline"
)

// plan maps ExitPlanMode to a plan review: the plan as detail, Approve as
// the approving option, Decline, and (added by the message) "Decline with
// feedback…".
func (p *Plan) plan() error {
	var in struct {
		Plan         string `json:"plan"`
		PlanFilePath string `json:"planFilePath"`
	}
	if err := json.Unmarshal(p.in.ToolInput, &in); err != nil {
		return fmt.Errorf("%w: ExitPlanMode tool_input: %v", ErrBadInput, err)
	}
	text, from := p.planText(in.Plan, in.PlanFilePath)
	detail := text
	switch {
	case strings.TrimSpace(text) == "":
		detail = "_The agent sent no plan text and wrote no plan file._"
		if in.PlanFilePath != "" {
			detail = "_The agent sent no plan text; its plan file `" + in.PlanFilePath + "` is empty or unreadable._"
		}
	case from != "":
		detail = "_Read from the plan file `" + from + "`._\n\n" + text
	}
	a := agentOf(p.agent, p.in)
	title := "Approve this plan?"
	if t := firstLine(strings.TrimLeft(text, "# "), 120); t != "" {
		title = "Approve the plan “" + strings.TrimLeft(t, "# ") + "”?"
	}
	q := waterfall.Question{ID: "plan", Header: "Plan", Question: title, Detail: detail,
		Options: []waterfall.Option{{Label: LabelApprove, Description: "Claude leaves plan mode and starts"},
			{Label: LabelDecline, Description: "Claude stays in plan mode"}},
		Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: LabelApprove}}
	p.Kind, p.decide = Ask, decidePlan
	p.Request = &waterfall.Request{Agent: a, Questions: []waterfall.Question{q}}
	return nil
}

// maxPlan caps a plan read from a file (the host API takes 4 MB a request;
// Slack shows far less, the rest behind "View full plan").
const maxPlan = 256 << 10

// planText is the plan to review: ExitPlanMode's plan when it has one, else
// the plan file's text, and which file it came from. Claude Code sends an
// empty input when the model called ExitPlanMode without writing the plan
// file it was told to (2.1.332); the file is then looked for where the
// session's transcript names it. Only a file under a .claude/plans folder
// ending .md is read: the path is the agent's to choose, and a hook must
// not copy any other file into Slack.
func (p *Plan) planText(plan, file string) (text, from string) {
	if strings.TrimSpace(plan) != "" || p.opts.ReadPlan == nil {
		return plan, ""
	}
	candidates := []string{file}
	if p.opts.Transcript != nil {
		candidates = append(candidates, LastPlanFile(p.opts.Transcript()))
	}
	for _, f := range candidates {
		if !PlanFilePath(f) {
			continue
		}
		if t, err := p.opts.ReadPlan(f); err == nil && strings.TrimSpace(t) != "" {
			return truncate(t, maxPlan), f
		}
	}
	return plan, ""
}

// PlanFilePath reports whether path may be read as a plan file: absolute,
// clean, in a .claude/plans folder, ending .md.
func PlanFilePath(path string) bool {
	return filepath.IsAbs(path) && filepath.Clean(path) == path && strings.HasSuffix(path, ".md") &&
		filepath.Base(filepath.Dir(path)) == "plans" && filepath.Base(filepath.Dir(filepath.Dir(path))) == ".claude"
}

// planMention finds plan file paths in a transcript's JSON text.
var planMention = regexp.MustCompile(`/[^\s"'\\]*/\.claude/plans/[A-Za-z0-9._-]+\.md`)

// LastPlanFile is the last plan file a transcript names, or "".
func LastPlanFile(transcript []byte) string {
	all := planMention.FindAll(transcript, -1)
	if len(all) == 0 {
		return ""
	}
	return string(all[len(all)-1])
}

// decidePlan: Approve allows with tool_input echoed as updatedInput (Claude
// ignores a bare allow for ExitPlanMode); anything else denies, with the
// feedback as Claude's message.
func decidePlan(p *Plan, s waterfall.Settlement) (any, error) {
	it := item(s, "plan")
	if p.Request.Questions[0].Approves(&it) {
		return allowDeny(true, decision{UpdatedInput: p.in.ToolInput, Message: approvedBy(s)}), nil
	}
	msg := strings.TrimSpace(it.Custom)
	if msg == "" {
		msg = "The plan was declined in Slack" + who(s) + ". Ask what should change before planning again."
	}
	return allowDeny(false, decision{Message: msg}), nil
}
