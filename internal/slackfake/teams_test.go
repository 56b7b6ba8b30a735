package slackfake

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/slack-go/slack"
)

// An organization on Enterprise Grid (E0ACME: workspaces T0ONE and T0TWO),
// a workspace of its own (T0SOLO), and another organization's workspace
// (T0EXT) on the far side of a Slack Connect channel.
var (
	teamOne  = Team{ID: "T0ONE", Domain: "acme-one", Name: "Acme One", EnterpriseID: "E0ACME", EnterpriseName: "Acme"}
	teamTwo  = Team{ID: "T0TWO", Domain: "acme-two", Name: "Acme Two", EnterpriseID: "E0ACME", EnterpriseName: "Acme"}
	teamSolo = Team{ID: "T0SOLO", Domain: "solo", Name: "Solo"}
	teamExt  = Team{ID: "T0EXT", Domain: "partner", Name: "Partner Inc"}

	// gina is a Grid user: her home is T0TWO and she is a member of T0ONE too.
	gina = User{ID: "W0GINA", Name: "gina", TeamID: "T0TWO", Teams: []string{"T0ONE"}}
	// otto is only in T0TWO.
	otto = User{ID: "W0OTTO", Name: "otto", TeamID: "T0TWO"}
	// sam is in T0SOLO; xena is from the partner organization.
	sam  = User{ID: "U0SAM", Name: "sam", TeamID: "T0SOLO"}
	xena = User{ID: "U0XENA", Name: "xena", TeamID: "T0EXT"}
)

// multiOptions are the fake's workspaces and channels for these tests:
// C0ONE in T0ONE, C0TWO in T0TWO, C0SOLO in T0SOLO, and C0SHARED, owned by
// T0SOLO and shared with T0EXT (Slack Connect).
func multiOptions() Options {
	return Options{
		SigningSecret: secret,
		Teams:         []Team{teamSolo, teamOne, teamTwo, teamExt},
		Users:         []User{gina, otto, sam, xena},
		ChannelTeams:  map[string]string{"C0ONE": "T0ONE", "C0TWO": "T0TWO", "C0SOLO": "T0SOLO", "C0SHARED": "T0SOLO"},
		SharedChannels: map[string][]string{
			"C0SHARED": {"T0EXT"},
		},
	}
}

func startMulti(t *testing.T, opts Options) *Server {
	t.Helper()
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func apiAs(s *Server, tok string) *slack.Client {
	return slack.New(tok, slack.OptionAPIURL(s.APIURL()))
}

func TestSingleWorkspaceCallsNameTheDefaultTeam(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatal(err)
	}
	c := s.Calls("chat.postMessage")[0]
	if c.Team != "T0FAKE" || c.Token != botToken {
		t.Fatalf("Call.Team %q Token %q, want T0FAKE and the bot token", c.Team, c.Token)
	}
	if got := s.Installations(); len(got) != 1 || got[0].TeamID != "T0FAKE" || got[0].BotToken != botToken || got[0].BotUserID != "U0FAKEBOT" {
		t.Fatalf("Installations = %+v, want Options.BotToken as the default team's", got)
	}
}

