package blocks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Layout choices for a question that can take an answer:
//
//   - one single-select question with at most maxButtons options whose labels
//     are all at most maxShortLabel characters: one button per option, a tap
//     answers. Longer labels don't fit a button on a phone;
//   - otherwise up to maxRadios options: radio buttons (every option visible,
//     with its description; a tap answers a lone question);
//   - more: a static select (up to 100, searchable, a native list on phones);
//   - multi-select: checkboxes up to maxCheckboxes, else a multi-select menu,
//     then Submit;
//   - a batch: a radio/select/checkbox control per question and one Submit;
//     when that would break Slack's 50-block or ~12k-character caps, a short
//     list of the questions and one "Answer…" button opening the batch modal;
//   - a plan review: the plan, the approve option as the primary button, the
//     other options as declines (a menu when there are many), and "Decline
//     with feedback…".
//
// Every question offers "Other…" (typed text) except a plan review, whose
// feedback button plays that part.
const (
	maxButtons        = 5
	maxShortLabel     = 30
	maxPreviewButtons = 5
)

// level is one step of the layout ladder: a layout is built with the most
// generous level first and rebuilt with the next one until it fits the
// message caps. Budgets are characters of rendered mrkdwn; a plan in a
// markdown block (planLayout) takes all the room the rest of the message
// leaves, and detail is the least room a level accepts for it.
type level struct {
	question int  // question text (split among the questions of a batch)
	detail   int  // plan text; other details get a third
	descs    int  // each description in the options list; 0 drops the list
	menuText int  // option text in choices and menus (≤75)
	menuDesc bool // descriptions inside choices and menus
}

var levels = []level{
	{question: 2000, detail: 5800, descs: 300, menuText: maxOptionText, menuDesc: true},
	{question: 1200, detail: 3000, descs: 150, menuText: maxOptionText, menuDesc: true},
	{question: 600, detail: 1500, descs: 75, menuText: 60},
	{question: 300, detail: 600, menuText: 40},
	{question: 200, detail: 200, menuText: 24},
}

// Question renders an ask that can take an answer (open, or continued with
// late answers still delivered) as a message: a plan review's plan is a
// markdown block (mdblock.go).
func Question(v waterfall.View) Message {
	return question(v, true)
}

// question is Question; inMessage false renders for a surface that takes
// no markdown block (the App Home tab), with the plan in mrkdwn sections.
func question(v waterfall.View, inMessage bool) Message {
	text := questionFallback(v)
	qs := v.Request.Questions
	var bs []slack.Block
	for _, lv := range levels {
		ok := true
		if len(qs) == 1 {
			bs, ok = singleLayout(v, lv, inMessage)
		} else {
			bs = batchLayout(v, lv)
		}
		if ok && fitsMessage(bs) {
			return Message{Text: text, Blocks: bs}
		}
	}
	if len(qs) == 1 {
		return Message{Text: text, Blocks: bs} // the last level always fits one question
	}
	return Message{Text: text, Blocks: compactLayout(v)}
}

func lead(v waterfall.View) string {
	q := &v.Request.Questions[0]
	switch {
	case v.Phase == waterfall.PhaseContinued:
		return ":hourglass: Still open, from"
	case len(v.Request.Questions) > 1:
		return fmt.Sprintf(":raising_hand: %d questions from", len(v.Request.Questions))
	case q.PlanReview():
		return ":clipboard: Plan review from"
	default:
		return ":raising_hand: Question from"
	}
}

