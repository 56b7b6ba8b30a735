package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

var (
	alice   = slackfake.User{ID: "U0ALICE", Name: "alice", Email: "alice@example.com"}
	bob     = slackfake.User{ID: "U0BOB", Name: "bob", Email: "bob@example.com"}
	mallory = slackfake.User{ID: "U0MALLORY", Name: "mallory", Email: "mallory@example.com"}
	// eve is in another workspace: Slack signs her in, the bot must not.
	eve = slackfake.User{ID: "U0EVE", Name: "eve", Email: "eve@example.org", TeamID: "T0OTHER"}
	// outsider is in the workspace and on no list.
	outsider = slackfake.User{ID: "U0OUT", Name: "outsider", Email: "out@example.com"}
)

const (
	clientID     = "1234.5678"
	clientSecret = "s3cret"
)

// lists is an Authorizer with the allowlist's and approvers' rules, whose
// list a test may change (a person taken off it).
type lists struct {
	mu      sync.Mutex
	allowed map[string]bool
}

func (l *lists) Allowed(_ context.Context, user string, req *waterfall.Request) (bool, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.allowed[user] {
		return false, "You are not on the list of people who may answer the agent's questions."
	}
	if len(req.Approvers) > 0 && !slices.Contains(req.Approvers, user) {
		return false, "This ask names who may approve it, and you are not one of them."
	}
	return true, ""
}

func (l *lists) remove(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.allowed, user)
}

type admins []string

func (a admins) Allowed(_ context.Context, user string, _ *waterfall.Request) (bool, string) {
	return slices.Contains(a, user), ""
}

// claimed is the Slack surface's answerer: it takes the ask, and the
// answer comes through Host.Answer (a click, or the page).
var claimed = waterfall.AnswererFunc(func(context.Context, *waterfall.Request, waterfall.Next) (waterfall.Settlement, error) {
	return waterfall.Settlement{}, waterfall.ErrClaimed
})

type env struct {
	t     testing.TB
	st    *store.Memory
	host  *engine.Host
	fake  *slackfake.Server
	web   *Server
	base  string
	authz *lists
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newEnv serves the page over a fresh memory store and Host, signing in
// through the fake Slack's OpenID Connect endpoints.
func newEnv(t testing.TB, tweak ...func(*Options)) *env {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	fake := slackfake.New(slackfake.Options{Users: []slackfake.User{alice, bob, mallory, eve, outsider},
		OIDCClientID: clientID, OIDCClientSecret: clientSecret, OIDCRedirectURIs: []string{base + CallbackPath}})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	st := store.NewMemory(time.Hour, nil)
	host := engine.NewHost(st, claimed, engine.HostOptions{Audit: st, Logger: quiet(), Policy: waterfall.QuorumPolicy{}})
	e := &env{t: t, st: st, host: host, fake: fake, base: base,
		authz: &lists{allowed: map[string]bool{alice.ID: true, bob.ID: true, mallory.ID: true}}}
	opts := Options{Host: host, Authorizer: e.authz, Admins: admins{bob.ID}, Keeper: st, BaseURL: base, ClientID: clientID,
		ClientSecret: clientSecret, Provider: ProviderFor(fake.APIURL()), Team: func(context.Context) (string, error) { return "T0FAKE", nil },
		Logger: quiet(), Poll: 20 * time.Millisecond}
	for _, f := range tweak {
		f(&opts)
	}
	e.web, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	host.Observe(e.web)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: e.web}}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = e.web.Stop(context.Background()) })
	return e
}

