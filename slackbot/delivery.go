package slackbot

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Where a question goes (ASKSLACK_DELIVERY, or an ask's own "delivery"):
// the channel; a direct message to the ask's principal, so the person the
// agent works for gets it on their phone; or both, the channel's message
// with a copy in the principal's DMs carrying the same controls. A
// question that cannot reach the principal (none named, unknown to Slack,
// the DM refused) goes to the channel alone, and says why.

// dms caches the DM channel of each user (conversations.open is
// idempotent, but a call per question is a call too many).
type dms struct {
	mu sync.Mutex
	m  map[string]string
}

// route is where one ask's question goes.
type route struct {
	channel string // the question's message
	note    string // why it is not (also) in the principal's DMs
	copyTo  string // the DM that gets a copy (delivery "both"), or ""
	// unsure: the DM failed for a reason that may pass (a look-up or
	// conversations.open that failed), so another attempt may have gone
	// to the DM after all.
	unsure bool
}

// route decides where req's question goes.
func (s *Surface) route(ctx context.Context, req *waterfall.Request) route {
	mode := cmp.Or(req.Delivery, s.delivery)
	if mode != waterfall.DeliverDM && mode != waterfall.DeliverBoth {
		return route{channel: s.ChannelFor(req)}
	}
	channel := s.ChannelFor(req)
	dm, why, unsure := s.dmOf(ctx, req)
	switch {
	case dm == "" && mode == waterfall.DeliverDM:
		return route{channel: channel, note: "Posted here, not as a direct message to the person the agent works for: " + why + ".", unsure: unsure}
	case dm == "":
		return route{channel: channel, note: "Not also sent as a direct message to the person the agent works for: " + why + ".", unsure: unsure}
	case mode == waterfall.DeliverDM || channel == "":
		return route{channel: dm}
	}
	return route{channel: channel, copyTo: dm}
}

// dmOf opens (or recalls) the DM with req's principal, or says why not
// and whether that may pass.
func (s *Surface) dmOf(ctx context.Context, req *waterfall.Request) (dm, why string, unsure bool) {
	if req.Agent.Principal == "" || s.principals == nil {
		return "", "the agent named nobody (agent.principal)", false
	}
	user, err := s.principals.User(ctx, req.Agent.Principal)
	switch {
	case err != nil:
		s.log.Warn("cannot look up the principal to DM them", "callId", req.CallID, "err", err)
		return "", "Slack could not look them up just now", true
	case user == "":
		return "", "Slack knows no user " + blocks.Escape(req.Agent.Principal), false
	}
	s.dms.mu.Lock()
	dm = s.dms.m[user]
	s.dms.mu.Unlock()
	if dm != "" {
		return dm, "", false
	}
	var ch *slack.Channel
	err = call(ctx, s.caller, defaultRetry, "conversations.open", func(ctx context.Context) error {
		var err error
		ch, _, _, err = s.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
		return err
	})
	if err != nil || ch == nil || ch.ID == "" {
		s.log.Warn("cannot open a DM with the principal", "callId", req.CallID, "user", user, "err", err)
		return "", fmt.Sprintf("Slack would not open a direct message with them (%s)", cmp.Or(SlackError(err), "no answer")),
			err == nil || !Permanent(err)
	}
	s.dms.mu.Lock()
	if s.dms.m == nil {
		s.dms.m = map[string]string{}
	}
	s.dms.m[user] = ch.ID
	s.dms.mu.Unlock()
	return ch.ID, "", false
}

// postCopy posts the copy of a question (delivery "both") in dm: the
// message as rendered, with a line pointing at the original in channel,
// and the same controls. The copy is a courtesy: failing to post it is
// logged and the question stands in the channel. It is sent once; should
// its answer be lost, the copy is found again by its metadata (Find).
func (s *Surface) postCopy(ctx context.Context, dm, channel string, a *waterfall.Record, msg blocks.Message) (asktype.MessageRef, bool) {
	msg = blocks.WithNote(msg, blocks.CopyNote(channel))
	m := chatMessage(dm, msg)
	m.Metadata = questionMeta(a.CallID)
	start := s.now()
	var ts string
	err := call(ctx, s.caller, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = s.chat.PostMessage(ctx, m)
		return err
	})
	if err != nil && !Permanent(err) {
		// The answer may be all that was lost: a copy Slack made but the
		// bot does not know of would keep its buttons forever.
		if c, found, ferr := s.findIn(ctx, dm, a, start); ferr == nil && found {
			return c, true
		}
	}
	if err != nil {
		s.log.Warn("posting the question's copy in the principal's DMs failed; it stays in the channel",
			"callId", a.CallID, "dm", dm, "slackError", SlackError(err), "err", err)
		return asktype.MessageRef{}, false
	}
	return asktype.MessageRef{Surface: waterfall.SurfaceSlack, Conversation: dm, ID: ts}, true
}

// updateCopies brings a question's copies up to date with msg: its DM
// copy says where the question was asked; a second message in the same
// conversation (the question posted twice) shows the same as the first. A
// copy Slack will never update (deleted, its DM closed) is skipped for
// good; any other failure is returned, for the update to be retried.
func (s *Surface) updateCopies(ctx context.Context, a *waterfall.Record, msg blocks.Message) error {
	for _, c := range a.Message.Copies {
		shown := msg
		if c.Conversation != a.Message.Conversation {
			shown = blocks.WithNote(msg, blocks.CopyNote(a.Message.Conversation))
		}
		err := s.updateOne(ctx, c, shown)
		if err != nil && !Permanent(err) {
			return err
		}
		if err != nil {
			s.log.Warn("a copy of the question can no longer be updated", "callId", a.CallID, "channel", c.Conversation,
				"ts", c.ID, "slackError", SlackError(err))
		}
	}
	return nil
}
