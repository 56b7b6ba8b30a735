package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// Two workspaces of two organizations, and a Grid organization with two
// more, one app. alfa and bruno are people of Alpha, beth of Beta, gwen
// a Grid user whose home is Gamma and who is a member of Delta too, and
// xena from Xeno, an outside organization that shares Alpha's channel.
const (
	teamAlpha, teamBeta, teamGamma, teamDelta, teamXeno = "T0ALPHA", "T0BETA", "T0GAMMA", "T0DELTA", "T0XENO"
	orgGrid                                             = "E0GRID"
	chanAlpha, chanBeta, chanGamma, chanDelta           = "C0ALPHA", "C0BETA", "C0GAMMA", "C0DELTA"
	wsClientID, wsClientSecret                          = "1111.2222", "app-client-secret"
)

var (
	alfa  = slackfake.User{ID: "U0ALFA", Name: "alfa", Email: "alfa@alpha.test", TeamID: teamAlpha}
	bruno = slackfake.User{ID: "U0BRUNO", Name: "bruno", Email: "bruno@alpha.test", TeamID: teamAlpha}
	beth  = slackfake.User{ID: "U0BETH", Name: "beth", Email: "beth@beta.test", TeamID: teamBeta}
	gwen  = slackfake.User{ID: "W0GWEN", Name: "gwen", Email: "gwen@grid.test", TeamID: teamGamma, EnterpriseID: orgGrid, Teams: []string{teamDelta}}
	xena  = slackfake.User{ID: "U0XENA", Name: "xena", Email: "xena@xeno.test", TeamID: teamXeno}
)

