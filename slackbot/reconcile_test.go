package slackbot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

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
	if _, _, err := st.Create(ctx, &store.Ask{CallID: "c1", Request: raw, Created: time.Now()}); err != nil {
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
