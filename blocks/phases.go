package blocks

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Answered renders the read-only summary of an answered ask: who answered
// what and when, with every control gone. It covers the in-window answer
// (waterfall.PhaseSettled) and the late answer sent to the agent
// (PhaseQueued) or admitted by it (PhaseDelivered).
func Answered(v waterfall.View) Message {
	s := v.Settlement
	if s == nil {
		s = &waterfall.Settlement{}
	}
	who := respondent(s.Respondent)
	when := ""
	if !s.Respondent.At.IsZero() {
		when = " " + slackDate(s.Respondent.At)
	}
	qs := v.Request.Questions
	// Each question's summary gets an equal share of the text budget.
	per := min(maxSectionText, (maxBlockText-1500)/len(qs))
	bs := []slack.Block{attribution(v, ":white_check_mark: Answered · asked by")}
	var text []string
	edited := false
	for qi := range qs {
		q := &qs[qi]
		md, pl := answerSummary(q, s.Item(q.ID), per*2/3)
		if cs := waterfall.Changes(v.Request, s.Item(q.ID)); len(cs) > 0 {
			// What runs is not what was asked: show what changed.
			edited = true
			md += " _with changes_" + changesText(cs, per/2)
			pl += " with changes"
		}
		qt, _ := questionText(q, per-runes(md)-1)
		bs = append(bs, slack.NewSectionBlock(mrkdwnText(qt+"\n"+md), nil, nil,
			slack.SectionBlockOptionBlockID(blockID(v.CallID, qi)+"/a")))
		text = append(text, fold(q.Question, 80)+" → "+pl)
	}
	verb := "Answered by "
	if edited {
		verb = "Allowed with changes by "
	}
	status := verb + who + when + "."
	switch v.Phase {
	case waterfall.PhaseQueued:
		status = verb + who + when + " after the agent moved on. :incoming_envelope: Sent to the agent as a new message; it has not read it yet."
	case waterfall.PhaseDelivered:
		status = verb + who + when + " after the agent moved on. :incoming_envelope: The agent has received it"
		if !v.Delivered.IsZero() {
			status += " " + slackDate(v.Delivered)
		}
		status += "."
	}
	bs = append(bs, note(blockID(v.CallID, -1)+"/by", approvedStatus(s, status)))
	lead := verb + plainName(s.Respondent)
	if c := claimed(s.Respondent); c != "" {
		lead = verb + c + " via " + plainName(s.Respondent)
	}
	if v.Phase == waterfall.PhaseQueued || v.Phase == waterfall.PhaseDelivered {
		lead += " (late; sent to the agent as a new message)"
	}
	return Message{Text: fallback(lead + ": " + strings.Join(text, " | ")), Blocks: bs}
}

// answerSummary renders one question's answer as mrkdwn of at most about n
// characters and as plain text.
func answerSummary(q *waterfall.Question, it *waterfall.AnswerItem, n int) (string, string) {
	if it == nil || (len(it.Selected) == 0 && it.Custom == "") {
		return "_Skipped_", "skipped"
	}
	n = max(n, 100)
	var md, pl []string
	if q.PlanReview() {
		if q.Approves(it) {
			md, pl = append(md, ":white_check_mark: *Plan approved*"), append(pl, "plan approved")
		} else {
			md, pl = append(md, ":x: *Plan declined*"), append(pl, "plan declined")
		}
	}
	used := 0
	for i, l := range it.Selected {
		lbl, _ := strongFit(fold(l, 300), min(300, n/2))
		line := "→ " + lbl
		if used+runes(line) > n/2 && i > 0 {
			md = append(md, fmt.Sprintf("_and %d more_", len(it.Selected)-i))
			break
		}
		used += runes(line) + 1
		md = append(md, line)
	}
	for _, l := range it.Selected {
		pl = append(pl, fold(l, 200))
	}
	if c := strings.TrimSpace(clean(Truncate(it.Custom, 2*n+64))); c != "" {
		md = append(md, truncateEscaped(quoteBlock(Escape(c)), max(n-used-10, 50)))
		pl = append(pl, "“"+fold(c, 200)+"”")
	}
	return strings.Join(md, "\n"), strings.Join(pl, ", ")
}

// Withdrawn renders an ask the agent withdrew: the questions stay readable,
// the controls are gone.
func Withdrawn(v waterfall.View) Message {
	if v.Elsewhere {
		return answeredElsewhere(v)
	}
	bs := []slack.Block{attribution(v, ":no_entry_sign: Withdrawn by")}
	bs = append(bs, struck(v, "w")...)
	why := "The agent withdrew this question; no answer is needed."
	if v.Abandoned {
		why = "The agent stopped waiting here: its connection closed and it did not come back. No answer is needed."
	}
	if v.Revoked {
		why = "The agent's token was revoked, so its question went with it. No answer is needed."
	}
	bs = append(bs, note(blockID(v.CallID, -1)+"/why", why))
	return Message{Text: fallback("Withdrawn by " + agentName(v) + ", no answer needed: " + questionsLine(v)), Blocks: bs}
}

