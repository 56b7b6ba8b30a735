package slackbot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/mirror"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// A replica settled an ask and died before updating its message: any
// replica's Reconcile brings the message up to date (buttons gone).
func TestReconcileRendersMessagesLeftBehind(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-test"})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	api := slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))
	// The store's clock runs two minutes behind: the change looks old enough.
	st := store.NewMemory(0, clock.NewFake(time.Now().Add(-2*time.Minute)))
	m := mirror.New(st, NewSurface(api, SurfaceOptions{Channel: "C1"}), mirror.Options{})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	ctx := context.Background()

	req := waterfall.Request{CallID: "c1", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: "q", Question: "Ship it?", Options: []waterfall.Option{{Label: "Yes"}, {Label: "No"}}}}}
	raw, _ := json.Marshal(req)
	if _, _, err := st.Create(ctx, &asktype.Ask{CallID: "c1", Request: raw, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	m.Kick("c1") // this replica posts it
	if _, err := fake.WaitFor(testCtx(t), "chat.postMessage", nil); err != nil {
		t.Fatal(err)
	}
	posted := fake.Messages()[0]
	// The "other replica" settles without telling this bot (no observer) and dies.
	s, _ := json.Marshal(waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"Yes"}}}},
		Respondent: waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack, At: time.Now()}})
	if _, err := st.Settle(ctx, "c1", s, time.Now()); err != nil {
		t.Fatal(err)
	}
	m.Sweep(ctx, time.Now().Add(-time.Minute))
	err := fake.WaitUntil(testCtx(t), func() bool {
		m, _ := fake.Message(posted.Channel, posted.TS)
		return m.Updated > 0 && !strings.Contains(string(m.Blocks), `"button"`)
	})
	if err != nil {
		m, _ := fake.Message(posted.Channel, posted.TS)
		t.Fatalf("message not brought up to date: %s", m.Blocks)
	}
	_ = m.Stop(ctx) // lets the queued update finish recording what it rendered
	if got, _ := st.Stale(ctx, time.Now(), 10); len(got) != 0 {
		t.Fatalf("still stale after reconciling: %v", got)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ghostBundle is two replicas' mirrors on one store (Redis with REDIS_URL)
// and one fake Slack, on a fake clock that the tests never move: a post
// lease taken now stays held throughout.
type ghostBundle struct {
	*postBundle
	clk *clock.Fake
}

func setupGhost(t *testing.T) *ghostBundle {
	t.Helper()
	t.Parallel()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-test"})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	api := slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))
	clk := clock.NewFake(time.Now())
	return &ghostBundle{postBundle: &postBundle{fake: fake, st: testStore(t),
		surface: NewSurface(api, SurfaceOptions{Channel: "C1", Now: clk.Now})}, clk: clk}
}

// replica starts a mirror named holder on the bundle's store and Slack.
func (g *ghostBundle) replica(t *testing.T, holder string) *mirror.Mirror {
	m := mirror.New(g.st, g.surface, mirror.Options{Holder: holder, Clock: g.clk, RetryBase: time.Second})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	return m
}

// postThenDie is replica A's side of an ask: A creates it with its post
// lease, its post job gets as far as Slack storing the question (live
// buttons) when landed is set, and A is killed before it records the
// message's ts. The lease A took runs on (the clock does not move).
func (g *ghostBundle) postThenDie(t *testing.T, req *waterfall.Request, landed bool) *asktype.Ask {
	t.Helper()
	ctx := context.Background()
	a := g.replica(t, "replica-a")
	raw, _ := json.Marshal(req)
	rec := &asktype.Ask{CallID: req.CallID, SessionID: req.Agent.SessionID, Request: raw, Created: g.clk.Now(),
		Poster: a.PostLease(g.clk.Now())}
	if t := req.Timeout(); t > 0 {
		rec.Deadline = rec.Created.Add(t)
	}
	created, _, err := g.st.Create(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if landed {
		g.land(t, created)
	}
	return created
}

// land stores the dead replica's post in Slack, as its job would have.
func (g *ghostBundle) land(t *testing.T, created *asktype.Ask) {
	t.Helper()
	ref, err := g.surface.Post(context.Background(), rec(t, created))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := g.fake.Message(ref.Conversation, ref.ID); !ok || !hasButtons(m) {
		t.Fatalf("the dead replica's post is not a live question: %+v", m)
	}
}

// onlyTheDeadPost checks that Slack holds one message, the dead replica's:
// nothing was posted again.
func (g *ghostBundle) onlyTheDeadPost(t *testing.T) {
	t.Helper()
	if n := len(g.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("chat.postMessage called %d times; want only the dead replica's post", n)
	}
	if n := len(g.fake.Messages()); n != 1 {
		t.Fatalf("%d messages in Slack; want 1", n)
	}
}

// answeredYes is the settlement of a yesNo ask answered "Yes" by U1.
func answeredYes() json.RawMessage {
	s, _ := json.Marshal(waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"Yes"}}}},
		Respondent: waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack, At: time.Now()}})
	return s
}

