package slackbot

// An exploration of the orders in which a question's post and a change to
// it can land, across two replicas (issue 43, item 3). "No ended ask keeps
// live controls" broke four rounds running, each time under one more
// interleaving nobody had written a case for; this test drives them all.
//
// Two chains of steps run against one fake Slack and one store (Redis with
// REDIS_URL): the post of replica A — optionally a first attempt failing
// transiently, then the call taking effect, then its reply arriving late,
// never, or as an internal_error though Slack posted the message (then the
// bot's retry looks for it and records what it finds), then the message
// recorded — and a change reaching replica A or B — a click on the message
// (which may adopt it and then settles), two clicks at once, one on each
// replica, an answer from another surface, or a withdrawal. The reply of
// the first render may be held until the steps end and then fail after
// its effect. Every step is held at a
// gate (the fake's holds for Slack, a store wrapper for the store's
// transitions) and released by the scheduler, which walks every order the
// two chains can be merged in (a depth-first search replaying a prefix of
// choices), so each order is reproduced on purpose. After both chains end,
// the replicas run on freely (retries, the reconcile sweep) and the end
// state is asserted: one message, posted once, and an ended ask's message
// without live controls, the store agreeing that it shows the latest, no
// vote counted twice. ASKSLACK_EXPLORE_ALL=1 explores every product of
// the dimensions (exploreSet); ASKSLACK_EXPLORE_ORDERS=1 logs each order.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/mirror"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/waterfall"
)

// Store operations the scheduler can hold.
const (
	opFinish = "finish" // FinishPost by the poster (its reply, or a Find)
	opAdopt  = "adopt"  // FinishPost from a click (asktype.Adopted)
	opVote   = "vote"   // the settling vote
	opAbort  = "abort"
)

// gate is one armed hold on a store operation: the next call of op (by
// replica, when set) waits at it until released.
type gate struct {
	op, replica       string
	arrived, released chan struct{}
	done              chan struct{}
	once              sync.Once
}

func (g *gate) release() { g.once.Do(func() { close(g.released) }) }

// gates are the armed holds of one scenario, and what passed them.
type gates struct {
	mu     sync.Mutex
	armed  []*gate
	all    []*gate  // every gate armed, open() releases them all
	log    []string // every gated operation, in the order it ran
	opened bool     // open: no gate holds anything any more
}

func (gs *gates) arm(op, replica string) *gate {
	g := &gate{op: op, replica: replica, arrived: make(chan struct{}), released: make(chan struct{}), done: make(chan struct{})}
	gs.mu.Lock()
	gs.armed = append(gs.armed, g)
	gs.all = append(gs.all, g)
	gs.mu.Unlock()
	return g
}

// disarm drops g if nothing reached it.
func (gs *gates) disarm(g *gate) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for i, a := range gs.armed {
		if a == g {
			gs.armed = append(gs.armed[:i], gs.armed[i+1:]...)
			return
		}
	}
}

// open releases every armed gate and lets whatever comes later pass: a
// scenario that failed half-way must not leave a replica's job (whose
// context may never end: FinishPost runs WithoutCancel) waiting at one,
// nor the replica's Stop waiting for that job.
func (gs *gates) open() {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.opened = true
	for _, g := range gs.all {
		g.release()
	}
}

// pass runs f, first waiting at the gate armed for op (from replica) if
// there is one; a pass through no gate is only logged.
func (gs *gates) pass(ctx context.Context, op, replica string, f func()) {
	gs.mu.Lock()
	var g *gate
	for i, a := range gs.armed {
		if !gs.opened && a.op == op && (a.replica == "" || a.replica == replica) {
			g = a
			gs.armed = append(gs.armed[:i], gs.armed[i+1:]...)
			break
		}
	}
	gs.mu.Unlock()
	if g != nil {
		close(g.arrived)
		select {
		case <-g.released:
		case <-ctx.Done():
		}
	}
	f()
	gs.mu.Lock()
	gs.log = append(gs.log, op+"@"+replica)
	gs.mu.Unlock()
	if g != nil {
		close(g.done)
	}
}

// gatedStore is one replica's view of the shared store, its transitions
// passing the scenario's gates.
type gatedStore struct {
	store.Store
	replica string
	g       *gates
}

