package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

const botToken = "xoxb-test-token"

var (
	alice = User{ID: "U0ALICE", Name: "alice", Email: "alice@example.com"}
	bob   = User{ID: "U0BOB", Name: "bob", Email: "bob@example.com"}
)

// clock is a settable time source for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func setup(t *testing.T, opts Options) (*Server, *slack.Client) {
	t.Helper()
	if opts.BotToken == "" {
		opts.BotToken = botToken
	}
	if opts.Users == nil {
		opts.Users = []User{alice, bob}
	}
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, slack.New(opts.BotToken, slack.OptionAPIURL(s.APIURL()))
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func pt(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}
func md(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

// question is a message with two answer buttons and an "Other…" button.
func question() slack.MsgOption {
	return slack.MsgOptionBlocks(
		slack.NewSectionBlock(md("*Which approach?*"), nil, nil),
		slack.NewActionBlock("q1",
			slack.NewButtonBlockElement("answer", "a", pt("Approach A")).WithStyle(slack.StylePrimary),
			slack.NewButtonBlockElement("answer_b", "b", pt("Approach B")),
			slack.NewButtonBlockElement("other", "other", pt("Other…")),
		),
	)
}

func slackErr(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

func TestPostUpdateDelete(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)

	ch, ts, err := api.PostMessageContext(ctx, "C0QUESTIONS", slack.MsgOptionText("Which approach?", false), question())
	if err != nil {
		t.Fatal(err)
	}
	if ch != "C0QUESTIONS" {
		t.Errorf("channel %q", ch)
	}
	if !tsForm.MatchString(ts) {
		t.Errorf("ts %q is not in Slack's form", ts)
	}
	_, ts2, err := api.PostMessageContext(ctx, "C0QUESTIONS", slack.MsgOptionText("second", false))
	if err != nil {
		t.Fatal(err)
	}
	if !(ts2 > ts) {
		t.Errorf("ts not increasing: %s then %s", ts, ts2)
	}

	m, ok := s.Message(ch, ts)
	if !ok || m.Text != "Which approach?" || m.User != "U0FAKEBOT" {
		t.Fatalf("stored message %+v", m)
	}
	// Slack fills in block_ids the bot left out.
	var blocks []struct {
		BlockID string `json:"block_id"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil || len(blocks) != 2 || blocks[0].BlockID == "" || blocks[1].BlockID != "q1" {
		t.Errorf("blocks %s (%v)", m.Blocks, err)
	}

	calls := s.Calls("chat.postMessage")
	if len(calls) != 2 || calls[0].Params["channel"] != "C0QUESTIONS" || !strings.Contains(calls[0].Params["blocks"], "Approach A") || !calls[0].OK() {
		t.Errorf("recorded calls %+v", calls)
	}
	if _, tokenKept := calls[0].Params["token"]; tokenKept {
		t.Error("token recorded in Params")
	}

	// Update with text and blocks.
	_, _, _, err = api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText("Answered: A", false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(md("Answered *A* by <@U0ALICE>"), nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	m, _ = s.Message(ch, ts)
	if m.Updated != 1 || m.Text != "Answered: A" || !strings.Contains(string(m.Blocks), "<@U0ALICE>") {
		t.Errorf("after update %+v blocks %s", m, m.Blocks)
	}
	// Text without blocks removes the blocks (chat.update docs).
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText("plain", false)); err != nil {
		t.Fatal(err)
	}
	if m, _ = s.Message(ch, ts); len(m.Blocks) != 0 || m.Updated != 2 {
		t.Errorf("text-only update kept blocks: %+v", m)
	}

	if _, _, _, err := api.UpdateMessageContext(ctx, ch, "1.000001", slack.MsgOptionText("x", false)); slackErr(err) != "message_not_found" {
		t.Errorf("update of unknown ts: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "U0ALICE", ts, slack.MsgOptionText("x", false)); slackErr(err) != "channel_not_found" {
		t.Errorf("update with a user id as channel: %v", err)
	}
	human := s.AddMessage(ch, "U0ALICE", "hello")
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, human.TS, slack.MsgOptionText("x", false)); slackErr(err) != "cant_update_message" {
		t.Errorf("update of a human message: %v", err)
	}
	if _, _, err := api.DeleteMessageContext(ctx, ch, human.TS); slackErr(err) != "cant_delete_message" {
		t.Errorf("delete of a human message: %v", err)
	}

	if _, _, err := api.DeleteMessageContext(ctx, ch, ts); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Message(ch, ts); ok {
		t.Error("message still there after chat.delete")
	}
	if len(s.Messages()) != 2 {
		t.Errorf("messages %+v", s.Messages())
	}
}

var tsForm = regexp.MustCompile(`^[0-9]{10}\.[0-9]{6}$`)

func TestPostMessageErrors(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{Channels: []string{"C0QUESTIONS"}})
	ctx := testCtx(t)

	if _, _, err := api.PostMessageContext(ctx, "C0NOPE", slack.MsgOptionText("x", false)); slackErr(err) != "channel_not_found" {
		t.Errorf("unknown channel: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C0QUESTIONS"); slackErr(err) != "no_text" {
		t.Errorf("no text: %v", err)
	}
	long := slack.NewSectionBlock(md(strings.Repeat("x", 3001)), nil, nil)
	_, _, err := api.PostMessageContext(ctx, "C0QUESTIONS", slack.MsgOptionText("x", false), slack.MsgOptionBlocks(long))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_blocks" {
		t.Fatalf("too long section: %v", err)
	}
	want := "[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]"
	if len(se.ResponseMetadata.Messages) != 1 || se.ResponseMetadata.Messages[0] != want {
		t.Errorf("messages %q, want %q", se.ResponseMetadata.Messages, want)
	}
	if c := s.Calls("chat.postMessage"); !strings.Contains(string(c[len(c)-1].Response), `"errors":["must be less than 3001 characters [json-pointer:/blocks/0/text/text]"]`) {
		t.Errorf("response %s", c[len(c)-1].Response)
	}
	if len(s.Messages()) != 0 {
		t.Error("rejected message stored")
	}

	// A user id posts to the bot's DM with that user, as on Slack.
	ch, _, err := api.PostMessageContext(ctx, "U0ALICE", slack.MsgOptionText("hi", false))
	if err != nil || !strings.HasPrefix(ch, "D") {
		t.Fatalf("post to user id: %q %v", ch, err)
	}
	dm, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U0ALICE"}})
	if err != nil || dm.ID != ch {
		t.Errorf("conversations.open %v %v, want %s", dm, err, ch)
	}
	if _, _, err := api.PostMessageContext(ctx, "U0NOBODY", slack.MsgOptionText("hi", false)); slackErr(err) != "channel_not_found" {
		t.Errorf("post to unknown user: %v", err)
	}

	// A reply to a missing parent is posted top-level.
	_, ts, err := api.PostMessageContext(ctx, ch, slack.MsgOptionText("reply", false), slack.MsgOptionTS("1.000001"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Message(ch, ts); m.ThreadTS != "" {
		t.Errorf("thread_ts %q for a missing parent", m.ThreadTS)
	}
	_, reply, err := api.PostMessageContext(ctx, ch, slack.MsgOptionText("reply", false), slack.MsgOptionTS(ts))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Message(ch, reply); m.ThreadTS != ts {
		t.Errorf("thread_ts %q, want %q", m.ThreadTS, ts)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{AppToken: "xapp-1-test"})
	ctx := testCtx(t)

	resp, err := api.AuthTestContext(ctx)
	if err != nil || resp.UserID != "U0FAKEBOT" || resp.TeamID != "T0FAKE" || resp.BotID != "B0FAKEBOT" {
		t.Errorf("auth.test %+v %v", resp, err)
	}
	wrong := slack.New("xoxb-wrong", slack.OptionAPIURL(s.APIURL()))
	if _, err := wrong.AuthTestContext(ctx); slackErr(err) != "invalid_auth" {
		t.Errorf("wrong token: %v", err)
	}
	app := slack.New("xapp-1-test", slack.OptionAPIURL(s.APIURL()))
	if _, _, err := app.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); slackErr(err) != "not_allowed_token_type" {
		t.Errorf("app token on chat.postMessage: %v", err)
	}
	if _, _, err := api.StartSocketModeContext(ctx); slackErr(err) != "not_authed" {
		t.Errorf("no app token on apps.connections.open: %v", err)
	}
	withBot := slack.New(botToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(botToken))
	if _, _, err := withBot.StartSocketModeContext(ctx); slackErr(err) != "not_allowed_token_type" {
		t.Errorf("bot token on apps.connections.open: %v", err)
	}
	_, wsURL, err := slack.New(botToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken("xapp-1-test")).StartSocketModeContext(ctx)
	if err != nil || !strings.HasPrefix(wsURL, "ws://127.0.0.1:") {
		t.Errorf("apps.connections.open: %q %v", wsURL, err)
	}

	// Unknown methods, and the form token field.
	r, err := http.PostForm(s.APIURL()+"chat.nope", url.Values{"token": {botToken}})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		OK    bool
		Error string
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	r.Body.Close()
	if body.OK || body.Error != "unknown_method" {
		t.Errorf("unknown method: %+v", body)
	}
	r, err = http.PostForm(s.APIURL()+"auth.test", url.Values{"token": {botToken}})
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	r.Body.Close()
	if !body.OK {
		t.Errorf("form token: %+v", body)
	}
	r, err = http.PostForm(s.APIURL()+"auth.test", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	r.Body.Close()
	if body.Error != "not_authed" {
		t.Errorf("no token: %+v", body)
	}
}

func TestUsersAndGroups(t *testing.T) {
	t.Parallel()
	_, api := setup(t, Options{UserGroups: map[string][]string{"S0REVIEWERS": {"U0ALICE", "U0BOB"}}})
	ctx := testCtx(t)

	u, err := api.GetUserInfoContext(ctx, "U0ALICE")
	if err != nil || u.Name != "alice" || u.Profile.Email != "alice@example.com" || u.TeamID != "T0FAKE" {
		t.Errorf("users.info %+v %v", u, err)
	}
	if _, err := api.GetUserInfoContext(ctx, "U0NOBODY"); slackErr(err) != "user_not_found" {
		t.Errorf("unknown user: %v", err)
	}
	u, err = api.GetUserByEmailContext(ctx, "bob@example.com")
	if err != nil || u.ID != "U0BOB" {
		t.Errorf("lookupByEmail %+v %v", u, err)
	}
	if _, err := api.GetUserByEmailContext(ctx, "nobody@example.com"); slackErr(err) != "users_not_found" {
		t.Errorf("unknown email: %v", err)
	}
	members, err := api.GetUserGroupMembersContext(ctx, "S0REVIEWERS")
	if err != nil || strings.Join(members, ",") != "U0ALICE,U0BOB" {
		t.Errorf("usergroups.users.list %v %v", members, err)
	}
	if _, err := api.GetUserGroupMembersContext(ctx, "S0NOPE"); slackErr(err) != "no_such_subteam" {
		t.Errorf("unknown group: %v", err)
	}
	ch, _, already, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U0BOB"}})
	if err != nil || !strings.HasPrefix(ch.ID, "D") || already {
		t.Errorf("conversations.open %+v %v %v", ch, already, err)
	}
	ch2, _, already, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U0BOB"}})
	if err != nil || ch2.ID != ch.ID || !already {
		t.Errorf("second conversations.open %+v %v %v", ch2, already, err)
	}
}

func TestEphemeral(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	ts, err := api.PostEphemeralContext(ctx, "C0Q", "U0BOB", slack.MsgOptionText("Already answered by @alice", false))
	if err != nil || ts == "" {
		t.Fatalf("postEphemeral %q %v", ts, err)
	}
	e := s.Ephemerals()
	if len(e) != 1 || e[0].User != "U0BOB" || e[0].Channel != "C0Q" || e[0].TS != ts || e[0].Text != "Already answered by @alice" {
		t.Errorf("ephemerals %+v", e)
	}
	if _, err := api.PostEphemeralContext(ctx, "C0Q", "U0NOBODY", slack.MsgOptionText("x", false)); slackErr(err) != "user_not_in_channel" {
		t.Errorf("unknown user: %v", err)
	}
}

func modalRequest(title string) slack.ModalViewRequest {
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           pt(title),
		Submit:          pt("Send"),
		Close:           pt("Cancel"),
		CallbackID:      "other_answer",
		PrivateMetadata: `{"q":"q1"}`,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock("answer", pt("Your answer"), nil, slack.NewPlainTextInputBlockElement(pt("Type…"), "text")),
		}},
	}
}

func TestViewsTriggers(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1700000000, 0)}
	s, api := setup(t, Options{Now: clk.Now})
	ctx := testCtx(t)

	trig := s.IssueTrigger("U0ALICE")
	v, err := api.OpenViewContext(ctx, trig, modalRequest("Other answer"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.ID, "V") || v.Hash == "" || v.CallbackID != "other_answer" || v.PrivateMetadata != `{"q":"q1"}` || v.RootViewID != v.ID {
		t.Errorf("view %+v", v.View)
	}
	fv, ok := s.View(v.ID)
	if !ok || fv.UserID != "U0ALICE" || fv.TriggerID != trig || fv.Closed {
		t.Errorf("stored view %+v", fv)
	}
	if _, err := api.OpenViewContext(ctx, trig, modalRequest("Again")); slackErr(err) != "exchanged_trigger_id" {
		t.Errorf("reused trigger: %v", err)
	}
	if _, err := api.OpenViewContext(ctx, "123.456.abc", modalRequest("X")); slackErr(err) != "invalid_trigger_id" {
		t.Errorf("unknown trigger: %v", err)
	}
	late := s.IssueTrigger("U0ALICE")
	clk.Advance(3*time.Second + time.Millisecond)
	if _, err := api.OpenViewContext(ctx, late, modalRequest("Late")); slackErr(err) != "expired_trigger_id" {
		t.Errorf("expired trigger: %v", err)
	}
	inTime := s.IssueTrigger("U0ALICE")
	clk.Advance(3 * time.Second)
	top, err := api.OpenViewContext(ctx, inTime, modalRequest("In time"))
	if err != nil {
		t.Fatalf("trigger at exactly 3 s: %v", err)
	}

	// Invalid view: Slack's views.* answer invalid_arguments with pointers under /view.
	_, err = api.OpenViewContext(ctx, s.IssueTrigger("U0ALICE"), modalRequest("A title that is far too long"))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_arguments" || len(se.ResponseMetadata.Messages) != 1 ||
		se.ResponseMetadata.Messages[0] != "[ERROR] must be less than 25 characters [json-pointer:/view/title/text]" {
		t.Errorf("long title: %v %+v", err, se.ResponseMetadata)
	}

	// views.update with the hash, then with a stale hash.
	req := modalRequest("Updated")
	u, err := api.UpdateViewContext(ctx, req, "", v.Hash, v.ID)
	if err != nil || u.ID != v.ID || u.Hash == v.Hash || u.Title.Text != "Updated" {
		t.Fatalf("views.update %+v %v", u, err)
	}
	if _, err := api.UpdateViewContext(ctx, req, "", v.Hash, v.ID); slackErr(err) != "hash_conflict" {
		t.Errorf("stale hash: %v", err)
	}
	if _, err := api.UpdateViewContext(ctx, req, "", "", "V0NOPE"); slackErr(err) != "not_found" {
		t.Errorf("unknown view: %v", err)
	}
	if fv, _ = s.View(v.ID); fv.Updated != 1 || fv.Hash != u.Hash {
		t.Errorf("stored after update %+v", fv)
	}

	// views.push (with a trigger from outside a modal: onto the user's newest
	// open view): up to 3 views in a stack.
	p1, err := api.PushViewContext(ctx, s.IssueTrigger("U0ALICE"), modalRequest("Second"))
	if err != nil || p1.PreviousViewID != top.ID || p1.RootViewID != top.ID {
		t.Fatalf("push %+v %v", p1, err)
	}
	if _, err := api.PushViewContext(ctx, s.IssueTrigger("U0ALICE"), modalRequest("Third")); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PushViewContext(ctx, s.IssueTrigger("U0ALICE"), modalRequest("Fourth")); slackErr(err) != "push_limit_reached" {
		t.Errorf("fourth push: %v", err)
	}
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)

	s.FailNext("chat.postMessage", 1, "ratelimited", 7)
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Fatalf("want RateLimitedError 7s, got %v", err)
	}
	s.FailNext("chat.postMessage", 1, "internal_error", 0)
	_, _, err = api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	var sc slack.StatusCodeError
	if !errors.As(err, &sc) || sc.Code != 500 {
		t.Fatalf("want StatusCodeError 500, got %v", err)
	}
	s.FailNext("chat.update", 2, "channel_not_found", 0)
	for range 2 {
		if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.1", slack.MsgOptionText("x", false)); slackErr(err) != "channel_not_found" {
			t.Fatalf("injected error: %v", err)
		}
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.1", slack.MsgOptionText("x", false)); slackErr(err) != "message_not_found" {
		t.Errorf("third update, no more injected failures: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Errorf("post after failures: %v", err)
	}
	calls := s.Calls("chat.postMessage")
	if len(calls) != 3 || calls[0].Status != 429 || calls[0].Error() != "ratelimited" || calls[1].Status != 500 || !calls[2].OK() {
		t.Errorf("recorded %+v", calls)
	}
}

func TestWaitFor(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)

	got := make(chan Call, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := s.WaitFor(ctx, "chat.update", func(c Call) bool { return c.Params["text"] == "second" })
		errc <- err
		got <- c
	}()
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("first", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slack.MsgOptionText(text, false)); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if c := <-got; c.Params["ts"] != ts || c.Params["text"] != "second" {
		t.Errorf("WaitFor returned %+v", c)
	}
	// Already recorded calls count.
	if _, err := s.WaitFor(ctx, "chat.postMessage", nil); err != nil {
		t.Error(err)
	}
	m, err := s.WaitMessage(ctx, func(m Message) bool { return m.Updated == 2 })
	if err != nil || m.Text != "second" {
		t.Errorf("WaitMessage %+v %v", m, err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.WaitFor(short, "views.open", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled WaitFor: %v", err)
	}
}

func TestCloseTwice(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	s.Close() // before Start
	s = New(Options{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Error("second Start succeeded")
	}
	s.Close()
	s.Close()
}

// DropNext: the post takes effect, the client gets no answer; the message
// is found again through conversations.history by its metadata.
func TestDropNextAndHistoryByMetadata(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	s.DropNext("chat.postMessage", 1)
	meta := slack.MsgOptionMetadata(slack.SlackMetadata{EventType: "askslack_question", EventPayload: map[string]any{"callId": "c1"}})
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false), meta); err == nil {
		t.Fatal("a dropped response looked like success")
	}
	if n := len(s.Messages()); n != 1 {
		t.Fatalf("%d messages stored; the dropped call must still take effect", n)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("other", false)); err != nil {
		t.Fatal(err)
	}
	res, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C1", IncludeAllMetadata: true})
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("history: %+v %v", res, err)
	}
	if res.Messages[0].Text != "other" || res.Messages[1].Metadata.EventPayload["callId"] != "c1" {
		t.Fatalf("history newest first with metadata: %+v", res.Messages)
	}
	res, _ = api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C1"})
	if res.Messages[1].Metadata.EventType != "" {
		t.Fatal("metadata returned without include_all_metadata")
	}
	res, _ = api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C1", Oldest: res.Messages[1].Timestamp})
	if len(res.Messages) != 1 {
		t.Fatalf("oldest is exclusive: %d messages", len(res.Messages))
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false),
		slack.MsgOptionMetadata(slack.SlackMetadata{EventType: "e"})); err == nil || !strings.Contains(err.Error(), "invalid_metadata") {
		t.Fatalf("metadata without a payload: %v", err)
	}
}

// DelayNext: the effect is visible before the response arrives.
func TestDelayNextTakesEffectFirst(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	s.DelayNext("chat.postMessage", 1, 300*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("slow", false))
		done <- err
	}()
	if _, err := s.WaitMessage(ctx, func(m Message) bool { return m.Text == "slow" }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the response came with the effect, not after the delay: %v", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Chaos with FailRate 1 fails every call without effect.
func TestChaosFailsWithoutEffect(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	s.SetChaos(Chaos{Methods: []string{"chat.postMessage"}, FailRate: 1, Seed: 1})
	if _, _, err := api.PostMessageContext(testCtx(t), "C1", slack.MsgOptionText("x", false)); err == nil {
		t.Fatal("chaos did not fail the call")
	}
	if len(s.Messages()) != 0 {
		t.Fatal("a failed call took effect")
	}
	s.SetChaos(Chaos{})
	if _, _, err := api.PostMessageContext(testCtx(t), "C1", slack.MsgOptionText("x", false)); err != nil {
		t.Fatal(err)
	}
}

// conversations.history pages through next_cursor, newest first.
func TestHistoryPages(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	for i := range 5 {
		if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText(fmt.Sprint(i), false)); err != nil {
			t.Fatal(err)
		}
	}
	_ = s
	var got []string
	p := &slack.GetConversationHistoryParameters{ChannelID: "C1", Limit: 2}
	for range 5 {
		res, err := api.GetConversationHistoryContext(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Messages {
			got = append(got, m.Text)
		}
		if !res.HasMore {
			break
		}
		p.Cursor = res.ResponseMetaData.NextCursor
	}
	if strings.Join(got, "") != "43210" {
		t.Fatalf("pages gave %v, want every message once, newest first", got)
	}
}

// FailAfterNext, ReleaseFailed and Chaos.FailAfterRate: the call takes
// effect (a message posted, one updated) and the client is answered an
// error all the same — HTTP 500 internal_error, or 200 with
// {"ok":false,"error":…} — as Slack's internal_error may.
func TestFailAfterTheEffect(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	var sc slack.StatusCodeError
	s.FailAfterNext("chat.postMessage", 1, "internal_error", 0)
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("one", false)); !errors.As(err, &sc) || sc.Code != http.StatusInternalServerError {
		t.Fatalf("post = %v; want HTTP 500", err)
	}
	msgs := s.Messages()
	if len(msgs) != 1 || msgs[0].Text != "one" {
		t.Fatalf("messages %+v; the failed call must still post", msgs)
	}
	if c := s.Calls("chat.postMessage"); len(c) != 1 || !c[0].OK() {
		t.Fatalf("calls %+v; the record keeps the effect", c)
	}

	s.FailAfterNext("chat.update", 1, "internal_error", http.StatusOK)
	_, _, _, err := api.UpdateMessageContext(ctx, "C1", msgs[0].TS, slack.MsgOptionText("two", false))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "internal_error" {
		t.Fatalf("update = %v; want ok:false internal_error", err)
	}
	if m, _ := s.Message("C1", msgs[0].TS); m.Text != "two" || m.Updated != 1 {
		t.Fatalf("message %+v; the failed update must still apply", m)
	}

	// A held reply released as an error: the effect is seen before it.
	h := s.HoldReplyNext("chat.postMessage")
	done := make(chan error, 1)
	go func() {
		_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("held", false))
		done <- err
	}()
	<-h.Arrived()
	if _, err := s.WaitMessage(ctx, func(m Message) bool { return m.Text == "held" }); err != nil {
		t.Fatal(err)
	}
	h.ReleaseFailed("fatal_error", 0)
	if err := <-done; !errors.As(err, &se) || se.Err != "fatal_error" {
		t.Fatalf("held post = %v; want ok:false fatal_error", err)
	}

	s.SetChaos(Chaos{Methods: []string{"chat.postMessage"}, FailAfterRate: 1, Seed: 1})
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("chaos", false)); !errors.As(err, &sc) || sc.Code != http.StatusInternalServerError {
		t.Fatalf("chaos post = %v; want HTTP 500", err)
	}
	if n := len(s.Messages()); n != 3 {
		t.Fatalf("%d messages; chaos's failed post must still post", n)
	}
}