// Replica A dies between Slack storing its post and recording the message's
// ts; the ask then ends through replica B (settled, withdrawn, or its
// window closes). B, told of the change or in its reconcile sweep, finds
// the message by its metadata and shows the ending — while A's post lease
// still runs — and posts nothing.
func TestEndedWhilePostOutcomeUnknownIsFoundAndShown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		timed bool
		end   func(ctx context.Context, st store.Store, a *asktype.Ask) (*asktype.Ask, error)
		told  bool // B made the change (its observer hears of it); else only B's sweep sees it
		shows func(m slackfake.Message) bool
	}{
		{name: "settled", told: true,
			end: func(ctx context.Context, st store.Store, a *asktype.Ask) (*asktype.Ask, error) {
				return st.Settle(ctx, a.CallID, answeredYes(), a.Created)
			},
			shows: func(m slackfake.Message) bool { return !hasButtons(m) && strings.Contains(string(m.Blocks), "Yes") }},
		{name: "withdrawn",
			end: func(ctx context.Context, st store.Store, a *asktype.Ask) (*asktype.Ask, error) {
				return st.Abort(ctx, a.CallID, a.Created, asktype.Withdrawn)
			},
			shows: func(m slackfake.Message) bool {
				return !hasButtons(m) && strings.Contains(string(m.Blocks), "withdrew")
			}},
		{name: "continued", timed: true,
			end: func(ctx context.Context, st store.Store, a *asktype.Ask) (*asktype.Ask, error) {
				return st.Expire(ctx, a.CallID, a.Deadline)
			},
			shows: func(m slackfake.Message) bool { return strings.Contains(string(m.Blocks), "moved on") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := setupGhost(t)
			ctx := context.Background()
			req := yesNo("c1")
			if tc.timed {
				req.TimeoutMs = ptr(60000.0)
			}
			created := g.postThenDie(t, req, true)
			b := g.replica(t, "replica-b")
			ended, err := tc.end(ctx, g.st, created)
			if err != nil {
				t.Fatal(err)
			}
			if tc.told {
				b.Changed(rec(t, ended))
			} else {
				b.Sweep(ctx, time.Now().Add(time.Hour))
			}
			g.waitMessage(t, "c1", "the dead replica's message shows the ending", func(a *asktype.Ask, m slackfake.Message) bool {
				return a.State == ended.State && a.Rendered >= a.Version && m.Updated > 0 && tc.shows(m)
			})
			g.onlyTheDeadPost(t)
		})
	}
}

// The look-up finds nothing yet (Slack has not stored the dead replica's
// post so far): the ended ask is not posted, and it is not given up
// either — once the post lands, the next replica's sweep finds it and
// takes its buttons away.
func TestEndedWhilePostOutcomeUnknownLooksAgainUntilFound(t *testing.T) {
	g := setupGhost(t)
	ctx := context.Background()
	created := g.postThenDie(t, yesNo("c1"), false)
	b := g.replica(t, "replica-b")
	settled, err := g.st.Settle(ctx, "c1", answeredYes(), created.Created)
	if err != nil {
		t.Fatal(err)
	}
	b.Changed(rec(t, settled))
	if _, err := g.fake.WaitFor(testCtx(t), "conversations.history", nil); err != nil {
		t.Fatalf("replica B never looked for the dead replica's post: %v", err)
	}
	_ = b.Stop(ctx) // its look is over
	if n := len(g.fake.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("a settled ask was posted (%d chat.postMessage)", n)
	}
	if a, _ := g.st.Get(ctx, "c1"); a.Rendered >= a.Version {
		t.Fatalf("the ask was given up after one look that found nothing: %+v", a)
	}

	g.land(t, created) // the dead replica's post lands after all
	c := g.replica(t, "replica-c")
	c.Sweep(ctx, time.Now().Add(time.Hour))
	g.waitMessage(t, "c1", "the late post shows the answer", func(a *asktype.Ask, m slackfake.Message) bool {
		return a.State == asktype.Settled && a.Rendered >= a.Version && m.Updated > 0 && !hasButtons(m)
	})
	g.onlyTheDeadPost(t)
}
