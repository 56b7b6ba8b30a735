package blocks

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// AgentRevokeAction is the Revoke button of a connected agent (a personal
// agent token, askslack login); its block id is AgentBlockID.
const AgentRevokeAction = "askslack.agent-revoke"

// AgentItem is one connected agent in a listing.
type AgentItem struct {
	ID, Name string
	Kinds    []string
	// ConnectAddr is where the login came from, LastAddr where it was last
	// used: a token used from somewhere else (a copied credentials file)
	// shows there.
	ConnectAddr, LastAddr string
	Created, Expires      time.Time
	LastUsed              time.Time // zero: never used
}

// AgentBlockID is the block of agent token id's line in a listing.
func AgentBlockID(id string) string { return "agent/" + id }

// ParseAgentBlockID reverses AgentBlockID.
func ParseAgentBlockID(s string) (string, bool) {
	id, ok := strings.CutPrefix(s, "agent/")
	if !ok || id == "" || len(id) > 64 || strings.ContainsAny(id, "/ ") {
		return "", false
	}
	return id, true
}

// AgentLine is one connected agent in a sentence: its name and agents,
// when it was last used and from where, when it expires.
func AgentLine(a AgentItem) string {
	s := "*" + Escape(Truncate(oneLine(a.Name), 60)) + "*"
	if len(a.Kinds) > 0 {
		s += " (" + Escape(Truncate(oneLine(strings.Join(a.Kinds, ", ")), 80)) + ")"
	}
	if a.LastUsed.IsZero() {
		s += " · never used"
	} else {
		s += " · last used " + slackDate(a.LastUsed)
		if a.LastAddr != "" {
			s += " from " + code(Truncate(oneLine(a.LastAddr), 60))
		}
	}
	s += " · connected " + slackDate(a.Created)
	if a.ConnectAddr != "" {
		s += " from " + code(Truncate(oneLine(a.ConnectAddr), 60))
	}
	return s + " · expires " + slackDate(a.Expires)
}

// maxListedAgents bounds a listing's agents (a Home tab shows fewer).
const maxListedAgents = 40

// AgentBlocks lists a person's connected agents, each with Revoke, at most
// max of them, then a note of how many more there are.
func AgentBlocks(as []AgentItem, max int) []slack.Block {
	max = min(max, maxListedAgents)
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText("*Your connected agents*"), nil, nil, slack.SectionBlockOptionBlockID("agent/head"))}
	if len(as) == 0 {
		return append(bs, note("agent/none", "None. Run `askslack login` on a machine to connect its agents: their questions name you, and they can never answer one."))
	}
	for i, a := range as {
		if i == max {
			bs = append(bs, note("agent/more", fmt.Sprintf("%d more: `/askslack agents` lists them all.", len(as)-max)))
			break
		}
		btn := slack.NewButtonBlockElement(AgentRevokeAction, a.ID, plain("Revoke", maxButtonText)).WithStyle(slack.StyleDanger)
		btn.Confirm = slack.NewConfirmationBlockObject(plain("Revoke "+Truncate(oneLine(a.Name), 60)+"?", 100),
			plain("It stops working at once, on every replica, and its open questions are withdrawn. Run askslack login on that machine to connect it again.", 300),
			plain("Revoke", 30), plain("Keep it", 30))
		bs = append(bs, slack.NewSectionBlock(mrkdwnText(AgentLine(a)), nil, slack.NewAccessory(btn), slack.SectionBlockOptionBlockID(AgentBlockID(a.ID))))
	}
	return bs
}
