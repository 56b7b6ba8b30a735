// Package pace spends a rate-limited budget well: a Lane is a bounded queue
// of jobs waiting for tokens of one budget (a token bucket every replica
// shares), served by class first (answers' updates before countdown
// refreshes), then by turns between groups (sessions) across every
// replica — the shared budget decides whose turn it is, so one busy
// session, on whichever replica, does not starve the others — then in
// arrival order. A job waits as an entry, not a goroutine: one timer per
// lane wakes the lane when a token is due. A 429's Retry-After stops the
// lane until it has passed.
package pace

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/askslack/askslack/internal/clock"
)

// Taker holds the shared budgets (the store, behind an adapter).
type Taker interface {
	// TakeTurn registers groups as waiting on b until now+wait and takes
	// a token for the one of them whose turn it is among every waiting
	// group of every replica (the most urgent class first, then the group
	// served longest ago); "" when none is (free: a token was there,
	// another replica's group is due).
	// left are groups whose jobs the lane finished: their registration
	// ends (they would otherwise hold the others back until it ran out).
	TakeTurn(ctx context.Context, b Budget, groups []Group, left []string, now time.Time, wait time.Duration) (group string, free bool, err error)
	// Drain empties b until until: a Retry-After, for every replica.
	Drain(ctx context.Context, b Budget, until time.Time) error
}

// Group is a group with jobs waiting and the class of its most urgent.
type Group struct {
	Name  string
	Class int
}

// Budget is a token bucket every replica shares: PerMinute tokens a
// minute, up to Burst.
type Budget struct {
	Name      string
	PerMinute int
	Burst     int
}

// period is how long a token of b takes to come back.
func period(b Budget) time.Duration {
	return time.Duration(float64(time.Minute) / float64(max(b.PerMinute, 1)))
}

// Job is one call waiting for a token.
type Job struct {
	// Key coalesces: one waiting job per key (the ask); adding the key
	// again keeps its place (or moves it to a more urgent class) and runs
	// the newer Run.
	Key string
	// Group is the fairness unit: groups take turns within a class.
	Group string
	// Class orders jobs: 0 goes first.
	Class int
	// Run is called, holding a token, when the job's turn comes. It must
	// not block (hand the work to a worker pool).
	Run func()
}

// Classes a Lane knows; a job's Class is capped to the last.
const Classes = 3

// Lane is the queue of one budget. Safe for concurrent use.
type Lane struct {
	budget Budget
	st     Taker
	clk    clock.Clock
	max    int
	log    *slog.Logger

	mu       sync.Mutex
	classes  [Classes]fair
	keys     map[string]*entry
	n        int
	pumping  bool            // a pump runs or its timer is armed
	left     map[string]bool // groups whose last job went, not yet told the budget
	timer    *clock.Timer
	cooldown time.Time
	stopped  bool
	// draining: Drain waits for the lane to empty (emptied closes then),
	// spending up to reserve tokens the budget does not have on class-0
	// jobs.
	draining bool
	reserve  int
	emptied  chan struct{}
}

type entry struct {
	job   Job
	since time.Time
}

// fair is one class: its groups in arrival order, each a FIFO; whose turn
// it is the shared budget decides (Taker.TakeTurn).
type fair struct {
	order  []string
	groups map[string][]*entry
}

// NewLane returns a lane over budget b in st, holding at most max jobs.
func NewLane(st Taker, b Budget, max int, clk clock.Clock, log *slog.Logger) *Lane {
	if log == nil {
		log = slog.Default()
	}
	return &Lane{budget: b, st: st, clk: clock.OrReal(clk), max: max, log: log, keys: map[string]*entry{}}
}

// Add queues j. It reports false when the lane is full (or stopped): the
// caller leaves the work to a later sweep.
func (l *Lane) Add(j Job) bool {
	j.Class = min(max(j.Class, 0), Classes-1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	if e := l.keys[j.Key]; e != nil {
		if j.Class != e.job.Class {
			// Its urgency changed (answered: sooner; a window closed
			// before its post: later); it keeps its age.
			l.removeLocked(e)
			e.job = j
			l.insertLocked(e)
		} else {
			j.Group = e.job.Group
			e.job = j
		}
		return true
	}
	if l.n >= l.max {
		return false
	}
	e := &entry{job: j, since: l.clk.Now()}
	l.keys[j.Key] = e
	l.insertLocked(e)
	l.kickLocked(0)
	return true
}

// Drop takes key's waiting job out of the lane, if one waits: its work was
// done another way (an update that needed no token).
func (l *Lane) Drop(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.keys[key]; e != nil {
		delete(l.keys, key)
		l.removeLocked(e)
	}
	if l.n == 0 {
		l.emptiedLocked()
	}
}

// emptiedLocked tells a Drain waiting that the lane is empty.
func (l *Lane) emptiedLocked() {
	if l.emptied != nil {
		close(l.emptied)
		l.emptied = nil
	}
}

// Waiting reports whether any job of class at most class waits.
func (l *Lane) Waiting(class int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := 0; c <= min(class, Classes-1); c++ {
		if len(l.classes[c].order) > 0 {
			return true
		}
	}
	return false
}

// ClassOf is the class key waits in; false when it does not wait.
func (l *Lane) ClassOf(key string) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.keys[key]; e != nil {
		return e.job.Class, true
	}
	return 0, false
}

