package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/askslack/askslack/internal/loadbench"
	"github.com/askslack/askslack/internal/slacklimits"
)

// `askslack bench --slack-limits`: a burst of asks against two replicas on
// one Redis while the fake enforces Slack's published rate limits at
// --limits-scale (see internal/slackfake/README.md for the table). It
// prints the goals of issue 26 next to what was measured; durations are
// in Slack time (measured × scale).

// limitsFlags are the --slack-limits run's settings.
type limitsFlags struct {
	on, pacing, skew bool
	agents, sessions int
	scale            float64
}

// Burst shape: the asks start over limitsSpread; timed asks get a window of
// limitsWindow; late ones are clicked limitsLate after their post, after
// the reminders at limitsRemind. All real time.
const (
	limitsSpread = 2 * time.Second
	limitsWindow = 3 * time.Second
	limitsLate   = 2500 * time.Millisecond
	limitsRemind = "1s,2s"
)

func (f *limitsFlags) check() error {
	switch {
	case f.agents < 1 || f.agents > 5000:
		return fmt.Errorf("--limits-agents must be in [1, 5000]")
	case f.sessions < 1 || f.sessions > f.agents:
		return fmt.Errorf("--limits-sessions must be in [1, --limits-agents]")
	case f.scale < 1 || f.scale > 100:
		return fmt.Errorf("--limits-scale must be in [1, 100]")
	}
	return nil
}

// limitsResult is what the run measured.
type limitsResult struct {
	asks                              []loadbench.BurstAsk
	journal                           loadbench.Journal
	calls                             loadbench.SlackCounters
	limitedBy                         map[string]int64
	cpu                               time.Duration
	leftLive                          int // clicked asks whose message kept its buttons
	channelAsks, channelSess, dmSess  int
	answered, pending, errs           int
	lost, doubled, lateTimed, unposed int
}

func (b *benchRun) slackLimits(ctx context.Context) error {
	lf := b.f.limits
	if b.redis == nil {
		return fmt.Errorf("--slack-limits needs redis-server (--redis-server)")
	}
	fake, err := loadbench.NewSlack(loadbench.SlackOptions{
		SigningSecret: benchSecret, Click: true, CallID: askslackCallID, Clickable: askslackPick,
		RateLimits: lf.scale, Journal: true,
		ClickAfter: func(callID string) (time.Duration, bool) {
			switch loadbench.BurstCallKind(callID) {
			case loadbench.BurstAnswered:
				return 0, true
			case loadbench.BurstLate:
				return limitsLate, true
			}
			return 0, false
		},
	})
	if err != nil {
		return err
	}
	defer fake.Close()
	env := []string{"ASKSLACK_SLACK_TIME_SCALE=" + strconv.FormatFloat(lf.scale, 'f', -1, 64), "ASKSLACK_REMIND=" + limitsRemind,
		"ASKSLACK_SLACK_PACING=" + strconv.FormatBool(lf.pacing)}
	one, err := b.startBotWith(ctx, "redis", fake, true, env...)
	if err != nil {
		return err
	}
	defer one.stop()
	two, err := b.startBotWith(ctx, "redis", fake, false, env...)
	if err != nil {
		return err
	}
	defer two.stop()
	cpu0, err := cpuOf(one, two)
	if err != nil {
		return err
	}
	c0 := fake.Counters()
	b.progress("slack limits: %d asks over %d sessions at ×%g", lf.agents, lf.sessions, lf.scale)
	asks := loadbench.Burst(ctx, loadbench.BurstOptions{
		Bases: []string{"http://" + one.addr, "http://" + two.addr}, RunID: "L", Agents: lf.agents, Sessions: lf.sessions,
		Spread: limitsSpread, Window: limitsWindow, Limit: 2 * time.Minute,
		DMChannel: func(s int) string { return fmt.Sprintf("D0BENCH%02d", s) },
		Skew:      lf.skew, SkewDelay: time.Duration(float64(500*time.Millisecond) / lf.scale),
	})
	// Every ask has ended: give the last updates (buttons gone) a moment
	// to land, as long as they keep landing.
	r := &limitsResult{asks: asks}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		r.journal = fake.Journal()
		if r.leftLive = liveLeft(r.journal); r.leftLive == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond) // measuring equipment: poll the fake's journal
	}
	cpu1, err := cpuOf(one, two)
	if err != nil {
		return err
	}
	r.cpu = cpu1 - cpu0
	r.calls = fake.Counters().Sub(c0)
	r.limitedBy = fake.LimitedBy()
	r.tally()
	b.limitsRes = r
	return nil
}

