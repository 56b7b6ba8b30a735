package slackbot

import (
	"context"
	"errors"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

// ErrNoChannel is returned by Notify when neither the notice nor the bot
// names a channel.
var ErrNoChannel = errors.New("slackbot: no Slack channel for the notice")

// Notify posts an agent's FYI (no controls, nothing to answer) to channel,
// or the bot's default channel. It is a single post with the usual retries,
// not an ask: nothing is stored and nothing keeps the message in step.
func (b *Bot) Notify(ctx context.Context, agent waterfall.Agent, text, channel string) error {
	if channel == "" {
		channel = b.channel
		if b.ws != nil {
			channel = b.ws.Channels[workspace.Of(ctx)]
		}
	}
	if channel == "" {
		return ErrNoChannel
	}
	m := blocks.Notice(agent, text)
	return b.call(ctx, "chat.postMessage", func(ctx context.Context) error {
		_, _, err := b.api.PostMessageContext(ctx, channel, msgOptions(m)...)
		return err
	})
}