func (s *gatedStore) FinishPost(ctx context.Context, callID, holder string, ref asktype.MessageRef, shown int64) (a *asktype.Ask, err error) {
	op := opFinish
	if holder == asktype.Adopted {
		op = opAdopt
	}
	s.g.pass(ctx, op, s.replica, func() { a, err = s.Store.FinishPost(ctx, callID, holder, ref, shown) })
	return a, err
}

func (s *gatedStore) Vote(ctx context.Context, callID string, p store.VoteParams) (a *asktype.Ask, err error) {
	s.g.pass(ctx, opVote, s.replica, func() { a, err = s.Store.Vote(ctx, callID, p) })
	return a, err
}

func (s *gatedStore) Abort(ctx context.Context, callID string, at time.Time, why asktype.AbortReason) (a *asktype.Ask, err error) {
	s.g.pass(ctx, opAbort, s.replica, func() { a, err = s.Store.Abort(ctx, callID, at, why) })
	return a, err
}

// exploreReplica is one replica: its store view, mirror, host and bot,
// behind its own interaction URL.
type exploreReplica struct {
	name   string
	st     store.Store
	mirror *mirror.Mirror
	host   *engine.Host
	bot    *Bot
	url    string
}

// stop stops the replica as the service does on SIGTERM: its interaction
// work first, then its mirror, with the message phase's budget cut to a
// drain of a few tenths of a second (the mirror keeps 1.5 s to hand over).
func (r *exploreReplica) stop(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, 1800*time.Millisecond)
	defer cancel()
	_ = r.bot.Stop(sctx)
	_ = r.mirror.Stop(sctx)
}

// exploreBundle is two replicas on one store and one fake Slack.
type exploreBundle struct {
	fake     *slackfake.Server
	base     store.Store
	g        *gates
	replicas [2]*exploreReplica
}

func setupExplore(t *testing.T, paced bool) *exploreBundle {
	t.Helper()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-test", SigningSecret: testSecret, Users: []slackfake.User{alice}})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	b := &exploreBundle{fake: fake, g: &gates{}}
	quiet := slog.New(slog.NewTextHandler(&strings.Builder{}, &slog.HandlerOptions{Level: slog.LevelError + 1}))
	if os.Getenv("ASKSLACK_EXPLORE_LOGS") != "" {
		quiet = slog.Default()
	}
	var prefix string
	if os.Getenv("REDIS_URL") != "" {
		_, prefix = testredis.Client(t)
	}
	for i, name := range []string{"A", "B"} {
		var st store.Store
		if prefix == "" {
			if b.base == nil {
				b.base = store.NewMemory(0, nil)
			}
			st = b.base
		} else {
			// Each replica its own client and store on the scenario's prefix.
			rdb, _ := testredis.Client(t)
			r, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Stop(context.Background()) })
			st = r
			if b.base == nil {
				b.base = r
			}
		}
		gst := &gatedStore{Store: st, replica: name, g: b.g}
		api := slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))
		urls := NewClickURLs(nil, nil)
		surface := NewSurface(api, SurfaceOptions{Channel: "C1", ClickURLs: urls, Logger: quiet})
		mopts := mirror.Options{Holder: "replica-" + name, RetryBase: 20 * time.Millisecond, Logger: quiet.With("replica", name)}
		if paced {
			// As shipped, at Slack's rates ×20 (the e2e tests' scale).
			mopts.Pace = &mirror.Pace{Scale: 20, Channel: func(*asktype.Ask) string { return "C1" }}
		}
		mir := mirror.New(gst, surface, mopts)
		host := engine.NewHost(gst, Answerer{Surface: surface}, engine.HostOptions{Audit: gst, Logger: quiet})
		host.Observe(mir)
		bot := New(api, host, Options{Channel: "C1", Mirror: mir, ClickURLs: urls, Logger: quiet})
		srv := httptest.NewServer(HTTPHandler(bot, testSecret, quiet))
		t.Cleanup(func() {
			srv.Close()
			// Bounded: a paced job still waiting for its channel's turn
			// when the scenario ends is cancelled, not waited on (a
			// Background stop hung CI for 30 minutes here).
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = bot.Stop(ctx)
			_ = mir.Stop(ctx)
		})
		// Running: its sweep loop takes what a stopping replica hands over
		// (its periodic sweep, a minute away, never comes in a scenario).
		if err := mir.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		b.replicas[i] = &exploreReplica{name: name, st: gst, mirror: mir, host: host, bot: bot, url: srv.URL + "/slack/interactions"}
	}
	// First of the cleanups: nothing is held any more (a failed scenario
	// may leave a gate or a fake's hold armed), so the replicas stop.
	t.Cleanup(func() {
		b.g.open()
		fake.Close()
	})
	return b
}

