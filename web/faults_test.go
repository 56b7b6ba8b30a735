package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/rules"
	"github.com/askslack/askslack/waterfall"
)

// counted is a Metrics that keeps what it was told.
type counted struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counted) Web(action, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[action+" "+result]++
}

func (c *counted) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// TestFirstAnswerWinsAgainstSlack: the page and a Slack click answer at
// once, many times over: exactly one answer stands each time, and the page
// says so to whoever lost.
func TestFirstAnswerWinsAgainstSlack(t *testing.T) {
	t.Parallel()
	m := &counted{}
	e := newEnv(t, func(o *Options) { o.Metrics = m })
	b := e.browser()
	e.mustSignIn(b, alice)
	tok := csrfOf(t, b.get(e.base+"/app/"))
	ctx := context.Background()
	for i := range 20 {
		id := "race-" + string(rune('a'+i))
		req := e.open(dbQuestion(id)).Request
		var wg sync.WaitGroup
		var page result
		var slackErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			page = b.post(e.base+"/app/asks/"+id, url.Values{"csrf": {tok}, "q0": {"1"}})
		}()
		go func() {
			defer wg.Done()
			_, slackErr = e.host.Answer(ctx, id, waterfall.SingleAnswer(&req.Questions[0], []string{"PostgreSQL"}, ""),
				waterfall.Respondent{UserID: bob.ID, UserName: "bob", Surface: waterfall.SurfaceSlack})
		}()
		wg.Wait()
		rec, _ := e.host.Get(ctx, id)
		pageWon := page.header.Get("Location") == "/app/asks/"+id+"?m=answered"
		slackWon := slackErr == nil
		if pageWon == slackWon {
			t.Fatalf("%s: page %q, Slack %v: exactly one must win", id, page.header.Get("Location"), slackErr)
		}
		if !pageWon && page.header.Get("Location") != "/app/asks/"+id+"?m=taken" {
			t.Fatalf("%s: the page lost and says %q", id, page.header.Get("Location"))
		}
		want := map[bool]string{true: "SQLite", false: "PostgreSQL"}[pageWon]
		if rec.Settlement == nil || rec.Settlement.Answers[0].Selected[0] != want {
			t.Fatalf("%s: settled %+v, want %s", id, rec.Settlement, want)
		}
	}
	if m.get("answer settled")+m.get("answer duplicate") != 20 {
		t.Fatalf("metrics %v", m.n)
	}
}

// TestSlackDownAtSignIn: the token endpoint failing refuses the sign-in,
// says so, and leaves no session; the next try works.
func TestSlackDownAtSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.FailNext("openid.connect.token", 1, "internal_error", 0)
	b := e.browser()
	if p := e.signIn(b, alice); p.status != http.StatusForbidden || !strings.Contains(p.body, "Sign-in refused") {
		t.Fatalf("sign-in with Slack down: %d %s", p.status, p.body)
	}
	if p := b.get(e.base + "/app/"); p.status != http.StatusUnauthorized {
		t.Fatalf("a session after a failed sign-in: %d", p.status)
	}
	e.mustSignIn(b, alice)
}

// brokenKeeper fails every store call once broken: Redis down.
type brokenKeeper struct {
	Keeper
	mu     sync.Mutex
	broken bool
}

var errDown = errors.New("redis: connection refused")

func (k *brokenKeeper) down() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.broken
}

func (k *brokenKeeper) Remember(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error) {
	if k.down() {
		return "", errDown
	}
	return k.Keeper.Remember(ctx, key, value, ttl, now)
}

func (k *brokenKeeper) Put(ctx context.Context, key, value string, ttl time.Duration, now time.Time) error {
	if k.down() {
		return errDown
	}
	return k.Keeper.Put(ctx, key, value, ttl, now)
}

func (k *brokenKeeper) Take(ctx context.Context, b asktype.Bucket, now time.Time) (bool, error) {
	if k.down() {
		return false, errDown
	}
	return k.Keeper.Take(ctx, b, now)
}

// TestStoreDown: with the store unreachable nobody is let in and nothing is
// answered, each refusal saying to try again; when it is back, the session
// kept there works again.
func TestStoreDown(t *testing.T) {
	t.Parallel()
	k := &brokenKeeper{}
	e := newEnv(t, func(o *Options) { k.Keeper = o.Keeper; o.Keeper = k })
	e.open(dbQuestion("c"))
	b := e.browser()
	e.mustSignIn(b, alice)
	tok := csrfOf(t, b.get(e.base+"/app/"))
	k.mu.Lock()
	k.broken = true
	k.mu.Unlock()
	if p := b.get(e.base + "/app/"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "cannot be read just now") {
		t.Fatalf("inbox with the store down: %d %s", p.status, p.body)
	}
	if p := b.post(e.base+"/app/asks/c", url.Values{"csrf": {tok}, "q0": {"0"}}); p.status != http.StatusUnauthorized {
		t.Fatalf("answer with the store down: %d", p.status)
	}
	if p := e.browser().get(e.base + "/app/login"); p.status != http.StatusServiceUnavailable {
		t.Fatalf("sign-in with the store down: %d", p.status)
	}
	k.mu.Lock()
	k.broken = false
	k.mu.Unlock()
	if p := b.post(e.base+"/app/asks/c", url.Values{"csrf": {tok}, "q0": {"0"}}); p.header.Get("Location") != "/app/asks/c?m=answered" {
		t.Fatalf("answer with the store back: %d %s", p.status, p.body)
	}
}