// answeredElsewhere renders an ask whose agent was answered at its own
// prompt (the person at the terminal was first): nothing to do here.
func answeredElsewhere(v waterfall.View) Message {
	bs := []slack.Block{attribution(v, ":keyboard: Answered in the terminal · asked by")}
	bs = append(bs, struck(v, "w")...)
	bs = append(bs, note(blockID(v.CallID, -1)+"/why", "Someone answered this in the agent's terminal first; no answer is needed here."))
	return Message{Text: fallback("Answered in " + agentName(v) + "'s terminal, no answer needed here: " + questionsLine(v)), Blocks: bs}
}

// Expired renders a message whose ask askslack no longer holds (its
// retention ran out, or it was never stored): nothing can be answered any
// more. It needs no Request; with one it shows the questions.
func Expired(v waterfall.View) Message {
	lead := ":zzz: Expired · asked by"
	if v.Request == nil {
		lead = ":zzz: Expired"
	}
	bs := []slack.Block{attribution(v, lead)}
	bs = append(bs, struck(v, "x")...)
	bs = append(bs, note(blockID(v.CallID, -1)+"/why", "This question is no longer open; answers here are not delivered to the agent."))
	return Message{Text: fallback("This question from " + agentName(v) + " expired; answers are no longer delivered. " + questionsLine(v)), Blocks: bs}
}

// struck lists the questions, struck through, one section each.
func struck(v waterfall.View, role string) []slack.Block {
	if v.Request == nil {
		return nil
	}
	qs := v.Request.Questions
	per := min(1000, (maxBlockText-1000)/max(len(qs), 1))
	var bs []slack.Block
	for qi := range qs {
		t := strings.ReplaceAll(fold(qs[qi].Question, per), "~", "∼")
		bs = append(bs, slack.NewSectionBlock(mrkdwnText("~"+truncateEscaped(Escape(t), per-2)+"~"), nil, nil,
			slack.SectionBlockOptionBlockID(blockID(v.CallID, qi)+"/"+role)))
	}
	return bs
}

func questionsLine(v waterfall.View) string {
	if v.Request == nil {
		return ""
	}
	var qs []string
	for _, q := range v.Request.Questions {
		qs = append(qs, fold(q.Question, 200))
	}
	return strings.Join(qs, " | ")
}

func respondent(r waterfall.Respondent) string {
	if id := r.SlackUser(); id != "" && IsUserID(id) {
		if r.Surface == waterfall.SurfaceWeb {
			return "<@" + id + "> (in the browser)"
		}
		return "<@" + id + ">"
	}
	if c := claimed(r); c != "" {
		// An answer surface's claim is shown as a claim, in plain text: it
		// mentions nobody and is never taken for the surface itself.
		return Escape(Truncate(c, maxAttr)) + " via " + bold(fold(plainName(r), maxAttr))
	}
	return bold(fold(plainName(r), maxAttr))
}

// claimed is who an answer surface said answered, or "".
func claimed(r waterfall.Respondent) string {
	if r.Claim == nil {
		return ""
	}
	if r.Claim.UserName != "" {
		return fold(r.Claim.UserName, maxAttr)
	}
	return fold(r.Claim.UserID, maxAttr)
}

// IsUserID reports whether s is a Slack user id: U or W followed by
// upper-case letters and digits, at most 32 characters in all. It is the
// only thing put inside <@…>, and how a principal is told from an email.
func IsUserID(s string) bool {
	if len(s) < 2 || len(s) > 32 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
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
		_, p := answerSummary(q, s.Item(q.ID), 1000)
		if len(req.Questions) > 1 {
			p = fold(q.Question, 200) + ": " + p
		}
		parts = append(parts, p)
	}
	return Truncate(strings.Join(parts, " | "), 1000)
}

// AlreadyAnswered is what someone who answers too late is told: who
// answered what ("Already answered by @x: …"), or, when queued, that an
// answer is already on its way to the agent; s nil names nobody.
func AlreadyAnswered(req *waterfall.Request, s *waterfall.Settlement, queued bool) string {
	lead := "Already answered"
	if queued {
		lead = "An answer is already on its way to the agent"
	}
	if s == nil {
		return lead + "."
	}
	by := "someone"
	if s.Respondent.SlackUser() != "" {
		by = "<@" + s.Respondent.UserID + ">"
	} else if s.Respondent.UserName != "" {
		by = Escape(s.Respondent.UserName)
	}
	return lead + " by " + by + ": " + Escape(AnswerText(req, s))
}
