package installs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/workspace"
)

func key32(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

func TestSealOpensWithAnyKeyAndOnlyForItsOwnKey(t *testing.T) {
	oldK, newK := key32(t), key32(t)
	old, _ := NewSealer(oldK)
	sealed := old.Seal([]byte(`{"botToken":"xoxb-1"}`), "T1")
	if bytes.Contains(sealed, []byte("xoxb")) {
		t.Fatalf("the sealed value holds the token in clear: %s", sealed)
	}
	rotated, _ := NewSealer(newK, oldK)
	plain, wasOld, err := rotated.Open(sealed, "T1")
	if err != nil || !wasOld || string(plain) != `{"botToken":"xoxb-1"}` {
		t.Fatalf("Open after rotation = %q %v %v, want the plain text sealed with an old key", plain, wasOld, err)
	}
	if _, _, err := rotated.Open(sealed, "T2"); err == nil {
		t.Fatal("a value sealed for T1 opened as T2's")
	}
	newOnly, _ := NewSealer(newK)
	if _, _, err := newOnly.Open(sealed, "T1"); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("Open without the sealing key: %v, want it to name the missing key", err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-2] ^= 1
	if _, _, err := rotated.Open(tampered, "T1"); err == nil {
		t.Fatal("a tampered value opened")
	}
}

func TestParseKeysRefusesWhatIsNot32Bytes(t *testing.T) {
	if _, err := ParseKeys([]string{base64.StdEncoding.EncodeToString(make([]byte, 16))}); err == nil {
		t.Fatal("a 16-byte key was taken")
	}
	if _, err := ParseKeys([]string{"not base64!"}); err == nil {
		t.Fatal("garbage was taken")
	}
	if _, err := ParseKeys([]string{base64.RawURLEncoding.EncodeToString(make([]byte, 32))}); err != nil {
		t.Fatal(err)
	}
}

func newKeeper(t *testing.T) (*Keeper, *store.Memory) {
	t.Helper()
	st := store.NewMemory(0, nil)
	s, _ := NewSealer(key32(t))
	return NewKeeper(st, s, KeeperOptions{}), st
}

func TestKeeperServesAWorkspaceByItsOwnOrItsOrgWideInstall(t *testing.T) {
	ctx := context.Background()
	k, st := newKeeper(t)
	must(t, k.Save(ctx, Installation{Team: "T1", BotToken: "xoxb-one"}))
	must(t, k.Save(ctx, Installation{Enterprise: "E1", OrgWide: true, Teams: []string{"T2", "T1"}, BotToken: "xoxb-org"}))
	for team, want := range map[string]string{"T1": "xoxb-one", "T2": "xoxb-org"} {
		in, err := k.For(ctx, team)
		if err != nil || in.BotToken != want {
			t.Fatalf("For(%s) = %q %v, want %s (a workspace's own install wins)", team, in.BotToken, err, want)
		}
	}
	if _, err := k.For(ctx, "T3"); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("For(T3) = %v, want ErrNotInstalled", err)
	}
	raw, _ := st.Install(ctx, "T1")
	if bytes.Contains(raw, []byte("xoxb-one")) {
		t.Fatal("the store holds the token in clear")
	}
	// Another replica removes T1: this one sees it once it re-reads.
	other := NewKeeper(st, k.seal, KeeperOptions{})
	if _, won, _ := other.Remove(ctx, "T1"); !won {
		t.Fatal("Remove did not win")
	}
	k.Reread()
	if in, err := k.For(ctx, "T1"); err != nil || in.BotToken != "xoxb-org" {
		t.Fatalf("after T1's own install went, For(T1) = %q %v, want the org-wide install's", in.BotToken, err)
	}
}

// fakeSlack is a Web API endpoint recording the token each call came with.
type fakeSlack struct {
	mu     sync.Mutex
	tokens []string
	expire string // a token answered token_expired
}

func (f *fakeSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(b))
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ft := form.Get("token"); ft != "" && ft != tok {
		http.Error(w, "form token and header disagree", 400)
		return
	}
	f.mu.Lock()
	f.tokens = append(f.tokens, tok)
	expired := tok == f.expire
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if expired {
		io.WriteString(w, `{"ok":false,"error":"token_expired"}`)
		return
	}
	io.WriteString(w, `{"ok":true}`)
}