// severalWorkspaces is a fake Slack with every workspace above (rotating
// tokens of tokenTTL when it is set) and a deployment of askslack serving
// them, its replicas reachable at addrs (the first is the install URL).
func severalWorkspaces(t *testing.T, tokenTTL time.Duration, addrs int) (*deployment, []string) {
	t.Helper()
	f := slackfake.New(slackfake.Options{
		SigningSecret: testSecret, ClientID: wsClientID, ClientSecret: wsClientSecret,
		TokenRotation: tokenTTL > 0, TokenTTL: tokenTTL,
		Teams: []slackfake.Team{{ID: teamAlpha, Domain: "alpha", Name: "Alpha"}, {ID: teamBeta, Domain: "beta", Name: "Beta"},
			{ID: teamGamma, Domain: "gamma", Name: "Gamma", EnterpriseID: orgGrid, EnterpriseName: "Grid"},
			{ID: teamDelta, Domain: "delta", Name: "Delta", EnterpriseID: orgGrid, EnterpriseName: "Grid"},
			{ID: teamXeno, Domain: "xeno", Name: "Xeno"}},
		ChannelTeams:   map[string]string{chanAlpha: teamAlpha, chanBeta: teamBeta, chanGamma: teamGamma, chanDelta: teamDelta},
		SharedChannels: map[string][]string{chanAlpha: {teamXeno}},
		Users:          []slackfake.User{alfa, bruno, beth, gwen, xena},
	})
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	d := &deployment{t: t, fake: f, env: map[string]string{}}
	if os.Getenv("REDIS_URL") == "" {
		t.Skip("REDIS_URL not set: several workspaces across replicas need a shared store")
	}
	_, d.prefix = testredis.Client(t)
	d.redisURL = os.Getenv("REDIS_URL")
	var at []string
	for range addrs {
		at = append(at, freeAddr(t))
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	for k, v := range map[string]string{
		"SLACK_BOT_TOKEN": "", "ASKSLACK_CHANNEL": "",
		"SLACK_CLIENT_ID": wsClientID, "SLACK_CLIENT_SECRET": wsClientSecret,
		"ASKSLACK_INSTALL_KEYS":       base64.StdEncoding.EncodeToString(key),
		"ASKSLACK_INSTALL_TEAMS":      strings.Join([]string{teamAlpha, teamBeta, orgGrid}, ","),
		"ASKSLACK_INSTALL_URL":        "http://" + at[0],
		"ASKSLACK_WORKSPACE_CHANNELS": fmt.Sprintf("%s=%s,%s=%s,%s=%s,%s=%s", teamAlpha, chanAlpha, teamBeta, chanBeta, teamGamma, chanGamma, teamDelta, chanDelta),
		"ASKSLACK_API_TOKENS":         "alpha-agent:alpha-secret-0000,beta-agent:beta-secret-0000,gamma-agent:gamma-secret-000,delta-agent:delta-secret-000,lost-agent:lost-secret-0000",
		"ASKSLACK_CALLER_WORKSPACES":  fmt.Sprintf("alpha-agent=%s,beta-agent=%s,gamma-agent=%s,delta-agent=%s", teamAlpha, teamBeta, teamGamma, teamDelta),
	} {
		d.env[k] = v
	}
	return d, at
}

// agentOf is a client of b as the agent caller whose secret is secret.
func agentOf(b *bot, secret string) *hostapi.Client {
	c := b.client()
	c.Token = secret
	return c
}

// install runs Add to Slack through the bot's /slack/install and the
// fake's authorize page as installer, into team (or org-wide into an
// enterprise), and returns the page the bot showed at the end.
func install(t *testing.T, ctx context.Context, installURL string, installer slackfake.User, target string, orgWide bool) (int, string) {
	t.Helper()
	code, page, _ := installIn(t, ctx, nil, installURL, installer, target, orgWide)
	return code, page
}

// installIn is install in a browser of the caller's (a cookie jar; nil
// for a new one), returning the redirect Slack sent it to as well.
func installIn(t *testing.T, ctx context.Context, jar http.CookieJar, installURL string, installer slackfake.User, target string, orgWide bool) (int, string, string) {
	t.Helper()
	if jar == nil {
		jar, _ = cookiejar.New(nil)
	}
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, installURL+"/slack/install", nil)
	resp, err := c.Do(req) // → Slack's authorize page (the fake's), which lists people
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	picked := resp.Request.URL
	if !strings.HasSuffix(picked.Path, "/oauth/v2/authorize") || resp.StatusCode != http.StatusOK {
		t.Fatalf("/slack/install led to %s (%d), not Slack's authorize page", picked, resp.StatusCode)
	}
	q := picked.Query()
	q.Set("fake_user", installer.ID)
	if orgWide {
		q.Set("fake_enterprise", target)
	} else {
		q.Set("fake_team", target)
	}
	picked.RawQuery = q.Encode()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, picked.String(), nil)
	resp, err = c.Do(req) // → the bot's /slack/oauth_redirect
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.HasSuffix(resp.Request.URL.Path, "/slack/oauth_redirect") {
		t.Fatalf("the install ended at %s, not the bot's redirect", resp.Request.URL)
	}
	return resp.StatusCode, string(b), resp.Request.URL.String()
}

