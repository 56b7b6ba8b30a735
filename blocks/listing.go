package blocks

import (
	"strconv"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// ListItems is the most questions /askslack list shows (one section each,
// well inside a message's 50 blocks).
const ListItems = 20

// List is the /askslack list reply: the questions the caller may answer,
// newest first, one line each; more reports that items were cut.
func List(items []Item, more bool) Message {
	if len(items) == 0 {
		return Message{Text: "No open questions are waiting for you."}
	}
	if len(items) > ListItems {
		items, more = items[:ListItems], true
	}
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText(":raising_hand: *Open questions you may answer*"), nil, nil)}
	// Room for the "more" note is kept, so the cut never overflows.
	moreNote := func(n int) slack.Block {
		return note("list/more", "Only the newest "+strconv.Itoa(n)+" are listed.")
	}
	shown := 0
	for _, it := range items {
		b := slack.NewSectionBlock(mrkdwnText(Line(it)), nil, nil, slack.SectionBlockOptionBlockID(blockID(it.View.CallID, -1)+"/list"))
		if !fitsMessage(append(bs[:len(bs):len(bs)], b, moreNote(ListItems))) {
			more = true
			break
		}
		bs, shown = append(bs, b), shown+1
	}
	if more {
		bs = append(bs, moreNote(shown))
	}
	return Message{Text: strconv.Itoa(len(items)) + " open question(s) are waiting for you.", Blocks: bs}
}

// Status is the /askslack status reply for one question the caller may
// answer: its state and its line.
func Status(it Item) Message {
	state := map[waterfall.Phase]string{
		waterfall.PhaseOpen:      "open, waiting for an answer",
		waterfall.PhaseContinued: "open; the agent moved on and gets a late answer as a new message",
		waterfall.PhaseQueued:    "answered late; the answer is on its way to the agent",
		waterfall.PhaseSettled:   "answered",
		waterfall.PhaseDelivered: "answered late; the agent has the answer",
		waterfall.PhaseAborted:   "withdrawn by the agent",
		waterfall.PhaseExpired:   "no longer available",
	}[it.View.Phase]
	if state == "" {
		state = it.View.Phase.String()
	}
	text := "`" + Escape(oneLine(it.View.CallID)) + "`: " + state
	return Message{Text: text, Blocks: []slack.Block{
		slack.NewSectionBlock(mrkdwnText(text), nil, nil),
		note(blockID(it.View.CallID, -1)+"/status", Line(it)),
	}}
}
