package slackbot

import (
	"context"
	"errors"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Directory is the part of the store that finding people needs beyond
// the asks themselves (which come from the Host): once-only markers for
// redelivered events, Home tab visitors, remembered values, and the Slack
// budget every replica shares (store.Reach and store.Budget).
type Directory interface {
	Once(ctx context.Context, key string, ttl time.Duration, now time.Time) (bool, error)
	Visit(ctx context.Context, userID string, now time.Time) error
	Visitors(ctx context.Context, since time.Time, limit int) ([]string, error)
	ThreadBook
	Take(ctx context.Context, b asktype.Bucket, now time.Time) (bool, error)
}

// errNoDirectory: the bot was built without a store to list from.
var errNoDirectory = errors.New("slackbot: no directory configured")

// scanAsks bounds how many active asks one listing reads and checks: the
// newest this many are considered, older ones are not listed (a listing
// says so when it is cut).
const scanAsks = 200

// answerable returns the active asks userID may answer, newest first, at
// most limit; more reports that there were others. Authorization is the
// Authorizer's, asked per ask, and fails closed: an ask it cannot decide
// is left out.
func (b *Bot) answerable(ctx context.Context, userID string, limit int) (recs []*waterfall.Record, more bool, err error) {
	if b.dir == nil {
		return nil, false, errNoDirectory
	}
	asks, err := b.host.Active(ctx, scanAsks)
	if err != nil {
		return nil, false, err
	}
	for _, r := range asks {
		if ok, _ := b.authz.Allowed(ctx, userID, r.Request); !ok {
			continue
		}
		if len(recs) == limit {
			return recs, true, nil
		}
		recs = append(recs, r)
	}
	return recs, len(asks) == scanAsks, nil
}

// items turns records into listed items, with a permalink to each posted
// message (none when Slack will not say).
func (b *Bot) items(ctx context.Context, recs []*waterfall.Record) []blocks.Item {
	out := make([]blocks.Item, 0, len(recs))
	for _, r := range recs {
		out = append(out, blocks.Item{View: waterfall.ViewOf(r, b.host.Now()), Asked: r.Created, Link: b.permalink(ctx, r.Message)})
	}
	return out
}

// permalink is the link to a message, "" when there is none or Slack
// fails to say (a listing without a link beats no listing).
func (b *Bot) permalink(ctx context.Context, ref asktype.MessageRef) string {
	if !ref.Posted() {
		return ""
	}
	var link string
	err := b.call(ctx, "chat.getPermalink", func(ctx context.Context) error {
		var err error
		link, err = b.api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: ref.Conversation, Ts: ref.ID})
		return err
	})
	if err != nil {
		b.log.Warn("permalink failed", "channel", ref.Conversation, "ts", ref.ID, "slackError", SlackError(err), "err", err)
		return ""
	}
	return link
}
