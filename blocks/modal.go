package blocks

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
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

// Encode returns the private_metadata string. It stays within Slack's 3000
// characters: call ids are at most 128 characters, and a channel or message
// ts too long to be Slack's is dropped rather than sent.
func (m Meta) Encode() string {
	b, _ := json.Marshal(m)
	if len(b) > maxMetadata {
		m.Channel, m.TS = "", ""
		b, _ = json.Marshal(m)
	}
	return string(b)
}

const maxMetadata = 3000

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
// accompany selections (seed 000).
//
// For a batch of questions the modal holds the whole batch — a choice and an
// optional text per question — because one submission settles the batch.
// The message of a batch too large for Slack's message caps opens this
// modal from its only button.
func OtherModal(v waterfall.View, qi int, meta Meta) slack.ModalViewRequest {
	if len(v.Request.Questions) > 1 {
		return batchModal(v, meta)
	}
	qi = clampQ(v, qi)
	q := &v.Request.Questions[qi]
	qt, _ := questionText(q, maxSectionText-50)
	if h := fold(q.Header, maxHeaderText); h != "" {
		qt = code(Truncate(h, 40)) + "  " + qt
	}
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText(qt), nil, nil)}
	if q.MultiSelect && len(q.Options) > 0 {
		el, _ := choiceControl(q, levels[0], nil)
		setActionID(el, InputChoices)
		preselect(el, q, pickedIn(v, qi))
		bs = append(bs, slack.NewInputBlock(ChoiceBlockID(v.CallID, qi), plain("Also choose (optional)", maxInputLabel), nil, el).WithOptional(true))
	}
	title, lbl, ph := "Other answer", "Your answer", "Type your answer"
	switch {
	case q.PlanReview():
		title, lbl, ph = "Decline plan", "Feedback for the agent (declines the plan)", "What should change?"
	case len(q.Options) == 0:
		title = "Answer"
	}
	bs = append(bs, slack.NewInputBlock(TextBlockID(v.CallID, qi), plain(lbl, maxInputLabel), nil, textInput(ph)))
	meta.Question = qi
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain(title, maxModalTitle),
		Submit:          plain("Send", maxModalTitle),
		Close:           plain("Cancel", maxModalTitle),
		Blocks:          slack.Blocks{BlockSet: bs},
		PrivateMetadata: meta.Encode(),
		CallbackID:      CallbackOther,
	}
}

// DeclineModal asks for the reason a plan is declined; the text becomes the
// answer's custom (a decline, seed 000).
func DeclineModal(v waterfall.View, qi int, meta Meta) slack.ModalViewRequest {
	qi = clampQ(v, qi)
	q := &v.Request.Questions[qi]
	qt, _ := questionText(q, maxSectionText)
	meta.Question = qi
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  plain("Decline plan", maxModalTitle),
		Submit: plain("Decline", maxModalTitle),
		Close:  plain("Cancel", maxModalTitle),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(mrkdwnText(qt), nil, nil),
			slack.NewInputBlock(TextBlockID(v.CallID, qi), plain("Feedback for the agent", maxInputLabel),
				plain("The agent gets the plan declined, with this text.", maxInputLabel), textInput("What should change?")),
		}},
		PrivateMetadata: meta.Encode(),
		CallbackID:      CallbackDecline,
	}
}

func textInput(placeholder string) *slack.PlainTextInputBlockElement {
	return slack.NewPlainTextInputBlockElement(plain(placeholder, maxPlaceholder), InputText).
		WithMultiline(true).WithMaxLength(maxFreeText)
}

// setActionID renames a choice control for use in a modal input.
func setActionID(el slack.BlockElement, id string) {
	switch e := el.(type) {
	case *slack.CheckboxGroupsBlockElement:
		e.ActionID = id
	case *slack.RadioButtonsBlockElement:
		e.ActionID = id
	case *slack.SelectBlockElement:
		e.ActionID = id
	case *slack.MultiSelectBlockElement:
		e.ActionID = id
	}
}

// pickedIn is what was already chosen for question qi in the message.
func pickedIn(v waterfall.View, qi int) []string {
	if qi < len(v.Picked) {
		return v.Picked[qi].Selected
	}
	return nil
}