func TestTokensResolveToTheirWorkspace(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	solo := s.Install(Installation{TeamID: "T0SOLO", Installer: "U0SAM"})
	one := s.Install(Installation{TeamID: "T0ONE"})
	if solo.BotToken == "" || one.BotToken == solo.BotToken || solo.BotUserID != "U0FAKEBOT" || one.BotUserID == solo.BotUserID {
		t.Fatalf("installs %+v and %+v: want distinct tokens and bots, the default team's with Options' bot", solo, one)
	}
	if one.EnterpriseID != "E0ACME" {
		t.Fatalf("T0ONE's install has EnterpriseID %q, want its organization's", one.EnterpriseID)
	}

	if _, _, err := apiAs(s, solo.BotToken).PostMessageContext(ctx, "C0SOLO", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatal(err)
	}
	_, _, err := apiAs(s, solo.BotToken).PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("wrong workspace", false))
	if slackErr(err) != "channel_not_found" {
		t.Fatalf("posting into another workspace's channel: %v, want channel_not_found", err)
	}
	if _, _, err := apiAs(s, one.BotToken).PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatal(err)
	}
	_, err = apiAs(s, one.BotToken).GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C0SOLO"})
	if slackErr(err) != "channel_not_found" {
		t.Fatalf("history of another workspace's channel: %v, want channel_not_found", err)
	}
	_, _, err = apiAs(s, "xoxb-nobody").PostMessageContext(ctx, "C0SOLO", slack.MsgOptionText("hi", false))
	if slackErr(err) != "invalid_auth" {
		t.Fatalf("unknown token: %v, want invalid_auth", err)
	}
	// A DM only with someone of the install's workspaces, or someone it
	// shares a channel with (xena, through C0SHARED).
	if _, _, _, err := apiAs(s, solo.BotToken).OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"W0OTTO"}}); slackErr(err) != "user_not_found" {
		t.Fatalf("DM with a user of another workspace: %v, want user_not_found", err)
	}
	if _, _, _, err := apiAs(s, solo.BotToken).OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U0XENA"}}); err != nil {
		t.Fatalf("DM with a Slack Connect member: %v", err)
	}

	var teams []string
	for _, c := range s.Calls("chat.postMessage") {
		teams = append(teams, c.Team+":"+c.Error())
	}
	if want := "T0SOLO: T0SOLO:channel_not_found T0ONE: :invalid_auth"; joinSp(teams) != want {
		t.Fatalf("Call.Team of the posts: %q, want %q", joinSp(teams), want)
	}

	at, err := apiAs(s, one.BotToken).AuthTestContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if at.TeamID != "T0ONE" || at.Team != "Acme One" || at.UserID != one.BotUserID || at.BotID != one.BotID || at.EnterpriseID != "E0ACME" || at.URL != "https://acme-one.slack.com/" {
		t.Fatalf("auth.test = %+v, want T0ONE's install in E0ACME", at)
	}
}

func joinSp(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestOrgWideInstallServesTheWorkspacesItWasAddedTo(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	org := s.Install(Installation{EnterpriseID: "E0ACME", OrgWide: true, Installer: "W0GINA"})
	api := apiAs(s, org.BotToken)
	// "an org-level install alone does nothing until each workspace is added"
	if _, _, err := api.PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("hi", false)); slackErr(err) != "channel_not_found" {
		t.Fatalf("before AddToWorkspace: %v, want channel_not_found", err)
	}
	s.AddToWorkspace("E0ACME", "T0ONE")
	_, ts, err := api.PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("hi", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("act", slack.NewButtonBlockElement("approve", "yes", pt("Approve")))))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C0TWO", slack.MsgOptionText("hi", false)); slackErr(err) != "channel_not_found" {
		t.Fatalf("a workspace the org admin did not add: %v, want channel_not_found", err)
	}
	if _, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"W0OTTO"}}); slackErr(err) != "user_not_found" {
		t.Fatalf("DM with a user only in a workspace not added: %v, want user_not_found", err)
	}
	if c := s.Calls("chat.postMessage")[1]; c.Team != "E0ACME" {
		t.Fatalf("Call.Team = %q, want the enterprise id for an org-wide install", c.Team)
	}
	at, err := api.AuthTestContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		IsEnterpriseInstall bool `json:"is_enterprise_install"`
	}
	_ = json.Unmarshal(s.Calls("auth.test")[0].Response, &raw)
	if at.TeamID != "E0ACME" || at.EnterpriseID != "E0ACME" || !raw.IsEnterpriseInstall || at.UserID != org.BotUserID {
		t.Fatalf("auth.test = %+v (is_enterprise_install %v), want the organization", at, raw.IsEnterpriseInstall)
	}

	// Gina (home T0TWO) clicks in T0ONE's channel: the payload names the
	// workspace of the channel, her home team, the enterprise, the org-wide install.
	got := receiver(t, s, nil)
	if _, err := s.ClickButton(ctx, gina, "C0ONE", ts, "Approve", Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	var p struct {
		Team struct{ ID, Domain string }
		User struct {
			ID     string
			TeamID string `json:"team_id"`
		}
		Enterprise struct{ ID, Name string }
		IsEnt      bool   `json:"is_enterprise_install"`
		Response   string `json:"response_url"`
		Message    struct {
			Team  string
			BotID string `json:"bot_id"`
		}
	}
	if err := json.Unmarshal([]byte(d.payload), &p); err != nil {
		t.Fatal(err)
	}
	if p.Team.ID != "T0ONE" || p.Team.Domain != "acme-one" || p.User.TeamID != "T0TWO" || p.Enterprise.ID != "E0ACME" || p.Enterprise.Name != "Acme" || !p.IsEnt {
		t.Fatalf("payload team %+v user %+v enterprise %+v is_enterprise_install %v", p.Team, p.User, p.Enterprise, p.IsEnt)
	}
	if p.Message.Team != "T0ONE" || p.Message.BotID != org.BotID {
		t.Fatalf("the message in the payload says team %q bot %q, want T0ONE and the org bot", p.Message.Team, p.Message.BotID)
	}
}

