package slackbot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

func startChatFake(t *testing.T) (*slackfake.Server, *JSONChat, apiChat) {
	t.Helper()
	t.Parallel()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-test", Channels: []string{"C1", "C2"}})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	return fake, NewJSONChat(http.DefaultClient, fake.APIURL(), "xoxb-test"),
		apiChat{slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))}
}

// A question message sent as JSON is the message slack-go's form encoding
// makes: same text, blocks (checked against Slack's limits by the fake),
// thread, broadcast and metadata, and an update replaces it the same way.
func TestJSONChatSendsWhatTheFormEncodingSends(t *testing.T) {
	fake, jc, ac := startChatFake(t)
	ctx := context.Background()
	msg := blocks.Render(waterfall.View{CallID: "c1", Phase: waterfall.PhaseOpen, Request: &waterfall.Request{
		CallID: "c1", Agent: waterfall.Agent{ID: "claude"},
		Questions: []waterfall.Question{{ID: "q", Question: "Ship <it> & tell <@U1>?", Options: []waterfall.Option{{Label: "Yes"}, {Label: "No"}}}},
	}})
	send := func(c Chat, thread string) slackfake.Message {
		m := chatMessage("C1", msg)
		m.Text = "<@U1> " + m.Text
		m.Metadata = questionMeta("c1")
		m.ThreadTS, m.ReplyBroadcast = thread, thread != ""
		ch, ts, err := c.PostMessage(ctx, m)
		if err != nil || ch != "C1" || ts == "" {
			t.Fatalf("%T.PostMessage = %q, %q, %v", c, ch, ts, err)
		}
		got, ok := fake.Message(ch, ts)
		if !ok {
			t.Fatalf("%T: the fake has no message %s", c, ts)
		}
		return got
	}
	parent := fake.AddMessage("C1", "U1", "a parent")
	for _, thread := range []string{"", parent.TS} {
		viaJSON, viaForm := send(jc, thread), send(ac, thread)
		if viaJSON.Text != viaForm.Text || !bytes.Equal(viaJSON.Blocks, viaForm.Blocks) || viaJSON.ThreadTS != viaForm.ThreadTS ||
			viaJSON.Broadcast != viaForm.Broadcast || !jsonEqual(viaJSON.Metadata, viaForm.Metadata) {
			t.Fatalf("thread %q: JSON body gave\n%+v\nthe form gave\n%+v", thread, viaJSON, viaForm)
		}
		if thread != "" && (!viaJSON.Broadcast || viaJSON.ThreadTS != thread) {
			t.Fatalf("a broadcast reply came out as %+v", viaJSON)
		}
	}

	answered := blocks.Render(waterfall.View{CallID: "c1", Phase: waterfall.PhaseExpired})
	posted := send(jc, "")
	up := chatMessage("C1", answered)
	up.TS = posted.TS
	if err := jc.UpdateMessage(ctx, up); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.Message("C1", posted.TS); got.Updated != 1 || bytes.Contains(got.Blocks, []byte(`"actions"`)) {
		t.Fatalf("after chat.update: %+v", got)
	}
	var calls []slackfake.Call
	calls = append(calls, fake.Calls("chat.postMessage")...)
	for _, c := range append(calls, fake.Calls("chat.update")...) {
		if c.Params["unfurl_links"] != "false" || c.Params["unfurl_media"] != "false" {
			t.Fatalf("%s unfurls: %v", c.Method, c.Params)
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && string(mustJSON(x)) == string(mustJSON(y))
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// Slack's refusals reach the surface as slack-go's error types, so
// retries, rate limits and refusals are read as before.
func TestJSONChatErrorsAreSlackGos(t *testing.T) {
	fake, jc, _ := startChatFake(t)
	ctx := context.Background()
	msg := chatMessage("C1", blocks.Message{Text: "hello"})

	fake.FailNext("chat.postMessage", 1, "ratelimited", 7)
	_, _, err := jc.PostMessage(ctx, msg)
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Fatalf("rate limited: %v (%T); want a RateLimitedError of 7s", err, err)
	}
	fake.FailNext("chat.postMessage", 1, "internal_error", 0)
	_, _, err = jc.PostMessage(ctx, msg)
	var sc slack.StatusCodeError
	if !errors.As(err, &sc) || sc.Code != http.StatusInternalServerError || Permanent(err) {
		t.Fatalf("a 500: %v (%T); want a StatusCodeError 500, retried", err, err)
	}
	_, _, err = jc.PostMessage(ctx, chatMessage("C404", blocks.Message{Text: "hello"}))
	if SlackError(err) != "channel_not_found" || !Permanent(err) {
		t.Fatalf("an unknown channel: %v (%T); want channel_not_found, permanent", err, err)
	}
	up := chatMessage("C1", blocks.Message{Text: "hello"})
	up.TS = "1.000"
	if err := jc.UpdateMessage(ctx, up); SlackError(err) != "message_not_found" {
		t.Fatalf("updating a missing message: %v", err)
	}
	bad := chatMessage("C1", blocks.Message{Text: "hello", Blocks: []slack.Block{slack.NewDividerBlock(), slack.NewActionBlock("a")}})
	if _, _, err := jc.PostMessage(ctx, bad); SlackError(err) != "invalid_blocks" {
		t.Fatalf("an actions block without elements: %v; want invalid_blocks", err)
	}
	wrong := NewJSONChat(http.DefaultClient, fake.APIURL(), "xoxb-wrong")
	if _, _, err := wrong.PostMessage(ctx, msg); SlackError(err) != "invalid_auth" {
		t.Fatalf("a wrong token: %v; want invalid_auth", err)
	}
}
