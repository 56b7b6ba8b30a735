package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// The answer page through the real binary: signed in with the fake Slack's
// Sign in with Slack, answering as a click would, and every refusal.

var (
	mallory = slackfake.User{ID: "U0MALLORY", Name: "mallory", Email: "mallory@example.com"}
	// eve is in another workspace; outsider is on no list.
	eve      = slackfake.User{ID: "U0EVE", Name: "eve", Email: "eve@example.org", TeamID: "T0OTHER"}
	outsider = slackfake.User{ID: "U0OUT", Name: "outsider", Email: "out@example.com"}
)

const (
	webClientID     = "1111.2222"
	webClientSecret = "web-secret"
)

// webDeployment is a deployment whose fake Slack signs people in, and whose
// bot serves the answer page at its own address.
func webDeployment(t *testing.T) (*deployment, *bot, string) {
	t.Helper()
	d, addr, base := webDeploymentAt(t, false)
	return d, d.startAt(viaHTTP, addr), base
}

// webDeploymentAt sets a web deployment up without starting a bot: the
// page's URL is addr's (a load balancer's, when several replicas serve
// it). needRedis shares the store through Redis (skipped without it).
func webDeploymentAt(t *testing.T, needRedis bool) (*deployment, string, string) {
	t.Helper()
	addr := freeAddr(t)
	base := "http://" + addr
	f := slackfake.New(slackfake.Options{
		BotToken: "xoxb-test", SigningSecret: testSecret,
		Users:        []slackfake.User{alice, bob, mallory, eve, outsider},
		OIDCClientID: webClientID, OIDCClientSecret: webClientSecret, OIDCRedirectURIs: []string{base + "/app/auth/callback"},
	})
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	d := &deployment{t: t, fake: f, env: map[string]string{
		"ASKSLACK_WEB_URL": base, "SLACK_CLIENT_ID": webClientID, "SLACK_CLIENT_SECRET": webClientSecret,
		"ASKSLACK_ALLOWED_USERS": strings.Join([]string{alice.ID, bob.ID, mallory.ID}, ","),
		"ASKSLACK_RULE_ADMINS":   bob.ID,
	}}
	if os.Getenv("REDIS_URL") != "" {
		_, d.prefix = testredis.Client(t)
		d.redisURL = os.Getenv("REDIS_URL")
	} else if needRedis {
		t.Skip("REDIS_URL not set; this test needs a shared store")
	}
	return d, addr, base
}

// webBrowser is a cookie jar that sees each redirect.
type webBrowser struct {
	t    *testing.T
	c    *http.Client
	base string
}

type webResult struct {
	status   int
	body     string
	location string
}

func newWebBrowser(t *testing.T, base string) *webBrowser {
	jar, _ := cookiejar.New(nil)
	return &webBrowser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *webBrowser) do(method, u string, form url.Values) webResult {
	b.t.Helper()
	if strings.HasPrefix(u, "/") {
		u = b.base + u
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return webResult{status: resp.StatusCode, body: string(raw), location: resp.Header.Get("Location")}
}

// signIn goes through the whole sign-in as u and returns the callback's
// answer; callback is the URL Slack sent the browser to.
func (b *webBrowser) signIn(u slackfake.User) (res webResult, callback string) {
	b.t.Helper()
	start := b.do(http.MethodGet, "/app/login", nil)
	if start.status != http.StatusFound {
		b.t.Fatalf("login: %d %s", start.status, start.body)
	}
	picked := b.do(http.MethodGet, start.location+"&fake_user="+u.ID, nil)
	if picked.status != http.StatusFound {
		b.t.Fatalf("the fake's sign-in as %s: %d %s", u.Name, picked.status, picked.body)
	}
	return b.do(http.MethodGet, picked.location, nil), picked.location
}

func (b *webBrowser) mustSignIn(u slackfake.User) {
	b.t.Helper()
	if res, _ := b.signIn(u); res.status != http.StatusSeeOther {
		b.t.Fatalf("sign-in as %s: %d %s", u.Name, res.status, res.body)
	}
}

var webCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *webBrowser) csrf() string {
	b.t.Helper()
	m := webCSRF.FindStringSubmatch(b.do(http.MethodGet, "/app/", nil).body)
	if m == nil {
		b.t.Fatal("no CSRF token on the inbox")
	}
	return m[1]
}