// singleLayout is the message for an ask of one question. With
// inMessage, a plan review's plan is one markdown block holding what the
// rest of the message leaves room for (planLayout); ok is false when that
// is less than the level's detail budget and a tighter level would show
// more of it.
func singleLayout(v waterfall.View, lv level, inMessage bool) (bs []slack.Block, ok bool) {
	q := &v.Request.Questions[0]
	top := []slack.Block{attribution(v, lead(v))}
	if h := fold(q.Header, maxHeaderText); h != "" {
		top = append(top, slack.NewHeaderBlock(plain(h, maxHeaderText)))
	}
	qt, cut := questionText(q, lv.question)
	top = append(top, slack.NewSectionBlock(mrkdwnText(qt), nil, nil, slack.SectionBlockOptionBlockID(blockID(v.CallID, 0)+"/q")))
	if rc := recallOf(v, 0); rc != nil {
		top = append(top, note(blockID(v.CallID, 0)+"/recall", recallLine(rc)))
	}
	var ctl []slack.BlockElement
	var lcut bool
	switch {
	case q.PlanReview():
		ctl, lcut = planControls(q, lv)
	case len(q.Options) == 0:
		ctl = []slack.BlockElement{otherButton("Answer…", true)}
	case !q.MultiSelect && buttonsFit(q):
		ctl = pickButtons(q, recallOf(v, 0))
	default:
		var el slack.BlockElement
		el, lcut = choiceControl(q, lv, recallOf(v, 0))
		preselect(el, q, pickedIn(v, 0))
		ctl = []slack.BlockElement{el, otherButton("Other…", false)}
	}
	if e := editButton(v); e != nil {
		// Right after Allow when each option is a button, else before
		// Other… (which denies with a reason).
		at := len(ctl) - 1
		if i := q.OptionIndex(waterfall.PermissionAllow); i >= 0 && len(ctl) == len(q.Options)+1 {
			at = i + 1
		}
		ctl = slices.Insert(ctl, at, slack.BlockElement(e))
	}
	list, listCut := optionList(q, lv, ctl)
	// layout is the message with detail under the question; dcut says
	// the detail was cut.
	layout := func(detail []slack.Block, dcut bool) []slack.Block {
		bs := append(append([]slack.Block{}, top...), detail...)
		if dcut && q.PlanReview() {
			more := "_The plan continues beyond what a message can show._"
			if l := openLink(v, "read it whole in the browser"); l != "" {
				more = "_The plan continues beyond what a message can show: " + l + "._"
			}
			bs = append(bs, note("", more))
		}
		if cut || dcut || lcut || listCut {
			bs = append(bs, slack.NewActionBlock(blockID(v.CallID, 0)+"/full", fullButton(q)))
		}
		if list != nil {
			bs = append(bs, list)
		}
		if p := previewControl(q, lv); p != nil {
			bs = append(bs, slack.NewActionBlock(blockID(v.CallID, 0)+"/preview", p...))
		}
		bs = append(bs, slack.NewActionBlock(blockID(v.CallID, 0), ctl...))
		bs = append(bs, ruleControls(v)...)
		if q.MultiSelect && len(q.Options) > 0 {
			bs = append(bs, submitBlock(v, "Submit"))
		}
		if t := timing(v); t != "" {
			bs = append(bs, note(blockID(v.CallID, -1)+"/time", t))
		}
		return bs
	}
	if inMessage && q.PlanReview() && strings.TrimSpace(q.Detail) != "" {
		return planLayout(q, lv, layout)
	}
	detail, dcut := detailSections(q, detailBudget(q, lv.detail))
	return layout(detail, dcut), true
}

// planLayout is a plan review's message with its plan in a markdown block:
// the plan gets the block text the rest of the message (measured with the
// "continues" note and "View full plan" button a cut brings) leaves under
// maxBlockText, less planHeadroom, and at most maxMarkdownText. ok is
// false when that room is under the level's detail budget and the plan
// does not fit whole.
func planLayout(q *waterfall.Question, lv level, layout func([]slack.Block, bool) []slack.Block) ([]slack.Block, bool) {
	room := min(maxMarkdownText, maxBlockText-planHeadroom-blockText(layout(nil, true)))
	text, dcut := markdownPlan(q.Detail, room)
	var detail []slack.Block
	if text != "" {
		// Slack keeps no block_id of a markdown block: it has none.
		detail = []slack.Block{slack.NewMarkdownBlock("", text)}
	}
	return layout(detail, dcut), !dcut || room >= lv.detail
}