// browser is a cookie jar that does not follow redirects, so each step of a
// sign-in is seen.
type browser struct {
	t testing.TB
	c *http.Client
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: e.t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type result struct {
	status int
	body   string
	header http.Header
}

func (b *browser) do(req *http.Request) result {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return result{status: resp.StatusCode, body: string(body), header: resp.Header}
}

func (b *browser) get(u string) result {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return b.do(req)
}

func (b *browser) post(u string, form url.Values, header ...string) result {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// startSignIn goes to the page's sign-in and returns Slack's authorize URL.
func (e *env) startSignIn(b *browser, next string) string {
	e.t.Helper()
	p := b.get(e.base + "/app/login?next=" + url.QueryEscape(next))
	if p.status != http.StatusFound {
		e.t.Fatalf("login: %d %s", p.status, p.body)
	}
	return p.header.Get("Location")
}

// pick chooses who signs in on the fake's page and returns the callback URL
// Slack sends the browser to.
func (e *env) pick(b *browser, authorize string, u slackfake.User) string {
	e.t.Helper()
	p := b.get(authorize + "&fake_user=" + u.ID)
	if p.status != http.StatusFound {
		e.t.Fatalf("authorize as %s: %d %s", u.Name, p.status, p.body)
	}
	return p.header.Get("Location")
}

// signIn signs u in and returns the page the sign-in lands on.
func (e *env) signIn(b *browser, u slackfake.User) result {
	e.t.Helper()
	return b.get(e.pick(b, e.startSignIn(b, "/app/"), u))
}

func (e *env) mustSignIn(b *browser, u slackfake.User) {
	e.t.Helper()
	p := e.signIn(b, u)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/app/" {
		e.t.Fatalf("sign-in as %s: %d %q %s", u.Name, p.status, p.header.Get("Location"), p.body)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, p result) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token on the page: %s", p.body)
	}
	return m[1]
}

// open stores an ask with nobody waiting on it.
func (e *env) open(req *waterfall.Request) *waterfall.Record {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	rec, err := e.host.Open(ctx, req)
	if err != nil {
		e.t.Fatal(err)
	}
	return rec
}

func dbQuestion(id string) *waterfall.Request {
	return &waterfall.Request{CallID: id, Agent: waterfall.Agent{ID: "claude-code"}, Questions: []waterfall.Question{{
		ID: "db", Question: "Which **database**?", Header: "Database",
		Options: []waterfall.Option{{Label: "PostgreSQL", Description: "the usual"}, {Label: "SQLite", Preview: "```sql\nCREATE TABLE t(x);\n```"}},
	}}}
}

func TestAnswerFromTheBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open(dbQuestion("call-1"))
	b := e.browser()
	e.mustSignIn(b, alice)

	inbox := b.get(e.base + "/app/")
	if inbox.status != http.StatusOK || !strings.Contains(inbox.body, "Database: Which **database**?") || !strings.Contains(inbox.body, `href="/app/asks/call-1"`) {
		t.Fatalf("inbox: %d %s", inbox.status, inbox.body)
	}
	ask := b.get(e.base + "/app/asks/call-1")
	for _, want := range []string{"Which <strong>database</strong>?", "PostgreSQL", "the usual", "CREATE TABLE t(x);", `name="q0" value="1"`} {
		if !strings.Contains(ask.body, want) {
			t.Fatalf("the ask page lacks %q:\n%s", want, ask.body)
		}
	}
	p := b.post(e.base+"/app/asks/call-1", url.Values{"csrf": {csrfOf(t, ask)}, "q0": {"1"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/app/asks/call-1?m=answered" {
		t.Fatalf("answer: %d %q %s", p.status, p.header.Get("Location"), p.body)
	}
	rec, err := e.host.Get(context.Background(), "call-1")
	if err != nil {
		t.Fatal(err)
	}
	s := rec.Settlement
	if rec.Phase != waterfall.PhaseSettled || s == nil || s.Answers[0].Selected[0] != "SQLite" ||
		s.Respondent.UserID != alice.ID || s.Respondent.UserName != "alice" || s.Respondent.Surface != waterfall.SurfaceWeb {
		t.Fatalf("settled %v %+v", rec.Phase, s)
	}
	after := b.get(e.base + p.header.Get("Location"))
	if !strings.Contains(after.body, "Your answer was sent to the agent.") || !strings.Contains(after.body, "Answered by <strong>alice</strong> via web") ||
		strings.Contains(after.body, `id="answer-form"`) {
		t.Fatalf("after answering: %s", after.body)
	}
	// The trail says who, via the web.
	entries, _, err := e.host.Audit(context.Background(), asktype.AuditQuery{CallID: "call-1"})
	if err != nil {
		t.Fatal(err)
	}
	var answered bool
	for _, en := range entries {
		if en.Event == asktype.EventAnswered && en.Respondent != nil && en.Respondent.UserID == alice.ID && en.Respondent.Surface == "web" {
			answered = true
		}
	}
	if !answered {
		t.Fatalf("no settled entry by alice via web: %+v", entries)
	}
	// A second answer (bob's, a moment later) does not count.
	b2 := e.browser()
	e.mustSignIn(b2, bob)
	if p := b2.post(e.base+"/app/asks/call-1", url.Values{"csrf": {csrfOf(t, b2.get(e.base+"/app/"))}, "q0": {"0"}}); p.header.Get("Location") != "/app/asks/call-1?m=taken" {
		t.Fatalf("a later answer: %d %q", p.status, p.header.Get("Location"))
	}
}

func TestOtherTextAndMultiSelect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open(&waterfall.Request{CallID: "call-m", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{
		{ID: "files", Question: "Which files?", MultiSelect: true, Options: []waterfall.Option{{Label: "a.go"}, {Label: "b.go"}, {Label: "c.go"}}},
		{ID: "why", Question: "Why?", Options: []waterfall.Option{{Label: "speed"}, {Label: "safety"}}},
	}})
	b := e.browser()
	e.mustSignIn(b, alice)
	ask := b.get(e.base + "/app/asks/call-m")
	// Option indexes pick the ask's own labels; an index out of range and a
	// repeated one are ignored.
	p := b.post(e.base+"/app/asks/call-m", url.Values{"csrf": {csrfOf(t, ask)}, "q0": {"0", "2", "2", "9", "x"}, "q1": {"0"}, "q1-other": {"  because I said so  "}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("answer: %d %s", p.status, p.body)
	}
	if p.header.Get("Location") != "/app/asks/call-m?m=answered" {
		t.Fatalf("answer went to %q", p.header.Get("Location"))
	}
	rec, _ := e.host.Get(context.Background(), "call-m")
	got := rec.Settlement.Answer
	if !slices.Equal(got.Answers[0].Selected, []string{"a.go", "c.go"}) || len(got.Answers[1].Selected) != 0 || got.Answers[1].Custom != "because I said so" {
		t.Fatalf("answer %+v", got)
	}
}

func TestEmptyAnswerIsRefusedAndNothingSettles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open(dbQuestion("call-e"))
	b := e.browser()
	e.mustSignIn(b, alice)
	p := b.post(e.base+"/app/asks/call-e", url.Values{"csrf": {csrfOf(t, b.get(e.base+"/app/asks/call-e"))}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "Pick an option or type an answer first.") {
		t.Fatalf("empty answer: %d %s", p.status, p.body)
	}
	if rec, _ := e.host.Get(context.Background(), "call-e"); rec.Phase != waterfall.PhaseOpen {
		t.Fatalf("phase %v", rec.Phase)
	}
}

// TestRefusals: every way in that must not work, each through the page.
// wantRefusedPosts checks the audit trail holds n refusals of u's posts
// whose detail says want, about callID's ask ("" for none), as refused
// clicks are recorded: the person, surface web, the ask's caller.
func wantRefusedPosts(t *testing.T, e *env, callID string, u slackfake.User, n int, want string) {
	t.Helper()
	entries, _, err := e.host.Audit(context.Background(), asktype.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, en := range entries {
		if en.Event == asktype.EventRefused && en.CallID == callID && en.Respondent != nil && en.Respondent.UserID == u.ID &&
			en.Respondent.Surface == waterfall.SurfaceWeb && strings.Contains(en.Detail, "the answer page refused a post") &&
			strings.Contains(en.Detail, want) {
			got++
		}
	}
	if got != n {
		t.Fatalf("%d refused posts saying %q in the audit trail; want %d: %+v", got, want, n, entries)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	settledOrNot := func(e *env, id string) waterfall.Phase {
		rec, err := e.host.Get(context.Background(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		return rec.Phase
	}
	t.Run("post without the CSRF token", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.open(dbQuestion("c"))
		b := e.browser()
		e.mustSignIn(b, alice)
		for _, form := range []url.Values{{"q0": {"0"}}, {"q0": {"0"}, "csrf": {"forged"}}} {
			if p := b.post(e.base+"/app/asks/c", form); p.status != http.StatusForbidden {
				t.Fatalf("%v: %d %s", form, p.status, p.body)
			}
		}
		if ph := settledOrNot(e, "c"); ph != waterfall.PhaseOpen {
			t.Fatalf("phase %v", ph)
		}
		wantRefusedPosts(t, e, "c", alice, 2, "CSRF token is missing or wrong")
		// A sign-out without the token is refused and recorded too, about no ask.
		if p := b.post(e.base+"/app/logout", url.Values{}); p.status != http.StatusForbidden {
			t.Fatalf("logout without the token: %d", p.status)
		}
		wantRefusedPosts(t, e, "", alice, 1, "/app/logout")
	})
	t.Run("post from another site", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.open(dbQuestion("c"))
		b := e.browser()
		e.mustSignIn(b, alice)
		tok := csrfOf(t, b.get(e.base+"/app/"))
		for _, h := range [][]string{{"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "cross-site"}} {
			if p := b.post(e.base+"/app/asks/c", url.Values{"csrf": {tok}, "q0": {"0"}}, h...); p.status != http.StatusForbidden {
				t.Fatalf("%v: %d", h, p.status)
			}
		}
		if ph := settledOrNot(e, "c"); ph != waterfall.PhaseOpen {
			t.Fatalf("phase %v", ph)
		}
		wantRefusedPosts(t, e, "c", alice, 1, "another origin (Origin)")
		wantRefusedPosts(t, e, "c", alice, 1, "another site (Sec-Fetch-Site)")
	})
	t.Run("mallory sees nothing to answer and her forged post is refused and audited", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.open(&waterfall.Request{CallID: "c", Agent: waterfall.Agent{ID: "a"}, Approvers: []string{alice.ID, bob.ID}, Questions: []waterfall.Question{{
			ID: waterfall.PermissionQuestionID, Question: "Run the database migration?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}},
		}}, Permission: &waterfall.Permission{Tool: "Bash", Command: "make migrate"}})
		b := e.browser()
		e.mustSignIn(b, mallory)
		inbox := b.get(e.base + "/app/")
		if !strings.Contains(inbox.body, `id="empty"`) || strings.Contains(inbox.body, "call") {
			t.Fatalf("mallory's inbox: %s", inbox.body)
		}
		if p := b.get(e.base + "/app/asks/c"); p.status != http.StatusNotFound || strings.Contains(p.body, "database") {
			t.Fatalf("mallory's view of the ask: %d %s", p.status, p.body)
		}
		if p := b.post(e.base+"/app/asks/c", url.Values{"csrf": {csrfOf(t, inbox)}, "q0": {"0"}}); p.status != http.StatusNotFound || strings.Contains(p.body, "approve") {
			t.Fatalf("mallory's forged answer: %d %s", p.status, p.body)
		}
		if ph := settledOrNot(e, "c"); ph != waterfall.PhaseOpen {
			t.Fatalf("phase %v", ph)
		}
		entries, _, _ := e.host.Audit(context.Background(), asktype.AuditQuery{CallID: "c"})
		if !slices.ContainsFunc(entries, func(en asktype.AuditEntry) bool {
			return en.Event == asktype.EventRefused && en.Respondent != nil && en.Respondent.UserID == mallory.ID && en.Respondent.Surface == "web"
		}) {
			t.Fatalf("no refusal of mallory in the trail: %+v", entries)
		}
	})
	t.Run("someone on no list cannot sign in", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		b := e.browser()
		if p := e.signIn(b, outsider); p.status != http.StatusForbidden || !strings.Contains(p.body, "not on the list") {
			t.Fatalf("outsider: %d %s", p.status, p.body)
		}
		if p := b.get(e.base + "/app/"); p.status != http.StatusUnauthorized {
			t.Fatalf("outsider after a refused sign-in: %d", p.status)
		}
	})
	t.Run("a replayed state", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		b := e.browser()
		cb := e.pick(b, e.startSignIn(b, "/app/"), alice)
		if p := b.get(cb); p.status != http.StatusSeeOther {
			t.Fatalf("first callback: %d %s", p.status, p.body)
		}
		// The same callback again, even with the login cookie put back: the
		// state was spent.
		u, _ := url.Parse(cb)
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: loginCookie, Value: u.Query().Get("state"), Path: "/app/auth/"}})
		if p := b.get(cb); p.status != http.StatusForbidden || !strings.Contains(p.body, "already used") {
			t.Fatalf("replayed callback: %d %s", p.status, p.body)
		}
	})
	t.Run("a callback in another browser than the one that started", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		attacker, victim := e.browser(), e.browser()
		cb := e.pick(attacker, e.startSignIn(attacker, "/app/"), mallory)
		if p := victim.get(cb); p.status != http.StatusForbidden || !strings.Contains(p.body, "did not start in this browser") {
			t.Fatalf("login CSRF: %d %s", p.status, p.body)
		}
	})
	t.Run("an ID token from another workspace", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.authz.allowed[eve.ID] = true // even were she listed
		b := e.browser()
		if p := e.signIn(b, eve); p.status != http.StatusForbidden || !strings.Contains(p.body, "another Slack workspace") {
			t.Fatalf("eve: %d %s", p.status, p.body)
		}
	})
	t.Run("a tampered cookie", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.open(dbQuestion("c"))
		b := e.browser()
		e.mustSignIn(b, alice)
		tok := csrfOf(t, b.get(e.base+"/app/"))
		u, _ := url.Parse(e.base + "/")
		for _, c := range b.c.Jar.Cookies(u) {
			if c.Name == "askslack" {
				b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "askslack", Value: c.Value[:len(c.Value)-2] + "xx", Path: "/"}})
			}
		}
		if p := b.get(e.base + "/app/"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Sign in with Slack") {
			t.Fatalf("tampered cookie: %d %s", p.status, p.body)
		}
		if p := b.post(e.base+"/app/asks/c", url.Values{"csrf": {tok}, "q0": {"0"}}); p.status != http.StatusUnauthorized {
			t.Fatalf("tampered cookie's answer: %d", p.status)
		}
		if ph := settledOrNot(e, "c"); ph != waterfall.PhaseOpen {
			t.Fatalf("phase %v", ph)
		}
	})
	t.Run("a signed-out session", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.open(dbQuestion("c"))
		b := e.browser()
		e.mustSignIn(b, alice)
		tok := csrfOf(t, b.get(e.base+"/app/"))
		u, _ := url.Parse(e.base + "/")
		stolen := b.c.Jar.Cookies(u)
		if p := b.post(e.base+"/app/logout", url.Values{"csrf": {tok}}); p.status != http.StatusOK || !strings.Contains(p.body, "You are signed out.") {
			t.Fatalf("logout: %d %s", p.status, p.body)
		}
		// The cookie kept from before (another tab, a thief) no longer works.
		thief := e.browser()
		thief.c.Jar.SetCookies(u, stolen)
		if p := thief.post(e.base+"/app/asks/c", url.Values{"csrf": {tok}, "q0": {"0"}}); p.status != http.StatusUnauthorized {
			t.Fatalf("a signed-out session's answer: %d %s", p.status, p.body)
		}
		if ph := settledOrNot(e, "c"); ph != waterfall.PhaseOpen {
			t.Fatalf("phase %v", ph)
		}
	})
	t.Run("taken off the list ends the session", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		b := e.browser()
		e.mustSignIn(b, alice)
		e.authz.remove(alice.ID)
		if p := b.get(e.base + "/app/"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "not on the list") {
			t.Fatalf("after removal: %d %s", p.status, p.body)
		}
		// Ended in the store, not only refused: put back on the list, the
		// old session does not come back.
		e.authz.mu.Lock()
		e.authz.allowed[alice.ID] = true
		e.authz.mu.Unlock()
		if p := b.get(e.base + "/app/"); p.status != http.StatusUnauthorized {
			t.Fatalf("the ended session came back: %d", p.status)
		}
	})
	t.Run("logout without the CSRF token", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		b := e.browser()
		e.mustSignIn(b, alice)
		if p := b.post(e.base+"/app/logout", nil); p.status != http.StatusForbidden {
			t.Fatalf("logout without token: %d", p.status)
		}
		if p := b.get(e.base + "/app/"); p.status != http.StatusOK {
			t.Fatalf("still signed in: %d", p.status)
		}
	})
	t.Run("the console is the admins'", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		b := e.browser()
		e.mustSignIn(b, alice)
		if p := b.get(e.base + "/app/console"); p.status != http.StatusForbidden {
			t.Fatalf("alice's console: %d", p.status)
		}
		if p := b.post(e.base+"/app/console/rules/1/revoke", url.Values{"csrf": {csrfOf(t, b.get(e.base+"/app/"))}}); p.status != http.StatusForbidden {
			t.Fatalf("alice's revoke: %d", p.status)
		}
	})
}

