package slackbot

import (
	"context"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

// CommandHandler takes slash commands; *Bot is one. Both transports feed
// it the same way and send what it returns as the immediate response.
type CommandHandler interface {
	HandleCommand(ctx context.Context, cmd slack.SlashCommand) any
}

// The /askslack verbs.
const (
	verbList   = "list"
	verbStatus = "status"
	verbStats  = "stats"
	verbRules  = "rules"
	verbAgents = "agents"
	verbHelp   = "help"
)

const commandKind = "slash_command"

// textHelp is the /askslack help reply.
// textNotInstalled answers a command from a workspace no installation serves.
const textNotInstalled = "askslack is not installed in this workspace (or was removed from it); ask an admin to add it with Add to Slack."

const textHelp = "*/askslack* — questions from AI agents\n" +
	"• `/askslack list` — the open questions you may answer, newest first, with links\n" +
	"• `/askslack status <callId>` — where one question stands\n" +
	"• `/askslack stats [7d]` — how the team answered agents lately: in the window, late or never, time to answer, per agent and per person\n" +
	"• `/askslack rules` — the standing rules that answer permission questions without asking, with Revoke\n" +
	"• `/askslack agents` — your connected agents (`askslack login`): when and where each was last used, with Revoke\n" +
	"• `/askslack help` — this text\n" +
	"You can also answer in the App Home tab, or mention me in a question's thread: `@askslack your answer`."

// Command replies that are not listings.
const (
	textNoSuchCall   = "There is no question with that id that you may answer."
	textStatusUsage  = "Usage: `/askslack status <callId>`"
	textUnavailable  = "Sorry, I can't look questions up right now. Please try again in a minute."
	maxCommandCallID = 200
)

// ParseCommand splits a slash command's text into its verb (lower case;
// "help" when empty or unknown) and argument (the first word after it).
func ParseCommand(text string) (verb, arg string) {
	f := strings.Fields(text)
	if len(f) == 0 {
		return verbHelp, ""
	}
	verb = strings.ToLower(f[0])
	if len(f) > 1 {
		arg = f[1]
	}
	switch verb {
	case verbList, verbStatus, verbStats, verbRules, verbAgents:
		return verb, arg
	}
	return verbHelp, ""
}

// HandleCommand answers /askslack within Slack's 3 seconds: help at once
// in the ack; list and status read the store and ask who may answer, so
// they are acknowledged empty and answered through the response_url.
func (b *Bot) HandleCommand(ctx context.Context, cmd slack.SlashCommand) (ack any) {
	defer b.recoverAck(commandKind, &ack)
	verb, arg := ParseCommand(cmd.Text)
	if verb == verbHelp {
		b.metrics.Interaction(commandKind, verbHelp)
		return ephemeralAck(blocks.Message{Text: textHelp})
	}
	wctx, ok := b.payload(ctx, cmd.TeamID, "", cmd.EnterpriseID)
	if !ok {
		b.metrics.Interaction(commandKind, resultRefused)
		return ephemeralAck(blocks.Message{Text: textNotInstalled})
	}
	b.pool.Submit("", func(ctx context.Context) {
		ctx = workspace.Carry(ctx, wctx)
		var msg blocks.Message
		switch verb {
		case verbList:
			msg = b.listFor(ctx, cmd.UserID)
		case verbStats:
			msg = b.statsFor(ctx, arg)
		case verbRules:
			msg = b.rulesFor(ctx, cmd.UserID)
		case verbAgents:
			msg = b.agentsFor(ctx, cmd.UserID)
		default:
			msg = b.statusFor(ctx, cmd.UserID, arg)
		}
		b.respond(ctx, cmd, msg)
		b.metrics.Interaction(commandKind, verb)
	})
	return nil
}

// recoverAck turns a panic into an empty ack: hostile input must never
// kill the process.
func (b *Bot) recoverAck(where string, ack *any) {
	if r := recover(); r != nil {
		b.panicked(where, r, nil)
		*ack = nil
	}
}

// ephemeralAck is an immediate slash command response only the caller sees.
func ephemeralAck(m blocks.Message) *slack.WebhookMessage {
	w := &slack.WebhookMessage{Text: m.Text, ResponseType: slack.ResponseTypeEphemeral}
	if len(m.Blocks) > 0 {
		w.Blocks = &slack.Blocks{BlockSet: m.Blocks}
	}
	return w
}

// listFor is /askslack list for userID.
func (b *Bot) listFor(ctx context.Context, userID string) blocks.Message {
	recs, more, err := b.answerable(ctx, userID, blocks.ListItems)
	if err != nil {
		b.log.Error("listing questions failed", "user", userID, "err", err)
		return blocks.Message{Text: textUnavailable}
	}
	return blocks.List(b.items(ctx, recs), more)
}

// statusFor is /askslack status for userID: a question they may not
// answer reads exactly like one that does not exist.
func (b *Bot) statusFor(ctx context.Context, userID, callID string) blocks.Message {
	if callID == "" || len(callID) > maxCommandCallID {
		return blocks.Message{Text: textStatusUsage}
	}
	r, err := b.host.Get(ctx, callID)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			return blocks.Message{Text: textNoSuchCall}
		}
		b.log.Error("reading ask failed", "callId", callID, "err", err)
		return blocks.Message{Text: textUnavailable}
	}
	if ok, _ := b.authz.Allowed(ctx, userID, r.Request); !ok {
		return blocks.Message{Text: textNoSuchCall}
	}
	return blocks.Status(b.items(ctx, []*waterfall.Record{r})[0])
}

// respond sends a slash command's answer to its response_url (valid for
// 30 minutes, 5 uses), or as an ephemeral in its channel without one.
func (b *Bot) respond(ctx context.Context, cmd slack.SlashCommand, m blocks.Message) {
	if cmd.ResponseURL == "" {
		b.ephemeral(ctx, cmd.ChannelID, cmd.UserID, m.Text)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := b.call(ctx, "response_url", func(ctx context.Context) error {
		return slack.PostWebhookContext(ctx, cmd.ResponseURL, ephemeralAck(m))
	})
	if err != nil {
		b.log.Warn("answering a slash command failed", "command", cmd.Command, "err", err)
	}
}
