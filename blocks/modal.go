package blocks

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
)

// Action ids of the inputs inside modals. Their blocks are ChoiceBlockID and
// TextBlockID of the question they answer.
const (
	InputText    = "askslack.text"
	InputChoices = "askslack.choices"
)

// ChoiceBlockID is the input block holding question qi's choices in a modal.
func ChoiceBlockID(callID string, qi int) string { return blockID(callID, qi) + "/choice" }

// TextBlockID is the input block holding question qi's free text in a modal.
func TextBlockID(callID string, qi int) string { return blockID(callID, qi) + "/text" }

// maxFreeText caps what a person can type into a modal.
const maxFreeText = 3000

// Meta is what a modal carries in private_metadata: modals have no session
// on Slack's side, so everything needed on submit rides along.
type Meta struct {
	CallID   string `json:"c"`
	Question int    `json:"q"`
	Channel  string `json:"ch,omitempty"`
	TS       string `json:"ts,omitempty"`
}

// Encode returns the private_metadata string (≤3000 chars: ids are short).
func (m Meta) Encode() string {
	b, _ := json.Marshal(m)
	return string(b)
}

// DecodeMeta parses private_metadata written by Meta.Encode.
func DecodeMeta(s string) (Meta, error) {
	var m Meta
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return m, fmt.Errorf("blocks: private_metadata: %w", err)
	}
	if m.CallID == "" {
		return m, errors.New("blocks: private_metadata names no call")
	}
	return m, nil
}

// OtherModal is the "Other…" modal for question qi: a multiline text input
// and, for a multi-select question, the choices too, since custom text may
// accompany selections.
//
// For a batch of questions the modal holds the whole batch — a choice and an
// optional text per question — because one submission settles the batch.
func OtherModal(v View, qi int, meta Meta) slack.ModalViewRequest {
	if len(v.Request.Questions) > 1 {
		return batchModal(v, meta)
	}
	q := &v.Request.Questions[qi]
	bs := []slack.Block{slack.NewSectionBlock(mrkdwn("*"+q.Question+"*", maxSectionText), nil, nil)}
	if q.MultiSelect && len(q.Options) > 0 {
		var el slack.BlockElement
		if len(q.Options) <= maxCheckboxes {
			el = slack.NewCheckboxGroupsBlockElement(InputChoices, options(q, true)...)
		} else {
			el = slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, plain("Choose any", maxPlaceholder), InputChoices, options(q, false)...)
		}
		bs = append(bs, slack.NewInputBlock(ChoiceBlockID(v.CallID, qi), plain("Also choose (optional)", maxInputLabel), nil, el).WithOptional(true))
	}
	input := slack.NewPlainTextInputBlockElement(plain("Type your answer", maxPlaceholder), InputText).
		WithMultiline(true).WithMaxLength(maxFreeText)
	bs = append(bs, slack.NewInputBlock(TextBlockID(v.CallID, qi), plain("Your answer", maxInputLabel), nil, input))
	meta.Question = qi
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("Other answer", maxModalTitle),
		Submit:          plain("Send", maxModalTitle),
		Close:           plain("Cancel", maxModalTitle),
		Blocks:          slack.Blocks{BlockSet: bs},
		PrivateMetadata: meta.Encode(),
		CallbackID:      CallbackOther,
	}
}

// DeclineModal asks for the reason a plan is declined.
func DeclineModal(v View, qi int, meta Meta) slack.ModalViewRequest {
	q := &v.Request.Questions[qi]
	input := slack.NewPlainTextInputBlockElement(plain("What should change?", maxPlaceholder), InputText).
		WithMultiline(true).WithMaxLength(maxFreeText)
	meta.Question = qi
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  plain("Decline plan", maxModalTitle),
		Submit: plain("Decline", maxModalTitle),
		Close:  plain("Cancel", maxModalTitle),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(mrkdwn("*"+q.Question+"*", maxSectionText), nil, nil),
			slack.NewInputBlock(TextBlockID(v.CallID, qi), plain("Feedback for the agent", maxInputLabel), nil, input),
		}},
		PrivateMetadata: meta.Encode(),
		CallbackID:      CallbackDecline,
	}
}

// DetailModal shows a question's full detail (the whole plan), read-only.
// Text beyond one modal is cut with a note; the message keeps the start.
func DetailModal(v View, qi int) slack.ModalViewRequest {
	q := &v.Request.Questions[qi]
	text := Escape(q.Detail)
	title := "Details"
	if q.PlanReview() {
		text, title = MarkdownToMrkdwn(q.Detail), "Full plan"
	}
	var bs []slack.Block
	rs := []rune(text)
	for len(rs) > 0 && len(bs) < maxModalBlocks-1 {
		n := min(len(rs), maxSectionText)
		chunk := string(rs[:n])
		// Never split an escape entity between two sections.
		if n < len(rs) {
			chunk = truncateEscaped(chunk+"…", n)
			chunk = chunk[:len(chunk)-len("…")]
		}
		bs = append(bs, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, chunk, false, true), nil, nil))
		rs = rs[len([]rune(chunk)):]
	}
	if len(rs) > 0 {
		bs = append(bs, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "_The rest is too long to show in Slack._", false, true)))
	}
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		Title:      plain(title, maxModalTitle),
		Close:      plain("Close", maxModalTitle),
		Blocks:     slack.Blocks{BlockSet: bs},
		CallbackID: CallbackReadOnly,
	}
}

// batchModal answers every question of a batch in one modal.
func batchModal(v View, meta Meta) slack.ModalViewRequest {
	var bs []slack.Block
	for qi := range v.Request.Questions {
		q := &v.Request.Questions[qi]
		bs = append(bs, slack.NewSectionBlock(mrkdwn("*"+q.Question+"*", maxSectionText), nil, nil))
		if len(q.Options) > 0 {
			var el slack.BlockElement
			switch {
			case q.MultiSelect && len(q.Options) <= maxCheckboxes:
				el = slack.NewCheckboxGroupsBlockElement(InputChoices, options(q, true)...)
			case q.MultiSelect:
				el = slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, plain("Choose any", maxPlaceholder), InputChoices, options(q, false)...)
			case len(q.Options) <= maxRadios:
				el = slack.NewRadioButtonsBlockElement(InputChoices, options(q, true)...)
			default:
				el = slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose one", maxPlaceholder), InputChoices, options(q, false)...)
			}
			bs = append(bs, slack.NewInputBlock(ChoiceBlockID(v.CallID, qi), plain("Choose", maxInputLabel), nil, el).WithOptional(true))
		}
		input := slack.NewPlainTextInputBlockElement(plain("Or type an answer", maxPlaceholder), InputText).
			WithMultiline(true).WithMaxLength(maxFreeText)
		bs = append(bs, slack.NewInputBlock(TextBlockID(v.CallID, qi), plain("Other answer (optional)", maxInputLabel), nil, input).WithOptional(true))
	}
	meta.Question = -1
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("Answer", maxModalTitle),
		Submit:          plain("Send", maxModalTitle),
		Close:           plain("Cancel", maxModalTitle),
		Blocks:          slack.Blocks{BlockSet: fit(bs, maxModalBlocks)},
		PrivateMetadata: meta.Encode(),
		CallbackID:      CallbackOther,
	}
}
