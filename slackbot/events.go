package slackbot

import (
	"context"
	"encoding/json"
	"time"

	"github.com/slack-go/slack/slackevents"
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
	b.pool.Submit("", func(ctx context.Context) {
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
