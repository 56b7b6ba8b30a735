package blocks

import (
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// The messages that help a question find its people: the parent line of
// a session's thread, the note on a question's copy, and reminders.

// MaxMessageBlocks is how many blocks Slack takes in one message.
const MaxMessageBlocks = 50

// SessionThread is the parent line of an agent session's thread
// (ASKSLACK_THREADS=session): who is working on what, so a busy channel
// shows one line per session and its questions inside. Agent text is
// escaped; nothing in it pings.
func SessionThread(a waterfall.Agent) Message {
	v := waterfall.View{Request: &waterfall.Request{Agent: a}}
	line := ":robot_face: " + bold(fold(a.ID, maxAttr)) + " is working"
	if t := fold(a.SourceTaskID, maxAttr); t != "" {
		line += " on " + bold(t)
	}
	if p := fold(a.Principal, maxAttr); p != "" {
		line += " for " + Escape(p)
	}
	line += "… its questions are in this thread."
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText(line), nil, nil)}
	return Message{Text: fallback(agentName(v) + " is working; its questions are in this thread"), Blocks: bs}
}

// WithNote adds a context line (mrkdwn, already safe) to the end of a
// message, when a block is left for it.
func WithNote(m Message, mrkdwn string) Message {
	if len(m.Blocks) < MaxMessageBlocks {
		// A fresh array: m's caller may add a different note to its copy.
		m.Blocks = append(m.Blocks[:len(m.Blocks):len(m.Blocks)], note("", mrkdwn))
	}
	return m
}

// CopyNote is the line on a question's copy (delivery "both") that points
// at the message it copies, in channel.
func CopyNote(channel string) string {
	return ":speech_balloon: Also asked in <#" + channel + ">; an answer here or there answers both."
}

// Reminder is a reply in a question's thread while nobody answers it:
// mentions (built from ids, never from agent text) then how long it has
// waited and what it asks. escalate says it is the last word: the
// escalation group is in mentions.
func Reminder(v waterfall.View, mentions string, waited time.Duration, escalate bool) Message {
	what := "a question"
	if v.Request != nil && len(v.Request.Questions) > 0 {
		what = "“" + Escape(fold(v.Request.Questions[0].Question, 150)) + "”"
	}
	who := bold(fold(agentNameOf(v), maxAttr))
	line := mentions + ":hourglass: Still waiting for an answer to " + what + " from " + who + " (asked " + Span(waited) + " ago)."
	switch {
	case escalate:
		line = mentions + ":rotating_light: Nobody has answered " + what + " from " + who + " in " + Span(waited) + ": escalating."
	case v.Votes.Quorum():
		line = mentions + quorumReminder(v.Votes, what, who, waited) // quorum.go
	}
	return Message{Text: truncateEscaped(line, maxFallbackText)}
}

// EscalationFromDM is the escalation of a question asked in a person's
// DMs, posted where the escalation group can see it: it says whose DMs the
// question is in (asked: a mention or escaped text).
func EscalationFromDM(v waterfall.View, mentions, asked string, waited time.Duration) Message {
	m := Reminder(v, mentions, waited, true)
	return Message{Text: truncateEscaped(m.Text+" It was asked of "+asked+" in a direct message.", maxFallbackText)}
}

// agentNameOf is the asking agent's id, or "an agent".
func agentNameOf(v waterfall.View) string {
	if v.Request == nil || v.Request.Agent.ID == "" {
		return "an agent"
	}
	return v.Request.Agent.ID
}

// Span renders a duration for people: "under a minute", "15 minutes",
// "1 hour", "105 minutes", "3 hours".
func Span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < 2*time.Minute:
		return "1 minute"
	case d == time.Hour:
		return "1 hour"
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	default:
		return fmt.Sprintf("about %d hours", int(d.Round(time.Hour)/time.Hour))
	}
}
