package hook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askslack/askslack/waterfall"
)

// Codex's own question tool. In Plan mode Codex 0.171.0 offers the model
// request_user_input; its PreToolUse hook sees the questions before the
// terminal's picker shows ({id, header, question, options[{label,
// description}], isOther, isSecret}), but no hook output answers them.
// The answer goes in through Codex's app server instead, as the terminal's
// own does (package hookcmd): a response to its item/tool/requestUserInput
// request, {"answers":{"<question id>":{"answers":["<label or text>"]}}},
// which is what the model then reads as the call's output.

// ToolRequestUserInput is Codex's question tool.
const ToolRequestUserInput = "request_user_input"

// codexQuestion is one question of request_user_input's tool_input.
type codexQuestion struct {
	ID       string `json:"id"`
	Header   string `json:"header"`
	Question string `json:"question"`
	IsOther  bool   `json:"isOther"`
	IsSecret bool   `json:"isSecret"`
	Options  []struct {
		Label       string `json:"label"`
		Description string `json:"description"`
	} `json:"options"`
}

func codexQuestions(raw json.RawMessage) ([]codexQuestion, error) {
	var in struct {
		Questions []codexQuestion `json:"questions"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%w: request_user_input tool_input: %v", ErrBadInput, err)
	}
	if len(in.Questions) == 0 {
		return nil, fmt.Errorf("%w: request_user_input tool_input has no questions", ErrBadInput)
	}
	return in.Questions, nil
}

// codexQuestionsPlan maps request_user_input to one ask holding its
// questions (Kind Beside). A batch with a secret question is not asked in
// Slack at all (Skip): its answer must never be shown there, nor in the
// audit trail or a webhook, so it stays in the terminal.
func (p *Plan) codexQuestionsPlan() error {
	qs, err := codexQuestions(p.in.ToolInput)
	if err != nil {
		return err
	}
	req := &waterfall.Request{Agent: agentOf(p.agent, p.in)}
	for i, q := range qs {
		if q.IsSecret {
			p.Reason = "request_user_input asks for a secret; it is answered in the terminal only"
			return nil
		}
		wq := waterfall.Question{ID: fmt.Sprintf("q%d", i), Question: q.Question, Header: q.Header}
		for _, o := range q.Options {
			wq.Options = append(wq.Options, waterfall.Option{Label: o.Label, Description: o.Description})
		}
		req.Questions = append(req.Questions, wq)
	}
	p.Kind, p.Request = Beside, req
	return nil
}

// CodexAnswers is the response Codex's app server expects for the
// request_user_input questions of in, answered with s: each answered
// question's chosen labels, then any typed text, under its id; a skipped
// question has no entry (Codex reads that as no answer). ok is false when
// no question was answered.
func CodexAnswers(in *Input, s waterfall.Settlement) (resp []byte, ok bool, err error) {
	qs, err := codexQuestions(in.ToolInput)
	if err != nil {
		return nil, false, err
	}
	type answer struct {
		Answers []string `json:"answers"`
	}
	answers := map[string]answer{}
	for i, q := range qs {
		it := item(s, fmt.Sprintf("q%d", i))
		parts := append([]string{}, it.Selected...)
		if c := strings.TrimSpace(it.Custom); c != "" {
			parts = append(parts, c)
		}
		if len(parts) > 0 {
			answers[q.ID] = answer{Answers: parts}
		}
	}
	b, err := json.Marshal(map[string]any{"answers": answers})
	return b, len(answers) > 0, err
}
