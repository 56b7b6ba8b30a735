package blocks

import (
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Answered renders the read-only summary of an answered ask: who answered
// what and when, with every control gone. It covers the in-window answer
// (PhaseSettled) and the late answer sent to the agent (PhaseQueued) or
// admitted by it (PhaseDelivered).
func Answered(v View) Message {
	s := v.Settlement
	if s == nil {
		s = &waterfall.Settlement{}
	}
	who := respondent(s.Respondent)
	when := ""
	if !s.Respondent.At.IsZero() {
		when = " " + slackDate(s.Respondent.At, "{date_short_pretty} at {time}")
	}
	bs := []slack.Block{attribution(v, ":white_check_mark: Answered for")}
	var text []string
	for qi := range v.Request.Questions {
		q := &v.Request.Questions[qi]
		it := s.Item(q.ID)
		summary, plainSummary := answerSummary(q, it)
		bs = append(bs, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType,
			truncateEscaped("*"+Escape(q.Question)+"*", 1000)+"\n"+summary, false, true), nil, nil,
			slack.SectionBlockOptionBlockID(blockID(v.CallID, qi)+"/a")))
		text = append(text, oneLine(q.Question)+": "+plainSummary)
	}
	status := "Answered by " + who + when + "."
	switch v.Phase {
	case PhaseQueued:
		status = "Answered by " + who + when + " after the agent moved on; :incoming_envelope: sent to the agent as a new message."
	case PhaseDelivered:
		status = "Answered by " + who + when + " after the agent moved on; :incoming_envelope: the agent has received it."
	}
	bs = append(bs, slack.NewContextBlock(blockID(v.CallID, -1)+"/by",
		slack.NewTextBlockObject(slack.MarkdownType, status, false, true)))
	fallback := "Answered by " + plainName(s.Respondent) + ": " + strings.Join(text, " | ")
	return Message{Text: Escape(Truncate(fallback, maxMessageText)), Blocks: fit(bs, maxMsgBlocks)}
}

// answerSummary renders one question's answer as mrkdwn and as plain text.
func answerSummary(q *waterfall.Question, it *waterfall.AnswerItem) (string, string) {
	if it == nil || (len(it.Selected) == 0 && it.Custom == "") {
		return "_skipped_", "skipped"
	}
	var md, pl []string
	if q.PlanReview() {
		if len(it.Selected) == 1 && it.Selected[0] == q.Intent.Approve && it.Custom == "" {
			md, pl = append(md, ":white_check_mark: *Plan approved*"), append(pl, "plan approved")
		} else {
			md, pl = append(md, ":x: *Plan declined*"), append(pl, "plan declined")
		}
	}
	for _, l := range it.Selected {
		md = append(md, "→ *"+truncateEscaped(Escape(oneLine(l)), 300)+"*")
		pl = append(pl, oneLine(l))
	}
	if it.Custom != "" {
		md = append(md, quoteBlock(truncateEscaped(Escape(it.Custom), 1500)))
		pl = append(pl, "“"+oneLine(it.Custom)+"”")
	}
	return strings.Join(md, "\n"), strings.Join(pl, ", ")
}

// Withdrawn renders an ask the agent withdrew: the question stays readable,
// the controls are gone.
func Withdrawn(v View) Message {
	bs := []slack.Block{attribution(v, ":no_entry_sign: Withdrawn by")}
	for qi := range v.Request.Questions {
		q := &v.Request.Questions[qi]
		bs = append(bs, slack.NewSectionBlock(mrkdwn("~"+oneLine(q.Question)+"~", 1000), nil, nil,
			slack.SectionBlockOptionBlockID(blockID(v.CallID, qi)+"/w")))
	}
	bs = append(bs, slack.NewContextBlock(blockID(v.CallID, -1)+"/why",
		slack.NewTextBlockObject(slack.MarkdownType, "The agent withdrew this question; no answer is needed.", false, true)))
	return Message{Text: fallbackText(v, "Withdrawn by "+oneLine(v.Request.Agent.ID)+":"), Blocks: fit(bs, maxMsgBlocks)}
}

func respondent(r waterfall.Respondent) string {
	if r.UserID != "" && r.Surface == waterfall.SurfaceSlack {
		return "<@" + Escape(r.UserID) + ">"
	}
	return Escape(plainName(r))
}

func plainName(r waterfall.Respondent) string {
	switch {
	case r.UserName != "":
		return r.UserName
	case r.UserID != "":
		return r.UserID
	default:
		return "someone"
	}
}

// AnswerText renders an answer batch as one line of plain text, e.g. for
// "already answered by @x: …".
func AnswerText(req *waterfall.Request, s *waterfall.Settlement) string {
	var parts []string
	for qi := range req.Questions {
		q := &req.Questions[qi]
		_, p := answerSummary(q, s.Item(q.ID))
		if len(req.Questions) > 1 {
			p = oneLine(q.Question) + ": " + p
		}
		parts = append(parts, p)
	}
	return Truncate(strings.Join(parts, " | "), 1000)
}
