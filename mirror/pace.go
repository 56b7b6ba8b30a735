package mirror

import (
	"context"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/pace"
	"github.com/askslack/askslack/store"
)

// Pace makes the mirror spend Slack's rate limits well (Options.Pace; nil
// sends every call as it comes, as before). Posts wait in a lane per
// channel (Slack allows about one chat.postMessage a second per channel),
// updates in one lane for the workspace (chat.update is Tier 3, ~50 a
// minute); the lanes' budgets are token buckets in the store, so every
// replica together stays inside them. In the update lane the asks that
// ended go first (an answered or withdrawn message loses its buttons),
// then open asks' changes, round robin between sessions; countdown
// refreshes are sent only when no such update waits, and dropped
// otherwise. In a channel's post lane reminders (Mirror.Turn) go first,
// then open asks' questions, then those whose window closed. A job waits as a lane entry, not a goroutine, and a lane is
// bounded: past its bound an ask is left to the sweep.
type Pace struct {
	// Scale is how many times faster than Slack's the Slack the mirror
	// talks to keeps time (a test's or the bench's fake); 1 in production.
	Scale float64
	// Channel is where a's message will be posted: its post budget.
	Channel func(a *asktype.Ask) string
	// Max bounds each lane; default 10000.
	Max int
}

// Slack's limits the lanes pace to (see internal/slackfake/README.md
// for their sources). The bursts stay under Slack's (3 posts per channel
// modelled; Tier 3's unpublished): another replica's clock, or Slack's,
// may count a token a little early.
const (
	postPerMinute   = 60
	postBurst       = 2
	updatePerMinute = 50
	updateBurst     = 3
)

// Update lane classes.
const (
	classEnded  = 0 // answered, withdrawn, aborted: the buttons go
	classChange = 1 // open asks' changes, a closed window
)

// Post lane classes.
const (
	postFirst  = 0 // reminders (Turn): their questions have waited longest
	postOpen   = 1 // open asks' questions
	postClosed = 2 // a closed window's question (late answers count)
)

type pacer struct {
	m       *Mirror
	opt     Pace
	mu      sync.Mutex
	posts   map[string]*pace.Lane // by channel
	updates *pace.Lane
	grants  map[grantKey]time.Time // a token was taken for this ask's next call
	stopped bool                   // stop ran: a job queued now is owed
}

type grantKey struct {
	callID string
	post   bool
}

func newPacer(m *Mirror, opt Pace) *pacer {
	if opt.Max <= 0 {
		opt.Max = 10000
	}
	opt.Scale = max(opt.Scale, 1)
	p := &pacer{m: m, opt: opt, posts: map[string]*pace.Lane{}, grants: map[grantKey]time.Time{}}
	p.updates = pace.NewLane(budgets{m.st}, p.budget("chat.update", updatePerMinute, updateBurst), opt.Max, m.clock, m.log)
	return p
}

// budgets is the store's Budget role as the lanes' pace.Taker.
type budgets struct{ st store.Budget }

func (b budgets) TakeTurn(ctx context.Context, bk pace.Budget, groups []pace.Group, left []string, now time.Time, wait time.Duration) (string, bool, error) {
	return b.st.TakeTurn(ctx, store.Turn{Bucket: asktype.Bucket(bk), Groups: turnGroups(groups), Left: left, Now: now, Wait: wait})
}

func turnGroups(gs []pace.Group) []store.TurnGroup {
	out := make([]store.TurnGroup, len(gs))
	for i, g := range gs {
		out[i] = store.TurnGroup(g)
	}
	return out
}

func (b budgets) Drain(ctx context.Context, bk pace.Budget, until time.Time) error {
	return b.st.Drain(ctx, asktype.Bucket(bk), until)
}

func (p *pacer) budget(name string, perMinute, burst int) pace.Budget {
	return pace.Budget{Name: name, PerMinute: int(float64(perMinute) * p.opt.Scale), Burst: burst}
}

// postLane is the lane of a channel's posts.
func (p *pacer) postLane(channel string) *pace.Lane {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.posts[channel]
	if l == nil {
		l = pace.NewLane(budgets{p.m.st}, p.budget("chat.postMessage/"+channel, postPerMinute, postBurst), p.opt.Max, p.m.clock, p.m.log)
		p.posts[channel] = l
	}
	return l
}

