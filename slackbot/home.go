package slackbot

import (
	"context"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/store"
)

// Home tab refreshes: who counts as having it open, and the share of the
// Slack budget refreshes may spend (views.publish is Tier 4, 100+ a
// minute per workspace; refreshes take at most this many, across replicas).
const (
	homeRecent     = 30 * time.Minute
	homeVisitors   = 20
	homeBudget     = "views.publish"
	homePerMinute  = 60
	homeBurst      = 20
	homeRefreshKey = "home-refresh"
)

// homeOpened publishes the Home tab of a person who just opened it and
// remembers the visit, so changes to their questions refresh it.
func (b *Bot) homeOpened(ctx context.Context, userID string) string {
	if b.dir != nil {
		if err := b.dir.Visit(ctx, userID, b.host.Now()); err != nil {
			b.log.Warn("recording a Home tab visit failed", "user", userID, "err", err)
		}
	}
	return b.publishHome(ctx, userID, homePublish{})
}

// homePublish is what one publish of a Home tab starts from besides the
// listing.
type homePublish struct {
	// state is the tab's state.values as the person's last click sent
	// them: the choices they made and have not submitted, shown again
	// as initial options (a published view starts from those).
	state map[string]map[string]slack.BlockAction
	// notice, when set, is shown at the top of the tab: what the person
	// is told about the click that led to this publish.
	notice string
}

// publishHome renders and publishes userID's Home tab: the questions they
// may answer now. A failed listing still publishes (saying so), so the tab
// never shows stale controls silently.
func (b *Bot) publishHome(ctx context.Context, userID string, p homePublish) string {
	recs, more, err := b.answerable(ctx, userID, blocks.HomeItems)
	var view slack.HomeTabViewRequest
	if err != nil {
		b.log.Error("listing questions for the Home tab failed", "user", userID, "err", err)
		view = blocks.Home(nil, false)
		view.Blocks.BlockSet[1] = slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, textUnavailable, false, false), nil, nil)
	} else {
		items := b.items(ctx, recs)
		if p.state != nil {
			for i, r := range recs {
				items[i].View.Picked, _ = blocks.FromState(r.Ask.CallID, r.Request, p.state)
			}
		}
		view = blocks.Home(items, more)
	}
	if p.notice != "" {
		view = blocks.WithHomeNotice(view, p.notice)
	}
	err = b.call(ctx, "views.publish", func(ctx context.Context) error {
		_, err := b.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: userID, View: view})
		return err
	})
	if err != nil {
		b.log.Warn("publishing the Home tab failed", "user", userID, "slackError", SlackError(err), "err", err)
		return resultError
	}
	return resultOpened
}

// homeEvery is how long after a change its refresh round runs: changes
// meanwhile join that round (a busy replica would otherwise read the
// visitors on every transition), and a new question's message is usually
// posted by then, so the tab links to it.
const homeEvery = time.Second

// homeRounds schedules refresh rounds: at most one pending, so at most one
// per homeEvery, and always one after the last change.
type homeRounds struct {
	mu      sync.Mutex
	pending bool
}

// Changed implements waterfall.Observer: a question changed (asked,
// answered, withdrawn, …), so the Home tabs of people who opened theirs
// lately are refreshed. However many changes come, a replica runs at most
// one round a second; each round reads the visitors once and publishes for
// at most homeVisitors of them, within the budget all replicas share.
func (b *Bot) Changed(*store.Ask) {
	if b.dir == nil {
		return
	}
	b.rounds.mu.Lock()
	scheduled := b.rounds.pending
	b.rounds.pending = true
	b.rounds.mu.Unlock()
	if !scheduled {
		// Submitted outside the lock: a full pool runs the job in the
		// caller, and the job takes the lock.
		time.AfterFunc(homeEvery, func() { b.pool.Submit(homeRefreshKey, b.refreshRound) })
	}
}

// refreshRound runs one scheduled round; changes from now on schedule the
// next.
func (b *Bot) refreshRound(ctx context.Context) {
	b.rounds.mu.Lock()
	b.rounds.pending = false
	b.rounds.mu.Unlock()
	b.refreshHomes(ctx)
}

// refreshHomes re-publishes the Home tabs of recent visitors until the
// budget says stop.
func (b *Bot) refreshHomes(ctx context.Context) {
	now := b.host.Now()
	users, err := b.dir.Visitors(ctx, now.Add(-homeRecent), homeVisitors)
	if err != nil {
		b.log.Warn("reading Home tab visitors failed", "err", err)
		return
	}
	for _, u := range users {
		ok, err := b.dir.Take(ctx, homeBudget, homePerMinute, homeBurst, now)
		if err != nil || !ok {
			b.log.Debug("Home tab refreshes paused by the Slack budget", "left", len(users), "err", err)
			return
		}
		b.publishHome(ctx, u, homePublish{})
	}
}