// scenario is one kind of run; the order of its steps is the search's.
type scenario struct {
	change string // "click", "clicks" (two at once, on A and B), "answer", "abort", or "reattach" (the request re-sent with its callId, then an answer)
	on     int    // the replica the change reaches (0 is the poster); of two clicks, the one whose vote goes first
	// reply is what becomes of the post's reply: "late" (it arrives),
	// "lost" (the connection closes without it) or "failed" (Slack
	// answers internal_error though the message is posted, and the bot
	// tries again: it looks for the message, and records what it finds),
	// or "stopped" (the poster's replica is stopped while the reply is
	// held: the post's context is cancelled, and the replica hands the
	// ask over to the other, which looks for the message).
	reply      string
	failFirst  bool // the first post attempt fails transiently (before taking effect)
	paced      bool // the mirrors pace their Slack calls (mirror.Pace)
	renderHeld bool // the reply of the first render (chat.update or response_url) is held until the steps end, then fails
	// stop: once the steps end, the replica the change reached is stopped
	// (SIGTERM: its mirror drains what it queued and hands over the rest)
	// and no sweep runs: the end state must come from the drain or the
	// other replica taking the handoff.
	stop bool
}

func (s scenario) String() string {
	change := s.change + " on " + []string{"A (the poster)", "B"}[s.on]
	if s.change == "clicks" {
		change = "clicks on A and B, " + []string{"A", "B"}[s.on] + "'s first"
	}
	out := fmt.Sprintf("%s%s, reply %s, %s", map[bool]string{false: "", true: "paced "}[s.paced], change,
		s.reply, map[bool]string{false: "posted at once", true: "first attempt failed"}[s.failFirst])
	if s.renderHeld {
		out += ", render's reply held then failed"
	}
	if s.stop {
		out += ", then " + []string{"A", "B"}[s.on] + " stops"
	}
	return out
}

// chain is a sequence of steps one party takes; next runs its next step
// and waits for what that step leads to, reporting whether more follow.
type chain struct {
	name  string
	ready func() bool // may step now
	next  func() (more bool)
}