// Depth is the number of waiting jobs and how long the oldest has waited.
func (l *Lane) Depth() (n int, oldest time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clk.Now()
	for _, e := range l.keys {
		oldest = max(oldest, now.Sub(e.since))
	}
	return l.n, oldest
}

// drainTimeout bounds sharing a Retry-After through the store.
const drainTimeout = 2 * time.Second

// Cooldown stops the lane until until (Slack said Retry-After), and
// drains its budget in the store until then, so every replica's lane of
// the budget waits too: Slack counts the app's calls, not one replica's.
func (l *Lane) Cooldown(until time.Time) {
	l.mu.Lock()
	if until.After(l.cooldown) {
		l.cooldown = until
	}
	l.mu.Unlock()
	// Bounded: the caller is a worker that should get back to its queue.
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if err := l.st.Drain(ctx, l.budget, until); err != nil {
		l.log.Warn("sharing a Retry-After through the store failed; other replicas may call early", "budget", l.budget.Name, "err", err)
	}
}

// Drain waits until the lane is empty, or ctx ends (false), before its
// owner stops it: the jobs go as tokens come, as always, and when no token
// is there for a job of class 0 (the most urgent: an answered question
// losing its buttons), up to reserve of them go anyway over the lane's
// life — the budget is kept well under the provider's limit, so a stopping
// replica may spend the margin once rather than leave answered questions
// live. Jobs added meanwhile are drained too.
func (l *Lane) Drain(ctx context.Context, reserve int) bool {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return l.n == 0
	}
	if !l.draining {
		l.draining, l.reserve = true, reserve
	}
	if l.n == 0 {
		l.mu.Unlock()
		return true
	}
	if l.emptied == nil {
		l.emptied = make(chan struct{})
	}
	if l.pumping && l.timer != nil && l.timer.Stop() {
		// Look now rather than when the next token is due: the reserve
		// may serve what waits.
		l.pumping = false
	}
	l.kickLocked(0)
	emptied := l.emptied
	l.mu.Unlock()
	select {
	case <-emptied:
		return true
	case <-ctx.Done():
		return false
	}
}

// Stop drops the waiting jobs (their asks stay on the stale index for
// another replica's sweep), stops the timer, and returns the keys of the
// jobs it dropped. Add fails from then on.
func (l *Lane) Stop() (dropped []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
	for k := range l.keys {
		dropped = append(dropped, k)
	}
	l.classes = [Classes]fair{}
	l.keys = map[string]*entry{}
	l.n = 0
	return dropped
}

func (l *Lane) insertLocked(e *entry) {
	delete(l.left, e.job.Group)
	f := &l.classes[e.job.Class]
	if f.groups == nil {
		f.groups = map[string][]*entry{}
	}
	if _, ok := f.groups[e.job.Group]; !ok {
		f.order = append(f.order, e.job.Group)
	}
	f.groups[e.job.Group] = append(f.groups[e.job.Group], e)
	l.n++
}