func cpuOf(cs ...*child) (time.Duration, error) {
	var sum time.Duration
	for _, c := range cs {
		p, err := loadbench.ReadProc(c.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += p.CPU
	}
	return sum, nil
}

// liveLeft counts clicked questions whose buttons were never taken away
// (every click answered its ask by now). A timed ask whose window closed
// keeps its buttons: late answers are still taken.
func liveLeft(j loadbench.Journal) int {
	n := 0
	for ts := range j.Clicks {
		if _, ok := j.Gone[ts]; !ok {
			n++
		}
	}
	return n
}

func (r *limitsResult) tally() {
	posts := map[string][]loadbench.Post{}
	for _, p := range r.journal.Posts {
		posts[p.CallID] = append(posts[p.CallID], p)
	}
	chSess, dmSess := map[string]bool{}, map[string]bool{}
	for _, a := range r.asks {
		ps := posts[a.CallID]
		if a.Channel == "" {
			r.channelAsks++
			chSess[a.Session] = true
		} else {
			dmSess[a.Session] = true
		}
		switch {
		case a.Err != nil:
			r.errs++
		case a.Answered:
			r.answered++
		case a.Pending:
			r.pending++
		}
		if len(ps) > 1 {
			r.doubled++
		}
		if len(ps) == 0 {
			r.unposed++
		}
		// Lost: the agent got nothing; or an ask that is not timed was
		// never shown, or was shown and not answered; or a timed ask was
		// shown and its click (there is none) … is not expected: pending
		// is its right outcome.
		if a.Err != nil || (a.Kind != loadbench.BurstTimed && (len(ps) == 0 || !a.Answered)) {
			r.lost++
		}
		if a.Kind == loadbench.BurstTimed && len(ps) > 0 && ps[0].At.After(a.Start.Add(limitsWindow)) {
			r.lateTimed++
		}
	}
	r.channelSess, r.dmSess = len(chSess), len(dmSess)
}

// limitsReport is the figures computed from a result, in Slack time.
type limitsReport struct {
	floor, postAll     time.Duration
	per1000            float64
	goneP50, goneP99   time.Duration
	gones              int
	worstSess          string
	worstWait, worstFS time.Duration
}

func (r *limitsResult) report(scale float64) limitsReport {
	var rep limitsReport
	slack := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	period := time.Duration(float64(time.Minute) / slacklimits.PostMessage.PerMinute)
	burst := slacklimits.PostMessage.Burst
	if len(r.asks) == 0 {
		return rep
	}
	t0 := r.asks[0].Start
	for _, a := range r.asks {
		if a.Start.Before(t0) {
			t0 = a.Start
		}
	}
	// The floor: each channel posts its questions at one a second after
	// its burst, from when its first ask arrived.
	type chStat struct {
		n     int
		first time.Time
	}
	byCh := map[string]*chStat{}
	askOf := map[string]loadbench.BurstAsk{}
	for _, a := range r.asks {
		askOf[a.CallID] = a
	}
	firstPost := map[string]time.Time{} // session → its first question post
	var last time.Time
	seen := map[string]bool{}
	for _, p := range r.journal.Posts {
		a, ok := askOf[p.CallID]
		if !ok || seen[p.CallID] {
			continue
		}
		seen[p.CallID] = true
		c := byCh[p.Channel]
		if c == nil {
			c = &chStat{first: a.Start}
			byCh[p.Channel] = c
		}
		c.n++
		if a.Start.Before(c.first) {
			c.first = a.Start
		}
		if p.At.After(last) {
			last = p.At
		}
		if f, ok := firstPost[a.Session]; !ok || p.At.Before(f) {
			firstPost[a.Session] = p.At
		}
	}
	for _, c := range byCh {
		f := slack(c.first.Sub(t0)) + time.Duration(max(0, c.n-burst))*period
		rep.floor = max(rep.floor, f)
	}
	if !last.IsZero() {
		rep.postAll = slack(last.Sub(t0))
	}
	total := r.calls.Calls()
	if total > 0 {
		rep.per1000 = float64(r.calls.Limited) * 1000 / float64(total)
	}
	var gone loadbench.Samples
	for ts, at := range r.journal.Clicks {
		if g, ok := r.journal.Gone[ts]; ok {
			gone.Add(slack(max(0, g.Sub(at))))
		}
	}
	rep.gones = gone.Len()
	rep.goneP50, rep.goneP99 = gone.Percentile(50), gone.Percentile(99)
	// Fair share: a session's first question should wait no longer than
	// one post of every session sharing its channel (one per second).
	sessCh, sessStart := map[string]string{}, map[string]time.Time{}
	chSessions := map[string]map[string]bool{}
	for _, a := range r.asks {
		sessCh[a.Session] = a.Channel
		if s, ok := sessStart[a.Session]; !ok || a.Start.Before(s) {
			sessStart[a.Session] = a.Start
		}
		if chSessions[a.Channel] == nil {
			chSessions[a.Channel] = map[string]bool{}
		}
		chSessions[a.Channel][a.Session] = true
	}
	names := make([]string, 0, len(sessStart))
	for s := range sessStart {
		names = append(names, s)
	}
	sort.Strings(names)
	worst := -1.0
	for _, s := range names {
		fp, ok := firstPost[s]
		if !ok {
			continue
		}
		wait := slack(fp.Sub(sessStart[s]))
		fs := time.Duration(len(chSessions[sessCh[s]])) * period
		if ratio := float64(wait) / float64(fs); ratio > worst {
			worst, rep.worstSess, rep.worstWait, rep.worstFS = ratio, s, wait, fs
		}
	}
	return rep
}

func goal(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s" }

// printLimits prints the --slack-limits run.
func (b *benchRun) printLimits(w io.Writer) {
	r := b.limitsRes
	if r == nil {
		return
	}
	lf := b.f.limits
	rep := r.report(lf.scale)
	fmt.Fprintf(w, "\nSlack rate limits (two replicas, one Redis, ASKSLACK_SLACK_PACING=%t; the fake enforces Slack's published limits at ×%g;\n", lf.pacing, lf.scale)
	fmt.Fprintf(w, "durations in Slack time = measured × %g)\n\n", lf.scale)
	fmt.Fprintf(w, "  asks %d over %d sessions: %d into one channel from %d sessions, %d into %d DM channels;\n",
		len(r.asks), lf.sessions, r.channelAsks, r.channelSess, len(r.asks)-r.channelAsks, r.dmSess)
	fmt.Fprintf(w, "  kinds: answered at once, timed (%s window, never answered), answered %s after posting (reminders at %s)\n",
		secs(time.Duration(float64(limitsWindow)*lf.scale)), secs(time.Duration(float64(limitsLate)*lf.scale)), limitsRemind+" real")
	fmt.Fprintf(w, "  outcomes: %d answered, %d pending, %d errors; %d never posted (timed asks whose window closed first are expected here)\n\n",
		r.answered, r.pending, r.errs, r.unposed)
	ratio := 0.0
	if rep.floor > 0 {
		ratio = float64(rep.postAll) / float64(rep.floor)
	}
	fmt.Fprintf(w, "  floor the limits impose (1 post/s per channel after a burst of %d): %s\n", slacklimits.PostMessage.Burst, secs(rep.floor))
	fmt.Fprintf(w, "  time to post all: %s = %.2f× the floor            goal ≤ 1.1×: %s\n", secs(rep.postAll), ratio, goal(ratio <= 1.1))
	total := r.calls.Calls()
	fmt.Fprintf(w, "  429s per 1,000 Slack calls: %.1f (%d of %d calls)      goal ≤ 5: %s\n", rep.per1000, r.calls.Limited, total, goal(rep.per1000 <= 5))
	fmt.Fprintf(w, "    429s by method: %v\n", r.limitedBy)
	fmt.Fprintf(w, "    calls: %d chat.postMessage, %d chat.update, %d response_url (not rate limited), %d other\n",
		r.calls.Posts, r.calls.Updates, r.calls.Replies, r.calls.Ephemerals+r.calls.Others)
	fmt.Fprintf(w, "  click → buttons gone p50 %s, p99 %s (%d clicks)   goal p99 ≤ 2 s: %s\n", secs(rep.goneP50), secs(rep.goneP99), rep.gones, goal(rep.goneP99 <= 2*time.Second))
	fs := 0.0
	if rep.worstFS > 0 {
		fs = float64(rep.worstWait) / float64(rep.worstFS)
	}
	fmt.Fprintf(w, "  longest wait for a session's first post vs its fair share: %s waited %s, share %s = %.1f×   goal ≤ 1.2×: %s\n",
		rep.worstSess, secs(rep.worstWait), secs(rep.worstFS), fs, goal(fs <= 1.2))
	if lf.skew {
		small, nth, busyBefore := skewOrder(r)
		fmt.Fprintf(w, "  skewed burst: the %d questions of the other sessions (other replica) all posted by post #%d, after %d of the busy session's   goal: before its #%d: %s\n",
			small, nth, busyBefore, small, goal(busyBefore < small))
	}
	fmt.Fprintf(w, "  asks lost %d, posted twice %d                     goal 0: %s\n", r.lost, r.doubled, goal(r.lost == 0 && r.doubled == 0))
	fmt.Fprintf(w, "  timed asks first posted after their window closed: %d; clicked asks left with buttons: %d\n", r.lateTimed, r.leftLive)
	per := "n/a"
	if r.answered > 0 {
		per = ms(r.cpu/time.Duration(r.answered)) + " ms"
	}
	fmt.Fprintf(w, "  bot CPU per answered ask (both replicas): %s (%s over %d answered)\n", per, r.cpu.Round(time.Millisecond), r.answered)
	if len(r.asks) > 0 && !slices.ContainsFunc(r.asks, func(a loadbench.BurstAsk) bool { return a.Err == nil }) {
		fmt.Fprintf(w, "  every ask failed; first error: %v\n", r.asks[0].Err)
	}
}

// runLimits is the whole bench under --slack-limits: its own private Redis,
// the burst, the report.
func (b *benchRun) runLimits(ctx context.Context, start time.Time) error {
	if _, err := exec.LookPath(b.f.redisServer); b.f.redisServer == "" || err != nil {
		return fmt.Errorf("--slack-limits needs redis-server (--redis-server %q)", b.f.redisServer)
	}
	var err error
	if b.redis, err = loadbench.StartRedis(ctx, b.f.redisServer); err != nil {
		return err
	}
	defer b.redis.Stop()
	if err := b.slackLimits(ctx); err != nil {
		return err
	}
	fmt.Fprintf(b.out, "askslack bench --slack-limits (took %s)\n", time.Since(start).Round(time.Second))
	b.printLimits(b.out)
	fmt.Fprint(b.out, limitsLegend)
	return nil
}

const limitsLegend = `
floor: for each channel, when its first ask arrived plus one second per question posted there beyond
  the burst; the largest. time to post all: first ask → last question post. 429s: the fake's refusals
  over every Slack call it served (refused ones included). click → buttons gone: the fake sending a
  click → the first chat.update or response_url reply of that message without an actions block, for
  every clicked question.
  fair share: one post per second for each session asking into the same channel; a session's wait is
  its first ask → its first question post. lost: an agent error, or an ask that is not timed and was
  not posted or not answered. CPU: both replicas' utime+stime over the run over answered asks.
`

// skewOrder reads a skewed burst's posts: how many questions the small
// sessions asked, the post by which all of them were posted, and how many
// of the busy session's were posted before that.
func skewOrder(r *limitsResult) (small, nth, busyBefore int) {
	busy := loadbench.BusySession("L")
	sess := map[string]string{}
	for _, a := range r.asks {
		sess[a.CallID] = a.Session
		if a.Session != busy {
			small++
		}
	}
	seen, busyN, smallN := map[string]bool{}, 0, 0
	for _, p := range r.journal.Posts {
		s, ok := sess[p.CallID]
		if !ok || seen[p.CallID] {
			continue
		}
		seen[p.CallID] = true
		nth++
		if s == busy {
			busyN++
			continue
		}
		if smallN++; smallN == small {
			return small, nth, busyN
		}
	}
	return small, nth, busyN
}