func (p *pacer) channel(a *asktype.Ask) string {
	if p.opt.Channel == nil {
		return ""
	}
	return p.opt.Channel(a)
}

// granted consumes the token taken for the ask's next call of this kind.
func (p *pacer) granted(callID string, post bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := grantKey{callID, post}
	_, ok := p.grants[k]
	delete(p.grants, k)
	return ok
}

func (p *pacer) grant(callID string, post bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.m.clock.Now()
	if len(p.grants) > 1024 {
		// A grant the job never used (another replica got there first):
		// forget it after a while.
		for k, at := range p.grants {
			if now.Sub(at) > time.Minute {
				delete(p.grants, k)
			}
		}
	}
	p.grants[grantKey{callID, post}] = now
}

func group(a *asktype.Ask) string {
	if a.SessionID != "" {
		return a.SessionID
	}
	return a.CallID
}

// holdPost queues the post of a for its channel's token; false: post now
// (it holds a token, or makes no post).
func (p *pacer) holdPost(ctx context.Context, a *asktype.Ask, attempt int) bool {
	if p == nil {
		return false
	}
	if a.Message.Refused != "" || (!a.State.Active() && a.PostAttempt.IsZero()) {
		return false // nothing is posted: it is marked
	}
	if endedUnknown(a) && !p.m.hasFresh(a.CallID) {
		// An ask that ended while a post of it may be in Slack is looked
		// for at once — unless its Create's lease is unused: then its job
		// has not run, and the attempt the store records is the one Create
		// took with that lease. It keeps waiting (moved by its new class);
		// posting it now would spend no token.
		return false
	}
	if p.granted(a.CallID, true) {
		return false
	}
	class := postOpen
	if a.State != asktype.Open {
		// A closed window's question is still shown (late answers count),
		// after the open ones, which someone is waiting on.
		class = postClosed
	}
	lane := p.postLane(p.channel(a))
	if _, queued := lane.ClassOf(a.CallID); p.m.hasFresh(a.CallID) && (queued || p.longWait(lane)) {
		// Created with this mirror's post lease, which records an attempt
		// with it, and likely to wait past half the lease (a long queue,
		// or moved in it: a window closed): a job that takes the lease
		// again must look for an earlier post first (conversations.history,
		// Tier 3 — for every question of a long queue). Give both back;
		// the job takes the lease and records its own attempt when its
		// turn comes (two round trips, only for asks that wait anyway).
		if l, ok := p.m.takeFresh(a.CallID); ok {
			p.m.abandon(ctx, a.CallID, l.Holder)
			b := *a
			b.PostAttempt = time.Time{}
			a = &b
		}
	}
	// The record goes back where the job will find it.
	p.m.remember(a)
	id := a.CallID
	ok := lane.Add(pace.Job{Key: id, Group: group(a), Class: class, Run: func() {
		p.grant(id, true)
		p.m.submit(id, false, attempt)
	}})
	if !ok {
		p.queueFailed(id, "post")
	}
	return true
}

// longWait reports whether a post joining lane may wait past half the
// post lease: the jobs ahead of it take a token each, and the estimate
// allows three times that — the bucket is shared with other replicas'
// lanes, and the round robin may put later sessions' asks first.
func (p *pacer) longWait(lane *pace.Lane) bool {
	n, _ := lane.Depth()
	period := time.Duration(float64(time.Minute) / (float64(postPerMinute) * p.opt.Scale))
	return 3*time.Duration(n+1)*period > postLease/2
}

// holdUpdate queues the update of a's message for a chat.update token;
// false: update now. A countdown refresh never waits: it goes when a token
// is free and nothing else waits, and is dropped otherwise.
func (p *pacer) holdUpdate(ctx context.Context, a *asktype.Ask, refresh bool, attempt int) bool {
	if p == nil {
		return false
	}
	if p.granted(a.CallID, false) {
		return false
	}
	if refresh && a.Rendered >= a.Version {
		if p.updates.Waiting(pace.Classes) {
			p.m.log.Debug("countdown update dropped: answers' updates wait", "callId", a.CallID)
			return true
		}
		b := p.budget("chat.update", updatePerMinute, updateBurst)
		ok, err := p.m.st.Take(ctx, asktype.Bucket(b), p.m.clock.Now())
		return err != nil || !ok
	}
	class := classChange
	if !a.State.Active() {
		class = classEnded
	}
	id := a.CallID
	ok := p.updates.Add(pace.Job{Key: id, Group: group(a), Class: class, Run: func() {
		p.grant(id, false)
		p.m.submit(id, false, attempt)
	}})
	if !ok {
		p.queueFailed(id, "update")
	}
	return true
}

