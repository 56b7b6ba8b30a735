package slackbot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Home tab refreshes: who counts as having it open.
const (
	homeRecent     = 30 * time.Minute
	homeVisitors   = 20
	homeRefreshKey = "home-refresh"
)

// homeBucket is the share of the Slack budget Home refreshes may spend
// (views.publish is Tier 4, 100+ a minute per workspace; refreshes take at
// most this many, across replicas).
var homeBucket = asktype.Bucket{Name: "views.publish", PerMinute: 60, Burst: 20}

// homeOpened publishes the Home tab of a person who just opened it and
// remembers the visit, so changes to their questions refresh it. view is
// the tab Slack shows them now (nil before the first publish).
func (b *Bot) homeOpened(ctx context.Context, userID string, view *slack.View) string {
	if b.dir != nil {
		if err := b.dir.Visit(ctx, b.visitorKey(ctx, userID), b.host.Now()); err != nil {
			b.log.Warn("recording a Home tab visit failed", "user", userID, "err", err)
		}
	}
	p := homePublish{}
	if view != nil {
		// The tab they see is known: when it still shows what they may
		// answer, it is left as it is, with whatever they ticked in it.
		p.hash, p.keep = view.Hash, true
	}
	return b.publishHome(ctx, userID, p)
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
	// hash is the hash of the tab the person has now, when Slack has just
	// sent it (with their click, or the app_home_opened event): fresher
	// than the one recorded after the last publish.
	hash string
	// keep skips the publish when the tab already shows what the person
	// may answer now (the listing is the one last published, and the tab
	// is the one last published): a publish would only wipe what they
	// ticked and not submitted yet.
	keep bool
	// refresh marks a refresh round's publish: it keeps an unchanged tab
	// and spends the budget every replica shares.
	refresh bool
}

// homeRecord is what the store keeps of a person's Home tab between
// publishes (any replica may publish it): the hash Slack gave the view
// last published, and the digest of the listing it showed.
type homeRecord struct{ hash, digest string }

func homeKey(userID string) string { return "home:" + userID }

// homeRecorded reads userID's homeRecord; a failed read is an empty one
// (the publish then goes ahead, unguarded).
func (b *Bot) homeRecorded(ctx context.Context, userID string) homeRecord {
	if b.dir == nil {
		return homeRecord{}
	}
	v, err := b.dir.Remember(ctx, homeKey(userID), "", visitTTL, b.host.Now())
	if err != nil {
		b.log.Warn("reading the Home tab's last publish failed", "user", userID, "err", err)
		return homeRecord{}
	}
	hash, digest, _ := strings.Cut(v, " ")
	return homeRecord{hash: hash, digest: digest}
}

// homeAttempts bounds the publishes of one Home tab refresh: a
// hash_conflict (another replica published since the hash was read) is
// answered by reading the listing and the hash again. When the recorded
// hash did not move meanwhile, the replica that published last died (or
// is very slow) before recording it: the next attempt goes without a hash,
// freshly rendered.
const homeAttempts = 4

// resultUnchanged: a Home tab left as it was (metrics).
const resultUnchanged = "unchanged"

// resultPaused: a refresh the shared budget held back.
const resultPaused = "paused"

// publishHome renders and publishes userID's Home tab: the questions they
// may answer now, under a line on their own answers of the last week. A
// failed listing still publishes (saying so), so the tab
// never shows stale controls silently. Every publish carries the hash of
// the tab it replaces (views.publish refuses it with hash_conflict when
// the tab changed since), and the listing is read after that hash: so a
// render older than the tab's cannot overwrite it, whichever replica
// publishes last.
func (b *Bot) publishHome(ctx context.Context, userID string, p homePublish) string {
	conflicted := "" // the hash the last refused attempt went with
	for attempt := 1; ; attempt++ {
		rec := b.homeRecorded(ctx, userID)
		hash := rec.hash
		if attempt == 1 && p.hash != "" {
			hash = p.hash
		}
		view, digest := b.renderHome(ctx, userID, p)
		if p.keep && p.notice == "" && digest == rec.digest && hash == rec.hash {
			b.log.Debug("Home tab unchanged; not published again", "user", userID)
			return resultUnchanged
		}
		if conflicted != "" && hash == conflicted {
			hash = "" // Slack refused it and nobody recorded a newer one: go without
		}
		if p.refresh && attempt == 1 {
			ok, err := b.dir.Take(ctx, homeBucket, b.host.Now())
			if err != nil || !ok {
				b.log.Debug("Home tab refreshes paused by the Slack budget", "err", err)
				return resultPaused
			}
		}
		var published *slack.ViewResponse
		err := b.call(ctx, "views.publish", func(ctx context.Context) error {
			var err error
			published, err = b.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: userID, View: view, Hash: optional(hash)})
			return err
		})
		if err == nil {
			b.recordHome(ctx, userID, homeRecord{hash: published.Hash, digest: digest})
			return resultOpened
		}
		if SlackError(err) != "hash_conflict" || attempt == homeAttempts {
			b.log.Warn("publishing the Home tab failed", "user", userID, "slackError", SlackError(err), "err", err)
			return resultError
		}
		// Another replica published since: read again, render again. The
		// wait lets it record its hash.
		p.hash, conflicted = "", hash
		t := time.NewTimer(time.Duration(attempt) * homeConflictWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return resultError
		case <-t.C:
		}
	}
}