// getIn GETs u in the browser of jar.
func getIn(t *testing.T, ctx context.Context, jar http.CookieJar, u string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := (&http.Client{Jar: jar, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func yesNo(callID string) *waterfall.Request {
	return oneQuestion(callID, "Yes", "No")
}

// Through the real binary: two workspaces installed by Add to Slack on two
// replicas, with rotating tokens that expire every few seconds; 100 asks
// across both, each clicked first by someone of the other workspace
// (refused, every time) and then by its own people; no call with a token
// of another workspace, none refused for an expired token; then Beta
// uninstalls, and its open asks are withdrawn while Alpha's keep working.
func TestE2ESeveralWorkspacesInstalledByOAuth(t *testing.T) {
	d, addrs := severalWorkspaces(t, 8*time.Second, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	a := d.startAt(viaHTTP, addrs[0])
	b := d.startAt(viaHTTP, addrs[1])
	f := d.fake

	// Nothing is installed yet: an agent's ask is refused up front.
	if _, err := agentOf(a, "alpha-secret-0000").Ask(ctx, yesNo("before-install")); waterfall.CodeOf(err) != waterfall.CodeNoProvider {
		t.Fatalf("an ask before any install: %v, want NO_PROVIDER", err)
	}
	for _, in := range []struct {
		who  slackfake.User
		team string
	}{{alfa, teamAlpha}, {beth, teamBeta}} {
		if code, page := install(t, ctx, "http://"+a.addr, in.who, in.team, false); code != http.StatusOK || !strings.Contains(page, "askslack is installed in") {
			t.Fatalf("installing into %s: %d %s", in.team, code, page)
		}
	}
	// A caller bound to no workspace cannot ask.
	if _, err := agentOf(b, "lost-secret-0000").Ask(ctx, yesNo("lost-1")); waterfall.CodeOf(err) != waterfall.CodeForbidden {
		t.Fatalf("an unbound caller's ask: %v, want FORBIDDEN", err)
	}
	// An agent naming another workspace is refused.
	other := yesNo("alpha-names-beta")
	other.Workspace = teamBeta
	if _, err := agentOf(a, "alpha-secret-0000").Ask(ctx, other); waterfall.CodeOf(err) != waterfall.CodeForbidden {
		t.Fatalf("an ask naming another workspace: %v, want FORBIDDEN", err)
	}

	type side struct {
		secret, team, channel string
		own, stranger         slackfake.User
	}
	sides := []side{{"alpha-secret-0000", teamAlpha, chanAlpha, alfa, beth}, {"beta-secret-0000", teamBeta, chanBeta, beth, alfa}}
	const asks = 100
	var wg sync.WaitGroup
	errs := make(chan error, asks)
	for i := range asks {
		s, via := sides[i%2], []*bot{a, b}[(i/2)%2]
		callID := fmt.Sprintf("ws-%s-%03d", s.team, i)
		wg.Go(func() {
			// People click seconds after a post, not in the same instant:
			// the asks are spread over the tokens' rotation.
			time.Sleep(time.Duration(i) * 120 * time.Millisecond)
			asked := askWith(ctx, agentOf(via, s.secret), yesNo(callID))
			msg, err := f.WaitMessage(ctx, func(m slackfake.Message) bool { return strings.Contains(string(m.Blocks), "ask/"+callID+"/") })
			if err != nil {
				errs <- fmt.Errorf("%s never posted: %w", callID, err)
				return
			}
			if msg.Channel != s.channel {
				errs <- fmt.Errorf("%s posted in %s, not its workspace's %s", callID, msg.Channel, s.channel)
				return
			}
			if _, err := f.ClickButton(ctx, s.stranger, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
				errs <- err
				return
			}
			if _, err := f.ClickButton(ctx, s.own, msg.Channel, msg.TS, "No", slackfake.Delivery{}); err != nil {
				errs <- err
				return
			}
			<-asked.done
			switch {
			case asked.err != nil:
				errs <- fmt.Errorf("%s: %w", callID, asked.err)
			case asked.res.Respondent.UserID != s.own.ID:
				errs <- fmt.Errorf("%s answered by %+v, want %s of its own workspace", callID, asked.res.Respondent, s.own.ID)
			case len(asked.res.Answers) != 1 || !strings.Contains(mustJSON(asked.res.Answers[0]), "No"):
				errs <- fmt.Errorf("%s answered %s, want its own person's No (the stranger's Yes refused)", callID, mustJSON(asked.res.Answers))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	if f.Refreshes(teamAlpha) == 0 || f.Refreshes(teamBeta) == 0 {
		t.Fatalf("the rotating tokens were not refreshed under load (Alpha %d, Beta %d)", f.Refreshes(teamAlpha), f.Refreshes(teamBeta))
	}
	refusedTold := 0
	for _, e := range f.Ephemerals() {
		if strings.Contains(e.Text, "another organization") {
			refusedTold++
		}
	}
	if refusedTold < asks {
		t.Errorf("%d strangers were told their click did not count, want %d", refusedTold, asks)
	}
	checkTokens(t, f)

	// Beta uninstalls with a question open: it is withdrawn, with the
	// reason; Alpha's go on.
	open := askWith(ctx, agentOf(a, "beta-secret-0000"), yesNo("beta-open"))
	waitPosted(t, ctx, f, "beta-open")
	f.Uninstall(teamBeta)
	<-open.done
	if waterfall.CodeOf(open.err) != waterfall.CodeAskAborted || !strings.Contains(open.err.Error(), "uninstalled") {
		t.Fatalf("Beta's open ask after the uninstall: %v, want ASK_ABORTED saying it was uninstalled", open.err)
	}
	if _, err := agentOf(b, "beta-secret-0000").Ask(ctx, yesNo("beta-after")); waterfall.CodeOf(err) != waterfall.CodeNoProvider {
		t.Fatalf("an ask in Beta after its uninstall: %v, want NO_PROVIDER", err)
	}
	msg := askAndTapAs(t, ctx, f, agentOf(b, "alpha-secret-0000"), "alpha-after", bruno)
	if msg.Channel != chanAlpha {
		t.Fatalf("Alpha's ask after Beta left went to %s", msg.Channel)
	}
	checkTokens(t, f)
}

// askAndTapAs asks callID through c, has who tap Yes, and waits for the
// agent to have the answer.
func askAndTapAs(t *testing.T, ctx context.Context, f *slackfake.Server, c *hostapi.Client, callID string, who slackfake.User) slackfake.Message {
	t.Helper()
	asked := askWith(ctx, c, yesNo(callID))
	msg := waitPosted(t, ctx, f, callID)
	if _, err := f.ClickButton(ctx, who, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked.done:
	case <-ctx.Done():
		t.Fatalf("%s: no answer; the clicker was told %+v", callID, f.Ephemerals())
	}
	if res, err := asked.res, asked.err; err != nil || res.Respondent.UserID != who.ID {
		t.Fatalf("%s: %+v %v, want answered by %s", callID, res.Respondent, err, who.ID)
	}
	return msg
}

// checkTokens fails on any Web API call made with a token of another
// workspace than its channel's, or refused for its token.
func checkTokens(t *testing.T, f *slackfake.Server) {
	t.Helper()
	owner := map[string]string{chanAlpha: teamAlpha, chanBeta: teamBeta, chanGamma: orgGrid, chanDelta: orgGrid}
	for _, m := range []string{"chat.postMessage", "chat.update", "chat.postEphemeral", "conversations.history"} {
		for _, c := range f.Calls(m) {
			if want := owner[c.Params["channel"]]; want != "" && c.Team != want {
				t.Errorf("%s in %s went out with %s's token", m, c.Params["channel"], c.Team)
			}
		}
	}
	for _, c := range f.Calls("") {
		for _, bad := range []string{"token_expired", "invalid_auth", "token_revoked", "not_authed"} {
			if strings.Contains(string(c.Response), `"`+bad+`"`) && c.Team != teamBeta {
				t.Errorf("%s was refused: %s", c.Method, c.Response)
			}
		}
	}
}

// An Enterprise Grid org-wide install serves the two workspaces the org
// admin added it to, with one token; a Grid user whose home is Gamma
// answers in Delta, where they are a member; someone from an outside
// organization clicking in Alpha's shared channel is refused and told so.
// Over HTTP and over Socket Mode (one app-level connection serves every
// workspace of the app).
func TestE2ESeveralWorkspacesGridAndSlackConnect(t *testing.T) {
	for _, tr := range []transport{viaHTTP, viaSocket} {
		t.Run(string(tr), func(t *testing.T) { gridAndConnect(t, tr) })
	}
}

func gridAndConnect(t *testing.T, tr transport) {
	d, addrs := severalWorkspaces(t, 0, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := d.startAt(tr, addrs[0])
	if tr == viaSocket {
		if err := d.fake.WaitConnected(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	f := d.fake
	if code, page := install(t, ctx, "http://"+a.addr, gwen, orgGrid, true); code != http.StatusOK || !strings.Contains(page, "org-wide") {
		t.Fatalf("the org-wide install: %d %s", code, page)
	}
	// Installed org-wide, it serves no workspace yet (Slack's trap: the
	// org admin must add it to each).
	if _, err := agentOf(a, "gamma-secret-000").Ask(ctx, yesNo("grid-too-soon")); waterfall.CodeOf(err) != waterfall.CodeNoProvider {
		t.Fatalf("an ask in Gamma before the org admin added the app there: %v, want NO_PROVIDER", err)
	}
	if _, err := f.GrantTeamAccess(ctx, orgGrid, teamGamma, teamDelta); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	code, page, back := installIn(t, ctx, jar, "http://"+a.addr, alfa, teamAlpha, false)
	if code != http.StatusOK {
		t.Fatalf("installing Alpha: %d %s", code, page)
	}
	// The same redirect again (a replayed state and code), in the same
	// browser and in another: refused, and nothing changes.
	for _, j := range []http.CookieJar{jar, nil} {
		if j == nil {
			j, _ = cookiejar.New(nil)
		}
		if code, page := getIn(t, ctx, j, back); code != http.StatusBadRequest || !strings.Contains(page, "not good any more") {
			t.Fatalf("a replayed redirect: %d %s", code, page)
		}
	}
	// A cancelled install keeps nothing.
	before := len(f.Calls("oauth.v2.access"))
	u, _ := url.Parse(back)
	q := u.Query()
	q.Del("code")
	q.Set("error", "access_denied")
	u.RawQuery = q.Encode()
	if code, _ := getIn(t, ctx, jar, u.String()); code != http.StatusBadRequest {
		t.Fatalf("a cancel with a spent state: %d, want 400", code)
	}
	if len(f.Calls("oauth.v2.access")) != before {
		t.Fatal("a refused redirect redeemed a code")
	}
	// A workspace not on ASKSLACK_INSTALL_TEAMS gets a page, and nothing.
	if code, page := install(t, ctx, "http://"+a.addr, xena, teamXeno, false); code != http.StatusForbidden || !strings.Contains(page, "ASKSLACK_INSTALL_TEAMS") {
		t.Fatalf("installing Xeno, which is not allowed: %d %s", code, page)
	}
	for _, in := range f.Installations() {
		if in.TeamID == teamXeno && in.BotToken != "" {
			if c := f.Calls("auth.revoke"); len(c) == 0 {
				t.Error("the refused install's token was not revoked")
			}
		}
	}
	gm := askAndTapAs(t, ctx, f, agentOf(a, "gamma-secret-000"), "grid-gamma", gwen)
	dm := askAndTapAs(t, ctx, f, agentOf(a, "delta-secret-000"), "grid-delta", gwen)
	if gm.Channel != chanGamma || dm.Channel != chanDelta {
		t.Fatalf("the Grid asks went to %s and %s", gm.Channel, dm.Channel)
	}
	// alfa (Alpha, another organization) cannot answer in Delta.
	asked := askWith(ctx, agentOf(a, "delta-secret-000"), yesNo("grid-delta-2"))
	msg := waitPosted(t, ctx, f, "grid-delta-2")
	if _, err := f.ClickButton(ctx, alfa, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, f, alfa.ID, "another organization")
	if _, err := f.ClickButton(ctx, gwen, msg.Channel, msg.TS, "No", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if res, err := asked.wait(t); err != nil || res.Respondent.UserID != gwen.ID {
		t.Fatalf("grid-delta-2: %+v %v", res.Respondent, err)
	}
	// Slack Connect: xena shares Alpha's channel and is refused.
	asked = askWith(ctx, agentOf(a, "alpha-secret-0000"), yesNo("connect-1"))
	msg = waitPosted(t, ctx, f, "connect-1")
	if _, err := f.ClickButton(ctx, xena, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, f, xena.ID, "another organization")
	if _, err := f.ClickButton(ctx, alfa, msg.Channel, msg.TS, "No", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if res, err := asked.wait(t); err != nil || res.Respondent.UserID != alfa.ID {
		t.Fatalf("connect-1: %+v %v, want alfa's answer, xena's refused", res.Respondent, err)
	}
	checkTokens(t, f)
}
