package slackbot

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/remind"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

func reviewFake(t *testing.T, now ...func() time.Time) (*slackfake.Server, *slack.Client) {
	t.Helper()
	opts := slackfake.Options{BotToken: "xoxb-test", Channels: []string{"C1"},
		Users: []slackfake.User{{ID: "U0BOB", Name: "bob", Email: "bob@example.com"}}}
	if len(now) > 0 {
		opts.Now = now[0]
	}
	fake := slackfake.New(opts)
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	return fake, slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))
}

func reviewAsk(t *testing.T, st store.Store, callID, principal, delivery, session string) *asktype.Ask {
	t.Helper()
	req := yesNo(callID)
	req.Agent.Principal = principal
	req.Agent.SessionID = session
	req.Delivery = delivery
	raw, _ := json.Marshal(req)
	a, _, err := st.Create(context.Background(), &asktype.Ask{CallID: callID, SessionID: session, Request: raw, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func inDMs(fake *slackfake.Server) int {
	n := 0
	for _, m := range fake.Messages() {
		if strings.HasPrefix(m.Channel, "D") {
			n++
		}
	}
	return n
}

// Delivery "both": the channel post took effect but its answer was lost, so
// the attempt stopped before the DM copy. The mirror's retry adopts what
// Find returns and never posts again: Find sends the missing copy.
func TestBothLostChannelPostStillSendsTheDMCopy(t *testing.T) {
	fake, _, st, s := deliverySurface(t, waterfall.DeliverBoth)
	ctx := context.Background()
	a := reviewAsk(t, st, "both-lost", "U0BOB", "", "")
	since := time.Now()
	fake.DropNext("chat.postMessage", 1)
	if _, err := s.Post(ctx, rec(t, a)); err == nil {
		t.Fatal("want the lost response to fail the post")
	}
	ref, ok, err := s.Find(ctx, rec(t, a), since) // what mirror.adopt does next, then FinishPost(ref)
	if err != nil || !ok {
		t.Fatalf("Find = %v %v", ok, err)
	}
	if len(ref.Copies) == 0 || inDMs(fake) == 0 {
		t.Fatalf("adopted %+v: the principal's DM copy was never posted (%d DM messages)", ref, inDMs(fake))
	}
}

// Delivery "dm": the principal lookup fails once, so the question goes to
// the channel (with a note); its answer is lost. On the retry the lookup
// works: Find looks in the channel too, and the question is not posted a
// second time in the DM.
func TestDMRouteThatChangesBetweenAttemptsPostsOnce(t *testing.T) {
	fake, _, st, s := deliverySurface(t, waterfall.DeliverDM)
	ctx := context.Background()
	a := reviewAsk(t, st, "dm-flip", "bob@example.com", "", "")
	since := time.Now()
	fake.FailNext("users.lookupByEmail", 2, "internal_error", 0) // one for the route, one for the mention
	fake.DropNext("chat.postMessage", 1)
	if _, err := s.Post(ctx, rec(t, a)); err == nil {
		t.Fatal("want the lost response to fail the post")
	}
	_, ok, err := s.Find(ctx, rec(t, a), since)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if _, err := s.Post(ctx, rec(t, a)); err != nil { // mirror: found nothing, post
			t.Fatal(err)
		}
	}
	n := 0
	for _, m := range fake.Messages() {
		if strings.Contains(string(m.Blocks), "dm-flip") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the question is in Slack %d times; want once", n)
	}
}

// A session thread longer than historyPages×200 messages, grown over an
// hour: conversations.replies is oldest first, so Find must ask from the
// attempt on, or a recent question is not found and the mirror posts it a
// second time.
func TestFindSeesARecentQuestionInALongThread(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now().Add(-time.Hour)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	fake, api := reviewFake(t, now)
	st := testStore(t)
	s := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: st, Now: now})
	ctx := context.Background()
	first, err := s.Post(ctx, rec(t, reviewAsk(t, st, "long-0", "", "", "sess-long")))
	if err != nil {
		t.Fatal(err)
	}
	for i := range historyPages * 200 {
		if _, _, err := api.PostMessage("C1", slack.MsgOptionText("reply "+string(rune('a'+i%26)), false), slack.MsgOptionTS(first.Thread)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	clock = clock.Add(time.Hour)
	mu.Unlock()
	a := reviewAsk(t, st, "long-1", "", "", "sess-long")
	since := now()
	fake.DropNext("chat.postMessage", 1)
	if _, err := s.Post(ctx, rec(t, a)); err == nil {
		t.Fatal("want the lost response to fail the post")
	}
	if _, ok, err := s.Find(ctx, rec(t, a), since); err != nil || !ok {
		t.Fatalf("Find = %v %v; the question is in the thread", ok, err)
	}
}

// The store forgets a session's thread threadTTL after it was started; a
// replica's cache must not outlive that, or once another replica starts the
// session's next thread the two post its questions in different threads.
func TestCachedThreadDoesNotOutliveTheStore(t *testing.T) {
	_, api := reviewFake(t)
	st := store.NewMemory(0, nil)
	now := time.Now()
	clockNow := func() time.Time { return now }
	r1 := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: st, Now: clockNow})
	r2 := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: st, Now: clockNow})
	ctx := context.Background()
	p1, err := r1.Post(ctx, rec(t, reviewAsk(t, st, "ttl-1", "", "", "sess-ttl")))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(threadTTL + time.Minute) // a long (resumed) session, still asking
	p2, err := r2.Post(ctx, rec(t, reviewAsk(t, st, "ttl-2", "", "", "sess-ttl")))
	if err != nil {
		t.Fatal(err)
	}
	p3, err := r1.Post(ctx, rec(t, reviewAsk(t, st, "ttl-3", "", "", "sess-ttl")))
	if err != nil {
		t.Fatal(err)
	}
	if p2.Thread != p3.Thread {
		t.Fatalf("same session, same moment: replica 1 posts in thread %s (cached), replica 2 in %s (first thread %s)", p3.Thread, p2.Thread, p1.Thread)
	}
}