func (l *Lane) removeLocked(e *entry) {
	f := &l.classes[e.job.Class]
	q := f.groups[e.job.Group]
	for i, x := range q {
		if x == e {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		l.dropGroupLocked(f, e.job.Group)
	} else {
		f.groups[e.job.Group] = q
	}
	l.n--
}

func (l *Lane) dropGroupLocked(f *fair, g string) {
	delete(f.groups, g)
	for i, x := range f.order {
		if x == g {
			f.order = append(f.order[:i], f.order[i+1:]...)
			break
		}
	}
	for c := range l.classes {
		if _, ok := l.classes[c].groups[g]; ok {
			return
		}
	}
	if l.left == nil {
		l.left = map[string]bool{}
	}
	l.left[g] = true
}

// takeLeftLocked returns the groups that left since the last call.
func (l *Lane) takeLeftLocked() []string {
	if len(l.left) == 0 {
		return nil
	}
	out := make([]string, 0, len(l.left))
	for g := range l.left {
		out = append(out, g)
	}
	clear(l.left)
	return out
}

// groupsLocked are the groups with jobs, each with its most urgent class:
// all of them ask the budget for a turn, so none stays registered from an
// earlier, more urgent job and holds the others back.
func (l *Lane) groupsLocked() []Group {
	var out []Group
	seen := map[string]bool{}
	for c := range l.classes {
		for _, g := range l.classes[c].order {
			if !seen[g] {
				seen[g] = true
				out = append(out, Group{Name: g, Class: c})
			}
		}
	}
	return out
}

// popGroupLocked takes group g's oldest job of the most urgent class it
// has jobs in (nil if it has none any more: taken out meanwhile).
func (l *Lane) popGroupLocked(g string) *entry {
	for c := range l.classes {
		f := &l.classes[c]
		q := f.groups[g]
		if len(q) == 0 {
			continue
		}
		e := q[0]
		if len(q) == 1 {
			l.dropGroupLocked(f, g)
		} else {
			f.groups[g] = q[1:]
		}
		l.n--
		delete(l.keys, e.job.Key)
		return e
	}
	return nil
}

// popClassLocked takes the oldest job of class c, of whichever group
// (nil if none waits).
func (l *Lane) popClassLocked(c int) *entry {
	var oldest *entry
	for _, q := range l.classes[c].groups {
		if len(q) > 0 && (oldest == nil || q[0].since.Before(oldest.since)) {
			oldest = q[0]
		}
	}
	if oldest == nil {
		return nil
	}
	return l.popGroupLocked(oldest.job.Group)
}

// turnWait is how long a lane's registration for turns lasts: a lane
// with work looks again at least every period, so a period and a half
// (at least a quarter second, for replicas' clocks) outlast it; a group
// whose work is done, or whose replica is gone, holds the others back no
// longer than that.
func turnWait(b Budget) time.Duration {
	p := period(b)
	return p + max(p/2, 250*time.Millisecond)
}

// kickLocked makes sure a pump runs within d.
func (l *Lane) kickLocked(d time.Duration) {
	if l.pumping || l.stopped {
		return
	}
	l.pumping = true
	l.timer = l.clk.AfterFunc(d, l.pump)
}

// pump hands out tokens while jobs wait and tokens are there; then it arms
// the lane's one timer for when the next token is due.
func (l *Lane) pump() {
	for {
		l.mu.Lock()
		if l.n == 0 {
			l.emptiedLocked()
		}
		if l.n == 0 || l.stopped {
			l.pumping = false
			left, stopped := l.takeLeftLocked(), l.stopped
			l.mu.Unlock()
			if len(left) > 0 && !stopped {
				// Tell the budget the lane's groups are done, so another
				// replica's lane is not held back until they run out.
				if _, _, err := l.st.TakeTurn(context.Background(), l.budget, nil, left, l.clk.Now(), turnWait(l.budget)); err != nil {
					l.log.Debug("ending a budget registration failed; it runs out", "budget", l.budget.Name, "err", err)
				}
			}
			return
		}
		now := l.clk.Now()
		if now.Before(l.cooldown) {
			l.timer = l.clk.AfterFunc(l.cooldown.Sub(now), l.pump)
			l.mu.Unlock()
			return
		}
		groups, left := l.groupsLocked(), l.takeLeftLocked()
		l.mu.Unlock()
		g, free, err := l.st.TakeTurn(context.Background(), l.budget, groups, left, now, turnWait(l.budget))
		if err != nil {
			l.log.Warn("taking a Slack budget token failed; trying again", "budget", l.budget.Name, "err", err)
		}
		l.mu.Lock()
		if g == "" && l.draining && l.reserve > 0 {
			if e := l.popClassLocked(0); e != nil {
				l.reserve--
				l.mu.Unlock()
				e.job.Run()
				continue
			}
		}
		if g == "" {
			// Look again when a token is due. A token free for another
			// group (another replica's session whose turn it is) is left
			// to it; look again sooner, in case it no longer wants it.
			next := period(l.budget)
			if free {
				next /= 4
			}
			l.timer = l.clk.AfterFunc(next, l.pump)
			l.mu.Unlock()
			return
		}
		e := l.popGroupLocked(g)
		l.mu.Unlock()
		if e != nil {
			e.job.Run()
		}
	}
}
