// Package blocks turns asks into Slack Block Kit: the question message in
// each phase of its ask (waterfall.Phase), the "Other…", decline, detail and
// preview modals, and the encoding of block and action ids that lets any
// replica find the ask again from a click. Pure functions, no I/O.
//
// Every output stays within Slack's documented caps for any request that
// passes waterfall.Validate: long text is cut visibly ("…") with the full
// text one tap away in a modal, many options become menus, and a batch too
// large for one message is answered in a modal. Agent and user text is
// escaped so it cannot mention anyone, forge links or break the markup.
package blocks

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Message is a chat.postMessage / chat.update payload: the notification and
// screen-reader fallback text plus the blocks.
type Message struct {
	Text   string
	Blocks []slack.Block
}

// Render returns the message for the view's phase. A view without a
// request (or without questions) can only say the ask is gone.
func Render(v waterfall.View) Message {
	if v.Request == nil || len(v.Request.Questions) == 0 {
		return Expired(waterfall.View{CallID: v.CallID, Phase: waterfall.PhaseExpired})
	}
	switch v.Phase {
	case waterfall.PhaseOpen, waterfall.PhaseContinued:
		return withVotes(Question(v), v)
	case waterfall.PhaseAborted:
		return Withdrawn(v)
	case waterfall.PhaseExpired:
		return Expired(v)
	default:
		return Answered(v)
	}
}

// Attribution caps: ids and names are agent-supplied and unbounded.
const maxAttr = 80

// attribution is the context line naming the asking agent, its principal and
// source task (seed 004's attribution). lead is mrkdwn ending in a verb
// ("Question from").
func attribution(v waterfall.View, lead string) slack.Block {
	parts := []string{lead}
	if v.Request != nil {
		a := v.Request.Agent
		parts[0] += " " + bold(fold(a.ID, maxAttr))
		// The agent id is free text the agent chose; the caller is the
		// API token's name, which the agent cannot choose.
		if c := fold(v.Request.Caller, maxAttr); c != "" {
			parts[0] += " · " + code(Truncate(c, maxAttr))
		}
		if p := fold(a.Principal, maxAttr); p != "" {
			parts = append(parts, "for "+Escape(Truncate(p, maxAttr)))
		}
		if t := fold(a.SourceTaskID, maxAttr); t != "" {
			parts = append(parts, "task "+code(Truncate(t, maxAttr)))
		}
	}
	if l := openLink(v, "Open in browser"); l != "" {
		parts = append(parts, l)
	}
	return slack.NewContextBlock(blockID(v.CallID, -1)+"/who", mrkdwnText(strings.Join(parts, " · ")))
}

// openLink is a link to the ask's page in the browser, while it takes
// answers; "" without one. The link is the operator's URL and a
// path-escaped call id: only & needs escaping for mrkdwn.
func openLink(v waterfall.View, text string) string {
	if v.Link == "" || (v.Phase != waterfall.PhaseOpen && v.Phase != waterfall.PhaseContinued) {
		return ""
	}
	return "<" + Escape(v.Link) + "|" + text + ">"
}

// WithMentions starts a question message with mentions, the mrkdwn that
// pings people (built from ids only, never from agent text): in its text,
// which phones notify with, and in its blocks, which Slack's desktop
// notifications read first since July 2026 (a mention only in the text may
// not show there). The line joins the first block when that is a context
// block with room (the attribution line), so the message keeps its block
// count; otherwise it is a context block of its own. A message already at
// Slack's caps keeps its blocks and has the mentions in its text only.
func WithMentions(m Message, mentions string) Message {
	mentions = strings.TrimSpace(mentions)
	if mentions == "" {
		return m
	}
	m.Text = mentions + " " + m.Text
	line := mrkdwnText(Truncate(mentions, maxSectionText))
	bs := make([]slack.Block, 0, len(m.Blocks)+1)
	if c, ok := first[*slack.ContextBlock](m.Blocks); ok && len(c.ContextElements.Elements) < maxContextElements {
		joined := *c
		joined.ContextElements.Elements = append([]slack.MixedElement{line}, c.ContextElements.Elements...)
		bs = append(append(bs, &joined), m.Blocks[1:]...)
	} else {
		bs = append(append(bs, slack.NewContextBlock("", line)), m.Blocks...)
	}
	if fitsMessage(bs) {
		m.Blocks = bs
	}
	return m
}

// first is bs[0] as a T, if it is one.
func first[T slack.Block](bs []slack.Block) (T, bool) {
	var zero T
	if len(bs) == 0 {
		return zero, false
	}
	t, ok := bs[0].(T)
	return t, ok
}

// maxContextElements is Slack's cap on a context block's elements.
const maxContextElements = 10

// agentName is the asking agent for the fallback text.
func agentName(v waterfall.View) string {
	if v.Request == nil || fold(v.Request.Agent.ID, maxAttr) == "" {
		return "an agent"
	}
	s := fold(v.Request.Agent.ID, maxAttr)
	if p := fold(v.Request.Agent.Principal, maxAttr); p != "" {
		s += " (for " + Truncate(p, maxAttr) + ")"
	}
	return s
}

// slackDate formats t with Slack's <!date^…> so each reader sees it in their
// own time zone; the text after '|' is what clients that can't render it show.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

// timing is the deadline line of a timed ask: the absolute deadline in each
// reader's time zone plus a coarse remaining time, and what happens once the
// window has closed — answers still reach the agent, or (OnTimeout
// terminal) the agent asks in its terminal instead.
func timing(v waterfall.View) string {
	terminal := asksInTerminal(v)
	if v.Phase == waterfall.PhaseContinued {
		stopped := ":arrow_right: The agent stopped waiting"
		if !v.Deadline.IsZero() {
			stopped += " " + slackDate(v.Deadline)
		}
		if terminal {
			return stopped + " and asked in its terminal instead; an answer here may not reach it."
		}
		return stopped + " and moved on. Answers are still delivered to it as a new message."
	}
	if v.Deadline.IsZero() {
		return ""
	}
	line := ":stopwatch: The agent waits until " + slackDate(v.Deadline)
	if left := v.Deadline.Sub(v.Now); !v.Now.IsZero() && left > 0 {
		line += " (" + Remaining(left) + " left)"
	}
	if terminal {
		return line + ", then asks in its terminal instead and withdraws this question."
	}
	return line + "; after that, answers still reach it as a new message."
}

// asksInTerminal reports an agent that, once the window closes, asks in its
// terminal instead and withdraws the question: no late answer reaches it.
func asksInTerminal(v waterfall.View) bool {
	return v.Request != nil && v.Request.OnTimeout == waterfall.OnTimeoutTerminal
}

// Remaining renders a coarse duration: "about 5 minutes", "under a minute".
func Remaining(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < 2*time.Minute:
		return "about a minute"
	case d < time.Hour:
		return fmt.Sprintf("about %d minutes", int(d.Round(time.Minute)/time.Minute))
	case d < 2*time.Hour:
		return "about an hour"
	default:
		return fmt.Sprintf("about %d hours", int(d.Round(time.Hour)/time.Hour))
	}
}

func note(id string, text string) slack.Block {
	return slack.NewContextBlock(id, mrkdwnText(text))
}
