package slackbot

import (
	"context"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Remind implements remind.Nudger: a reply in the question's thread (the
// session's thread when it is in one; its own otherwise) that mentions the
// ask's people again, or, for the escalation, the escalation group. Reply
// text is built from ids and escaped agent text, as on the question.
func (s *Surface) Remind(ctx context.Context, a *waterfall.Record, n waterfall.Nudge) error {
	req := a.Request
	ctx = forAsk(ctx, req)
	v := view(a, s.now())
	mentions := s.mentionText(ctx, req)
	if n.Escalate != nil {
		mentions = mentionsOf(n.Escalate)
	}
	channel, thread, fromDM := s.reminderPlace(a, n)
	msg := blocks.Reminder(v, mentions, n.Waited, n.Escalate != nil)
	if fromDM {
		msg = blocks.EscalationFromDM(v, mentions, s.principalMention(ctx, req), n.Waited)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(msg.Text, false), slack.MsgOptionDisableLinkUnfurl()}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	return call(ctx, s.caller, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		_, _, err := s.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
}

// reminderPlace is where reminder n of a is posted: the question's thread
// (the session's thread when it is in one; its own otherwise) — except an
// escalation of a question asked in the principal's DMs: mentioning the
// group there notifies nobody (they are not in that conversation), so it
// goes to the channel (fromDM), saying where the question is.
func (s *Surface) reminderPlace(a *waterfall.Record, n waterfall.Nudge) (channel, thread string, fromDM bool) {
	channel, thread = a.Message.Conversation, a.Message.Thread
	if thread == "" {
		thread = a.Message.ID
	}
	if ch := s.ChannelFor(a.Request); n.Escalate != nil && isDM(channel) && ch != "" && !isDM(ch) {
		return ch, "", true
	}
	return channel, thread, false
}

// Reminders is the surface as remind's Nudger: Remind as above, and a
// refusal is one that will never pass for this reminder (the message or
// its channel gone, the bot removed). An error about the bot's own
// credentials (a revoked or invalid token) is no such refusal: it passes
// when the operator fixes the token, and the reminder is retried after its
// lease instead of skipped for good.
func (s *Surface) Reminders() Reminders { return Reminders{s} }

// Reminders is the surface as remind.Nudger (see Surface.Reminders).
type Reminders struct{ *Surface }

// Refusal implements remind.Nudger.
func (r Reminders) Refusal(err error) string {
	if credentials(err) {
		return ""
	}
	return r.Surface.Refusal(err)
}

// credentials reports an error about the bot token itself.
func credentials(err error) bool {
	switch SlackError(err) {
	case "invalid_auth", "token_revoked", "token_expired", "not_authed", "account_inactive":
		return true
	}
	return false
}

// isDM reports whether a conversation id is a direct message.
func isDM(channel string) bool { return strings.HasPrefix(channel, "D") }

// principalMention names req's principal for people: a mention when Slack
// knows them, else their name as the agent gave it.
func (s *Surface) principalMention(ctx context.Context, req *waterfall.Request) string {
	if req.Agent.Principal == "" {
		return "the person the agent works for"
	}
	if s.principals != nil {
		if user, err := s.principals.User(ctx, req.Agent.Principal); err == nil && user != "" {
			return strings.TrimSpace(mentionsOf([]string{user}))
		}
	}
	return blocks.Escape(req.Agent.Principal)
}
