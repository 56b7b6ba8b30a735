package slackfake

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// signedReceiver is a test app endpoint that checks the signature as the
// bot must and hands the raw request to handle.
func signedReceiver(t *testing.T, handle func(r *http.Request, body []byte) (int, string)) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sv, err := slack.NewSecretsVerifier(r.Header, secret)
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		status, resp := handle(r, body)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, resp)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestSendEventHTTP(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	ctx := testCtx(t)
	got := make(chan slackevents.EventsAPIEvent, 4)
	ids := make(chan string, 4)
	s.SetEventsURL(signedReceiver(t, func(r *http.Request, body []byte) (int, string) {
		ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
		if err != nil {
			t.Errorf("ParseEvent: %v", err)
		}
		var env struct {
			EventID   string `json:"event_id"`
			EventTime int64  `json:"event_time"`
		}
		_ = json.Unmarshal(body, &env)
		got <- ev
		ids <- env.EventID
		return 200, ""
	}))
	ts := post(t, api, "C0Q", question())
	_, mention := s.Mention(alice, "C0Q", ts, "use plan B")
	rec, err := s.SendEvent(ctx, mention, "", Delivery{Transport: TransportHTTP})
	if err != nil || rec.Status != 200 || rec.EventID == "" {
		t.Fatalf("send: %+v %v", rec, err)
	}
	ev := <-got
	m, ok := ev.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if ev.Type != slackevents.CallbackEvent || ev.TeamID != "T0FAKE" || ev.APIAppID != "A0FAKEAPP" || !ok ||
		m.User != alice.ID || m.ThreadTimeStamp != ts || !strings.HasSuffix(m.Text, "use plan B") {
		t.Fatalf("event %+v inner %+v", ev, ev.InnerEvent.Data)
	}
	if id := <-ids; id != rec.EventID {
		t.Fatalf("event_id %q, receipt %q", id, rec.EventID)
	}
	// A redelivery carries the same id; a bad signature is refused.
	if again, _ := s.SendEvent(ctx, mention, rec.EventID, Delivery{Transport: TransportHTTP, RetryNum: 1}); again.EventID != rec.EventID {
		t.Fatal("redelivery changed the event id")
	}
	if bad, _ := s.SendEvent(ctx, s.HomeOpened(alice), "", Delivery{Transport: TransportHTTP, BadSignature: true}); bad.Status != 401 {
		t.Fatalf("bad signature answered %d", bad.Status)
	}
}

func TestSendCommandHTTP(t *testing.T) {
	t.Parallel()
	s, _ := setup(t, Options{SigningSecret: secret})
	ctx := testCtx(t)
	s.SetCommandsURL(signedReceiver(t, func(r *http.Request, body []byte) (int, string) {
		cmd, err := slack.SlashCommandParse(r)
		if err != nil || cmd.Command != "/askslack" || cmd.Text != "list" || cmd.UserID != alice.ID || cmd.ResponseURL == "" || cmd.TriggerID == "" {
			t.Errorf("command %+v %v", cmd, err)
		}
		// A later answer through response_url, as a slow command does.
		go func() {
			_ = slack.PostWebhookContext(context.Background(), cmd.ResponseURL, &slack.WebhookMessage{Text: "later", ResponseType: "ephemeral"})
		}()
		return 200, `{"response_type":"ephemeral","text":"now"}`
	}))
	if _, err := s.SendCommand(ctx, Command{User: alice, Channel: "C0Q", Command: "/askslack", Text: "list"}, Delivery{Transport: TransportHTTP}); err != nil {
		t.Fatal(err)
	}
	err := s.WaitUntil(ctx, func() bool {
		texts := ""
		for _, e := range s.Ephemerals() {
			if e.User == alice.ID {
				texts += e.Text + ";"
			}
		}
		return strings.Contains(texts, "now;") && strings.Contains(texts, "later;")
	})
	if err != nil {
		t.Fatalf("ephemerals %+v", s.Ephemerals())
	}
}

func TestEventsAndCommandsSocket(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{AppToken: appToken})
	ctx := testCtx(t)
	client := socketmode.New(slack.New(botToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(appToken)))
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- client.RunContext(runCtx) }()
	t.Cleanup(func() { stop(); <-stopped })
	if err := s.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	_ = api
	res := async(func() (Response, error) {
		r, err := s.SendEvent(ctx, s.HomeOpened(bob), "", Delivery{})
		return r.Response, err
	})
	evt := nextEvent(t, ctx, client, socketmode.EventTypeEventsAPI)
	ev, ok := evt.Data.(slackevents.EventsAPIEvent)
	if home, isHome := ev.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent); !ok || !isHome || home.User != bob.ID || home.Tab != "home" {
		t.Fatalf("event %+v", evt.Data)
	}
	client.Ack(*evt.Request)
	if r := <-res; r.err != nil || r.resp.Transport != TransportSocket {
		t.Fatalf("delivery %+v", r)
	}
	res = async(func() (Response, error) {
		return s.SendCommand(ctx, Command{User: bob, Channel: "C0Q", Command: "/askslack", Text: "help"}, Delivery{})
	})
	evt = nextEvent(t, ctx, client, socketmode.EventTypeSlashCommand)
	cmd, ok := evt.Data.(slack.SlashCommand)
	if !ok || cmd.Text != "help" || cmd.UserID != bob.ID || !evt.Request.AcceptsResponsePayload {
		t.Fatalf("command %+v", evt.Data)
	}
	client.Ack(*evt.Request, map[string]any{"response_type": "ephemeral", "text": "usage"})
	if r := <-res; r.err != nil {
		t.Fatal(r.err)
	}
	if e := s.Ephemerals(); len(e) != 1 || e[0].User != bob.ID || e[0].Text != "usage" {
		t.Fatalf("ephemerals %+v", e)
	}
}

func TestPublishPermalinkReaction(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	var bs []slack.Block
	for range 101 {
		bs = append(bs, slack.NewDividerBlock())
	}
	home := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: bs}}
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: alice.ID, View: home}); slackErr(err) != "invalid_arguments" {
		t.Fatalf("101 blocks: %v", err)
	}
	home.Blocks.BlockSet = bs[:100]
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: alice.ID, View: home}); err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Home(alice.ID); !ok || !strings.Contains(string(v.JSON), `"type":"home"`) {
		t.Fatalf("home %+v", v)
	}
	ts := post(t, api, "C0Q", question())
	link, err := api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: "C0Q", Ts: ts})
	if err != nil || link != "https://fake-workspace.slack.com/archives/C0Q/p"+strings.ReplaceAll(ts, ".", "") {
		t.Fatalf("permalink %q %v", link, err)
	}
	ref := slack.NewRefToMessage("C0Q", ts)
	if err := api.AddReactionContext(ctx, "white_check_mark", ref); err != nil {
		t.Fatal(err)
	}
	if err := api.AddReactionContext(ctx, "white_check_mark", ref); slackErr(err) != "already_reacted" {
		t.Fatalf("second reaction: %v", err)
	}
	if got := s.Reactions("C0Q", ts, "white_check_mark"); len(got) != 1 {
		t.Fatalf("reactions %v", got)
	}
}