// batchLayout is the message for an ask of several questions: a control per
// question, choices recorded in state.values, one Submit.
func batchLayout(v waterfall.View, lv level) []slack.Block {
	qs := v.Request.Questions
	n := len(qs)
	bs := []slack.Block{attribution(v, lead(v))}
	for qi := range qs {
		q := &qs[qi]
		text, cut := questionText(q, max(lv.question/n, 150))
		if h := fold(q.Header, maxHeaderText); h != "" {
			text = code(Truncate(h, 40)) + "  " + text
		}
		if strings.TrimSpace(q.Detail) != "" {
			// Question and detail share one section (≤ 3000) to save blocks.
			pieces, more := mdChunk(q.Detail, maxSectionText-runes(text)-1, detailBudget(q, lv.detail/n))
			if len(pieces) > 0 {
				text += "\n" + pieces[0]
			}
			cut = cut || more || len(pieces) != 1
		}
		if rc := recallOf(v, qi); rc != nil {
			text += "\n" + recallLine(rc)
		}
		bs = append(bs, slack.NewSectionBlock(mrkdwnText(truncateEscaped(text, maxSectionText)), nil, nil,
			slack.SectionBlockOptionBlockID(blockID(v.CallID, qi)+"/q")))
		var els []slack.BlockElement
		if len(q.Options) == 0 {
			els = append(els, otherButton("Answer…", false))
		} else {
			el, lcut := choiceControl(q, lv, recallOf(v, qi))
			cut = cut || lcut
			preselect(el, q, pickedIn(v, qi))
			els = append(els, el, otherButton("Other…", false))
		}
		if len(previewed(q)) > 0 {
			els = append(els, previewMenu(q, lv))
		}
		if cut {
			els = append(els, fullButton(q))
		}
		bs = append(bs, slack.NewActionBlock(blockID(v.CallID, qi), els...))
	}
	bs = append(bs, submitBlock(v, "Submit answers"))
	if t := timing(v); t != "" {
		bs = append(bs, note(blockID(v.CallID, -1)+"/time", t))
	}
	return bs
}

// compactLayout is the batch too large for one message: the questions
// listed, and one button opening the batch modal (OtherModal) where every
// question is answered.
func compactLayout(v waterfall.View) []slack.Block {
	qs := v.Request.Questions
	lines := []string{fmt.Sprintf("*%d questions* — too many for one message; answer them in a form:", len(qs))}
	per := (maxSectionText - 200) / len(qs)
	for qi := range qs {
		q := &qs[qi]
		line := fmt.Sprintf("%d. ", qi+1)
		if h := fold(q.Header, maxHeaderText); h != "" {
			line += code(Truncate(h, 20)) + " "
		}
		qt := truncateEscaped(Escape(fold(q.Question, per)), max(per-runes(line), 20))
		lines = append(lines, line+qt)
	}
	bs := []slack.Block{
		attribution(v, lead(v)),
		slack.NewSectionBlock(mrkdwnText(truncateEscaped(strings.Join(lines, "\n"), maxSectionText)), nil, nil,
			slack.SectionBlockOptionBlockID(blockID(v.CallID, -1)+"/list")),
		slack.NewActionBlock(blockID(v.CallID, -1)+"/answer", otherButton("Answer…", true)),
	}
	if t := timing(v); t != "" {
		bs = append(bs, note(blockID(v.CallID, -1)+"/time", t))
	}
	return bs
}

// questionText is the question in bold mrkdwn, at most n characters, and
// whether it was cut.
func questionText(q *waterfall.Question, n int) (string, bool) {
	return strongFit(q.Question, n)
}