func TestSlackConnectPayloads(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	solo := s.Install(Installation{TeamID: "T0SOLO"})
	api := apiAs(s, solo.BotToken)
	_, ts, err := api.PostMessageContext(ctx, "C0SHARED", slack.MsgOptionText("q", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("act", slack.NewButtonBlockElement("approve", "yes", pt("Approve")))))
	if err != nil {
		t.Fatal(err)
	}
	got := receiver(t, s, nil)
	// Xena, from the partner organization, clicks: "team" is still the
	// installed workspace; her own is user.team_id.
	if _, err := s.ClickButton(ctx, xena, "C0SHARED", ts, "Approve", Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.ic.Team.ID != "T0SOLO" || d.ic.User.TeamID != "T0EXT" || d.ic.IsEnterpriseInstall {
		t.Fatalf("Slack Connect click: team %q user.team_id %q is_enterprise_install %v", d.ic.Team.ID, d.ic.User.TeamID, d.ic.IsEnterpriseInstall)
	}
	// A modal she submits names her workspace in "team", the installed one
	// in view.app_installed_team_id.
	if _, err := api.OpenViewContext(ctx, d.ic.TriggerID, modalRequest("Why")); err != nil {
		t.Fatal(err)
	}
	v := s.OpenViews("U0XENA")[0]
	if _, err := s.SubmitView(ctx, xena, v.ID, map[string][]string{"answer": {"because"}}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	d = <-got
	if d.ic.Team.ID != "T0EXT" || d.ic.View.AppInstalledTeamID != "T0SOLO" || d.ic.View.TeamID != "T0SOLO" {
		t.Fatalf("Slack Connect submission: team %q view.app_installed_team_id %q view.team_id %q", d.ic.Team.ID, d.ic.View.AppInstalledTeamID, d.ic.View.TeamID)
	}

	// Events in the channel say it is shared with another organization.
	events := make(chan map[string]any, 2)
	s.SetEventsURL(signedReceiver(t, func(_ *http.Request, body []byte) (int, string) {
		var env map[string]any
		_ = json.Unmarshal(body, &env)
		events <- env
		return 200, ""
	}))
	_, ev := s.Mention(xena, "C0SHARED", "", "hello")
	if _, err := s.SendEvent(ctx, ev, "", Delivery{Transport: TransportHTTP}); err != nil {
		t.Fatal(err)
	}
	env := <-events
	auth := env["authorizations"].([]any)[0].(map[string]any)
	inner := env["event"].(map[string]any)
	if env["team_id"] != "T0SOLO" || env["is_ext_shared_channel"] != true || auth["team_id"] != "T0SOLO" || auth["user_id"] != solo.BotUserID || inner["team"] != "T0EXT" {
		t.Fatalf("envelope team_id %v is_ext_shared_channel %v authorization %v event.team %v", env["team_id"], env["is_ext_shared_channel"], auth, inner["team"])
	}

	// Slash commands are not shared: from the partner's side, with no
	// install there, Slack sends nothing.
	s.SetCommandsURL(signedReceiver(t, func(*http.Request, []byte) (int, string) { return 200, "" }))
	if _, err := s.SendCommand(ctx, Command{User: xena, Channel: "C0SHARED", Command: "/ask"}, Delivery{Transport: TransportHTTP}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("a command from a workspace without the app: %v, want ErrNotInstalled", err)
	}
}

func TestSlashCommandNamesItsWorkspace(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	s.Install(Installation{EnterpriseID: "E0ACME", OrgWide: true})
	s.AddToWorkspace("E0ACME", "T0TWO")
	form := make(chan map[string][]string, 1)
	s.SetCommandsURL(signedReceiver(t, func(r *http.Request, _ []byte) (int, string) {
		_ = r.ParseForm()
		form <- r.PostForm
		return 200, ""
	}))
	if _, err := s.SendCommand(ctx, Command{User: otto, Channel: "C0TWO", Command: "/ask", Text: "hi"}, Delivery{Transport: TransportHTTP}); err != nil {
		t.Fatal(err)
	}
	f := <-form
	for k, want := range map[string]string{"team_id": "T0TWO", "team_domain": "acme-two", "enterprise_id": "E0ACME",
		"enterprise_name": "Acme", "is_enterprise_install": "true", "api_app_id": "A0FAKEAPP"} {
		if got := f[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want %q", k, got, want)
		}
	}
	// T0ONE was not added to the org-wide install: nothing is delivered.
	if _, err := s.SendCommand(ctx, Command{User: gina, Channel: "C0ONE", Command: "/ask"}, Delivery{Transport: TransportHTTP}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("a command in a workspace the app was not added to: %v, want ErrNotInstalled", err)
	}
}

func TestConversationInfoAndGridUsers(t *testing.T) {
	t.Parallel()
	o := multiOptions()
	o.SharedChannels["C0ONE"] = []string{"T0TWO"} // shared inside the organization only
	s := startMulti(t, o)
	ctx := testCtx(t)
	solo := apiAs(s, s.Install(Installation{TeamID: "T0SOLO"}).BotToken)
	one := apiAs(s, s.Install(Installation{TeamID: "T0ONE"}).BotToken)
	for _, tc := range []struct {
		api            *slack.Client
		ch             string
		shared, ext    bool
		host, context  string
		sharedTeamsLen int
	}{
		{solo, "C0SHARED", true, true, "T0SOLO", "T0SOLO", 2},
		{solo, "C0SOLO", false, false, "T0SOLO", "T0SOLO", 1},
		{one, "C0ONE", true, false, "T0ONE", "T0ONE", 2},
	} {
		c, err := tc.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: tc.ch})
		if err != nil {
			t.Fatal(err)
		}
		if c.IsShared != tc.shared || c.IsExtShared != tc.ext || c.IsOrgShared != (tc.shared && !tc.ext) ||
			c.ConversationHostID != tc.host || c.ContextTeamID != tc.context || len(c.SharedTeamIDs) != tc.sharedTeamsLen {
			t.Errorf("%s: %+v", tc.ch, c.GroupConversation.Conversation)
		}
	}
	if _, err := one.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: "C0SOLO"}); slackErr(err) != "channel_not_found" {
		t.Fatalf("another workspace's channel: %v", err)
	}
	u, err := one.GetUserInfoContext(ctx, "W0GINA")
	if err != nil {
		t.Fatal(err)
	}
	if u.TeamID != "T0TWO" || u.Enterprise.EnterpriseID != "E0ACME" || u.Enterprise.EnterpriseName != "Acme" || len(u.Enterprise.Teams) != 2 {
		t.Fatalf("a Grid user: team %q enterprise %+v", u.TeamID, u.Enterprise)
	}
	if _, err := one.GetUserInfoContext(ctx, "U0SAM"); slackErr(err) != "user_not_found" {
		t.Fatalf("a user T0ONE's bot cannot see: %v", err)
	}
}