// lossyChat loses the response of the n-th chat.postMessage (it took effect).
type lossyChat struct {
	Chat
	n, calls int
}

func (c *lossyChat) PostMessage(ctx context.Context, m *ChatMessage) (string, string, error) {
	c.calls++
	ch, ts, err := c.Chat.PostMessage(ctx, m)
	if c.calls == c.n {
		return "", "", context.DeadlineExceeded
	}
	return ch, ts, err
}

// Delivery "both": the copy's post took effect but its answer was lost. The
// copy is looked up and recorded, so it is updated (and loses its buttons)
// like the channel message.
func TestBothLostCopyResponseFindsTheCopy(t *testing.T) {
	fake, api := reviewFake(t)
	st := testStore(t)
	s := NewSurface(api, SurfaceOptions{Channel: "C1", Principals: &Principals{API: api}, Delivery: waterfall.DeliverBoth,
		Chat: &lossyChat{Chat: apiChat{api}, n: 2}})
	ref, err := s.Post(context.Background(), rec(t, reviewAsk(t, st, "both-copy", "U0BOB", "", "")))
	if err != nil {
		t.Fatal(err)
	}
	if inDMs(fake) == 1 && len(ref.Copies) == 0 {
		t.Fatalf("a DM copy exists but the recorded message %+v does not know it: it is never updated", ref)
	}
}

