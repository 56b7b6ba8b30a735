package slackbot

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/waterfall"
)

// ClickURLs keeps the response_url of the latest answering click on each
// question message, so that the change the click makes (the buttons go, a
// vote line appears) reaches the message through that URL, replacing the
// original, instead of through chat.update. Slack rates chat.update Tier 3
// (~50 a minute for the whole workspace) but counts a response_url only
// against itself (5 uses within 30 minutes): under a burst of answers
// that is buttons gone within a second instead of minutes later behind
// the workspace's update budget (bench --slack-limits). Each URL is used
// once; the mirror's paced chat.update remains the way for everything
// else (and the fallback: a failed reply leaves the update to it).
//
// The Bot offers each click's URL (Options.ClickURLs), the Surface takes
// it (SurfaceOptions.ClickURLs); both hold the same ClickURLs. The URLs
// are this replica's: the click and the mirror job it starts run here.
type ClickURLs struct {
	http *http.Client
	now  func() time.Time
	mu   sync.Mutex
	m    map[msgKey]clickURL
}

type msgKey struct{ channel, ts string }

type clickURL struct {
	url   string
	until time.Time
}

const (
	// clickURLTTL stays well inside Slack's 30 minutes: the update the
	// click makes follows it within seconds, or goes through chat.update.
	clickURLTTL = 10 * time.Minute
	// maxClickURLs bounds the map: past it, expired entries are dropped
	// and then new ones refused (their messages update by chat.update).
	maxClickURLs = 10000
)

// NewClickURLs returns an empty book that posts with client (nil:
// http.DefaultClient); now is its clock (nil: time.Now).
func NewClickURLs(client *http.Client, now func() time.Time) *ClickURLs {
	if client == nil {
		client = http.DefaultClient
	}
	if now == nil {
		now = time.Now
	}
	return &ClickURLs{http: client, now: now, m: map[msgKey]clickURL{}}
}

// offer keeps url for the next change of the message at channel/ts.
func (c *ClickURLs) offer(channel, ts, url string) {
	if c == nil || channel == "" || ts == "" || url == "" {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxClickURLs {
		for k, u := range c.m {
			if !now.Before(u.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxClickURLs {
			return
		}
	}
	c.m[msgKey{channel, ts}] = clickURL{url: url, until: now.Add(clickURLTTL)}
}

// has reports whether a live URL waits for the message.
func (c *ClickURLs) has(channel, ts string) bool {
	_, ok := c.lookup(channel, ts, false)
	return ok
}

// take returns the message's URL and forgets it (a URL is used once).
func (c *ClickURLs) take(channel, ts string) (string, bool) {
	return c.lookup(channel, ts, true)
}

func (c *ClickURLs) lookup(channel, ts string, remove bool) (string, bool) {
	if c == nil {
		return "", false
	}
	k := msgKey{channel, ts}
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.m[k]
	if !ok {
		return "", false
	}
	if remove || !c.now().Before(u.until) {
		delete(c.m, k)
	}
	if !c.now().Before(u.until) {
		return "", false
	}
	return u.url, true
}

// offerClickURL keeps the response_url of an answering click on a
// question message (not a Home tab's or a modal's: Slack sends those none).
func (b *Bot) offerClickURL(c *click) {
	if c.ic.Container.Type != "message" || c.ic.Container.ChannelID != c.channel || c.ic.Container.MessageTs != c.ts {
		return
	}
	b.clickURLs.offer(c.channel, c.ts, c.ic.ResponseURL)
}

// adoptClicked records the message a click came from as its question's
// message when the ask does not know it: the click beat the post's reply
// (Slack shows a message as soon as it stores it; the reply may come a
// second later, or never), or the question was posted twice and the
// record names the other message. Then the change the click makes reaches
// the message at once through the click's response_url, instead of after
// the reply, or after a conversations.history look for the post. Only a click
// on a message in a channel (C…, G…): a DM may hold a copy, not the
// question's message.
func (b *Bot) adoptClicked(ctx context.Context, c *click) {
	ad, ok := b.mirror.(Adopter)
	if !ok || c.ask == nil || c.ask.Message.Shows(c.channel, c.ts) || c.ic.Container.Type != "message" ||
		c.ic.Container.ChannelID != c.channel || c.ic.Container.MessageTs != c.ts || c.ts == "" ||
		!(strings.HasPrefix(c.channel, "C") || strings.HasPrefix(c.channel, "G")) {
		return
	}
	ad.Adopt(ctx, c.ask.CallID, asktype.MessageRef{Surface: waterfall.SurfaceSlack, Conversation: c.channel, ID: c.ts,
		Thread: c.ic.Container.ThreadTs})
}

// Unmetered implements mirror.Replier: the ask's next update goes through
// clicks' response_urls only, spending none of chat.update's budget — a
// URL waits for its message and for each of its copies (a copy without
// one, say in the principal's DMs, takes a chat.update).
func (s *Surface) Unmetered(ref asktype.MessageRef) bool {
	if !s.clickURLs.has(ref.Conversation, ref.ID) {
		return false
	}
	for _, c := range ref.Copies {
		if !s.clickURLs.has(c.Conversation, c.ID) {
			return false
		}
	}
	return true
}

// replyToClick replaces the message at ref through its click's
// response_url when one waits (ok=false: none did). A failure is returned
// as retryable and never as Slack's own error (an expired URL says nothing
// about the message): the mirror's retry updates the message by
// chat.update.
func (s *Surface) replyToClick(ctx context.Context, ref asktype.MessageRef, msg blocks.Message) (ok bool, err error) {
	url, found := s.clickURLs.take(ref.Conversation, ref.ID)
	if !found {
		return false, nil
	}
	body := &slack.WebhookMessage{Text: msg.Text, Blocks: &slack.Blocks{BlockSet: msg.Blocks}, ReplaceOriginal: true}
	err = call(ctx, s.caller, replyPolicy, "response_url", func(ctx context.Context) error {
		return slack.PostWebhookCustomHTTPContext(ctx, url, s.clickURLs.http, body)
	})
	if err != nil {
		return true, fmt.Errorf("replacing the message through the click's response_url: %v", err)
	}
	return true, nil
}

// replyPolicy tries a response_url once: on failure the mirror retries,
// paced, by chat.update.
var replyPolicy = backoff.Policy{Attempts: 1}
