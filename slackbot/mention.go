package slackbot

import (
	"context"
	"regexp"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

// What a person who mentions the bot is told when it does not answer.
const (
	textMentionNoThread = "To answer a question, mention me in the question's thread: `@askslack your answer`. `/askslack list` shows what is waiting for you."
	textMentionNotOpen  = "This thread is not an open question (it may have been answered or withdrawn already). `/askslack list` shows what is waiting for you."
	textMentionBatch    = "This message asks several questions; answer them with the message's controls."
	textMentionSeveral  = "Several questions of this session are open in this thread; answer each with its message's controls (or `/askslack list`)."
	textMentionEmpty    = "Write your answer after the mention: `@askslack your answer`."
	reactionAnswered    = "white_check_mark"
)

// leadingMention is the mention of the bot that starts the text.
var leadingMention = regexp.MustCompile(`^\s*<@[A-Z0-9]+(\|[^>]*)?>[\s:,]*`)

// MentionText is the answer a mention carries: the text without the
// leading mention of the bot.
func MentionText(text string) string {
	return strings.TrimSpace(leadingMention.ReplaceAllString(text, ""))
}

// mention answers an ask by a mention in its message's thread: the text
// is the question's typed ("Other") answer, settled like the "Other…"
// modal's, and the mention gets a check mark. Anyone not allowed to
// answer, and any mention elsewhere, gets an ephemeral explanation.
func (b *Bot) mention(ctx context.Context, e *slackevents.AppMentionEvent) string {
	reply := func(text string) { b.ephemeralIn(ctx, e.Channel, e.ThreadTimeStamp, e.User, text) }
	if e.ThreadTimeStamp == "" || e.User == "" {
		reply(textMentionNoThread)
		return resultIgnored
	}
	ask, several, err := b.askAt(ctx, e.Channel, e.ThreadTimeStamp)
	if several {
		reply(textMentionSeveral)
		return resultInvalid
	}
	if err != nil {
		b.log.Error("finding the question of a thread failed", "channel", e.Channel, "ts", e.ThreadTimeStamp, "err", err)
		reply(tryAgain)
		return resultError
	}
	if ask == nil {
		reply(textMentionNotOpen)
		return resultInvalid
	}
	req := ask.Request
	if ok, why := b.authz.Allowed(ctx, e.User, req); !ok {
		b.refused(ctx, waterfall.RefusedClick(ask, waterfall.Respondent{UserID: e.User, Surface: waterfall.SurfaceSlack}, why))
		reply(why)
		return resultRefused
	}
	text := MentionText(e.Text)
	switch {
	case len(req.Questions) != 1:
		reply(textMentionBatch)
		return resultInvalid
	case text == "":
		reply(textMentionEmpty)
		return resultInvalid
	}
	at := e.ThreadTimeStamp
	if ask.Message.Thread == at {
		at = ask.Message.ID // the session's thread: the answer is the question's
	}
	who := waterfall.Respondent{UserID: e.User, Surface: waterfall.SurfaceSlack, Channel: e.Channel, MessageTS: at}
	out, err := b.host.Answer(ctx, ask.CallID, waterfall.SingleAnswer(&req.Questions[0], []string{}, text), who)
	if err != nil {
		msg, result := refusal(req, out, err)
		if result == resultError {
			b.log.Error("answering by mention failed", "callId", ask.CallID, "err", err)
		}
		reply(msg)
		return result
	}
	b.react(ctx, e.Channel, e.TimeStamp, reactionAnswered)
	if out.Queued {
		return resultQueued
	}
	return resultSettled
}

// askAt finds the active ask whose message (or a copy of it) is
// channel/ts among the newest scanAsks active asks, or the one active ask
// in the session thread channel/ts. nil when there is none; several when
// the session thread has more than one, and a mention cannot say which.
func (b *Bot) askAt(ctx context.Context, channel, ts string) (ask *waterfall.Record, several bool, err error) {
	if b.dir == nil {
		return nil, false, errNoDirectory
	}
	asks, err := b.host.Active(ctx, scanAsks)
	if err != nil {
		return nil, false, err
	}
	var inThread []*waterfall.Record
	for _, a := range asks {
		if a.Message.Shows(channel, ts) {
			return a, false, nil
		}
		if a.Message.Conversation == channel && a.Message.Thread == ts {
			inThread = append(inThread, a)
		}
	}
	if len(inThread) == 1 {
		return inThread[0], false, nil
	}
	return nil, len(inThread) > 1, nil
}

// react adds the bot's reaction to a message; failing is only logged (the
// message update already shows the answer).
func (b *Bot) react(ctx context.Context, channel, ts, name string) {
	err := b.call(ctx, "reactions.add", func(ctx context.Context) error {
		return b.api.AddReactionContext(ctx, name, slack.NewRefToMessage(channel, ts))
	})
	if err != nil && SlackError(err) != "already_reacted" {
		b.log.Warn("reacting failed", "channel", channel, "ts", ts, "slackError", SlackError(err), "err", err)
	}
}

// ephemeralIn tells one user something only they see, in a thread when
// threadTS is set, in the background.
func (b *Bot) ephemeralIn(from context.Context, channel, threadTS, user, text string) {
	if channel == "" || user == "" {
		return
	}
	b.tells.Submit("", func(ctx context.Context) {
		ctx = workspace.Carry(ctx, from)
		opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
		if threadTS != "" {
			opts = append(opts, slack.MsgOptionTS(threadTS))
		}
		err := b.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
			_, err := b.api.PostEphemeralContext(ctx, channel, user, opts...)
			return err
		})
		if err != nil {
			b.log.Warn("ephemeral message failed", "channel", channel, "user", user, "slackError", SlackError(err), "err", err)
		}
	})
}