func TestE2EWebAnswerAndRefusals(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d, b, base := webDeployment(t)

	// The question's Slack message offers its page.
	a := b.askAsync(ctx, oneQuestion("web-1", "PostgreSQL", "SQLite"))
	msg := waitPosted(t, ctx, d.fake, "web-1")
	if !bytes.Contains(msg.Blocks, []byte(base+"/app/asks/web-1|Open in browser")) {
		t.Fatalf("the message has no Open in browser link: %s", msg.Blocks)
	}

	// mallory is on the allowlist; a permission ask naming its approvers
	// is not hers: she sees nothing of it and her forged answer is refused.
	perm := &waterfall.Request{CallID: "web-perm", Agent: waterfall.Agent{ID: "claude-code"}, Approvers: []string{alice.ID},
		Permission: &waterfall.Permission{Tool: "Bash", Command: "make deploy"},
		Questions:  []waterfall.Question{{ID: waterfall.PermissionQuestionID, Question: "Run make deploy?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}}}
	pa := b.askAsync(ctx, perm)
	waitPosted(t, ctx, d.fake, "web-perm")
	m := newWebBrowser(t, base)
	m.mustSignIn(mallory)
	if inbox := m.do(http.MethodGet, "/app/", nil); strings.Contains(inbox.body, "web-perm") {
		t.Fatalf("mallory's inbox lists the ask that is not hers: %s", inbox.body)
	}
	if p := m.do(http.MethodGet, "/app/asks/web-perm", nil); p.status != http.StatusNotFound || strings.Contains(p.body, "make deploy") {
		t.Fatalf("mallory reads the ask: %d %s", p.status, p.body)
	}
	if p := m.do(http.MethodPost, "/app/asks/web-perm", url.Values{"csrf": {m.csrf()}, "q0": {"0"}}); p.status != http.StatusNotFound {
		t.Fatalf("mallory's forged answer: %d %s", p.status, p.body)
	}

	// An agent's bearer token opens nothing on the page.
	{
		req, _ := http.NewRequest(http.MethodPost, base+"/app/asks/web-1", strings.NewReader("q0=0"))
		req.Header.Set("Authorization", "Bearer any-agent-token")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("an agent's token on the page: %d", resp.StatusCode)
		}
	}
	// A POST without the form's token, from a signed-in alice, is refused.
	al := newWebBrowser(t, base)
	al.mustSignIn(alice)
	if p := al.do(http.MethodPost, "/app/asks/web-1", url.Values{"q0": {"0"}}); p.status != http.StatusForbidden {
		t.Fatalf("answer without CSRF token: %d", p.status)
	}
	// A replayed state (the same callback twice) is refused.
	replay := newWebBrowser(t, base)
	_, cb := replay.signIn(bob)
	u, _ := url.Parse(cb)
	replay.c.Jar.SetCookies(u, []*http.Cookie{{Name: "askslack_login", Value: u.Query().Get("state"), Path: "/app/auth/"}})
	if p := replay.do(http.MethodGet, cb, nil); p.status != http.StatusForbidden {
		t.Fatalf("replayed state: %d %s", p.status, p.body)
	}
	// An ID token for another workspace, and someone on no list.
	for _, who := range []slackfake.User{eve, outsider} {
		if p, _ := newWebBrowser(t, base).signIn(who); p.status != http.StatusForbidden {
			t.Fatalf("%s signed in: %d %s", who.Name, p.status, p.body)
		}
	}
	// A tampered cookie.
	tampered := newWebBrowser(t, base)
	tampered.mustSignIn(bob)
	bu, _ := url.Parse(base + "/")
	for _, c := range tampered.c.Jar.Cookies(bu) {
		tampered.c.Jar.SetCookies(bu, []*http.Cookie{{Name: c.Name, Value: "x" + c.Value[1:], Path: "/"}})
	}
	if p := tampered.do(http.MethodGet, "/app/", nil); p.status != http.StatusUnauthorized {
		t.Fatalf("tampered cookie: %d", p.status)
	}
	// A signed-out session, its cookie replayed.
	out := newWebBrowser(t, base)
	out.mustSignIn(bob)
	tok := out.csrf()
	kept := out.c.Jar.Cookies(bu)
	if p := out.do(http.MethodPost, "/app/logout", url.Values{"csrf": {tok}}); p.status != http.StatusOK {
		t.Fatalf("logout: %d", p.status)
	}
	again := newWebBrowser(t, base)
	again.c.Jar.SetCookies(bu, kept)
	if p := again.do(http.MethodPost, "/app/asks/web-1", url.Values{"csrf": {tok}, "q0": {"0"}}); p.status != http.StatusUnauthorized {
		t.Fatalf("signed-out session answered: %d", p.status)
	}

	// Nothing above answered anything.
	for _, id := range []string{"web-1", "web-perm"} {
		if st := askState(t, ctx, b, id); st != "open" {
			t.Fatalf("%s is %s after the refusals", id, st)
		}
	}

	// alice answers from the page: the agent gets it, the Slack message
	// shows it, the trail says via web.
	if p := al.do(http.MethodPost, "/app/asks/web-1", url.Values{"csrf": {al.csrf()}, "q0": {"1"}}); p.location != "/app/asks/web-1?m=answered" {
		t.Fatalf("alice's answer: %d %q %s", p.status, p.location, p.body)
	}
	res, err := a.wait(t)
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Selected[0] != "SQLite" || res.Respondent.Surface != "web" ||
		res.Respondent.UserID != alice.ID {
		t.Fatalf("the agent got %+v, %v", res, err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "the answer", func(m slackfake.Message) bool {
		return !hasControls(m) && bytes.Contains(m.Blocks, []byte("SQLite")) && bytes.Contains(m.Blocks, []byte("<@U0ALICE> (in the browser)"))
	})
	// alice answers the permission too; the console (bob is a rule admin)
	// shows the trail verified.
	if p := al.do(http.MethodPost, "/app/asks/web-perm", url.Values{"csrf": {al.csrf()}, "q0": {"0"}}); p.location != "/app/asks/web-perm?m=answered" {
		t.Fatalf("alice's allow: %d %q %s", p.status, p.location, p.body)
	}
	if _, err := pa.wait(t); err != nil {
		t.Fatal(err)
	}
	admin := newWebBrowser(t, base)
	admin.mustSignIn(bob)
	console := admin.do(http.MethodGet, "/app/console", nil)
	if console.status != http.StatusOK || !strings.Contains(console.body, "The chain holds") || !strings.Contains(console.body, "refused") {
		t.Fatalf("console: %d %s", console.status, console.body)
	}
	if p := al.do(http.MethodGet, "/app/console", nil); p.status != http.StatusForbidden {
		t.Fatalf("alice's console: %d", p.status)
	}
}

// askState reads an ask's state through the host API.
func askState(t *testing.T, ctx context.Context, b *bot, id string) string {
	t.Helper()
	st, err := b.client().Get(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st.State
}

func TestE2EWebOffByDefault(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	resp, err := http.Get("http://" + b.addr + "/app/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/app/ with the page off: %d", resp.StatusCode)
	}
	ctx := testCtx(t)
	b.askAsync(ctx, oneQuestion("no-web", "Yes", "No"))
	if msg := waitPosted(t, ctx, d.fake, "no-web"); bytes.Contains(msg.Blocks, []byte("Open in browser")) {
		t.Fatalf("a link to a page that is off: %s", msg.Blocks)
	}
}

func TestE2EWebHalfConfiguredStopsAtStart(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	d.env["ASKSLACK_WEB_URL"] = "http://127.0.0.1:1"
	if _, err := d.launch(viaHTTP, freeAddr(t)); err == nil {
		t.Fatal("the bot started with ASKSLACK_WEB_URL but no client id or secret")
	}
	if !strings.Contains(d.bots[0].logs.String(), "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are not set") {
		t.Fatalf("logs: %s", d.bots[0].logs.String())
	}
}

// TestE2EWebAcrossReplicas: two replicas over one Redis behind one URL: a
// session made on one is good on the other, a page open on one hears of an
// ask made on the other, and signing out on one ends the session on both.
func TestE2EWebAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d, addrA, base := webDeploymentAt(t, true)
	// A drain far longer than stop waits (30 s): an open page's event
	// stream must end when draining starts, not hold it (a.stop below).
	d.env["ASKSLACK_SHUTDOWN_GRACE"] = "5m"
	a := d.startAt(viaHTTP, addrA)
	bb := d.start(viaHTTP)
	other := "http://" + bb.addr

	br := newWebBrowser(t, base)
	br.mustSignIn(alice) // on a
	onB := func(method, path string, form url.Values) webResult { return br.do(method, other+path, form) }
	if p := onB(http.MethodGet, "/app/", nil); p.status != http.StatusOK {
		t.Fatalf("a's session on b: %d %s", p.status, p.body)
	}

	// The page's stream is on a; the ask is made on b.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, http.MethodGet, base+"/app/events", nil)
	resp, err := br.c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("events on a: %v %v", resp, err)
	}
	defer resp.Body.Close()
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- name
			}
		}
		close(events)
	}()
	if <-events != "hello" {
		t.Fatal("no hello on the stream")
	}
	bb.askAsync(ctx, oneQuestion("across-1", "Yes", "No"))
	for got := range events {
		if got == "changed" {
			break
		}
	}
	if p := br.do(http.MethodGet, "/app/", nil); !strings.Contains(p.body, `data-call="across-1"`) {
		t.Fatalf("a's inbox lacks b's ask: %s", p.body)
	}

	// Signed out on a: the session is gone on b too, even for a browser
	// (another tab, a thief) that kept its cookie.
	u, _ := url.Parse(other + "/")
	kept := br.c.Jar.Cookies(u)
	if len(kept) == 0 {
		t.Fatal("no session cookie")
	}
	if p := br.do(http.MethodPost, "/app/logout", url.Values{"csrf": {br.csrf()}}); p.status != http.StatusOK {
		t.Fatalf("logout on a: %d", p.status)
	}
	thief := newWebBrowser(t, other)
	thief.c.Jar.SetCookies(u, kept)
	if p := thief.do(http.MethodGet, "/app/", nil); p.status != http.StatusUnauthorized {
		t.Fatalf("after signing out on a, the kept cookie on b: %d", p.status)
	}
	a.stop() // the page's stream on a is still open
}
