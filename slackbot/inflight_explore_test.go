package slackbot

// An exploration of the orders in which a question's post and a change to
// it can land, across two replicas (issue 43, item 3). "No ended ask keeps
// live controls" broke four rounds running, each time under one more
// interleaving nobody had written a case for; this test drives them all.
//
// Two chains of steps run against one fake Slack and one store (Redis with
// REDIS_URL): the post of replica A — optionally a first attempt failing
// transiently, then the call taking effect, then its reply arriving late or
// never, then A recording the message — and a change reaching replica A or
// B — a click on the message (which may adopt it and then settles), an
// answer from another surface, or a withdrawal. Every step is held at a
// gate (the fake's holds for Slack, a store wrapper for the store's
// transitions) and released by the scheduler, which walks every order the
// two chains can be merged in (a depth-first search replaying a prefix of
// choices), so each order is reproduced on purpose. After both chains end,
// the replicas run on freely (retries, the reconcile sweep) and the end
// state is asserted: one message, posted once, and an ended ask's message
// without live controls, the store agreeing that it shows the latest.

import (
	"context"
	"fmt"
	"log/slog"
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
	mu    sync.Mutex
	armed []*gate
	log   []string // every gated operation, in the order it ran
}

func (gs *gates) arm(op, replica string) *gate {
	g := &gate{op: op, replica: replica, arrived: make(chan struct{}), released: make(chan struct{}), done: make(chan struct{})}
	gs.mu.Lock()
	gs.armed = append(gs.armed, g)
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

// pass runs f, first waiting at the gate armed for op (from replica) if
// there is one; a pass through no gate is only logged.
func (gs *gates) pass(ctx context.Context, op, replica string, f func()) {
	gs.mu.Lock()
	var g *gate
	for i, a := range gs.armed {
		if a.op == op && (a.replica == "" || a.replica == replica) {
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
	url    string
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
		mopts := mirror.Options{Holder: "replica-" + name, RetryBase: 20 * time.Millisecond, Logger: quiet}
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
			_ = bot.Stop(context.Background())
			_ = mir.Stop(context.Background())
		})
		b.replicas[i] = &exploreReplica{name: name, st: gst, mirror: mir, host: host, url: srv.URL + "/slack/interactions"}
	}
	return b
}

// scenario is one kind of run; the order of its steps is the search's.
type scenario struct {
	change    string // "click", "answer" or "abort"
	on        int    // the replica the change reaches (0 is the poster)
	lost      bool   // the post's reply never arrives
	failFirst bool   // the first post attempt fails transiently
	paced     bool   // the mirrors pace their Slack calls (mirror.Pace)
}

func (s scenario) String() string {
	return fmt.Sprintf("%s%s on %s, reply %s, %s", map[bool]string{false: "", true: "paced "}[s.paced], s.change, []string{"A (the poster)", "B"}[s.on],
		map[bool]string{false: "late", true: "lost"}[s.lost], map[bool]string{false: "posted at once", true: "first attempt failed"}[s.failFirst])
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
	finish := g.arm(opFinish, poster.name)
	req := yesNo(id)
	go func() { _, _ = poster.host.Ask(ctx, req) }()
	postStage := 0
	if sc.failFirst {
		wait("the first post attempt", first.Arrived())
	} else {
		wait("the post", call.Arrived())
		postStage = 1
	}
	effect := false // Slack stored the message
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
			if sc.lost {
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
		default:
			steps = append(steps, "post recorded")
			finish.release()
			wait("the post recorded", finish.done)
			return false
		}
	}}

	// The change.
	changeStage := 0
	var adopt, settle *gate
	changeChain := chain{name: "change", ready: func() bool { return sc.change != "click" || effect }, next: func() bool {
		switch changeStage {
		case 0:
			switch sc.change {
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
		steps = append(steps, "ask ends")
		settle.release()
		wait("the ending", settle.done)
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

	// Free running from here: retries and any replica's sweep finish the
	// job; the end state must come without anyone's help.
	for _, r := range b.replicas {
		r.mirror.Sweep(ctx, time.Now().Add(time.Hour))
	}
	end := func() []string {
		var out []string
		a := stored()
		var msgs []slackfake.Message
		for _, m := range f.Messages() {
			if strings.Contains(string(m.Blocks), "ask/"+id+"/") {
				msgs = append(msgs, m)
			}
		}
		switch {
		case len(msgs) > 1:
			out = append(out, fmt.Sprintf("%d messages; want 1", len(msgs)))
		case len(msgs) == 0 && effect:
			out = append(out, "the posted message is gone")
		case len(msgs) == 0 && a.State.Active():
			out = append(out, "never posted")
		}
		if n := len(f.Calls("chat.postMessage")) - map[bool]int{false: 0, true: 1}[sc.failFirst]; n > 1 {
			out = append(out, fmt.Sprintf("posted %d times", n))
		}
		if a.State.Active() {
			out = append(out, "the ask is still "+string(a.State))
		}
		for _, m := range msgs {
			if !a.State.Active() && hasButtons(m) {
				out = append(out, fmt.Sprintf("%s, but its message has live buttons (rendered %d of version %d)", a.State, a.Rendered, a.Version))
			}
		}
		if a.Rendered < a.Version {
			out = append(out, fmt.Sprintf("rendered %d of version %d", a.Rendered, a.Version))
		}
		return out
	}
	// The end state is eventual (the retries run on a 20 ms backoff):
	// wait for it, and report what is wrong when it does not come.
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
	defer wcancel()
	_ = waitCond(wctx, func() bool { problems = end(); return len(problems) == 0 })
	return made, width, order, problems
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

// Every order of a post (failing first or not, its reply late or lost) and
// a change to its ask (a click that may adopt the message, an answer from
// another surface, a withdrawal) on the poster or the other replica ends
// with one message, posted once, that shows the ended ask without live
// controls.
func TestExploreChangeAroundPost(t *testing.T) {
	t.Parallel()
	var scenarios []scenario
	for _, change := range []string{"click", "answer", "abort"} {
		for on := range 2 {
			for _, lost := range []bool{false, true} {
				for _, failFirst := range []bool{false, true} {
					for _, paced := range []bool{false, true} {
						scenarios = append(scenarios, scenario{change: change, on: on, lost: lost, failFirst: failFirst, paced: paced})
					}
				}
			}
		}
	}
	var mu sync.Mutex
	orders := 0
	t.Cleanup(func() { t.Logf("%d orders explored", orders) })
	for _, sc := range scenarios {
		t.Run(strings.NewReplacer(" ", "_", ",", "").Replace(sc.String()), func(t *testing.T) {
			t.Parallel()
			var choices []int
			for n := 0; ; n++ {
				b := setupExplore(t, sc.paced)
				made, width, order, problems := b.run(t, sc, fmt.Sprintf("x%d", n), choices)
				mu.Lock()
				orders++
				mu.Unlock()
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
