package slackfake

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

// Values in the shape of Slack's examples
// (https://docs.slack.dev/reference/methods/oauth.v2.access).
const (
	appClientID = "2141029472.691202649728"
	appSecret   = "e1b9e11dfcd19c1982d5de12921e17e8c"
)

func oauthOptions() Options {
	o := multiOptions()
	o.ClientID, o.ClientSecret = appClientID, appSecret
	return o
}

// installApp is the app's side of the install flow: its redirect URL
// records what Slack sent back.
type installApp struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []url.Values
}

func newInstallApp(t *testing.T) *installApp {
	t.Helper()
	a := &installApp{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.got = append(a.got, r.URL.Query())
		a.mu.Unlock()
		_, _ = io.WriteString(w, "installed")
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *installApp) redirectURI() string { return a.srv.URL + "/slack/oauth_redirect" }

func (a *installApp) last(t *testing.T) url.Values {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.got) == 0 {
		t.Fatal("the app's redirect URL was never called")
	}
	return a.got[len(a.got)-1]
}

// getPage GETs a page of the fake with an ordinary net/http client
// (following redirects) and returns the final status and body.
func getPage(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// follow finds the link with attr="value" (or the bare attr, for value
// "") on a page and follows it.
func follow(t *testing.T, s *Server, page, attr, value string) (int, string) {
	t.Helper()
	want := attr + `="` + value + `"`
	if value == "" {
		want = attr
	}
	for _, tag := range regexp.MustCompile(`<a [^>]*>`).FindAllString(page, -1) {
		if !regexp.MustCompile(`\s` + regexp.QuoteMeta(want) + `[\s>]`).MatchString(tag) {
			continue
		}
		m := regexp.MustCompile(`href="([^"]*)"`).FindStringSubmatch(tag)
		href := html.UnescapeString(m[1])
		if strings.HasPrefix(href, "/") {
			href = s.URL() + href
		}
		return getPage(t, href)
	}
	t.Fatalf("no link %s on the page:\n%s", want, page)
	return 0, ""
}

// access calls oauth.v2.access with HTTP Basic client credentials, as the
// method page recommends.
func access(t *testing.T, s *Server, id, secret string, form url.Values) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.APIURL()+"oauth.v2.access", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("oauth.v2.access answered HTTP %d", resp.StatusCode)
	}
	return body
}

func authorizeURL(s *Server, app *installApp, extra string) string {
	q := url.Values{"client_id": {appClientID}, "scope": {"chat:write,commands"}, "redirect_uri": {app.redirectURI()}, "state": {"st-123"}}
	return s.URL() + "/oauth/v2/authorize?" + q.Encode() + extra
}

func TestOAuthInstallRoundTrip(t *testing.T) {
	t.Parallel()
	s := startMulti(t, oauthOptions())
	app := newInstallApp(t)

	// No fake_user: pick who installs, then where.
	status, page := getPage(t, authorizeURL(s, app, ""))
	if status != 200 {
		t.Fatalf("authorize page: %d\n%s", status, page)
	}
	_, page = follow(t, s, page, "data-user", "U0SAM")
	if strings.Contains(page, `data-team="T0ONE"`) || strings.Contains(page, "data-enterprise") {
		t.Fatalf("sam may install only into his workspace:\n%s", page)
	}
	status, _ = follow(t, s, page, "data-team", "T0SOLO")
	if status != 200 {
		t.Fatalf("following the install link ended with %d", status)
	}
	back := app.last(t)
	if back.Get("state") != "st-123" || back.Get("code") == "" {
		t.Fatalf("redirect carried %v, want code and the state", back)
	}

	form := url.Values{"code": {back.Get("code")}, "redirect_uri": {app.redirectURI()}}
	body := access(t, s, appClientID, appSecret, form)
	inst := s.Installations()
	if len(inst) != 1 || inst[0].TeamID != "T0SOLO" || inst[0].Installer != "U0SAM" || inst[0].BotToken != body["access_token"] {
		t.Fatalf("Installations = %+v after %v", inst, body)
	}
	team, _ := body["team"].(map[string]any)
	authed, _ := body["authed_user"].(map[string]any)
	if body["ok"] != true || body["token_type"] != "bot" || body["scope"] != "chat:write,commands" || body["bot_user_id"] != inst[0].BotUserID ||
		body["app_id"] != "A0FAKEAPP" || team["id"] != "T0SOLO" || team["name"] != "Solo" || body["enterprise"] != nil ||
		body["is_enterprise_install"] != false || authed["id"] != "U0SAM" || !strings.HasPrefix(inst[0].BotToken, "xoxb-") {
		t.Fatalf("oauth.v2.access = %v", body)
	}
	if _, ok := body["refresh_token"]; ok {
		t.Fatalf("a refresh token without token rotation: %v", body)
	}
	// The token works, for its workspace.
	ctx := testCtx(t)
	if _, _, err := apiAs(s, inst[0].BotToken).PostMessageContext(ctx, "C0SOLO", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatal(err)
	}

	// A code works once.
	if again := access(t, s, appClientID, appSecret, form); again["error"] != "invalid_code" {
		t.Fatalf("a reused code: %v, want invalid_code", again)
	}
}