// preselect marks the options of a choice control whose labels are in
// selected as initially chosen. Slack requires an initial option to equal
// one of the element's own options, so they are taken from the element.
func preselect(el slack.BlockElement, q *waterfall.Question, selected []string) {
	if len(selected) == 0 {
		return
	}
	chosen := func(opts []*slack.OptionBlockObject) []*slack.OptionBlockObject {
		var out []*slack.OptionBlockObject
		for _, o := range opts {
			oi, err := ParseOptionValue(o.Value)
			if err == nil && oi < len(q.Options) && slices.Contains(selected, q.Options[oi].Label) {
				out = append(out, o)
			}
		}
		return out
	}
	switch e := el.(type) {
	case *slack.CheckboxGroupsBlockElement:
		e.InitialOptions = chosen(e.Options)
	case *slack.MultiSelectBlockElement:
		e.InitialOptions = chosen(e.Options)
	case *slack.RadioButtonsBlockElement:
		if c := chosen(e.Options); len(c) > 0 {
			e.InitialOption = c[0]
		}
	case *slack.SelectBlockElement:
		if c := chosen(e.Options); len(c) > 0 {
			e.InitialOption = c[0]
		}
	}
}

func clampQ(v waterfall.View, qi int) int {
	return max(0, min(qi, len(v.Request.Questions)-1))
}

// DetailModal shows everything about question qi, read-only: the full
// question, the full detail (the whole plan of a plan review) and every
// option with its full label and description. It is the first page of
// DetailPage.
func DetailModal(v waterfall.View, qi int) slack.ModalViewRequest { return DetailPage(v, qi, 0) }

// DetailPage is page p (from 0) of question qi's detail modal. One modal
// holds up to 100 blocks and 250 kB; longer text continues on further pages,
// linked by "Next page" / "Previous page" buttons (KindPage, with the page
// to show in Action.Page) that the dispatcher answers with views.update.
// A page out of range shows the last page.
func DetailPage(v waterfall.View, qi, p int) slack.ModalViewRequest {
	qi = clampQ(v, qi)
	return detailPage(v, qi, p, detailPages(&v.Request.Questions[qi]))
}

// maxPages caps a detail modal's pages: past ten full modals (about two
// million characters) the last page says the rest is left out.
const maxPages = 10

func detailPages(q *waterfall.Question) [][]slack.Block {
	pages := paginate(detailDoc(q))
	if len(pages) > maxPages {
		pages = pages[:maxPages]
		last := pages[maxPages-1]
		pages[maxPages-1] = append(last[:len(last):len(last)], note("", "_The rest is too long to show in Slack._"))
	}
	return pages
}

func detailPage(v waterfall.View, qi, p int, pages [][]slack.Block) slack.ModalViewRequest {
	q := &v.Request.Questions[qi]
	title := "Details"
	if q.PlanReview() {
		title = "Full plan"
	}
	p = max(0, min(p, len(pages)-1))
	bs := pages[p][:len(pages[p]):len(pages[p])]
	if len(pages) > 1 {
		var nav []slack.BlockElement
		if p > 0 {
			nav = append(nav, slack.NewButtonBlockElement(actionID(KindPage, p-1), OptionValue(p-1), plain("← Previous page", maxButtonText)))
		}
		if p < len(pages)-1 {
			nav = append(nav, slack.NewButtonBlockElement(actionID(KindPage, p+1), OptionValue(p+1), plain("Next page →", maxButtonText)).WithStyle(slack.StylePrimary))
		}
		bs = append(bs,
			note("", fmt.Sprintf("Page %d of %d", p+1, len(pages))),
			slack.NewActionBlock(blockID(v.CallID, qi)+"/page", nav...))
		title = fmt.Sprintf("%s (%d/%d)", title, p+1, len(pages))
	}
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		Title:      plain(title, maxModalTitle),
		Close:      plain("Close", maxModalTitle),
		Blocks:     slack.Blocks{BlockSet: bs},
		CallbackID: CallbackReadOnly,
	}
}

// maxDocDesc caps an option description in the detail and preview modals:
// descriptions say what an option means in a sentence or two; a longer one
// is cut there with "…".
const maxDocDesc = 3000

// unlimited is a chunk budget that never runs out.
const unlimited = 1 << 40

