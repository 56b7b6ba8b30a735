package blocks

import (
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// maxButtons is how many option buttons a single question shows before it
// switches to a menu: more than five buttons wrap into a wall on a phone.
const maxButtons = 5

// Question renders an ask that can take an answer (open, or continued with
// late answers still delivered).
func Question(v View) Message {
	lead := ":raising_hand: Question from"
	if v.Phase == PhaseContinued {
		lead = ":hourglass: Still open, from"
	}
	bs := []slack.Block{attribution(v, lead)}
	qs := v.Request.Questions
	single := len(qs) == 1
	for qi := range qs {
		bs = append(bs, questionBlocks(v, qi, single)...)
	}
	if !single || needsSubmit(&qs[0]) {
		bs = append(bs, slack.NewActionBlock(blockID(v.CallID, -1)+"/submit",
			slack.NewButtonBlockElement(actionID(KindSubmit, -1), "submit", plain("Submit", maxButtonText)).WithStyle(slack.StylePrimary)))
	}
	if line := timing(v); line != "" {
		bs = append(bs, slack.NewContextBlock(blockID(v.CallID, -1)+"/time",
			slack.NewTextBlockObject(slack.MarkdownType, line, false, true)))
	}
	return Message{Text: fallbackText(v, "Question from "+oneLine(v.Request.Agent.ID)+":"), Blocks: fit(bs, maxMsgBlocks)}
}

// needsSubmit reports whether a lone question is answered by a Submit
// button rather than by a single tap.
func needsSubmit(q *waterfall.Question) bool { return q.MultiSelect }

func questionBlocks(v View, qi int, single bool) []slack.Block {
	q := &v.Request.Questions[qi]
	id := blockID(v.CallID, qi)
	var bs []slack.Block
	if q.Header != "" {
		bs = append(bs, slack.NewHeaderBlock(plain(oneLine(q.Header), maxHeaderText)))
	}
	bs = append(bs, slack.NewSectionBlock(mrkdwn("*"+q.Question+"*", maxSectionText), nil, nil, slack.SectionBlockOptionBlockID(id+"/q")))
	if q.Detail != "" {
		bs = append(bs, detailBlocks(v, qi)...)
	}
	if d := descriptions(q); d != nil {
		bs = append(bs, d)
	}
	bs = append(bs, slack.NewActionBlock(id, controls(q, single)...))
	return bs
}

// detailBlocks shows the question's detail (the plan of a plan review) and,
// when it is too long for a section, its start plus "View full plan".
func detailBlocks(v View, qi int) []slack.Block {
	q := &v.Request.Questions[qi]
	text := Escape(q.Detail)
	limit := maxSectionText
	if q.PlanReview() {
		text = MarkdownToMrkdwn(q.Detail)
	}
	bs := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, truncateEscaped(text, limit), false, true), nil, nil)}
	if len([]rune(text)) > limit {
		label := "View full detail"
		if q.PlanReview() {
			label = "View full plan"
		}
		bs = append(bs, slack.NewActionBlock(blockID(v.CallID, qi)+"/full",
			slack.NewButtonBlockElement(actionID(KindFullPlan, -1), "full", plain(label, maxButtonText))))
	}
	return bs
}

// descriptions lists option descriptions (kept out of labels) as a context
// block: "*Label* — description".
func descriptions(q *waterfall.Question) slack.Block {
	var els []slack.MixedElement
	for _, o := range q.Options {
		if o.Description == "" || len(els) == 10 {
			continue
		}
		els = append(els, slack.NewTextBlockObject(slack.MarkdownType,
			truncateEscaped("*"+Escape(oneLine(o.Label))+"* — "+Escape(o.Description), 300), false, true))
	}
	if els == nil {
		return nil
	}
	return slack.NewContextBlock("", els...)
}