// run plays sc in the order choices says (at each point where both chains
// may step, the index of the one that goes), extending choices with 0s,
// and returns the choices made, how many there were at each point, the
// order as text, and what is wrong with the end state.
func (b *exploreBundle) run(t *testing.T, sc scenario, id string, choices []int) (made, width []int, order string, problems []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, g := b.fake, b.g
	poster, changer := b.replicas[0], b.replicas[sc.on]
	var steps []string
	wait := func(what string, ch <-chan struct{}) {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s: %s never happened (steps %v)", sc, what, steps)
		}
	}
	stored := func() *asktype.Ask {
		a, err := b.base.Get(ctx, id)
		if err != nil {
			t.Fatalf("%s: reading the ask: %v", sc, err)
		}
		return a
	}

	// The first render's reply, held until the steps end.
	var renders []*slackfake.Hold
	if sc.renderHeld {
		renders = []*slackfake.Hold{f.HoldReplyNext("chat.update"), f.HoldReplyNext("response_url")}
	}

	// The post: held before it takes effect, and its reply after.
	var first *slackfake.Hold
	if sc.failFirst {
		f.FailNext("chat.postMessage", 1, "internal_error", 0)
		first = f.HoldNext("chat.postMessage")
	}
	call := f.HoldNext("chat.postMessage")
	var reply *slackfake.Hold
	if !sc.failFirst {
		reply = f.HoldReplyNext("chat.postMessage")
	}
	// The poster records its post; after a re-sent request the other
	// replica may be the one that posts (the first attempt failed and gave
	// the lease back).
	finishBy := poster.name
	if sc.change == "reattach" {
		finishBy = ""
	}
	finish := g.arm(opFinish, finishBy)
	req := yesNo(id)
	go func() { _, _ = poster.host.Ask(ctx, req) }()
	postStage := 0
	if sc.failFirst {
		wait("the first post attempt", first.Arrived())
	} else {
		wait("the post", call.Arrived())
		postStage = 1
	}
	effect := false          // Slack stored the message
	var look *slackfake.Hold // the retry's conversations.history, after a failed reply
	failStatus := 0          // internal_error: HTTP 500
	if sc.paced {
		failStatus = http.StatusOK // {"ok":false,"error":"internal_error"}
	}
	postChain := chain{name: "post", ready: func() bool { return true }, next: func() bool {
		switch postStage {
		case 0: // the first attempt fails; the retry comes to the hold
			steps = append(steps, "post fails")
			first.Release()
			if err := f.WaitUntil(ctx, func() bool { return len(f.Calls("chat.postMessage")) == 1 }); err != nil {
				t.Fatalf("%s: the failing post never answered", sc)
			}
			reply = f.HoldReplyNext("chat.postMessage")
			postStage = 1
			// The retry may find the ask ended and post nothing.
			if err := waitCond(ctx, func() bool {
				select {
				case <-call.Arrived():
					return true
				default:
				}
				a := stored()
				return !a.State.Active() && a.Rendered >= a.Version
			}); err != nil {
				t.Fatalf("%s: the post was never tried again (steps %v)", sc, steps)
			}
			select {
			case <-call.Arrived():
				return true
			default:
				steps = append(steps, "(not posted: it ended first)")
				g.disarm(finish)
				call.Release()
				reply.Release()
				return false
			}
		case 1:
			steps = append(steps, "post takes effect")
			call.Release()
			wait("the post's effect", reply.Arrived())
			effect = true
			postStage = 2
			return true
		case 2:
			if sc.reply == "failed" {
				steps = append(steps, "post reply fails")
				g.disarm(finish)
				// The retry looks for the message unless a click recorded
				// it by now; what it finds, any replica may record.
				recorded := stored().Message.Posted()
				if !recorded {
					look = f.HoldNext("conversations.history")
					finish = g.arm(opFinish, "")
				}
				reply.ReleaseFailed("internal_error", failStatus)
				if recorded {
					return false
				}
				// The other replica may be looking on its own (the ask
				// ended while this one held the post lease: findHeld),
				// free of the holds, and record what it found first.
				if err := waitCond(ctx, func() bool {
					select {
					case <-look.Arrived():
						return true
					case <-finish.arrived:
						return true
					default:
					}
					return stored().Message.Posted()
				}); err != nil {
					t.Fatalf("%s: the retry never looked for the message (steps %v)", sc, steps)
				}
				select {
				case <-look.Arrived():
					postStage = 4
				case <-finish.arrived:
					postStage = 3
				default:
					steps = append(steps, "(the other replica recorded it)")
					g.disarm(finish)
					return false
				}
				return true
			}
			if sc.reply == "stopped" {
				steps = append(steps, "the poster stops while the post's reply is held")
				// Whoever records the message from here (the other replica,
				// taking the handoff) is not held.
				finish.release()
				// A drain of a few tenths of a second: the post's context is
				// cancelled (its reply never read), and what A owes is handed
				// over to B.
				poster.stop(ctx)
				reply.Release()
				return false
			}
			if sc.reply == "lost" {
				steps = append(steps, "post reply lost")
				reply.ReleaseLost()
				// The retry looks for the message (or sees it recorded)
				// on its own from here.
				g.disarm(finish)
				return false
			}
			steps = append(steps, "post reply arrives")
			reply.Release()
			wait("the post's reply recorded", finish.arrived)
			postStage = 3
			return true
		case 4:
			steps = append(steps, "the retry finds the message")
			look.Release()
			wait("the found message recorded", finish.arrived)
			postStage = 3
			return true
		default:
			steps = append(steps, "post recorded")
			finish.release()
			wait("the post recorded", finish.done)
			return false
		}
	}}

	// The change.
	changeStage := 0
	var adopt, settle, late *gate
	changeChain := chain{name: "change", ready: func() bool { return !strings.HasPrefix(sc.change, "click") || effect }, next: func() bool {
		switch changeStage {
		case 0:
			switch sc.change {
			case "clicks":
				// Both at once, one on each replica (a double click behind a
				// load balancer, two people): both read the ask open, both
				// may adopt the message, both vote; the first vote ends it.
				firstOn, lateOn := b.replicas[sc.on], b.replicas[1-sc.on]
				settle, late = g.arm(opVote, firstOn.name), g.arm(opVote, lateOn.name)
				msgs := f.Messages()
				if len(msgs) == 0 {
					t.Fatalf("%s: nothing to click", sc)
				}
				steps = append(steps, "clicks on A and B")
				for _, r := range b.replicas {
					go func() {
						_, _ = f.ClickButton(ctx, alice, msgs[0].Channel, msgs[0].TS, "Yes", slackfake.Delivery{To: r.url})
					}()
				}
				wait("the first click's vote", settle.arrived)
				wait("the second click's vote", late.arrived)
				changeStage = 2
				return true
			case "click":
				adopt, settle = g.arm(opAdopt, ""), g.arm(opVote, changer.name)
				msgs := f.Messages()
				if len(msgs) == 0 {
					t.Fatalf("%s: nothing to click", sc)
				}
				steps = append(steps, "click on "+changer.name)
				go func() {
					_, _ = f.ClickButton(ctx, alice, msgs[0].Channel, msgs[0].TS, "Yes", slackfake.Delivery{To: changer.url})
				}()
				select {
				case <-adopt.arrived:
					changeStage = 1
					return true
				case <-settle.arrived:
					g.disarm(adopt)
					changeStage = 2
					return true
				case <-ctx.Done():
					t.Fatalf("%s: the click changed nothing (steps %v)", sc, steps)
				}
			case "reattach":
				// The agent's request dropped and re-sent with the same
				// callId: its Create finds the ask stored, and its record
				// reaches the changer's mirror when the gate lets it.
				created := g.arm(opCreate, changer.name)
				steps = append(steps, "request re-sent to "+changer.name)
				go func() { _, _ = changer.host.Ask(ctx, req) }()
				wait("the re-sent request's create", created.arrived)
				adopt = created
				changeStage = 4
				return true
			case "answer":
				settle = g.arm(opVote, changer.name)
				steps = append(steps, "answer on "+changer.name)
				go func() {
					_, _ = changer.host.Answer(ctx, id, waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"Yes"}}}},
						waterfall.Respondent{UserID: "U0API", Surface: "api"})
				}()
				wait("the answer", settle.arrived)
				changeStage = 2
				return true
			default:
				settle = g.arm(opAbort, changer.name)
				steps = append(steps, "withdraw on "+changer.name)
				go func() { _, _ = changer.host.Abort(ctx, id) }()
				wait("the withdrawal", settle.arrived)
				changeStage = 2
				return true
			}
		case 1:
			steps = append(steps, "click adopts the message")
			adopt.release()
			wait("the adoption", adopt.done)
			wait("the click's answer", settle.arrived)
			changeStage = 2
			return true
		}
		if changeStage == 4 {
			steps = append(steps, "the re-sent request's record reaches the mirror; then an answer on "+changer.name)
			adopt.release()
			wait("the re-sent request's create", adopt.done)
			settle = g.arm(opVote, changer.name)
			go func() {
				_, _ = changer.host.Answer(ctx, id, waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"Yes"}}}},
					waterfall.Respondent{UserID: "U0API", Surface: "api"})
			}()
			wait("the answer", settle.arrived)
			changeStage = 2
			return true
		}
		if changeStage == 3 {
			steps = append(steps, "the other click's vote comes late")
			late.release()
			wait("the late vote", late.done)
			return false
		}
		steps = append(steps, "ask ends")
		settle.release()
		wait("the ending", settle.done)
		if late != nil {
			changeStage = 3
			return true
		}
		return false
	}}

	// Merge the chains in the order choices says.
	live := []*chain{&postChain, &changeChain}
	for len(live) > 0 {
		var ready []int
		for i, c := range live {
			if c.ready() {
				ready = append(ready, i)
			}
		}
		pick := 0
		if len(ready) > 1 {
			if len(made) < len(choices) {
				pick = choices[len(made)]
			}
			made = append(made, pick)
			width = append(width, len(ready))
		}
		i := ready[pick]
		if !live[i].next() {
			live = append(live[:i], live[i+1:]...)
		}
	}
	order = strings.Join(steps, " → ")
	for _, h := range renders {
		h.ReleaseFailed("internal_error", failStatus)
	}
	if look != nil {
		look.Release() // a look the steps did not wait for
	}

	// Free running from here: retries and any replica's sweep finish the
	// job; the end state must come without anyone's help. A replica that
	// stops must leave nothing for a sweep: it renders what it owes or
	// hands it over.
	if sc.stop {
		steps = append(steps, changer.name+" stops")
		order = strings.Join(steps, " → ")
		changer.stop(ctx)
	} else {
		for _, r := range b.replicas {
			r.mirror.Sweep(ctx, time.Now().Add(time.Hour))
		}
	}
	// The end state is eventual (the retries run on a 20 ms backoff):
	// wait for it, and report what is wrong when it does not come.
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
	defer wcancel()
	_ = waitCond(wctx, func() bool { problems = b.endProblems(ctx, t, id, effect); return len(problems) == 0 })
	return made, width, order, problems
}

