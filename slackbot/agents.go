package slackbot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Agents are the personal agent tokens people connect with askslack login
// (tokens.Service, through the binary's wiring): each person sees and
// revokes their own, in App Home and with /askslack agents.
type Agents interface {
	// Agents lists owner's live tokens, newest first.
	Agents(ctx context.Context, owner string) ([]asktype.AgentToken, error)
	// RevokeAgent revokes token id of who.UserID's own, on every replica,
	// and withdraws its open asks (it says how many); ErrAgentGone when
	// no live token of theirs has that id.
	RevokeAgent(ctx context.Context, id string, who waterfall.Respondent) (withdrawn int, err error)
}

// ErrAgentGone: no live token of the person's has that id.
var ErrAgentGone = errors.New("slackbot: no such connected agent")

// UseAgents turns on "Your connected agents" in App Home and /askslack
// agents. Call it while wiring.
func (b *Bot) UseAgents(a Agents) { b.agents = a }

// Replies about connected agents.
const (
	textAgentsOff    = "Agents are not connected with `askslack login` here: an operator gives each agent a token (ASKSLACK_API_TOKENS)."
	textAgentsFailed = "Sorry, your connected agents could not be read right now. Please try again in a minute."
	textAgentGone    = "That agent is no longer connected: it was revoked or it expired."
	maxHomeAgents    = 5
	maxCommandAgents = 40
)

func agentItems(ts []asktype.AgentToken) []blocks.AgentItem {
	out := make([]blocks.AgentItem, 0, len(ts))
	for _, t := range ts {
		out = append(out, blocks.AgentItem{ID: t.ID, Name: t.Name, Kinds: t.Kinds, ConnectAddr: t.ConnectAddr, LastAddr: t.LastAddr,
			Created: t.Created, Expires: t.Expires, LastUsed: t.LastUsed})
	}
	return out
}

// homeAgents are the Home tab's agent blocks and a digest of what they
// show; none when login is off or the person has none connected.
func (b *Bot) homeAgents(ctx context.Context, user string) ([]slack.Block, string) {
	if b.agents == nil {
		return nil, ""
	}
	ts, err := b.agents.Agents(ctx, user)
	if err != nil {
		b.log.Warn("listing connected agents for the Home tab failed", "user", user, "err", err)
		return nil, "agents unavailable"
	}
	if len(ts) == 0 {
		return nil, "" // a tab without connected agents stays as it was (the connect help says how)
	}
	d := sha256.New()
	for _, t := range ts {
		// The minute of the last use and its address: a use from another
		// machine shows on the tab at its next refresh.
		fmt.Fprintf(d, "%s %d %s\n", t.ID, t.LastUsed.Unix()/60, t.LastAddr)
	}
	return append([]slack.Block{slack.NewDividerBlock()}, blocks.AgentBlocks(agentItems(ts), maxHomeAgents)...), "agents " + hex.EncodeToString(d.Sum(nil)[:8])
}

// agentsFor is /askslack agents.
func (b *Bot) agentsFor(ctx context.Context, user string) blocks.Message {
	if b.agents == nil {
		return blocks.Message{Text: textAgentsOff}
	}
	ts, err := b.agents.Agents(ctx, user)
	if err != nil {
		b.log.Error("listing connected agents failed", "user", user, "err", err)
		return blocks.Message{Text: textAgentsFailed}
	}
	text := fmt.Sprintf("%d connected agents", len(ts))
	if len(ts) == 1 {
		text = "1 connected agent"
	}
	return blocks.Message{Text: text, Blocks: blocks.AgentBlocks(agentItems(ts), maxCommandAgents)}
}

// agentRevokeClick is a connected agent's Revoke, in App Home or a
// /askslack agents listing: the clicker's own tokens only.
func (b *Bot) agentRevokeClick(ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction, fb *feedback) string {
	id, ok := blocks.ParseAgentBlockID(act.BlockID)
	if !ok || b.agents == nil {
		return resultInvalid
	}
	who := waterfall.Respondent{UserID: ic.User.ID, UserName: userName(ic.User), Surface: waterfall.SurfaceSlack}
	n, err := b.agents.RevokeAgent(ctx, id, who)
	switch {
	case errors.Is(err, ErrAgentGone):
		b.tell(fb, textAgentGone)
		return resultDuplicate
	case err != nil:
		b.log.Error("revoking a connected agent failed", "user", ic.User.ID, "err", err)
		b.tell(fb, textAgentsFailed)
		return resultError
	}
	b.log.Info("connected agent revoked from Slack", "token", id, "by", ic.User.ID, "withdrawn", n)
	msg := "Revoked: it stops working at once, on every replica."
	if n > 0 {
		msg += fmt.Sprintf(" Its %d open questions are withdrawn.", n)
	}
	b.tell(fb, msg+" Run `askslack login` on that machine to connect it again.")
	return resultSettled
}