func TestSignInGoesOnlyToLocalPaths(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/app/asks/c1?m=x":        "/app/asks/c1?m=x",
		"https://evil.example/":   "/app/",
		"//evil.example/app/":     "/app/",
		"/app/\\evil.example":     "/app/",
		"/\\evil.example":         "/app/",
		"/metrics":                "/app/",
		"":                        "/app/",
		"/app/../v1/asks":         "/app/", // cleaned first: a redirect would clean it to /v1/asks
		"/app/../metrics":         "/app/",
		"/app/asks/../":           "/app/",
		"javascript:alert(1)":     "/app/",
		"/app/%0d%0aSet-Cookie:x": "/app/%0d%0aSet-Cookie:x",
	} {
		if got := localNext(next); got != want {
			t.Errorf("localNext(%q) = %q; want %q", next, got, want)
		}
	}
	e := newEnv(t)
	b := e.browser()
	p := b.get(e.pick(b, e.startSignIn(b, "https://evil.example/steal"), alice))
	if p.header.Get("Location") != "/app/" {
		t.Fatalf("landed on %q", p.header.Get("Location"))
	}
}

func TestSignInIsRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.browser()
	var limited int
	for range 60 {
		if p := b.get(e.base + "/app/login"); p.status == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("60 sign-ins at once from one address were all let through")
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.browser().get(e.base + "/app/")
	csp := p.header.Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors 'none'", "script-src 'self'", "default-src 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if p.header.Get("X-Frame-Options") != "DENY" || p.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", p.header)
	}
	// Loopback http: the cookie cannot be Secure (it would never be sent).
	b := e.browser()
	pp := b.get(e.pick(b, e.startSignIn(b, "/app/"), alice))
	ck := pp.header.Get("Set-Cookie")
	if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Lax") || strings.Contains(ck, "Secure") {
		t.Errorf("session cookie %q", ck)
	}
}

