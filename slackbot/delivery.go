package slackbot

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Where a question goes (ASKSLACK_DELIVERY, or an ask's own "delivery"):
// the channel, or a direct message to the ask's principal, so the person
// the agent works for gets it on their phone. A question that cannot go to
// the principal (none named, unknown to Slack, the DM refused) goes to the
// channel instead, and says why.

// dms caches the DM channel of each user (conversations.open is
// idempotent, but a call per question is a call too many).
type dms struct {
	mu sync.Mutex
	m  map[string]string
}

// target is where a's question goes: the channel id, and a note to show
// when it went to the channel instead of the principal's DMs.
func (s *Surface) target(ctx context.Context, req *waterfall.Request) (channel, note string) {
	mode := req.Delivery
	if mode == "" {
		mode = s.delivery
	}
	if mode != waterfall.DeliverDM {
		return s.ChannelFor(req), ""
	}
	dm, why := s.dmOf(ctx, req)
	if dm != "" {
		return dm, ""
	}
	return s.ChannelFor(req), "Posted here, not as a direct message to the person the agent works for: " + why + "."
}

// dmOf opens (or recalls) the DM with req's principal, or says why not.
func (s *Surface) dmOf(ctx context.Context, req *waterfall.Request) (string, string) {
	if req.Agent.Principal == "" || s.principals == nil {
		return "", "the agent named nobody (agent.principal)"
	}
	user, err := s.principals.User(ctx, req.Agent.Principal)
	switch {
	case err != nil:
		s.log.Warn("cannot look up the principal to DM them", "callId", req.CallID, "err", err)
		return "", "Slack could not look them up just now"
	case user == "":
		return "", "Slack knows no user " + blocks.Escape(req.Agent.Principal)
	}
	s.dms.mu.Lock()
	dm := s.dms.m[user]
	s.dms.mu.Unlock()
	if dm != "" {
		return dm, ""
	}
	var ch *slack.Channel
	err = call(ctx, s.metrics, defaultRetry, "conversations.open", func(ctx context.Context) error {
		var err error
		ch, _, _, err = s.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
		return err
	})
	if err != nil || ch == nil || ch.ID == "" {
		s.log.Warn("cannot open a DM with the principal", "callId", req.CallID, "user", user, "err", err)
		return "", fmt.Sprintf("Slack would not open a direct message with them (%s)", cmp.Or(SlackError(err), "no answer"))
	}
	s.dms.mu.Lock()
	if s.dms.m == nil {
		s.dms.m = map[string]string{}
	}
	s.dms.m[user] = ch.ID
	s.dms.mu.Unlock()
	return ch.ID, ""
}
