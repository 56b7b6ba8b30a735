package slackbot

import (
	"context"
	"encoding/json"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/askslack/askslack/workspace"
)

// EventHandler takes Events API payloads (the event_callback envelope, as
// raw JSON); *Bot is one. It must return at once: both transports
// acknowledge after it returns.
type EventHandler interface {
	HandleEvent(ctx context.Context, body []byte)
}

// eventTTL is how long an event id is remembered: Slack retries a failed
// delivery three times within about an hour.
const eventTTL = 2 * time.Hour

// envelope is the part of an event_callback the slackevents types drop.
type envelope struct {
	Type    string `json:"type"`
	EventID string `json:"event_id"`
	// The installation the event is for
	// (https://docs.slack.dev/apis/events-api/#callback-field): an
	// org-wide install's events name the enterprise and, for a
	// workspace's event, the workspace in context_team_id.
	TeamID              string `json:"team_id"`
	EnterpriseID        string `json:"enterprise_id"`
	IsEnterpriseInstall bool   `json:"is_enterprise_install"`
	ContextTeamID       string `json:"context_team_id"`
	Authorizations      []struct {
		IsEnterpriseInstall bool `json:"is_enterprise_install"`
	} `json:"authorizations"`
	Event struct {
		Type     string   `json:"type"`
		UserTeam string   `json:"user_team"`
		TeamIDs  []string `json:"team_ids"` // team_access_granted / _revoked
		Tokens   struct {
			Bot []string `json:"bot"`
		} `json:"tokens"` // tokens_revoked
	} `json:"event"`
}

// Uninstaller is told when Slack says an installation is gone or its
// workspaces changed (several workspaces only; package installs).
type Uninstaller interface {
	// Uninstalled: app_uninstalled, or tokens_revoked naming the bot.
	Uninstalled(ctx context.Context, team, enterprise string, orgWide bool, why string)
	// TeamAccess: an org admin added the org-wide install to teams
	// (granted) or took it away from them.
	TeamAccess(ctx context.Context, enterprise string, teams []string, granted bool)
}

// HandleEvent parses one event_callback and queues its work. An event id
// seen before (Slack's redelivery, on any replica) is dropped, so a retried
// mention answers once. Events the bot does not act on are ignored.
func (b *Bot) HandleEvent(ctx context.Context, body []byte) {
	defer func() {
		if r := recover(); r != nil {
			b.panicked("event", r, nil)
		}
	}()
	var env envelope
	if json.Unmarshal(body, &env) != nil || env.Type != slackevents.CallbackEvent {
		b.log.Debug("ignoring an Events API payload that is no event_callback", "type", env.Type)
		return
	}
	if b.installEvent(ctx, env) {
		return
	}
	if b.ws != nil {
		team := env.ContextTeamID
		if team == "" {
			team = env.TeamID
		}
		wctx, ok := b.payload(ctx, team, env.Event.UserTeam, env.EnterpriseID)
		if !ok {
			b.metrics.Interaction("event", resultRefused)
			return
		}
		ctx = wctx
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		b.log.Warn("undecodable event", "eventId", env.EventID, "err", err)
		b.metrics.Interaction("event", resultInvalid)
		return
	}
	kind, work := b.eventWork(ev)
	if work == nil {
		b.metrics.Interaction(kind, resultIgnored)
		return
	}
	wctx := ctx
	b.pool.Submit("", func(ctx context.Context) {
		ctx = workspace.Carry(ctx, wctx)
		if !b.firstDelivery(ctx, env.EventID) {
			b.metrics.Interaction(kind, resultDuplicate)
			return
		}
		b.metrics.Interaction(kind, work(ctx))
	})
}

// eventWork routes an event to its handler; nil work means not ours.
func (b *Bot) eventWork(ev slackevents.EventsAPIEvent) (kind string, work func(context.Context) string) {
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		return string(slackevents.AppMention), func(ctx context.Context) string { return b.mention(ctx, e) }
	case *slackevents.AppHomeOpenedEvent:
		if e.Tab != "home" {
			return string(slackevents.AppHomeOpened), nil // the Messages tab
		}
		return string(slackevents.AppHomeOpened), func(ctx context.Context) string { return b.homeOpened(ctx, e.User, e.View) }
	}
	return ev.InnerEvent.Type, nil
}

// firstDelivery reports whether eventID is new. Without a directory (or an
// id) every delivery is new; when the store cannot tell, the event is
// dropped: answering twice is worse than asking the person to repeat.
func (b *Bot) firstDelivery(ctx context.Context, eventID string) bool {
	if b.dir == nil || eventID == "" {
		return true
	}
	first, err := b.dir.Once(ctx, "event:"+eventID, eventTTL, b.host.Now())
	if err != nil {
		b.log.Error("checking an event id failed; dropping the event", "eventId", eventID, "err", err)
		return false
	}
	return first
}

// installEvent handles the events about the installation itself, which
// come whether or not it is still kept; it reports whether env was one.
func (b *Bot) installEvent(ctx context.Context, env envelope) bool {
	if b.uninstaller == nil {
		return false
	}
	orgWide := env.IsEnterpriseInstall
	for _, a := range env.Authorizations {
		orgWide = orgWide || a.IsEnterpriseInstall
	}
	team := env.TeamID
	if orgWide {
		team = ""
	}
	switch env.Event.Type {
	case "app_uninstalled":
		b.pool.Submit("", func(ctx context.Context) {
			if b.firstDelivery(ctx, env.EventID) {
				b.uninstaller.Uninstalled(ctx, team, env.EnterpriseID, orgWide, "the app was uninstalled")
			}
		})
	case "tokens_revoked":
		if len(env.Event.Tokens.Bot) == 0 {
			return true // a user's token: the bot holds none
		}
		b.pool.Submit("", func(ctx context.Context) {
			if b.firstDelivery(ctx, env.EventID) {
				b.uninstaller.Uninstalled(ctx, team, env.EnterpriseID, orgWide, "its bot token was revoked")
			}
		})
	case "team_access_granted", "team_access_revoked":
		granted := env.Event.Type == "team_access_granted"
		b.pool.Submit("", func(ctx context.Context) {
			if b.firstDelivery(ctx, env.EventID) {
				b.uninstaller.TeamAccess(ctx, env.EnterpriseID, env.Event.TeamIDs, granted)
			}
		})
	default:
		return false
	}
	b.metrics.Interaction(env.Event.Type, resultRecorded)
	return true
}