func TestSecureCookieOffLoopback(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Host: &engine.Host{}, Authorizer: &lists{}, Keeper: store.NewMemory(time.Hour, nil), BaseURL: "https://askslack.example.com",
		ClientID: "c", ClientSecret: "s", Team: func(context.Context) (string, error) { return "T", nil }})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if _, err := s.start(context.Background(), rec, identity{User: "U1", Team: "T"}); err != nil {
		t.Fatal(err)
	}
	ck := rec.Header().Get("Set-Cookie")
	if !strings.HasPrefix(ck, "__Host-askslack=") || !strings.Contains(ck, "Secure") || !strings.Contains(ck, "Path=/") {
		t.Fatalf("cookie %q", ck)
	}
	for _, bad := range []string{"http://askslack.example.com", "ftp://x", "https://x/app", "https://x?y=1", "askslack.example.com"} {
		if _, err := ParseBaseURL(bad); err == nil {
			t.Errorf("ParseBaseURL(%q) accepted", bad)
		}
	}
}

// events reads a page's live stream into a channel of event names.
func events(t *testing.T, b *browser, base string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/app/events", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %d", resp.StatusCode)
	}
	ch := make(chan string, 64)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				ch <- name
			}
		}
		close(ch)
	}()
	return ch
}

func waitEvent(t *testing.T, ch <-chan string, name string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %q", name)
			}
			if got == name {
				return
			}
		case <-timeout:
			t.Fatalf("no %q event", name)
		}
	}
}

func TestLiveAcrossReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.browser()
	e.mustSignIn(b, alice)
	ch := events(t, b, e.base)
	waitEvent(t, ch, "hello")
	// On this replica: the Host's observer.
	e.open(dbQuestion("here"))
	waitEvent(t, ch, "changed")
	// On another replica (another Host over the same store, which this
	// page's Host never hears of): the poll.
	other := engine.NewHost(e.st, claimed, engine.HostOptions{Audit: e.st, Logger: quiet()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := other.Open(ctx, dbQuestion("there")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ch, "changed")
	if p := b.get(e.base + "/app/"); !strings.Contains(p.body, `href="/app/asks/there"`) {
		t.Fatalf("the other replica's ask is not listed: %s", p.body)
	}
	// Without a session there is no stream.
	if p := e.browser().get(e.base + "/app/events"); p.status != http.StatusUnauthorized {
		t.Fatalf("events signed out: %d", p.status)
	}
}

func TestIdleReplicaPollsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// No page open: no poll runs.
	e.web.feed.mu.Lock()
	polling := e.web.feed.polling
	e.web.feed.mu.Unlock()
	if polling {
		t.Fatal("polling with no page open")
	}
	b := e.browser()
	e.mustSignIn(b, alice)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/app/events", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(resp.Body).ReadString('\n')
	cancel()
	resp.Body.Close()
	// The stream closed: the poll stops at its next tick.
	deadline := time.Now().Add(30 * time.Second)
	for {
		e.web.feed.mu.Lock()
		polling, subs := e.web.feed.polling, len(e.web.feed.subs)
		e.web.feed.mu.Unlock()
		if !polling && subs == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still polling (subscribers %d) after the page closed", subs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLongPlanRendersWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var plan strings.Builder
	for i := 0; plan.Len() < 40<<10; i++ {
		fmt.Fprintf(&plan, "## Step %d\n\n- change `file%d.go`\n- run the tests\n\n| a | b |\n|---|---|\n| %d | x |\n\n```diff\n-old %d\n+new %d\n```\n\n", i, i, i, i, i)
	}
	fmt.Fprintf(&plan, "## The very last step\n\nDone.\n")
	e.open(&waterfall.Request{CallID: "plan", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: "plan", Question: "Approve this plan?", Detail: plan.String(), Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
		Options: []waterfall.Option{{Label: "Approve"}, {Label: "Decline"}},
	}}})
	b := e.browser()
	e.mustSignIn(b, alice)
	p := b.get(e.base + "/app/asks/plan")
	for _, want := range []string{"The very last step", `<span class="add">+new 0</span>`, "<table>", "Feedback (declines the plan)"} {
		if !strings.Contains(p.body, want) {
			t.Fatalf("the plan page lacks %q (%d bytes)", want, len(p.body))
		}
	}
	// Declining with feedback: the typed text is the answer.
	if p := b.post(e.base+"/app/asks/plan", url.Values{"csrf": {csrfOf(t, p)}, "q0-other": {"split step 3"}}); p.status != http.StatusSeeOther {
		t.Fatalf("decline: %d %s", p.status, p.body)
	}
	rec, _ := e.host.Get(context.Background(), "plan")
	if rec.Settlement.Answers[0].Custom != "split step 3" {
		t.Fatalf("%+v", rec.Settlement)
	}
}

