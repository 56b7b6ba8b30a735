package blocks

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Item is one question listed for a person (the Home tab, /askslack list
// and status): its view, when it was asked, and a link to its message (""
// while there is none).
type Item struct {
	View  waterfall.View
	Asked time.Time
	Link  string
}

// Home tab caps: Slack allows 100 blocks in a view; two are kept for the
// header and the "more" note, and each question brings its message's
// blocks (at most 50) plus a divider and a summary line.
const (
	maxHomeBlocks = 100
	// maxHomeBytes keeps the view's JSON well under Slack's 250 kB
	// (view_too_large): ten worst-case questions would pass it.
	maxHomeBytes = 200_000
	// HomeItems is the most questions a Home tab shows.
	HomeItems = 10
	// maxTopBytes is kept for the blocks over the questions (HomeStats).
	maxTopBytes = 2_000
	// homeReserved blocks are kept free of questions: the "more" note
	// and a notice (WithHomeNotice).
	homeReserved = 2
)

// ConnectHelp is what a person with no questions is told: how an agent
// reaches askslack.
const ConnectHelp = "*How to connect an agent*\n" +
	"• On your machine: `askslack login` connects its agents as yours (no token to copy); its questions then name you.\n" +
	"• MCP clients: run `askslack mcp` as a tool server; the agent asks with its `ask` tool.\n" +
	"• Claude Code / Codex: `askslack hook claude` or `askslack hook codex` turns their question, plan and permission hooks into questions here.\n" +
	"• Anything else: `POST /v1/asks` on the askslack service (see its README), or `askslack ask` from a shell."

// Home is the Home tab of a person: the questions they may answer, newest
// first, each with a summary line (agent, age, deadline, link) and the
// same controls as its message; more reports that items were cut. With no
// items it says so and how to connect an agent. Blocks in top (HomeStats)
// come right under the header.
func Home(items []Item, more bool, top ...slack.Block) slack.HomeTabViewRequest {
	bs := []slack.Block{slack.NewHeaderBlock(plain("Questions waiting for you", maxHeaderText))}
	bs = append(bs, top...)
	if len(items) == 0 {
		bs = append(bs,
			slack.NewSectionBlock(mrkdwnText("Nothing is waiting for you right now. Questions from agents that you may answer show up here."), nil, nil),
			slack.NewDividerBlock(),
			slack.NewSectionBlock(mrkdwnText(ConnectHelp), nil, nil))
		return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: bs}}
	}
	size := 0
	for i, it := range items {
		q := question(it.View, false).Blocks // a Home tab takes no markdown block
		add := append([]slack.Block{slack.NewDividerBlock(), summary(it, "home")}, q...)
		raw, _ := json.Marshal(add)
		if i >= HomeItems || len(bs)+len(add) > maxHomeBlocks-homeReserved || size+len(raw) > maxHomeBytes-maxTopBytes {
			more = true
			break
		}
		bs, size = append(bs, add...), size+len(raw)
	}
	if more {
		bs = append(bs, note("home/more", "More questions are waiting for you: `/askslack list` lists them all."))
	}
	return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: bs}}
}

// summary is the context line of one listed question; role keeps its
// block_id unique within one view.
func summary(it Item, role string) slack.Block {
	return note(blockID(it.View.CallID, -1)+"/"+role, Line(it))
}

// Line is one question in a sentence: agent, question, when asked, the
// deadline or that the agent moved on, and the link. Agent text is
// escaped.
func Line(it Item) string {
	v := it.View
	parts := []string{bold(Escape(agentName(v)))}
	if v.Request != nil && len(v.Request.Questions) > 0 {
		q := Escape(fold(v.Request.Questions[0].Question, 150))
		if n := len(v.Request.Questions); n > 1 {
			q += " (+" + strconv.Itoa(n-1) + " more)"
		}
		parts = append(parts, q)
	}
	if !it.Asked.IsZero() {
		parts = append(parts, "asked "+slackDate(it.Asked))
	}
	switch {
	case v.Phase == waterfall.PhaseContinued && asksInTerminal(v):
		parts = append(parts, "the agent asked in its terminal instead")
	case v.Phase == waterfall.PhaseContinued:
		parts = append(parts, "the agent moved on; answers still reach it")
	case !v.Deadline.IsZero():
		parts = append(parts, "waits until "+slackDate(v.Deadline))
	}
	if it.Link != "" {
		parts = append(parts, "<"+it.Link+"|open the message>")
	}
	return strings.Join(parts, " · ")
}

// WithHomeNotice puts text (mrkdwn the bot wrote; agent text in it
// already escaped) at the top of a Home tab, under its header: what a
// person who clicked in the tab is told about their click, where they are
// looking. Home keeps a block free for it.
func WithHomeNotice(v slack.HomeTabViewRequest, text string) slack.HomeTabViewRequest {
	n := slack.NewSectionBlock(mrkdwnText(Truncate(":information_source: "+text, maxSectionText)), nil, nil,
		slack.SectionBlockOptionBlockID("home/notice"))
	bs := v.Blocks.BlockSet
	at := min(1, len(bs))
	out := make([]slack.Block, 0, len(bs)+1)
	out = append(append(append(out, bs[:at]...), n), bs[at:]...)
	v.Blocks = slack.Blocks{BlockSet: out}
	return v
}