// endProblems is what is wrong with ask id's end state: not one message
// (posted, when effect says Slack stored one), posted more than once, a
// vote counted twice, the ask still active, an ended ask's message with
// live buttons, or the store not agreeing that the message shows the
// latest version.
func (b *exploreBundle) endProblems(ctx context.Context, t *testing.T, id string, effect bool) []string {
	var out []string
	a, err := b.base.Get(ctx, id)
	if err != nil {
		t.Fatalf("reading the ask: %v", err)
	}
	msgs := b.messagesOf(id)
	switch {
	case len(msgs) > 1:
		out = append(out, fmt.Sprintf("%d messages; want 1", len(msgs)))
	case len(msgs) == 0 && effect:
		out = append(out, "the posted message is gone")
	case len(msgs) == 0 && a.State.Active():
		out = append(out, "never posted")
	}
	posts := 0
	for _, c := range b.fake.Calls("chat.postMessage") {
		if c.OK() {
			posts++
		}
	}
	if posts > 1 {
		out = append(out, fmt.Sprintf("posted %d times", posts))
	}
	if len(a.Votes) > 1 {
		out = append(out, fmt.Sprintf("%d votes recorded; want the one that ended it", len(a.Votes)))
	}
	if a.State.Active() {
		out = append(out, "the ask is still "+string(a.State))
	}
	for _, m := range msgs {
		if !a.State.Active() && hasButtons(m) {
			out = append(out, fmt.Sprintf("%s, but message %s has live buttons (recorded message %s, rendered %d of version %d)",
				a.State, m.TS, a.Message.ID, a.Rendered, a.Version))
		}
	}
	if a.Rendered < a.Version {
		out = append(out, fmt.Sprintf("rendered %d of version %d", a.Rendered, a.Version))
	}
	return out
}