func TestViewsBelongToTheirInstallation(t *testing.T) {
	t.Parallel()
	s := startMulti(t, multiOptions())
	ctx := testCtx(t)
	solo := apiAs(s, s.Install(Installation{TeamID: "T0SOLO"}).BotToken)
	one := apiAs(s, s.Install(Installation{TeamID: "T0ONE"}).BotToken)
	v, err := solo.OpenViewContext(ctx, s.IssueTrigger("U0SAM"), modalRequest("Why"))
	if err != nil {
		t.Fatal(err)
	}
	if v.TeamID != "T0SOLO" || v.AppInstalledTeamID != "T0SOLO" {
		t.Fatalf("view team_id %q app_installed_team_id %q", v.TeamID, v.AppInstalledTeamID)
	}
	if _, err := one.UpdateViewContext(ctx, modalRequest("Mine?"), "", "", v.ID); slackErr(err) != "not_found" {
		t.Fatalf("another installation's views.update: %v, want not_found", err)
	}
	if _, err := solo.UpdateViewContext(ctx, modalRequest("Why not"), "", "", v.ID); err != nil {
		t.Fatal(err)
	}
	// app_home_opened goes to the installation of the user's workspace.
	events := eventSink(t, s)
	if _, err := s.SendEvent(ctx, s.HomeOpened(gina), "", Delivery{Transport: TransportHTTP}); err != nil {
		t.Fatal(err)
	}
	if env := <-events; env["team_id"] != "T0ONE" {
		t.Fatalf("gina's app_home_opened went to %v, want T0ONE (her workspace with the app)", env["team_id"])
	}
}