// homeConflictWait is how long a publish refused with hash_conflict waits
// (times the attempt) before reading the tab's hash again.
const homeConflictWait = 200 * time.Millisecond

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// recordHome records the tab just published, for the next publish.
func (b *Bot) recordHome(ctx context.Context, userID string, rec homeRecord) {
	if b.dir == nil || rec.hash == "" {
		return
	}
	if err := b.dir.Put(ctx, homeKey(userID), rec.hash+" "+rec.digest, visitTTL, b.host.Now()); err != nil {
		b.log.Warn("recording the Home tab's publish failed", "user", userID, "err", err)
	}
}

// renderHome is userID's Home tab now, and the digest of its listing:
// which questions, at which version, with or without a link, and whether
// the listing was cut or failed. The digest leaves out what publishing
// the same listing again would not change for the person (the notice,
// the carried ticks).
func (b *Bot) renderHome(ctx context.Context, userID string, p homePublish) (slack.HomeTabViewRequest, string) {
	recs, more, err := b.answerable(ctx, userID, blocks.HomeItems)
	d := sha256.New()
	var view slack.HomeTabViewRequest
	top := b.homeStatsBlock(ctx, userID)
	ruleBlocks, ruleDigest := b.homeRules(ctx, userID) // rules.go
	top = append(top, ruleBlocks...)
	fmt.Fprint(d, ruleDigest)
	agentBlocks, agentDigest := b.homeAgents(ctx, userID) // agents.go
	top = append(top, agentBlocks...)
	fmt.Fprint(d, agentDigest)
	if err != nil {
		b.log.Error("listing questions for the Home tab failed", "user", userID, "err", err)
		view = blocks.Home(nil, false, top...)
		view.Blocks.BlockSet[1+len(top)] = slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, textUnavailable, false, false), nil, nil)
		fmt.Fprint(d, "unavailable")
	} else {
		items := b.items(ctx, recs)
		for i, r := range recs {
			if p.state != nil {
				items[i].View.Picked, _ = blocks.FromState(r.CallID, r.Request, p.state)
			}
			fmt.Fprintf(d, "%s\x00%d\x00%s\n", r.CallID, r.Version, items[i].Link)
		}
		fmt.Fprintf(d, "more=%t", more)
		view = blocks.Home(items, more, top...)
	}
	if p.notice != "" {
		view = blocks.WithHomeNotice(view, p.notice)
	}
	return view, hex.EncodeToString(d.Sum(nil)[:16])
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

// visitTTL is how long a Home tab record is kept: as long as the store
// remembers the visit itself (store.VisitTTL).
const visitTTL = 24 * time.Hour

// Changed implements engine.Observer: a question changed (asked,
// answered, withdrawn, …), so the Home tabs of people who opened theirs
// lately are refreshed. However many changes come, a replica runs at most
// one round a second; each round reads the visitors once and publishes for
// at most homeVisitors of them, within the budget all replicas share.
func (b *Bot) Changed(*waterfall.Record) {
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

// refreshHomes re-publishes the Home tabs of recent visitors whose listing
// changed, until the budget says stop. A tab whose listing did not change
// is left alone: publishing it would wipe what its person ticked and has
// not submitted yet.
func (b *Bot) refreshHomes(ctx context.Context) {
	now := b.host.Now()
	users, err := b.dir.Visitors(ctx, now.Add(-homeRecent), homeVisitors)
	if err != nil {
		b.log.Warn("reading Home tab visitors failed", "err", err)
		return
	}
	for _, key := range users {
		uctx, u := b.fromVisitor(ctx, key)
		if b.publishHome(uctx, u, homePublish{refresh: true, keep: true}) == resultPaused {
			return
		}
	}
}