// strongFit is strong(raw) cut so the result has at most n characters
// (escaping can make text several times longer), and whether it was cut.
func strongFit(raw string, n int) (string, bool) {
	raw, more := head(strings.TrimSpace(raw), 2*n+64)
	raw = strings.TrimSpace(clean(raw))
	k := n
	for {
		t := Truncate(raw, k)
		if more && t == raw {
			t = Truncate(raw+" …", k)
		}
		s := strong(t)
		if runes(s) <= n || k <= 8 {
			return s, more || t != raw
		}
		k = k * 3 / 4
	}
}

func detailBudget(q *waterfall.Question, n int) int {
	if q.PlanReview() {
		return n
	}
	return n / 3
}

// detailSections renders up to n characters of the question's detail
// (Markdown, converted to mrkdwn) as sections; cut reports text left out.
// A plan review's message has its plan in a markdown block instead
// (planLayout); these sections are its plan wherever a markdown block is
// not allowed.
func detailSections(q *waterfall.Question, n int) ([]slack.Block, bool) {
	if strings.TrimSpace(q.Detail) == "" {
		return nil, false
	}
	pieces, more := mdChunk(q.Detail, maxSectionText, n)
	bs := make([]slack.Block, 0, len(pieces))
	for _, p := range pieces {
		bs = append(bs, slack.NewSectionBlock(mrkdwnText(p), nil, nil))
	}
	return bs, more
}

func hasDescriptions(q *waterfall.Question) bool {
	for _, o := range q.Options {
		if strings.TrimSpace(o.Description) != "" {
			return true
		}
	}
	return false
}

func buttonsFit(q *waterfall.Question) bool {
	if len(q.Options) > maxButtons {
		return false
	}
	for _, o := range q.Options {
		if _, cut := folded(o.Label, maxShortLabel); cut {
			return false
		}
	}
	return true
}

// pickButtons answers a single-select question with one tap; the option
// chosen last time (rc) comes first.
func pickButtons(q *waterfall.Question, rc *waterfall.Recall) []slack.BlockElement {
	els := make([]slack.BlockElement, 0, len(q.Options)+1)
	for _, oi := range waterfall.RecalledFirst(q, rc) {
		els = append(els, pickButton(oi, q.Options[oi].Label))
	}
	return append(els, otherButton("Other…", false))
}

func pickButton(oi int, lbl string) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(actionID(KindPick, oi), OptionValue(oi), plain(label(lbl, maxButtonText), maxButtonText))
	b.AccessibilityLabel = fold("Answer: "+fold(lbl, maxAccessLabel), maxAccessLabel)
	return b
}

func otherButton(text string, primary bool) *slack.ButtonBlockElement {
	b := slack.NewButtonBlockElement(actionID(KindOther, -1), "other", plain(text, maxButtonText))
	b.AccessibilityLabel = "Type an answer of your own"
	if primary {
		b.Style = slack.StylePrimary
	}
	return b
}

func fullButton(q *waterfall.Question) *slack.ButtonBlockElement {
	text := "View details"
	if q.PlanReview() {
		text = "View full plan"
	}
	return slack.NewButtonBlockElement(actionID(KindFullPlan, -1), "full", plain(text, maxButtonText))
}

func submitBlock(v waterfall.View, text string) slack.Block {
	b := slack.NewButtonBlockElement(actionID(KindSubmit, -1), "submit", plain(text, maxButtonText)).WithStyle(slack.StylePrimary)
	return slack.NewActionBlock(blockID(v.CallID, -1)+"/submit", b)
}