// waitCond polls cond (the state is in the store and the fake both)
// until it holds or ctx ends.
func waitCond(ctx context.Context, cond func() bool) error {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// nextChoices is the next prefix of a depth-first walk over the choice
// tree: the last choice that has a sibling left, moved on one.
func nextChoices(made, width []int) ([]int, bool) {
	for i := len(made) - 1; i >= 0; i-- {
		if made[i]+1 < width[i] {
			return append(append([]int(nil), made[:i]...), made[i]+1), true
		}
	}
	return nil, false
}

// Every order of a post (failing first or not, its reply late, lost, or
// an error though the message was posted) and a change to its ask (a
// click that may adopt the message, two clicks at once on both replicas,
// an answer from another surface, a withdrawal) on the poster or the
// other replica ends with one message, posted once, that shows the ended
// ask without live controls.
func TestExploreChangeAroundPost(t *testing.T) {
	t.Parallel()
	exploreScenarios(t, exploreSet(os.Getenv("ASKSLACK_EXPLORE_ALL") != ""))
}

// exploreSet is the scenarios a run explores. The full product (all) is
// for a search after a change to the post path; the default keeps every
// dimension and every pair of dimensions that meet in the code (the
// reply's fate with the change and the replica it reaches, paced or
// not), leaving out products that take the same paths again.
func exploreSet(all bool) []scenario {
	var out []scenario
	for _, change := range []string{"click", "clicks", "answer", "abort", "reattach"} {
		for on := range 2 {
			for _, reply := range []string{"late", "lost", "failed", "stopped"} {
				for _, failFirst := range []bool{false, true} {
					for _, paced := range []bool{false, true} {
						for _, renderHeld := range []bool{false, true} {
							for _, stop := range []bool{false, true} {
								sc := scenario{change: change, on: on, reply: reply, failFirst: failFirst, paced: paced, renderHeld: renderHeld, stop: stop}
								if sc.valid() && (all || sc.core()) {
									out = append(out, sc)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// valid reports whether sc can be played: a replica stopped while the
// post's reply is held is not stopped again, nor clicked on afterwards
// (it is stopped: the change reaches the other replica).
func (sc scenario) valid() bool {
	return !(sc.stop && sc.reply == "stopped") && !(sc.reply == "stopped" && sc.on == 0)
}

// core reports whether sc is in the default set.
func (sc scenario) core() bool {
	switch {
	case sc.change == "reattach":
		// A re-sent request, at every point of the post: its reply's every
		// fate, a first attempt failing or not, on either replica; paced,
		// with the reply as it comes (the pacer adds its lane, not a path
		// of the post's reply).
		return !sc.renderHeld && !sc.stop && (!sc.paced || sc.reply == "late" && !sc.failFirst)
	case sc.reply == "stopped":
		// The poster stopping mid-post, whatever changes the ask where.
		return !sc.renderHeld && !sc.failFirst && sc.change != "clicks"
	case sc.stop:
		// SIGTERM with updates queued: the replica the change reached
		// stops once the steps end, paced (its updates wait for tokens),
		// its first render's reply held and failing or not.
		return sc.paced && !sc.failFirst && sc.reply == "late" && (sc.change == "click" || sc.change == "answer")
	case sc.reply != "failed" && sc.change != "clicks":
		// The orders explored before a post's reply could fail after its
		// effect: all of them, the render's reply as it comes.
		return !sc.renderHeld
	case sc.change == "clicks":
		// Two clicks: the first attempt posting, every reply's fate.
		return !sc.failFirst && sc.renderHeld == sc.paced
	}
	// A failed reply: every change on either replica, paced or not, the
	// render's reply held when paced (the pacer's own retry of it) and as
	// it comes when not; a first attempt failing before its effect adds
	// nothing the other replies did not explore with it.
	return !sc.failFirst && sc.renderHeld == sc.paced
}

func exploreScenarios(t *testing.T, scenarios []scenario) {
	var mu sync.Mutex
	orders := 0
	t.Cleanup(func() { t.Logf("%d orders explored in %d scenarios", orders, len(scenarios)) })
	for _, sc := range scenarios {
		t.Run(strings.NewReplacer(" ", "_", ",", "", "'", "").Replace(sc.String()), func(t *testing.T) {
			t.Parallel()
			var choices []int
			for n := 0; ; n++ {
				b := setupExplore(t, sc.paced)
				made, width, order, problems := b.run(t, sc, fmt.Sprintf("x%d", n), choices)
				mu.Lock()
				orders++
				mu.Unlock()
				if os.Getenv("ASKSLACK_EXPLORE_ORDERS") != "" {
					t.Logf("%s; store ops %v", order, b.g.log)
				}
				if len(problems) > 0 {
					t.Errorf("%s\n  order: %s\n  store ops: %v\n  %s", sc, order, b.g.log, strings.Join(problems, "\n  "))
				}
				var more bool
				if choices, more = nextChoices(made, width); !more {
					return
				}
			}
		})
	}
}