func post(ctx context.Context, c *http.Client, u, token string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(url.Values{"token": {token}, "channel": {"C1"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), nil
}

func TestTransportSendsEachCallWithItsWorkspacesTokenAndRefusesOneNamingNone(t *testing.T) {
	ctx := context.Background()
	fs := &fakeSlack{}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	k, st := newKeeper(t)
	must(t, k.Save(ctx, Installation{Team: "T1", BotToken: "xoxb-one"}))
	must(t, k.Save(ctx, Installation{Team: "T2", BotToken: "xoxb-two"}))
	c := &http.Client{Transport: NewTransport(srv.URL+"/api/", nil, k)}
	for _, team := range []string{"T1", "T2", "T1"} {
		if _, err := post(workspace.With(ctx, team), c, srv.URL+"/api/chat.postMessage", "xoxb-placeholder"); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(fs.tokens, ","); got != "xoxb-one,xoxb-two,xoxb-one" {
		t.Fatalf("tokens sent: %s", got)
	}
	for _, c2 := range []struct {
		ctx  context.Context
		want error
	}{{ctx, ErrNoWorkspace}, {workspace.With(ctx, "T9"), ErrNotInstalled}} {
		if _, err := post(c2.ctx, c, srv.URL+"/api/chat.postMessage", "xoxb-one"); !errors.Is(err, c2.want) {
			t.Fatalf("a call for %q: %v, want %v", workspace.Of(c2.ctx), err, c2.want)
		}
	}
	if len(fs.tokens) != 3 {
		t.Fatalf("a refused call reached Slack: %d calls", len(fs.tokens))
	}
	// Not the Web API (a response_url): untouched, no workspace needed.
	if _, err := post(ctx, c, srv.URL+"/response/1", "nothing"); err != nil {
		t.Fatal(err)
	}
	// Another replica refreshed T1's token; Slack refuses the old one:
	// the call goes again, once, with the new one.
	fs.expire = "xoxb-one"
	other := NewKeeper(st, k.seal, KeeperOptions{})
	must(t, other.Save(ctx, Installation{Team: "T1", BotToken: "xoxb-one-b"}))
	body, err := post(workspace.With(ctx, "T1"), c, srv.URL+"/api/chat.postMessage", "x")
	if err != nil || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("after a refresh elsewhere: %s %v", body, err)
	}
	if got := fs.tokens[len(fs.tokens)-2:]; got[0] != "xoxb-one" || got[1] != "xoxb-one-b" {
		t.Fatalf("last tokens: %v, want the old one refused then the new one", got)
	}
}

// oauthFake is installs.Slack recording what it was asked.
type oauthFake struct {
	mu       sync.Mutex
	redeem   Installation
	revoked  []string
	refresh  atomic.Int32
	teamsOf  []string
	failNext error
}

func (o *oauthFake) Redeem(context.Context, string, string) (Installation, error) {
	return o.redeem, nil
}
func (o *oauthFake) Refresh(_ context.Context, rt string) (Grant, error) {
	o.mu.Lock()
	err := o.failNext
	o.failNext = nil
	o.mu.Unlock()
	if err != nil {
		return Grant{}, err
	}
	n := o.refresh.Add(1)
	return Grant{Token: "xoxe.xoxb-" + string(rune('a'+n)), Refresh: rt + "+", Expires: time.Now().Add(time.Hour)}, nil
}
func (o *oauthFake) Teams(context.Context, string) ([]string, error) { return o.teamsOf, nil }
func (o *oauthFake) Revoke(_ context.Context, tok string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.revoked = append(o.revoked, tok)
	return nil
}

func TestFlowKeepsAnInstallOnceAndRefusesReplaysForgeriesAndOtherWorkspaces(t *testing.T) {
	k, st := newKeeper(t)
	of := &oauthFake{redeem: Installation{Team: "T1", TeamName: "Alpha", BotToken: "xoxb-new"}}
	f := &Flow{Keeper: k, Slack: of, States: st, ClientID: "cid", Scopes: []string{"chat:write"}, AuthorizeURL: "https://slack.test/oauth/v2/authorize",
		RedirectURL: "http://bot.test/slack/oauth_redirect", Allow: []string{"T1"}, Secret: []byte("s"), Now: time.Now, Log: discard()}
	mux := http.NewServeMux()
	f.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := func() string {
		resp, err := c.Get(srv.URL + "/slack/install")
		must(t, err)
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusFound || loc.Host != "slack.test" || loc.Query().Get("scope") != "chat:write" || loc.Query().Get("client_id") != "cid" {
			t.Fatalf("install went to %s (%d)", loc, resp.StatusCode)
		}
		return loc.Query().Get("state")
	}
	back := func(q url.Values) (int, string) {
		resp, err := c.Get(srv.URL + "/slack/oauth_redirect?" + q.Encode())
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	state := start()
	if code, page := back(url.Values{"code": {"c"}, "state": {state}}); code != 200 || !strings.Contains(page, "installed in Alpha") {
		t.Fatalf("the install: %d %s", code, page)
	}
	if in, err := k.Get(context.Background(), "T1"); err != nil || in.BotToken != "xoxb-new" {
		t.Fatalf("kept: %+v %v", in, err)
	}
	if code, _ := back(url.Values{"code": {"c"}, "state": {state}}); code != http.StatusBadRequest {
		t.Fatalf("a replayed state: %d, want 400", code)
	}
	if code, _ := back(url.Values{"code": {"c"}, "state": {"0123.abcd"}}); code != http.StatusBadRequest {
		t.Fatalf("a forged state: %d, want 400", code)
	}
	// Cancelled at Slack: nothing kept.
	if _, err := st.DropInstall(context.Background(), "T1"); err != nil {
		t.Fatal(err)
	}
	if code, page := back(url.Values{"error": {"access_denied"}, "state": {start()}}); code != 200 || !strings.Contains(page, "not installed") {
		t.Fatalf("a cancelled install: %d %s", code, page)
	}
	// Another browser (no cookie) cannot spend this browser's state.
	state = start()
	stranger := &http.Client{}
	resp, err := stranger.Get(srv.URL + "/slack/oauth_redirect?" + url.Values{"code": {"c"}, "state": {state}}.Encode())
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("another browser's redirect: %d, want 400", resp.StatusCode)
	}
	// A workspace the operator did not allow: refused, its token revoked.
	of.redeem = Installation{Team: "T9", BotToken: "xoxb-stranger"}
	if code, page := back(url.Values{"code": {"c"}, "state": {start()}}); code != http.StatusForbidden || !strings.Contains(page, "ASKSLACK_INSTALL_TEAMS") {
		t.Fatalf("a workspace not allowed: %d %s", code, page)
	}
	all, _ := st.Installs(context.Background())
	if len(all) != 0 || len(of.revoked) != 1 || of.revoked[0] != "xoxb-stranger" {
		t.Fatalf("after refusals: kept %d, revoked %v", len(all), of.revoked)
	}
}

func TestRefresherRefreshesOnceAcrossReplicasAndRetriesAFailure(t *testing.T) {
	ctx := context.Background()
	k, st := newKeeper(t)
	now := time.Now()
	must(t, k.Save(ctx, Installation{Team: "T1", BotToken: "xoxe.xoxb-0", Refresh: "r0", Installed: now.Add(-time.Hour), Expires: now.Add(30 * time.Minute)}))
	of := &oauthFake{}
	var failed atomic.Int32
	rs := []*Refresher{}
	for _, h := range []string{"a", "b", "c"} {
		rs = append(rs, &Refresher{Keeper: NewKeeper(st, k.seal, KeeperOptions{}), Slack: of, Leases: st, Holder: h, Now: time.Now, Log: discard(),
			Failed: func(string, error) { failed.Add(1) }, retries: map[string]retry{}})
	}
	of.failNext = errors.New("internal_error")
	rs[0].pass(ctx)
	if failed.Load() != 1 || of.refresh.Load() != 0 {
		t.Fatalf("a failing refresh: failed %d, refreshed %d", failed.Load(), of.refresh.Load())
	}
	var wg sync.WaitGroup
	for _, r := range rs[1:] {
		wg.Go(func() { r.pass(ctx) })
	}
	wg.Wait()
	if of.refresh.Load() != 1 {
		t.Fatalf("replicas racing refreshed %d times, want once", of.refresh.Load())
	}
	in, _ := k.Get(ctx, "T1")
	if in.BotToken != "xoxe.xoxb-b" || in.Refresh != "r0+" || !in.Expires.After(now.Add(50*time.Minute)) {
		t.Fatalf("after the refresh: %+v", in)
	}
	if next := rs[1].pass(ctx); next <= 0 || of.refresh.Load() != 1 {
		t.Fatalf("a fresh token was refreshed again (%d), next look in %s", of.refresh.Load(), next)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