// planControls are a lone plan review's decision buttons: approve first and
// primary, the other options as declines (buttons when few and short, else
// a menu), then "Decline with feedback…".
func planControls(q *waterfall.Question, lv level) ([]slack.BlockElement, bool) {
	approve := q.OptionIndex(q.Intent.Approve)
	els := []slack.BlockElement{pickButton(approve, q.Intent.Approve).WithStyle(slack.StylePrimary)}
	_, cut := folded(q.Intent.Approve, maxButtonText)
	var others []int
	short := true
	for oi, o := range q.Options {
		if oi != approve {
			others = append(others, oi)
			_, long := folded(o.Label, maxShortLabel)
			short = short && !long
		}
	}
	switch {
	case len(others) == 0:
	case len(others) < maxButtons && short:
		for _, oi := range others {
			els = append(els, pickButton(oi, q.Options[oi].Label))
		}
	default:
		opts, ocut := optionObjects(q, others, lv.menuText, lv.menuDesc, false)
		cut = cut || ocut
		els = append(els, slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Decline: choose another option", maxPlaceholder),
			actionID(KindSelect, -1), opts...))
	}
	dec := slack.NewButtonBlockElement(actionID(KindDecline, -1), "decline", plain("Decline with feedback…", maxButtonText)).WithStyle(slack.StyleDanger)
	dec.AccessibilityLabel = "Decline the plan and say what should change"
	return append(els, dec), cut
}

// choiceControl is the stateful control of a question: checkboxes or a
// multi-select menu for multi-select, radios or a select menu otherwise.
// Option values are indexes into the question's options.
func choiceControl(q *waterfall.Question, lv level, rc *waterfall.Recall) (slack.BlockElement, bool) {
	all := waterfall.RecalledFirst(q, rc)
	switch {
	case q.MultiSelect && len(q.Options) <= maxCheckboxes:
		opts, cut := optionObjects(q, all, lv.menuText, lv.menuDesc, true)
		return slack.NewCheckboxGroupsBlockElement(actionID(KindCheck, -1), opts...), cut
	case q.MultiSelect:
		opts, cut := optionObjects(q, all, lv.menuText, lv.menuDesc, false)
		return slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, plain("Choose any", maxPlaceholder),
			actionID(KindCheck, -1), opts...), cut
	case len(q.Options) <= maxRadios:
		opts, cut := optionObjects(q, all, lv.menuText, lv.menuDesc, true)
		return slack.NewRadioButtonsBlockElement(actionID(KindSelect, -1), opts...), cut
	default:
		opts, cut := optionObjects(q, all, lv.menuText, lv.menuDesc, false)
		return slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose one", maxPlaceholder),
			actionID(KindSelect, -1), opts...), cut
	}
}

// optionObjects builds option objects for the options idx: the value is
// the option's index (values are capped at 75 characters, labels are not),
// the text the label cut to n. cut reports a label or description that was
// shortened or left out. choice marks checkboxes and radios, where a plan
// review's options say what they do.
func optionObjects(q *waterfall.Question, idx []int, n int, desc, choice bool) ([]*slack.OptionBlockObject, bool) {
	idx = idx[:min(len(idx), maxSelectOpts)]
	out := make([]*slack.OptionBlockObject, 0, len(idx))
	cut := false
	for _, oi := range idx {
		o := q.Options[oi]
		l, lcut := folded(o.Label, n)
		cut = cut || lcut
		var d *slack.TextBlockObject
		ds, dcut := folded(o.Description, maxOptionDesc)
		if choice && ds == "" && q.PlanReview() {
			ds = "Declines the plan"
			if o.Label == q.Intent.Approve {
				ds = "Approves the plan"
			}
		}
		if ds != "" {
			if desc {
				d = plain(ds, maxOptionDesc)
				cut = cut || dcut
			} else {
				cut = true
			}
		}
		out = append(out, slack.NewOptionBlockObject(OptionValue(oi), plain(l, n), d))
	}
	return out, cut
}