func TestOAuthRefusals(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1700000000, 0)}
	o := oauthOptions()
	o.Now = clk.Now
	s := startMulti(t, o)
	app := newInstallApp(t)
	code := func() string {
		_, page := getPage(t, authorizeURL(s, app, "&fake_user=U0SAM"))
		follow(t, s, page, "data-team", "T0SOLO")
		return app.last(t).Get("code")
	}
	ok := url.Values{"redirect_uri": {app.redirectURI()}}
	with := func(c string, v url.Values) url.Values {
		f := url.Values{"code": {c}}
		for k, x := range v {
			f[k] = x
		}
		return f
	}
	c := code()
	for name, tc := range map[string]struct {
		id, secret string
		form       url.Values
		want       string
	}{
		"wrong client id":       {"1.2", appSecret, with(c, ok), "invalid_client_id"},
		"wrong secret":          {appClientID, "nope", with(c, ok), "bad_client_secret"},
		"other redirect_uri":    {appClientID, appSecret, with(c, url.Values{"redirect_uri": {"https://evil.example/cb"}}), "bad_redirect_uri"},
		"redirect_uri left out": {appClientID, appSecret, with(c, nil), "bad_redirect_uri"},
		"unknown code":          {appClientID, appSecret, with("123.456.abc", ok), "invalid_code"},
		"unknown grant":         {appClientID, appSecret, url.Values{"grant_type": {"password"}}, "invalid_grant_type"},
	} {
		if got := access(t, s, tc.id, tc.secret, tc.form); got["error"] != tc.want {
			t.Errorf("%s: %v, want %s", name, got, tc.want)
		}
	}
	// The refusals did not use the code up.
	if got := access(t, s, appClientID, appSecret, with(c, ok)); got["ok"] != true {
		t.Fatalf("redeeming after refusals: %v", got)
	}
	// A code expires after ten minutes.
	late := code()
	clk.Advance(10*time.Minute + time.Second)
	if got := access(t, s, appClientID, appSecret, with(late, ok)); got["error"] != "invalid_code" {
		t.Fatalf("an expired code: %v, want invalid_code", got)
	}

	// Cancel answers the app with access_denied and the state.
	_, page := getPage(t, authorizeURL(s, app, "&fake_user=U0SAM"))
	follow(t, s, page, "data-cancel", "")
	if back := app.last(t); back.Get("error") != "access_denied" || back.Get("state") != "st-123" || back.Get("code") != "" {
		t.Fatalf("cancel redirected with %v", back)
	}
	// Problems with the request are shown on Slack's side.
	for _, u := range []string{
		strings.Replace(authorizeURL(s, app, ""), "chat%3Awrite", "chat%3Ashout", 1),
		strings.Replace(authorizeURL(s, app, ""), appClientID, "9.9", 1),
	} {
		if status, body := getPage(t, u); status != http.StatusBadRequest || !strings.Contains(body, `class="error"`) {
			t.Errorf("%s: %d\n%s", u, status, body)
		}
	}
}

func TestOAuthOrgWideInstall(t *testing.T) {
	t.Parallel()
	s := startMulti(t, oauthOptions())
	app := newInstallApp(t)
	// Gina is in T0ONE and T0TWO of E0ACME: she may install into either,
	// or into the organization.
	_, page := getPage(t, authorizeURL(s, app, "&fake_user=W0GINA"))
	for _, want := range []string{`data-team="T0ONE"`, `data-team="T0TWO"`, `data-enterprise="E0ACME"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("no %s on gina's page:\n%s", want, page)
		}
	}
	follow(t, s, page, "data-enterprise", "E0ACME")
	body := access(t, s, appClientID, appSecret, url.Values{"code": {app.last(t).Get("code")}, "redirect_uri": {app.redirectURI()}})
	ent, _ := body["enterprise"].(map[string]any)
	if body["team"] != nil || ent["id"] != "E0ACME" || ent["name"] != "Acme" || body["is_enterprise_install"] != true {
		t.Fatalf("org-wide oauth.v2.access = %v", body)
	}
	tok := body["access_token"].(string)
	ctx := testCtx(t)
	if _, _, err := apiAs(s, tok).PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("hi", false)); slackErr(err) != "channel_not_found" {
		t.Fatalf("before the admin adds it to a workspace: %v", err)
	}
	s.AddToWorkspace("E0ACME", "T0ONE")
	if _, _, err := apiAs(s, tok).PostMessageContext(ctx, "C0ONE", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatal(err)
	}
	// A workspace of the organization cannot install the app for itself now.
	code := s.Authorize("T0TWO", otto, false, []string{"chat:write"})
	if got := access(t, s, appClientID, appSecret, url.Values{"code": {code}}); got["error"] != "cannot_install_an_org_installed_app" {
		t.Fatalf("a workspace install under an org-wide one: %v", got)
	}
}
