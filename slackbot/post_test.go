package slackbot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// cancelAfterPost posts for real, then cancels the asker's context, as when
// an agent stops waiting just as Slack shows the message (askslack hook
// getting SIGTERM right after the post).
type cancelAfterPost struct {
	API
	cancel context.CancelFunc
}

func (c cancelAfterPost) PostMessageContext(ctx context.Context, ch string, opts ...slack.MsgOption) (string, string, error) {
	a, b, err := c.API.PostMessageContext(context.WithoutCancel(ctx), ch, opts...)
	c.cancel()
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	return a, b, err
}

// A post whose asker went away in flight is still recorded, so withdrawing
// the ask replaces the message's buttons instead of leaving them live.
func TestPostOutlivesItsAsker(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-test"})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api := cancelAfterPost{API: slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL())), cancel: cancel}
	st := store.NewMemory(0, time.Now)
	host := waterfall.NewHost(st, nil, waterfall.HostOptions{})
	b := New(api, host, st, Options{Channel: "C1"})
	host.Observe(b)
	t.Cleanup(func() { b.Stop(context.Background()) })

	req := waterfall.Request{CallID: "c1", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: "q", Question: "Ship it?", Options: []waterfall.Option{{Label: "Yes"}, {Label: "No"}}}}}
	raw, _ := json.Marshal(req)
	if _, _, err := st.Create(context.Background(), &store.Ask{CallID: "c1", Request: raw, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	_ = b.post(ctx, "c1", "C1")
	if a, err := st.Get(context.Background(), "c1"); err != nil || a.Message.TS == "" {
		t.Fatalf("the posted message was not recorded: %+v %v", a, err)
	}
	if _, err := host.Abort(context.Background(), "c1"); err != nil {
		t.Fatal(err)
	}
	posted := fake.Messages()[0]
	if err := fake.WaitUntil(testCtx(t), func() bool {
		m, _ := fake.Message(posted.Channel, posted.TS)
		return m.Updated > 0 && !strings.Contains(string(m.Blocks), `"button"`)
	}); err != nil {
		m, _ := fake.Message(posted.Channel, posted.TS)
		t.Fatalf("the withdrawn question kept its buttons: %s", m.Blocks)
	}
}