func TestHostileAgentTextIsEscaped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	e.open(&waterfall.Request{CallID: "evil", Agent: waterfall.Agent{ID: evil}, Questions: []waterfall.Question{{
		ID: "q", Question: evil, Header: evil, Detail: "[x](javascript:alert(3)) " + evil,
		Options: []waterfall.Option{{Label: evil, Description: evil, Preview: evil}},
	}}})
	b := e.browser()
	e.mustSignIn(b, alice)
	for _, u := range []string{"/app/", "/app/asks/evil"} {
		p := b.get(e.base + u)
		if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<img") || strings.Contains(p.body, `href="javascript:`) {
			t.Fatalf("%s lets agent markup through:\n%s", u, p.body)
		}
	}
}

func TestQuorumVotesFromSlackAndBrowserAreOnePerson(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req := &waterfall.Request{CallID: "q2", Agent: waterfall.Agent{ID: "a"}, Approvals: 2, Questions: []waterfall.Question{{
		ID: waterfall.PermissionQuestionID, Question: "Run `make deploy`?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}},
	}}, Permission: &waterfall.Permission{Tool: "Bash", Command: "make deploy"}}
	e.open(req)
	// alice approves in Slack…
	ctx := context.Background()
	out, err := e.host.Answer(ctx, "q2", waterfall.SingleAnswer(&req.Questions[0], []string{"Allow"}, ""),
		waterfall.Respondent{UserID: alice.ID, UserName: "alice", Surface: waterfall.SurfaceSlack})
	if err != nil || !out.Voted {
		t.Fatalf("alice in Slack: %+v %v", out, err)
	}
	// …and again in the browser: still one vote.
	b := e.browser()
	e.mustSignIn(b, alice)
	ask := b.get(e.base + "/app/asks/q2")
	if !strings.Contains(ask.body, "1 of 2 approvals: alice") || !strings.Contains(ask.body, "make deploy") {
		t.Fatalf("the page: %s", ask.body)
	}
	p := b.post(e.base+"/app/asks/q2", url.Values{"csrf": {csrfOf(t, ask)}, "q0": {"0"}})
	if rec, _ := e.host.Get(ctx, "q2"); rec.Phase != waterfall.PhaseOpen {
		t.Fatalf("alice twice made a quorum of two: %v (%d %s)", rec.Phase, p.status, p.header.Get("Location"))
	}
	// bob in the browser makes it.
	b2 := e.browser()
	e.mustSignIn(b2, bob)
	if p := b2.post(e.base+"/app/asks/q2", url.Values{"csrf": {csrfOf(t, b2.get(e.base+"/app/asks/q2"))}, "q0": {"0"}}); p.header.Get("Location") != "/app/asks/q2?m=answered" {
		t.Fatalf("bob: %d %q %s", p.status, p.header.Get("Location"), p.body)
	}
	if rec, _ := e.host.Get(ctx, "q2"); rec.Phase != waterfall.PhaseSettled || len(rec.Settlement.Approvers) != 2 {
		t.Fatalf("%v %+v", rec.Phase, rec.Settlement)
	}
}

func TestConsole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open(dbQuestion("open-1"))
	b := e.browser()
	e.mustSignIn(b, bob)
	p := b.get(e.base + "/app/console")
	if p.status != http.StatusOK {
		t.Fatalf("console: %d %s", p.status, p.body)
	}
	for _, want := range []string{"Open asks (1)", `data-call="open-1"`, "The chain holds:", "Time to answer", "No standing rules."} {
		if !strings.Contains(p.body, want) {
			t.Fatalf("the console lacks %q:\n%s", want, p.body)
		}
	}
	if !strings.Contains(b.get(e.base+"/app/").body, `href="/app/console"`) {
		t.Fatal("the admin's nav has no console link")
	}
}
