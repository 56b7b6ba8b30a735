package slackbot

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Remind implements remind.Nudger: a reply in the question's thread (the
// session's thread when it is in one; its own otherwise) that mentions the
// ask's people again, or, for the escalation, the escalation group. Reply
// text is built from ids and escaped agent text, as on the question.
func (s *Surface) Remind(ctx context.Context, a *store.Ask, n remind.Nudge) error {
	req, err := waterfall.DecodeRequest(a)
	if err != nil {
		return err
	}
	v, err := view(a, s.now())
	if err != nil {
		return fmt.Errorf("slackbot: cannot render ask %s: %w", a.CallID, err)
	}
	mentions := s.mentionText(ctx, req)
	if n.Escalate != nil {
		mentions = mentionsOf(n.Escalate)
	}
	thread := a.Message.Thread
	if thread == "" {
		thread = a.Message.TS
	}
	msg := blocks.Reminder(v, mentions, n.Waited, n.Escalate != nil)
	return call(ctx, s.metrics, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		_, _, err := s.api.PostMessageContext(ctx, a.Message.Channel, slack.MsgOptionText(msg.Text, false),
			slack.MsgOptionTS(thread), slack.MsgOptionDisableLinkUnfurl())
		return err
	})
}
