package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// eventSink is the app's events URL, collecting envelopes.
func eventSink(t *testing.T, s *Server) chan map[string]any {
	t.Helper()
	got := make(chan map[string]any, 8)
	s.SetEventsURL(signedReceiver(t, func(_ *http.Request, body []byte) (int, string) {
		var env map[string]any
		if err := json.Unmarshal(body, &env); err != nil {
			t.Errorf("event body: %v", err)
		}
		got <- env
		return 200, ""
	}))
	return got
}

func TestUninstall(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	solo := s.Install(Installation{TeamID: "T0SOLO"})
	one := s.Install(Installation{TeamID: "T0ONE"})
	_, ts, err := apiAs(s, solo.BotToken).PostMessageContext(ctx, "C0SOLO", slack.MsgOptionText("q", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("act", slack.NewButtonBlockElement("approve", "yes", pt("Approve")))))
	if err != nil {
		t.Fatal(err)
	}
	events := eventSink(t, s)
	receipts, err := s.UninstallContext(ctx, "T0SOLO", Delivery{Transport: TransportHTTP})
	if err != nil || len(receipts) != 2 || receipts[0].Status != 200 || receipts[1].Status != 200 {
		t.Fatalf("UninstallContext = %+v, %v", receipts, err)
	}
	for _, want := range []string{"tokens_revoked", "app_uninstalled"} {
		env := <-events
		ev := env["event"].(map[string]any)
		auth := env["authorizations"].([]any)[0].(map[string]any)
		if ev["type"] != want || env["type"] != "event_callback" || env["team_id"] != "T0SOLO" || env["api_app_id"] != "A0FAKEAPP" ||
			auth["team_id"] != "T0SOLO" || auth["user_id"] != solo.BotUserID || auth["is_enterprise_install"] != false {
			t.Fatalf("%s envelope: %v", want, env)
		}
		if want == "tokens_revoked" {
			tokens := ev["tokens"].(map[string]any)
			if bots := tokens["bot"].([]any); len(bots) != 1 || bots[0] != solo.BotUserID || len(tokens["oauth"].([]any)) != 0 {
				t.Fatalf("tokens_revoked.tokens = %v", tokens)
			}
		}
	}
	if _, _, err := apiAs(s, solo.BotToken).PostMessageContext(ctx, "C0SOLO", slack.MsgOptionText("hi", false)); slackErr(err) != "token_revoked" {
		t.Fatalf("a call after the uninstall: %v, want token_revoked", err)
	}
	if _, err := s.ClickButton(ctx, sam, "C0SOLO", ts, "Approve", Delivery{}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("a click in the uninstalled workspace: %v, want ErrNotInstalled", err)
	}
	if got := s.Installations(); len(got) != 1 || got[0].TeamID != "T0ONE" {
		t.Fatalf("Installations after the uninstall: %+v", got)
	}
	// The other workspace is untouched.
	if _, _, err := apiAs(s, one.BotToken).PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatal(err)
	}
}

func TestUninstallOrgWide(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	org := s.Install(Installation{EnterpriseID: "E0ACME", OrgWide: true})
	s.AddToWorkspace("E0ACME", "T0ONE")
	events := eventSink(t, s)
	if _, err := s.UninstallContext(ctx, "E0ACME", Delivery{Transport: TransportHTTP}); err != nil {
		t.Fatal(err)
	}
	env := <-events
	auth := env["authorizations"].([]any)[0].(map[string]any)
	if env["team_id"] != nil || env["enterprise_id"] != "E0ACME" || auth["enterprise_id"] != "E0ACME" || auth["is_enterprise_install"] != true || auth["user_id"] != org.BotUserID {
		t.Fatalf("org-wide tokens_revoked envelope: %v", env)
	}
	<-events
	if _, _, err := apiAs(s, org.BotToken).PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("hi", false)); slackErr(err) != "token_revoked" {
		t.Fatalf("after the uninstall: %v", err)
	}
}

