// Package blocks turns asks into Slack Block Kit: the question message in
// each of its states, the "Other…" and plan modals, and the encoding of
// action ids that lets any replica find the ask again from a click. Pure
// functions, no I/O; every output stays within Slack's documented limits.
package blocks

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Phase is what the message shows about the ask.
type Phase int

// Phases of the message of one ask.
const (
	PhaseOpen      Phase = iota // waiting for an answer
	PhaseContinued              // the agent's window closed; late answers are still delivered
	PhaseQueued                 // a late answer was sent to the agent, not yet admitted
	PhaseDelivered              // the agent admitted the late answer
	PhaseSettled                // answered inside the window
	PhaseAborted                // the agent withdrew the question
)

// View is everything a message about one ask depends on.
type View struct {
	CallID  string
	Request *waterfall.Request
	Phase   Phase
	// Deadline of a timed ask; Now is when the message is rendered (for
	// the coarse "about N minutes left" line).
	Deadline time.Time
	Now      time.Time
	// Settlement is the answer shown in PhaseSettled, PhaseQueued and
	// PhaseDelivered.
	Settlement *waterfall.Settlement
}

// Message is a chat.postMessage / chat.update payload: the notification and
// screen-reader fallback text plus the blocks.
type Message struct {
	Text   string
	Blocks []slack.Block
}

// Render returns the message for the view's phase.
func Render(v View) Message {
	switch v.Phase {
	case PhaseOpen, PhaseContinued:
		return Question(v)
	case PhaseAborted:
		return Withdrawn(v)
	default:
		return Answered(v)
	}
}

// attribution is the context line naming the asking agent, its principal and
// source task (seed 004's attribution).
func attribution(v View, lead string) slack.Block {
	a := v.Request.Agent
	parts := []string{lead + " *" + Escape(Truncate(a.ID, 80)) + "*"}
	if a.Principal != "" {
		parts = append(parts, "for "+Escape(Truncate(a.Principal, 80)))
	}
	if a.SourceTaskID != "" {
		parts = append(parts, "task `"+Escape(Truncate(a.SourceTaskID, 80))+"`")
	}
	return slack.NewContextBlock(blockID(v.CallID, -1)+"/who",
		slack.NewTextBlockObject(slack.MarkdownType, strings.Join(parts, " · "), false, true))
}

// slackDate formats t with Slack's <!date^…> so each reader sees it in their
// own time zone; fallback is what clients that can't render it show.
func slackDate(t time.Time, format string) string {
	return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, t.UTC().Format("2006-01-02 15:04 UTC"))
}

// fallback builds the top-level text: it is all a phone notification and a
// screen reader get, so it names the agent, the question and the choices.
func fallbackText(v View, lead string) string {
	var b strings.Builder
	b.WriteString(lead)
	for i, q := range v.Request.Questions {
		if i > 0 {
			b.WriteString(" | ")
		} else {
			b.WriteString(" ")
		}
		b.WriteString(oneLine(q.Question))
		if len(q.Options) > 0 && v.Phase == PhaseOpen {
			labels := make([]string, 0, len(q.Options))
			for _, o := range q.Options {
				labels = append(labels, oneLine(o.Label))
			}
			b.WriteString(" (" + strings.Join(labels, " / ") + ")")
		}
	}
	return Escape(Truncate(b.String(), maxMessageText))
}