// dropUpdate takes a's waiting update out of the update lane: the update
// about to be sent needs no token, and shows the latest version anyway.
func (p *pacer) dropUpdate(callID string) {
	if p != nil {
		p.updates.Drop(callID)
	}
}

// cooldown stops a lane for Slack's Retry-After: the post lane of a's
// channel, or the update lane.
func (p *pacer) cooldown(a *asktype.Ask, post bool, d time.Duration) {
	if p == nil || d <= 0 {
		return
	}
	until := p.m.clock.Now().Add(d)
	if post {
		p.postLane(p.channel(a)).Cooldown(until)
		return
	}
	p.updates.Cooldown(until)
}

// updateReserve is how many chat.update calls past the shared budget a
// stopping replica may spend on answered questions' updates (Lane.Drain):
// the budget stays well under Slack's limit (50 a minute against Tier 3's
// 50+, with bursts), and an answered question left live until another
// replica's turn is what people tap.
const updateReserve = 10

// lanes are the pacer's lanes: updates first, then each channel's posts.
func (p *pacer) lanes() []*pace.Lane {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []*pace.Lane{p.updates}
	for _, l := range p.posts {
		out = append(out, l)
	}
	return out
}

// drain waits until every lane is empty, or ctx ends (false); see
// Lane.Drain. Posts spend no reserve: chat.postMessage's limit per channel
// is Slack's tightest.
func (p *pacer) drain(ctx context.Context) bool {
	if p == nil {
		return true
	}
	lanes := p.lanes()
	var wg sync.WaitGroup
	emptied := make([]bool, len(lanes))
	for i, l := range lanes {
		reserve := 0
		if l == p.updates {
			reserve = updateReserve
		}
		wg.Go(func() { emptied[i] = l.Drain(ctx, reserve) })
	}
	wg.Wait()
	for _, ok := range emptied {
		if !ok {
			return false
		}
	}
	return true
}

// stop stops every lane and returns the asks whose calls still waited.
// A job queued after it is owed (holdPost, holdUpdate).
func (p *pacer) stop() (left []string) {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	for _, l := range p.lanes() {
		left = append(left, l.Stop()...)
	}
	return left
}

// queueFailed reports a job its lane refused: owed when the pacer has
// stopped (the replica hands it over), else left to the sweep (a full
// lane).
func (p *pacer) queueFailed(callID, what string) {
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if stopped {
		p.m.owe(callID)
		return
	}
	p.m.log.Warn("the "+what+" queue is full; the sweep will see to it", "callId", callID)
}

// QueueDepth is how many Slack calls wait in this replica's lanes and how
// long the oldest has waited (0, 0 without Options.Pace).
func (m *Mirror) QueueDepth() (n int, oldest time.Duration) {
	p := m.pacer
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	lanes := []*pace.Lane{p.updates}
	for _, l := range p.posts {
		lanes = append(lanes, l)
	}
	p.mu.Unlock()
	for _, l := range lanes {
		k, o := l.Depth()
		n += k
		oldest = max(oldest, o)
	}
	return n, oldest
}

// Turn queues key (a reminder) in channel's post lane ahead of the
// questions waiting there — a reminder's question has waited longer than
// any of them — and calls run, holding a token of the channel's shared
// budget, when its turn comes; run must not block. Adding key again keeps
// its place and runs the newer run. false: the lane is full or stopped.
// Without Options.Pace, run runs at once.
func (m *Mirror) Turn(channel, key, group string, run func()) bool {
	p := m.pacer
	if p == nil {
		run()
		return true
	}
	return p.postLane(channel).Add(pace.Job{Key: key, Group: group, Class: postFirst, Run: run})
}

// Forgo takes key out of channel's post lane, if it waits there.
func (m *Mirror) Forgo(channel, key string) {
	if p := m.pacer; p != nil {
		p.postLane(channel).Drop(key)
	}
}

// empty reports whether no call waits in any lane.
func (p *pacer) empty() bool {
	if p == nil {
		return true
	}
	for _, l := range p.lanes() {
		if n, _ := l.Depth(); n > 0 {
			return false
		}
	}
	return true
}
