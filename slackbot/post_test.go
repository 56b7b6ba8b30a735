package slackbot

import (
	"context"
	"encoding/json"
	"os"
	"strings"
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

// postBundle is a bot on a memory store (or Redis, with REDIS_URL) whose
// host's chain is the bot, talking to the project's fake Slack.
type postBundle struct {
	fake    *slackfake.Server
	st      store.Store
	host    *engine.Host
	surface *Surface
	mirror  *mirror.Mirror
	bot     *Bot
}

func setupPost(t *testing.T, fopts slackfake.Options, wrap ...func(store.Store) store.Store) *postBundle {
	t.Helper()
	t.Parallel()
	fopts.BotToken = "xoxb-test"
	fake := slackfake.New(fopts)
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	api := slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))
	st := testStore(t)
	for _, w := range wrap {
		st = w(st)
	}
	surface := NewSurface(api, SurfaceOptions{Channel: "C1"})
	mir := mirror.New(st, surface, mirror.Options{RetryBase: 20 * time.Millisecond})
	host := engine.NewHost(st, Answerer{Surface: surface}, engine.HostOptions{Audit: st})
	host.Observe(mir)
	bot := New(api, host, Options{Channel: "C1", Mirror: mir})
	t.Cleanup(func() {
		_ = bot.Stop(context.Background())
		_ = mir.Stop(context.Background())
	})
	return &postBundle{fake: fake, st: st, host: host, surface: surface, mirror: mir, bot: bot}
}

// testStore is a Redis store with its own key prefix when REDIS_URL is
// set, else a memory store.
func testStore(t *testing.T) store.Store {
	if os.Getenv("REDIS_URL") == "" {
		return store.NewMemory(0, nil)
	}
	rdb, prefix := testredis.Client(t)
	r, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(context.Background()) })
	return r
}

func yesNo(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a", SessionID: "s-" + callID}, Questions: []waterfall.Question{{
		ID: "q", Question: "Ship it?", Options: []waterfall.Option{{Label: "Yes"}, {Label: "No"}}}}}
}

// waitMessage waits until the ask's message exists and pred holds for it.
// The state lives in two places (Slack and the store), so it re-checks on
// every Slack call and every few milliseconds for store-only changes.
func (p *postBundle) waitMessage(t *testing.T, callID string, what string, pred func(a *asktype.Ask, m slackfake.Message) bool) slackfake.Message {
	t.Helper()
	var last slackfake.Message
	check := func() bool {
		a, err := p.st.Get(context.Background(), callID)
		if err != nil || !a.Message.Posted() {
			return false
		}
		m, ok := p.fake.Message(a.Message.Conversation, a.Message.ID)
		last = m
		return ok && pred(a, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !check() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: never happened; last message %s", what, last.Blocks)
		case <-tick.C:
		}
	}
	return last
}

func hasButtons(m slackfake.Message) bool { return strings.Contains(string(m.Blocks), `"button"`) }

// askInBackground starts a blocking ask whose caller goes away when the
// returned cancel is called; its result arrives on the channel.
func (p *postBundle) askInBackground(req *waterfall.Request) (<-chan error, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.host.Ask(ctx, req)
		done <- err
	}()
	return done, cancel
}

