package blocks

import (
	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Notice renders an agent's FYI (`askslack hook claude` on Claude Code's
// Notification event): attributed like a question, the text, no controls;
// nothing to answer.
func Notice(a waterfall.Agent, text string) Message {
	v := waterfall.View{Request: &waterfall.Request{Agent: a}}
	body := truncateEscaped(Escape(clean(text)), maxSectionText)
	who := attribution(v, ":bell: FYI from")
	if c, ok := who.(*slack.ContextBlock); ok {
		c.BlockID = "notice/who" // not an ask: no ask/… id
	}
	bs := []slack.Block{
		who,
		slack.NewSectionBlock(mrkdwnText(body), nil, nil),
		note("", "_Nothing to answer here; the agent is waiting in its terminal._"),
	}
	return Message{Text: fallback(agentName(v) + ": " + text), Blocks: bs}
}