// detailDoc is the full text of a question as mrkdwn pieces of at most one
// section each.
func detailDoc(q *waterfall.Question) []string {
	var doc []string
	if h := fold(q.Header, maxHeaderText); h != "" {
		doc = append(doc, code(h))
	}
	qs, _ := chunk(strong(q.Question), maxSectionText, unlimited)
	doc = append(doc, qs...)
	if strings.TrimSpace(q.Detail) != "" {
		d, _ := chunk(MarkdownToMrkdwn(q.Detail), maxSectionText, unlimited)
		doc = append(doc, d...)
	}
	if len(q.Options) > 0 {
		lines := []string{"*Options*"}
		if q.MultiSelect {
			lines[0] = "*Options* (choose any)"
		}
		for _, o := range q.Options {
			line := "• " + strong(fold(o.Label, waterfall.MaxLabelLen))
			if q.PlanReview() {
				if o.Label == q.Intent.Approve {
					line += " — _approves the plan_"
				} else {
					line += " — _declines the plan_"
				}
			}
			if d := strings.TrimSpace(clean(Truncate(o.Description, maxDocDesc))); d != "" {
				line += "\n    " + strings.ReplaceAll(Escape(d), "\n", "\n    ")
			}
			if strings.TrimSpace(o.Preview) != "" {
				line += "\n    _has a preview_"
			}
			lines = append(lines, line)
		}
		opts, _ := chunk(strings.Join(lines, "\n"), maxSectionText, unlimited)
		doc = append(doc, opts...)
	}
	return doc
}

// Page budget: blocks and bytes left for text once the navigation is added.
const (
	pageBlocks = maxModalBlocks - 6
	pageBytes  = maxViewBytes - 4000
	blockBytes = 120 // a section's JSON beyond its text
)

// paginate packs mrkdwn pieces into pages of sections.
func paginate(doc []string) [][]slack.Block {
	var pages [][]slack.Block
	var cur []slack.Block
	size := 0
	for _, s := range doc {
		n := jsonSize(s) + blockBytes
		if len(cur) > 0 && (len(cur) >= pageBlocks || size+n > pageBytes) {
			pages, cur, size = append(pages, cur), nil, 0
		}
		cur = append(cur, slack.NewSectionBlock(mrkdwnText(s), nil, nil))
		size += n
	}
	if len(cur) > 0 || len(pages) == 0 {
		if len(cur) == 0 {
			cur = append(cur, slack.NewSectionBlock(mrkdwnText("_Nothing more to show._"), nil, nil))
		}
		pages = append(pages, cur)
	}
	return pages
}

// PreviewModal shows option oi's preview (seed 004: a mockup, snippet or
// comparison shown on request, never crammed into a label), with the full
// label and description. A preview with a Markdown code fence is rendered as
// Markdown; any other preview verbatim in a code block. What is beyond one
// modal is cut with a note. oi out of range shows the first option with a
// preview.
func PreviewModal(v waterfall.View, qi, oi int) slack.ModalViewRequest {
	qi = clampQ(v, qi)
	q := &v.Request.Questions[qi]
	if oi < 0 || oi >= len(q.Options) {
		oi = 0
		if idx := previewed(q); len(idx) > 0 {
			oi = idx[0]
		}
	}
	var doc []string
	if len(q.Options) > 0 {
		o := q.Options[oi]
		head, _ := chunk(strong(fold(o.Label, waterfall.MaxLabelLen)), maxSectionText, maxSectionText*2)
		doc = append(doc, head...)
		if d := strings.TrimSpace(clean(Truncate(o.Description, maxDocDesc))); d != "" {
			ds, _ := chunk(Escape(d), maxSectionText, maxSectionText*2)
			doc = append(doc, ds...)
		}
		pv := strings.Trim(clean(o.Preview), "\n")
		switch {
		case strings.TrimSpace(pv) == "":
			doc = append(doc, "_This option has no preview._")
		case strings.Contains(pv, fence):
			ps, _ := chunk(MarkdownToMrkdwn(pv), maxSectionText, unlimited)
			doc = append(doc, ps...)
		default:
			ps, _ := chunk(fence+"\n"+Escape(pv)+"\n"+fence, maxSectionText, unlimited)
			doc = append(doc, ps...)
		}
	} else {
		doc = append(doc, "_This question has no options._")
	}
	pages := paginate(doc)
	bs := pages[0]
	if len(pages) > 1 {
		bs = append(bs, note("", "_The preview is longer than Slack can show; the rest is left out._"))
	}
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		Title:      plain("Preview", maxModalTitle),
		Close:      plain("Close", maxModalTitle),
		Blocks:     slack.Blocks{BlockSet: bs},
		CallbackID: CallbackReadOnly,
	}
}