func TestRevokeTokensKeepsTheInstall(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	solo := s.Install(Installation{TeamID: "T0SOLO"})
	events := eventSink(t, s)
	if _, err := s.RevokeTokensContext(ctx, "T0SOLO", Delivery{Transport: TransportHTTP}); err != nil {
		t.Fatal(err)
	}
	if env := <-events; env["event"].(map[string]any)["type"] != "tokens_revoked" {
		t.Fatalf("RevokeTokens sent %v", env)
	}
	if _, _, err := apiAs(s, solo.BotToken).PostMessageContext(ctx, "C0SOLO", slack.MsgOptionText("hi", false)); slackErr(err) != "token_revoked" {
		t.Fatalf("a revoked token: %v", err)
	}
	// Still installed: a mention there is still delivered, with no second event before it.
	_, ev := s.Mention(sam, "C0SOLO", "", "hi")
	if _, err := s.SendEvent(ctx, ev, "", Delivery{Transport: TransportHTTP}); err != nil {
		t.Fatal(err)
	}
	if env := <-events; env["event"].(map[string]any)["type"] != "app_mention" {
		t.Fatalf("after RevokeTokens the next event was %v", env)
	}
}

func TestUninstallSingleWorkspace(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	ctx := testCtx(t)
	events := eventSink(t, s)
	s.Uninstall("T0FAKE")
	for _, want := range []string{"tokens_revoked", "app_uninstalled"} {
		if env := <-events; env["event"].(map[string]any)["type"] != want || env["team_id"] != "T0FAKE" {
			t.Fatalf("want %s, got %v", want, env)
		}
	}
	if _, err := api.AuthTestContext(ctx); slackErr(err) != "token_revoked" {
		t.Fatalf("auth.test after the uninstall: %v", err)
	}
}

func TestControlInstallationsAndUninstall(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	s.Install(Installation{TeamID: "T0SOLO"})
	s.Install(Installation{EnterpriseID: "E0ACME", OrgWide: true})
	events := eventSink(t, s)
	r, err := http.Get(s.URL() + "/_fake/installations")
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	_ = json.NewDecoder(r.Body).Decode(&list)
	r.Body.Close()
	if len(list) != 2 || list[0]["team_id"] != "T0SOLO" || list[1]["enterprise_id"] != "E0ACME" || list[1]["is_enterprise_install"] != true {
		t.Fatalf("GET /_fake/installations = %v", list)
	}
	r, err = http.Post(s.URL()+"/_fake/uninstall", "application/json", strings.NewReader(`{"team":"T0SOLO","transport":"http"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("POST /_fake/uninstall: %d", r.StatusCode)
	}
	if a, b := <-events, <-events; a["event"].(map[string]any)["type"] != "tokens_revoked" || b["event"].(map[string]any)["type"] != "app_uninstalled" {
		t.Fatalf("events %v, %v", a, b)
	}
	if got := s.Installations(); len(got) != 1 || !got[0].OrgWide {
		t.Fatalf("Installations = %+v", got)
	}
}

func TestUninstallOverSocketMode(t *testing.T) {
	t.Parallel()
	o := multiOptions()
	o.AppToken = appToken
	s := startMulti(t, o)
	ctx := testCtx(t)
	solo := s.Install(Installation{TeamID: "T0SOLO"})
	client := socketmode.New(slack.New(solo.BotToken, slack.OptionAPIURL(s.APIURL()), slack.OptionAppLevelToken(appToken)))
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- client.RunContext(runCtx) }()
	t.Cleanup(func() { stop(); <-stopped })
	if err := s.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.UninstallContext(ctx, "T0SOLO", Delivery{}); done <- err }()
	for _, want := range []string{"tokens_revoked", "app_uninstalled"} {
		evt := nextEvent(t, ctx, client, socketmode.EventTypeEventsAPI)
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok || ev.TeamID != "T0SOLO" || ev.InnerEvent.Type != want {
			t.Fatalf("want %s, got %+v", want, evt.Data)
		}
		client.Ack(*evt.Request)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