// optionList is the section listing option descriptions next to buttons,
// which cannot show them: "• *Label* — description". cut reports a
// description that was shortened or left out.
func optionList(q *waterfall.Question, lv level, ctl []slack.BlockElement) (slack.Block, bool) {
	if ctl[0].ElementType() != slack.METButton || !hasDescriptions(q) {
		return nil, false
	}
	if lv.descs == 0 {
		return nil, true
	}
	var lines []string
	cut := false
	for _, o := range q.Options {
		d, dcut := folded(o.Description, lv.descs)
		if d == "" {
			continue
		}
		cut = cut || dcut
		lines = append(lines, "• "+strong(fold(o.Label, maxButtonText))+" — "+truncateEscaped(Escape(d), lv.descs))
	}
	text := strings.Join(lines, "\n")
	if runes(text) > maxSectionText {
		text, cut = truncateEscaped(text, maxSectionText), true
	}
	return slack.NewSectionBlock(mrkdwnText(text), nil, nil), cut
}

// previewed lists the options that carry a preview.
func previewed(q *waterfall.Question) []int {
	var idx []int
	for oi, o := range q.Options {
		if strings.TrimSpace(o.Preview) != "" {
			idx = append(idx, oi)
		}
	}
	return idx
}

// previewControl opens option previews (seed 004): a "Preview: <label>"
// button per option when few, else a menu of the options that have one.
func previewControl(q *waterfall.Question, lv level) []slack.BlockElement {
	idx := previewed(q)
	if len(idx) == 0 {
		return nil
	}
	if len(idx) > maxPreviewButtons {
		return []slack.BlockElement{previewMenu(q, lv)}
	}
	els := make([]slack.BlockElement, 0, len(idx))
	for _, oi := range idx {
		b := slack.NewButtonBlockElement(actionID(KindPreview, oi), OptionValue(oi),
			plain(fold("Preview: "+fold(q.Options[oi].Label, maxButtonText), maxButtonText), maxButtonText))
		els = append(els, b)
	}
	return els
}

// previewMenu is a select whose options open that option's preview; its
// selected value is the option index (see DecodeAction).
func previewMenu(q *waterfall.Question, lv level) slack.BlockElement {
	opts, _ := optionObjects(q, previewed(q), min(lv.menuText, 40), false, false)
	return slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Preview an option", maxPlaceholder),
		actionID(KindPreview, -1), opts...)
}

// questionFallback is the top-level text of a question message: all a phone
// notification and a screen reader get, so it names the agent, the
// question, the choices and where to answer.
func questionFallback(v waterfall.View) string {
	qs := v.Request.Questions
	var b strings.Builder
	switch {
	case v.Phase == waterfall.PhaseContinued && asksInTerminal(v):
		b.WriteString("Still open (the agent asked in its terminal instead): ")
	case v.Phase == waterfall.PhaseContinued:
		b.WriteString("Still open (the agent moved on; answers still reach it): ")
	}
	who := agentName(v)
	switch {
	case len(qs) > 1:
		fmt.Fprintf(&b, "%s asks %d questions:", who, len(qs))
		for qi := range qs {
			fmt.Fprintf(&b, " %d) %s", qi+1, fold(qs[qi].Question, 120))
		}
	case qs[0].PlanReview():
		fmt.Fprintf(&b, "%s asks you to review a plan: %s Approve or decline in Slack.", who, fold(qs[0].Question, 300))
	default:
		q := &qs[0]
		fmt.Fprintf(&b, "%s asks: %s", who, fold(q.Question, 300))
		if len(q.Options) > 0 {
			labels := make([]string, 0, min(len(q.Options), 10))
			for _, o := range q.Options[:min(len(q.Options), 10)] {
				labels = append(labels, fold(o.Label, 40))
			}
			more := ""
			if len(q.Options) > 10 {
				more = fmt.Sprintf(" and %d more", len(q.Options)-10)
			}
			pick := "Options"
			if q.MultiSelect {
				pick = "Choose any of"
			}
			fmt.Fprintf(&b, " %s: %s%s.", pick, strings.Join(labels, ", "), more)
		}
	}
	return fallback(b.String())
}