// controls returns the elements that answer one question.
func controls(q *waterfall.Question, single bool) []slack.BlockElement {
	var els []slack.BlockElement
	other := slack.NewButtonBlockElement(actionID(KindOther, -1), "other", plain("Other…", maxButtonText))
	switch {
	case q.PlanReview():
		approve := q.OptionIndex(q.Intent.Approve)
		els = append(els, slack.NewButtonBlockElement(actionID(KindPick, approve), OptionValue(approve),
			plain(oneLine(q.Intent.Approve), maxButtonText)).WithStyle(slack.StylePrimary))
		for oi, o := range q.Options {
			if oi != approve && len(els) < maxActionsElems-1 {
				els = append(els, slack.NewButtonBlockElement(actionID(KindPick, oi), OptionValue(oi), plain(oneLine(o.Label), maxButtonText)))
			}
		}
		return append(els, slack.NewButtonBlockElement(actionID(KindDecline, -1), "decline", plain("Decline with feedback…", maxButtonText)).WithStyle(slack.StyleDanger))
	case len(q.Options) == 0:
		return []slack.BlockElement{slack.NewButtonBlockElement(actionID(KindOther, -1), "other", plain("Answer…", maxButtonText)).WithStyle(slack.StylePrimary)}
	case q.MultiSelect && len(q.Options) <= maxCheckboxes:
		els = append(els, slack.NewCheckboxGroupsBlockElement(actionID(KindCheck, -1), options(q, true)...))
	case q.MultiSelect:
		els = append(els, slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, plain("Choose any", maxPlaceholder),
			actionID(KindCheck, -1), options(q, false)...))
	case single && len(q.Options) <= maxButtons:
		for oi, o := range q.Options {
			els = append(els, slack.NewButtonBlockElement(actionID(KindPick, oi), OptionValue(oi), plain(oneLine(o.Label), maxButtonText)))
		}
	case !single && len(q.Options) <= maxRadios:
		els = append(els, slack.NewRadioButtonsBlockElement(actionID(KindSelect, -1), options(q, true)...))
	default:
		els = append(els, slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose one", maxPlaceholder),
			actionID(KindSelect, -1), options(q, false)...))
	}
	return append(els, other)
}

// options builds option objects: the value is the option's index (values
// are capped at 75 characters; labels are not), the text the label cut to
// Slack's 75. Checkboxes and radios may show the description too.
func options(q *waterfall.Question, withDesc bool) []*slack.OptionBlockObject {
	n := min(len(q.Options), maxSelectOpts)
	out := make([]*slack.OptionBlockObject, 0, n)
	for oi, o := range q.Options[:n] {
		var desc *slack.TextBlockObject
		if withDesc && o.Description != "" {
			desc = plain(oneLine(o.Description), maxOptionDesc)
		}
		out = append(out, slack.NewOptionBlockObject(OptionValue(oi), plain(oneLine(o.Label), maxOptionText), desc))
	}
	return out
}

// timing is the deadline line of a timed ask: the absolute deadline in each
// reader's time zone plus a coarse remaining time.
func timing(v View) string {
	if v.Deadline.IsZero() {
		return ""
	}
	if v.Phase == PhaseContinued {
		return ":arrow_right: The agent's wait ended " + slackDate(v.Deadline, "{date_short_pretty} at {time}") +
			" and it moved on. Answers are still delivered to it as a new message."
	}
	line := ":stopwatch: The agent waits until " + slackDate(v.Deadline, "{date_short_pretty} at {time}")
	if left := v.Deadline.Sub(v.Now); !v.Now.IsZero() && left > 0 {
		line += " (" + Remaining(left) + " left)"
	}
	return line + "; after that, answers still reach it as a new message."
}

// Remaining renders a coarse duration: "about 5 minutes", "under a minute".
func Remaining(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < 2*time.Minute:
		return "about a minute"
	case d < time.Hour:
		return "about " + itoa(int(d.Round(time.Minute)/time.Minute)) + " minutes"
	case d < 2*time.Hour:
		return "about an hour"
	default:
		return "about " + itoa(int(d.Round(time.Hour)/time.Hour)) + " hours"
	}
}

// fit keeps at most n blocks; questions past the cap are reached through
// the modal, so the last kept block says so.
func fit(bs []slack.Block, n int) []slack.Block {
	if len(bs) <= n {
		return bs
	}
	out := append([]slack.Block{}, bs[:n-1]...)
	return append(out, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "_More questions than one message can hold._", false, true)))
}

func itoa(n int) string { return strconv.Itoa(n) }