// A withdraw while chat.postMessage is in flight (Slack slow to answer,
// the message already stored) must not leave live buttons: the post is
// recorded and then the message shows the withdrawal.
func TestPostInFlightWhenAskIsWithdrawn(t *testing.T) {
	p := setupPost(t, slackfake.Options{})
	p.fake.DelayNext("chat.postMessage", 1, 300*time.Millisecond)
	done, cancel := p.askInBackground(yesNo("c1"))
	defer cancel()
	if _, err := p.fake.WaitFor(testCtx(t), "chat.postMessage", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.host.Abort(context.Background(), "c1"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; waterfall.CodeOf(err) != waterfall.CodeAskAborted {
		t.Fatalf("Ask = %v, want ASK_ABORTED", err)
	}
	p.waitMessage(t, "c1", "message shows the withdrawal", func(a *asktype.Ask, m slackfake.Message) bool {
		return !hasButtons(m) && strings.Contains(string(m.Blocks), "withdrew") && a.Rendered >= a.Version
	})
	if n := len(p.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("chat.postMessage called %d times, want 1", n)
	}
}

// A timed window shorter than the post: the agent gets pending, the
// message is still posted and says the agent moved on.
func TestPostOutlivesATimedWindow(t *testing.T) {
	p := setupPost(t, slackfake.Options{})
	p.fake.DelayNext("chat.postMessage", 1, 200*time.Millisecond)
	req := yesNo("c1")
	req.TimeoutMs = ptr(1.0)
	res, err := p.host.Ask(context.Background(), req)
	if err != nil || !res.Pending() {
		t.Fatalf("Ask = %+v, %v; want pending", res, err)
	}
	p.waitMessage(t, "c1", "continued message", func(a *asktype.Ask, m slackfake.Message) bool {
		return a.State == asktype.Continued && a.Rendered >= a.Version && strings.Contains(string(m.Blocks), "moved on")
	})
}

// chat.postMessage took effect but its response was lost: the retry finds
// the message by its metadata instead of posting a second one.
func TestPostLostResponseIsNotPostedTwice(t *testing.T) {
	p := setupPost(t, slackfake.Options{})
	p.fake.DropNext("chat.postMessage", 1)
	_, cancel := p.askInBackground(yesNo("c1"))
	defer cancel()
	p.waitMessage(t, "c1", "message recorded", func(a *asktype.Ask, m slackfake.Message) bool { return hasButtons(m) })
	if n := len(p.fake.Messages()); n != 1 {
		t.Fatalf("%d messages in Slack, want exactly 1", n)
	}
	if n := len(p.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("chat.postMessage called %d times, want 1", n)
	}
	if len(p.fake.Calls("conversations.history")) == 0 {
		t.Fatal("the retry did not look for the earlier post")
	}
}

// Transient failures (5xx, internal_error, rate limits) delay the post;
// they never end the ask.
func TestPostRetriesTransientFailures(t *testing.T) {
	p := setupPost(t, slackfake.Options{})
	p.fake.FailNext("chat.postMessage", 2, "internal_error", 0)
	p.fake.FailNext("chat.postMessage", 1, "ratelimited", 1)
	p.fake.FailNext("chat.postMessage", 1, "service_unavailable", 0)
	done, cancel := p.askInBackground(yesNo("c1"))
	defer cancel()
	p.waitMessage(t, "c1", "posted after the failures", func(a *asktype.Ask, m slackfake.Message) bool {
		return a.State == asktype.Open && hasButtons(m)
	})
	select {
	case err := <-done:
		t.Fatalf("the ask ended: %v", err)
	default:
	}
	if n := len(p.fake.Messages()); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}

// Slack refusing for good ends an untimed ask with NO_PROVIDER, and so does
// every re-attach with the same callId.
func TestPostRefusedUntimedIsNoProvider(t *testing.T) {
	p := setupPost(t, slackfake.Options{Channels: []string{"C1"}})
	req := yesNo("c1")
	req.Channel = "C0GONE"
	ctx := testCtx(t)
	for i := range 2 {
		_, err := p.host.Ask(ctx, req)
		if waterfall.CodeOf(err) != waterfall.CodeNoProvider {
			t.Fatalf("Ask #%d = %v, want NO_PROVIDER", i+1, err)
		}
	}
	a, _ := p.st.Get(ctx, "c1")
	if a.Message.Refused != "channel_not_found" || a.AbortReason != asktype.NoMessage {
		t.Fatalf("ask = %+v", a)
	}
	if n := len(p.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("chat.postMessage called %d times, want 1 (no retry of a permanent refusal)", n)
	}
}

// A timed ask Slack refuses returns pending at its deadline (seed 000), so
// an answer from another surface still reaches the agent.
func TestPostRefusedTimedIsPendingAtDeadline(t *testing.T) {
	p := setupPost(t, slackfake.Options{Channels: []string{"C1"}})
	req := yesNo("c1")
	req.Channel = "C0GONE"
	req.TimeoutMs = ptr(300.0)
	ctx := testCtx(t)
	// The post is the mirror's job, not the request's: its refusal may come
	// after the window closed (a slow Slack, a loaded machine). Held here
	// until then, on purpose.
	post := p.fake.HoldNext("chat.postMessage")
	res, err := p.host.Ask(ctx, req)
	if err != nil || !res.Pending() {
		t.Fatalf("Ask = %+v, %v; want pending", res, err)
	}
	post.Release()
	var a *asktype.Ask
	if err := waitCond(ctx, func() bool {
		a, _ = p.st.Get(ctx, "c1")
		return a != nil && a.Message.Refused != ""
	}); err != nil || a.State != asktype.Continued {
		t.Fatalf("ask = %+v", a)
	}
}

// A timed ask with no channel at all is pending at its deadline too, not
// NO_PROVIDER at once.
func TestNoChannelTimedIsPendingAtDeadline(t *testing.T) {
	p := setupPost(t, slackfake.Options{})
	p.surface.channel = ""
	req := yesNo("c1")
	req.TimeoutMs = ptr(200.0)
	res, err := p.host.Ask(testCtx(t), req)
	if err != nil || !res.Pending() {
		t.Fatalf("Ask = %+v, %v; want pending", res, err)
	}
	untimed := yesNo("c2")
	if _, err := p.host.Ask(testCtx(t), untimed); waterfall.CodeOf(err) != waterfall.CodeNoProvider {
		t.Fatalf("untimed Ask = %v, want NO_PROVIDER", err)
	}
}

// A replica created an ask and died before posting it: any replica's
// Reconcile posts it.
func TestReconcilePostsAsksNobodyPosted(t *testing.T) {
	p := setupPost(t, slackfake.Options{})
	raw, _ := json.Marshal(yesNo("c1"))
	ctx := context.Background()
	// Created straight in the store: no observer heard of it.
	if _, _, err := p.st.Create(ctx, &asktype.Ask{CallID: "c1", Request: raw, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	p.mirror.Sweep(ctx, time.Now().Add(time.Second))
	p.waitMessage(t, "c1", "posted by reconcile", func(a *asktype.Ask, m slackfake.Message) bool { return hasButtons(m) })
}

func ptr[T any](v T) *T { return &v }