// Delivery "both": someone deletes the channel message. Its update fails
// for good, and the DM copy is updated all the same, so it does not keep
// live buttons after the ask is answered.
func TestBothDeletedChannelMessageStillUpdatesTheCopy(t *testing.T) {
	fake, api, st, s := deliverySurface(t, waterfall.DeliverBoth)
	ctx := context.Background()
	a, ref := postRecorded(t, s, st, reviewAsk(t, st, "both-del", "U0BOB", "", ""))
	if len(ref.Copies) != 1 {
		t.Fatalf("Post = %+v; want a copy", ref)
	}
	if _, _, err := api.DeleteMessage("C1", ref.ID); err != nil {
		t.Fatal(err)
	}
	a, err := st.Settle(ctx, a.CallID, json.RawMessage(`{"answers":[{"selected":["Yes"]}]}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, rec(t, a))
	updatedCopy := false
	for _, c := range fake.Calls("chat.update") {
		if c.Params["channel"] == ref.Copies[0].Conversation {
			updatedCopy = true
		}
	}
	if !updatedCopy {
		t.Fatalf("Update = %v; the DM copy was never updated", err)
	}
}

// Delivery "dm": the escalation of a question in the principal's DMs goes
// to the channel (the group is not in that DM, and a mention there would
// notify nobody), saying whose DMs hold it; plain reminders stay in the
// DM's thread, where the principal is.
func TestEscalationOfADMQuestionGoesToTheChannel(t *testing.T) {
	fake, _, st, s := deliverySurface(t, waterfall.DeliverDM)
	ctx := context.Background()
	a, ref := postRecorded(t, s, st, reviewAsk(t, st, "dm-esc", "U0BOB", "", ""))
	if !strings.HasPrefix(ref.Conversation, "D") {
		t.Fatalf("Post = %+v; want the principal's DM", ref)
	}
	if err := s.Remind(ctx, rec(t, a), waterfall.Nudge{Step: 1, Steps: 2, Waited: 15 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := s.Remind(ctx, rec(t, a), waterfall.Nudge{Step: 2, Steps: 2, Waited: 30 * time.Minute, Escalate: []string{"S0ONCALL"}}); err != nil {
		t.Fatal(err)
	}
	var inDM, inChannel []slackfake.Message
	for _, m := range fake.Messages() {
		switch {
		case m.Channel == ref.Conversation && m.ThreadTS == ref.ID:
			inDM = append(inDM, m)
		case m.Channel == "C1":
			inChannel = append(inChannel, m)
		}
	}
	if len(inDM) != 1 || strings.Contains(inDM[0].Text, "subteam") || !strings.Contains(inDM[0].Text, "<@U0BOB>") {
		t.Fatalf("replies in the DM thread: %+v; want the reminder, mentioning the principal", inDM)
	}
	if len(inChannel) != 1 || inChannel[0].ThreadTS != "" || !strings.Contains(inChannel[0].Text, "<!subteam^S0ONCALL>") ||
		!strings.Contains(inChannel[0].Text, "asked of <@U0BOB> in a direct message") {
		t.Fatalf("channel messages: %+v; want the escalation, top level, naming the DM's person", inChannel)
	}
}

// postRecorded posts a's question and records its message, as the mirror
// does.
func postRecorded(t *testing.T, s *Surface, st store.Store, a *asktype.Ask) (*asktype.Ask, asktype.MessageRef) {
	t.Helper()
	ctx := context.Background()
	ref, err := s.Post(ctx, rec(t, a))
	if err != nil {
		t.Fatalf("Post = %+v, %v", ref, err)
	}
	if a, err = st.SetMessage(ctx, a.CallID, ref); err != nil {
		t.Fatal(err)
	}
	return a, ref
}

// deliverySurface is a surface over a fake Slack and a test store that
// delivers as mode, with bob as a known principal.
func deliverySurface(t *testing.T, mode string) (*slackfake.Server, *slack.Client, store.Store, *Surface) {
	t.Helper()
	fake, api := reviewFake(t)
	return fake, api, testStore(t), NewSurface(api, SurfaceOptions{Channel: "C1", Principals: &Principals{API: api}, Delivery: mode})
}

// A reminder Slack refuses because of the bot's credentials (a revoked or
// invalid token, until the operator fixes it) is not skipped for good like
// one whose message is gone: it is sent once the token works again.
func TestReminderRefusedForCredentialsIsRetried(t *testing.T) {
	fake, _, st, s := deliverySurface(t, waterfall.DeliverChannel)
	ctx := context.Background()
	a, ref := postRecorded(t, s, st, reviewAsk(t, st, "cred", "U0BOB", "", ""))
	sched := remind.Schedule{After: []time.Duration{15 * time.Minute}}
	if err := sched.Armer(st).Arm(ctx, rec(t, a)); err != nil {
		t.Fatal(err)
	}
	c := clock.NewFake(a.Created)
	k := remind.New(st, s.Reminders(), sched, remind.Options{Clock: c, Lease: time.Minute})
	replies := func() int {
		n := 0
		for _, m := range fake.Messages() {
			if m.ThreadTS == ref.ID {
				n++
			}
		}
		return n
	}
	for _, slackErr := range []string{"token_revoked", "invalid_auth"} {
		fake.FailNext("chat.postMessage", 1, slackErr, 0)
		c.Advance(16 * time.Minute)
		k.Sweep(ctx)
		if n := replies(); n != 0 {
			t.Fatalf("a reminder went out despite %s", slackErr)
		}
	}
	c.Advance(2 * time.Minute) // the lease of the failed attempt ran out; the token works again
	k.Sweep(ctx)
	if n := replies(); n != 1 {
		t.Fatalf("%d reminders in the thread once the token works; want 1", n)
	}
	// A refusal that will not pass (the channel is gone) is skipped, as before.
	if got := s.Reminders().Refusal(slack.SlackErrorResponse{Err: "channel_not_found"}); got != "channel_not_found" {
		t.Fatalf("Refusal(channel_not_found) = %q", got)
	}
}
