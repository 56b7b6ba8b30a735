package slackbot

import (
	"context"
	"errors"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Directory is the part of the store that finding people needs: active
// asks across sessions, once-only markers for redelivered events, Home tab
// visitors, and the Slack budget every replica shares.
type Directory interface {
	store.Reach
	Take(ctx context.Context, budget string, perMinute, burst int, now time.Time) (bool, error)
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
	asks, err := b.dir.Active(ctx, scanAsks)
	if err != nil {
		return nil, false, err
	}
	for _, a := range asks {
		r, err := waterfall.Decode(a)
		if err != nil {
			continue
		}
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
		out = append(out, blocks.Item{View: blocks.ViewOf(r, b.host.Now()), Asked: r.Ask.Created, Link: b.permalink(ctx, r.Ask.Message)})
	}
	return out
}

// permalink is the link to a message, "" when there is none or Slack
// fails to say (a listing without a link beats no listing).
func (b *Bot) permalink(ctx context.Context, ref store.MessageRef) string {
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