// modalLevel is one step of the batch modal's ladder.
type modalLevel struct {
	question int  // characters of each question (an input label)
	detail   int  // characters of each detail shown; 0 shows none
	menuText int  // option text
	menuDesc bool // option descriptions
	options  int  // options shown per question (the rest are left out)
}

var modalLevels = []modalLevel{
	{question: 1000, detail: 1500, menuText: maxOptionText, menuDesc: true, options: maxSelectOpts},
	{question: 500, detail: 500, menuText: maxOptionText, options: maxSelectOpts},
	{question: 300, menuText: 40, options: maxSelectOpts},
	{question: 150, menuText: 24, options: maxSelectOpts},
	{question: 100, menuText: 16, options: 50},
	{question: 100, menuText: 12, options: 20},
}

// batchModal answers every question of a batch in one modal: per question
// its choices (optional) and a text input (optional), so any question may
// be skipped.
func batchModal(v waterfall.View, meta Meta) slack.ModalViewRequest {
	meta.Question = -1
	var m slack.ModalViewRequest
	for _, lv := range modalLevels {
		m = slack.ModalViewRequest{
			Type:            slack.VTModal,
			Title:           plain("Answer", maxModalTitle),
			Submit:          plain("Send", maxModalTitle),
			Close:           plain("Cancel", maxModalTitle),
			Blocks:          slack.Blocks{BlockSet: batchModalBlocks(v, lv)},
			PrivateMetadata: meta.Encode(),
			CallbackID:      CallbackOther,
		}
		if fitsView(m) {
			break
		}
	}
	return m
}

func batchModalBlocks(v waterfall.View, lv modalLevel) []slack.Block {
	qs := v.Request.Questions
	bs := []slack.Block{note("", fmt.Sprintf("%d questions. Answer any of them; skipped ones are sent as skipped.", len(qs)))}
	for qi := range qs {
		q := &qs[qi]
		qt, cut := folded(q.Question, lv.question)
		head := fmt.Sprintf("%d. ", qi+1)
		if h := fold(q.Header, 40); h != "" {
			head += "[" + h + "] "
		}
		choiceLabel, textLabel := head+qt, "Other answer (optional)"
		if len(q.Options) == 0 {
			textLabel = head + qt
		}
		if strings.TrimSpace(q.Detail) != "" {
			// The question heads its detail; the inputs below are
			// labelled by what they take.
			text, _ := strongFit(head+q.Question, min(lv.question, 1000))
			pieces, more := mdChunk(q.Detail, maxSectionText-runes(text)-1, lv.detail)
			if len(pieces) > 0 {
				text += "\n" + pieces[0]
			}
			cut = cut || more || len(pieces) != 1
			bs = append(bs, slack.NewSectionBlock(mrkdwnText(text), nil, nil))
			choiceLabel = "Your choice"
			if len(q.Options) == 0 {
				textLabel = "Your answer (optional)"
			}
		}
		if q.PlanReview() {
			textLabel = "Or decline with feedback (optional)"
		}
		if len(q.Options) > 0 {
			shown := *q
			if len(shown.Options) > lv.options {
				shown.Options = shown.Options[:lv.options]
			}
			el, lcut := choiceControl(&shown, level{menuText: lv.menuText, menuDesc: lv.menuDesc}, nil)
			cut = cut || lcut
			setActionID(el, InputChoices)
			preselect(el, &shown, pickedIn(v, qi))
			var hint *slack.TextBlockObject
			if len(shown.Options) < len(q.Options) {
				hint = plain(fmt.Sprintf("Only the first %d of %d options fit here; type any other in the answer below.", len(shown.Options), len(q.Options)), maxInputLabel)
			}
			bs = append(bs, slack.NewInputBlock(ChoiceBlockID(v.CallID, qi), plain(choiceLabel, maxInputLabel), hint, el).WithOptional(true))
		}
		bs = append(bs, slack.NewInputBlock(TextBlockID(v.CallID, qi), plain(textLabel, maxInputLabel), nil, textInput("Type an answer")).WithOptional(true))
		if cut {
			bs = append(bs, slack.NewActionBlock(blockID(v.CallID, qi)+"/full", fullButton(q)))
		}
	}
	return bs
}