// TestConsoleRevokesARule: an admin revokes a standing rule from the
// console; the revoke is the admin's in the trail, and the rule answers
// nothing more.
func TestConsoleRevokesARule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.host.UseRules(engine.RuleOptions{Store: e.st})
	ctx := context.Background()
	perm := func(id string) *waterfall.Request {
		return &waterfall.Request{CallID: id, Agent: waterfall.Agent{ID: "a"}, Permission: &waterfall.Permission{Tool: "Bash", Command: "go test ./..."},
			Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Question: "Run go test?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}}}
	}
	e.open(perm("p1"))
	rule, err := e.host.GrantRule(ctx, "p1", waterfall.Grant{Rule: rules.Rule{Effect: rules.Allow, Tool: "Bash", Command: "go test *"}},
		waterfall.Respondent{UserID: alice.ID, UserName: "alice", Surface: waterfall.SurfaceSlack})
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.mustSignIn(b, bob)
	console := b.get(e.base + "/app/console")
	if !strings.Contains(console.body, `data-rule="`) || !strings.Contains(console.body, "go test *") {
		t.Fatalf("the console does not list the rule: %s", console.body)
	}
	p := b.post(e.base+"/app/console/rules/"+strconv.FormatInt(rule.ID, 10)+"/revoke", url.Values{"csrf": {csrfOf(t, console)}})
	if p.header.Get("Location") != "/app/console?m=revoked" {
		t.Fatalf("revoke: %d %s", p.status, p.body)
	}
	rs, _ := e.host.Rules(ctx)
	for _, r := range rs {
		if r.ID == rule.ID && r.Live(time.Now()) {
			t.Fatalf("the rule still answers: %+v", r)
		}
	}
	entries, _, _ := e.host.Audit(ctx, asktype.AuditQuery{})
	var byBob bool
	for _, en := range entries {
		if en.Event == asktype.EventRuleRevoked && en.Respondent != nil && en.Respondent.UserID == bob.ID && en.Respondent.Surface == "web" {
			byBob = true
		}
	}
	if !byBob {
		t.Fatalf("no revoke by bob via web in the trail: %+v", entries)
	}
	// Revoking it again: there is no such live rule.
	if p := b.post(e.base+"/app/console/rules/"+strconv.FormatInt(rule.ID, 10)+"/revoke", url.Values{"csrf": {csrfOf(t, console)}}); p.status == http.StatusSeeOther {
		t.Fatalf("a second revoke succeeded")
	}
}

// TestRevokeIsTheRuleAdmins': with rule admins named, a console admin who
// is not one sees no Revoke and a forged one is refused, as in Slack.
func TestRevokeIsTheRuleAdmins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *Options) { o.RuleAdmins = admins{"U0SOMEONE"} })
	e.host.UseRules(engine.RuleOptions{Store: e.st})
	ctx := context.Background()
	e.open(&waterfall.Request{CallID: "p1", Agent: waterfall.Agent{ID: "a"}, Permission: &waterfall.Permission{Tool: "Bash", Command: "go test ./..."},
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Question: "Run go test?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}}})
	rule, err := e.host.GrantRule(ctx, "p1", waterfall.Grant{Rule: rules.Rule{Effect: rules.Allow, Tool: "Bash", Command: "go test *"}},
		waterfall.Respondent{UserID: alice.ID, UserName: "alice", Surface: waterfall.SurfaceSlack})
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.mustSignIn(b, bob)
	console := b.get(e.base + "/app/console")
	if console.status != http.StatusOK || strings.Contains(console.body, "revoke-") {
		t.Fatalf("bob's console offers Revoke: %d", console.status)
	}
	if p := b.post(e.base+"/app/console/rules/"+strconv.FormatInt(rule.ID, 10)+"/revoke", url.Values{"csrf": {csrfOf(t, console)}}); p.status != http.StatusForbidden {
		t.Fatalf("bob's forged revoke: %d", p.status)
	}
	if rs, _ := e.host.Rules(ctx); len(rs) != 1 || !rs[0].Live(time.Now()) {
		t.Fatalf("the rule was revoked: %+v", rs)
	}
}

// TestListingsRenderNoMarkdown: the inbox lists asks by title; their
// plans are rendered only on their own pages (an agent's megabytes of
// Markdown, times 200 asks, must not be rendered for a list).
func TestListingsRenderNoMarkdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open(&waterfall.Request{CallID: "big", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: "plan", Question: "Approve?", Detail: "## Secret heading\n\n**bold** plan", Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
		Options: []waterfall.Option{{Label: "Approve", Description: "*go*"}, {Label: "Decline"}}}}})
	b := e.browser()
	e.mustSignIn(b, alice)
	inbox := b.get(e.base + "/app/")
	if !strings.Contains(inbox.body, `data-call="big"`) || strings.Contains(inbox.body, "Secret heading") || strings.Contains(inbox.body, "<strong>") {
		t.Fatalf("the inbox renders the plan: %s", inbox.body)
	}
	if p := b.get(e.base + "/app/asks/big"); !strings.Contains(p.body, "Secret heading") || !strings.Contains(p.body, "<strong>bold</strong>") {
		t.Fatalf("the ask page does not: %s", p.body)
	}
}

func TestBaseURLIsAsBrowsersSendIt(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://AskSlack.Example.com":      "https://askslack.example.com",
		"https://askslack.example.com:443/": "https://askslack.example.com",
		"https://askslack.example.com:8443": "https://askslack.example.com:8443",
		"http://127.0.0.1:80":               "http://127.0.0.1",
		"http://LOCALHOST:8080":             "http://localhost:8080",
	} {
		u, err := ParseBaseURL(raw)
		if err != nil || u.String() != want {
			t.Errorf("ParseBaseURL(%q) = %v, %v; want %s", raw, u, err, want)
		}
	}
}
