package slackfake

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Values in the shape of Slack's examples
// (https://docs.slack.dev/reference/methods/openid.connect.token).
const (
	oidcClientID = "2141029472.691202649728"
	oidcSecret   = "e1b9e11dfcd19c1982d5de12921e17e8c"
)

// carol belongs to another workspace: her id_token must say so.
var carol = User{ID: "W0CAROL", Name: "carol", Email: "carol@other.example", TeamID: "T0OTHER"}

// relyingParty is the app's side of the flow: an httptest server whose
// callback records what Slack sent back.
type relyingParty struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []url.Values
}

func newRelyingParty(t *testing.T) *relyingParty {
	t.Helper()
	rp := &relyingParty{}
	rp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.mu.Lock()
		rp.got = append(rp.got, r.URL.Query())
		rp.mu.Unlock()
		_, _ = io.WriteString(w, "signed in")
	}))
	t.Cleanup(rp.srv.Close)
	return rp
}

// callback is the app's registered Redirect URL; it carries a query of
// its own, which Slack must keep.
func (rp *relyingParty) callback() string { return rp.srv.URL + "/auth/slack/callback?from=login" }

func (rp *relyingParty) last(t *testing.T) url.Values {
	t.Helper()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if len(rp.got) == 0 {
		t.Fatal("the app's callback was never called")
	}
	return rp.got[len(rp.got)-1]
}

// oidcFake starts a fake with a Sign in with Slack app whose only Redirect
// URL is the relying party's callback.
func oidcFake(t *testing.T, opts Options) (*Server, *relyingParty) {
	t.Helper()
	rp := newRelyingParty(t)
	if opts.BotToken == "" {
		opts.BotToken = botToken
	}
	if opts.OIDCClientID == "" {
		opts.OIDCClientID, opts.OIDCClientSecret = oidcClientID, oidcSecret
	}
	if opts.OIDCRedirectURIs == nil {
		opts.OIDCRedirectURIs = []string{rp.callback()}
	}
	if opts.Users == nil {
		opts.Users = []User{alice, bob, carol}
	}
	s := New(opts)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, rp
}

var noRedirects = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func authorizeQuery(rp *relyingParty, extra ...string) url.Values {
	q := url.Values{
		"response_type": {"code"}, "scope": {"openid profile email"}, "client_id": {oidcClientID},
		"state": {"st-123"}, "nonce": {"n-0S6_WzA2Mj"}, "redirect_uri": {rp.callback()},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "<del>" {
			q.Del(extra[i])
		} else {
			q.Set(extra[i], extra[i+1])
		}
	}
	return q
}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := noRedirects.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// signIn picks user on the authorize page and returns the code Slack sent
// to the redirect_uri (checked: same state, the redirect's own query kept).
func signIn(t *testing.T, s *Server, q url.Values, user string) string {
	t.Helper()
	q = cloneValues(q)
	q.Set("fake_user", user)
	resp, body := get(t, s.URL()+"/openid/connect/authorize?"+q.Encode())
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize as %s: status %d, want 302\n%s", user, resp.StatusCode, body)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	redirect := q.Get("redirect_uri")
	if !q.Has("redirect_uri") {
		redirect = s.Options().OIDCRedirectURIs[0] // Slack's fallback: the registered one
	}
	want, _ := url.Parse(redirect)
	if loc.Scheme != want.Scheme || loc.Host != want.Host || loc.Path != want.Path {
		t.Fatalf("redirected to %s, want %s", loc, want)
	}
	got := loc.Query()
	for k, v := range want.Query() {
		if got.Get(k) != v[0] {
			t.Errorf("the redirect_uri's own %s=%q was lost: %s", k, v[0], loc)
		}
	}
	if got.Get("state") != q.Get("state") {
		t.Errorf("state = %q, want %q", got.Get("state"), q.Get("state"))
	}
	if got.Get("code") == "" {
		t.Fatalf("no code in %s", loc)
	}
	return got.Get("code")
}

// postForm posts to a Web API method and decodes Slack's JSON answer.
func postForm(t *testing.T, s *Server, method string, form url.Values, header http.Header) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.APIURL()+method, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) map[string]any {
	t.Helper()
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d, want 200 (Slack answers errors with 200)", req.URL.Path, resp.StatusCode)
	}
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func tokenForm(code, redirect string) url.Values {
	return url.Values{"client_id": {oidcClientID}, "client_secret": {oidcSecret}, "code": {code},
		"redirect_uri": {redirect}, "grant_type": {"authorization_code"}}
}

// verifyIDToken checks an RS256 JWT against the JWKS the fake serves at
// /openid/connect/keys, as a relying party would, and returns its header
// and claims.
func verifyIDToken(t *testing.T, s *Server, token string) (header, claims map[string]any) {
	t.Helper()
	header, claims, err := checkIDToken(t, s, token)
	if err != nil {
		t.Fatal(err)
	}
	return header, claims
}

// checkIDToken is verifyIDToken answering an error for a token that does
// not verify.
func checkIDToken(t *testing.T, s *Server, token string) (header, claims map[string]any, err error) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("id_token has %d parts, want 3: %q", len(parts), token)
	}
	for i, v := range []any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return nil, nil, fmt.Errorf("id_token part %d: %v", i, err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			return nil, nil, fmt.Errorf("id_token part %d: %v", i, err)
		}
	}
	if header["alg"] != "RS256" || header["typ"] != "JWT" {
		t.Errorf("header = %v, want alg RS256, typ JWT", header)
	}

	resp, body := get(t, s.URL()+"/openid/connect/keys")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("keys: status %d", resp.StatusCode)
	}
	var jwks struct {
		Keys []struct{ E, N, Alg, Kid, Kty, Use string }
	}
	if err := json.Unmarshal([]byte(body), &jwks); err != nil {
		t.Fatal(err)
	}
	var pub *rsa.PublicKey
	for _, k := range jwks.Keys {
		if k.Kid != header["kid"] {
			continue
		}
		if k.Kty != "RSA" || k.Alg != "RS256" || k.Use != "sig" {
			t.Errorf("key %+v: want kty RSA, alg RS256, use sig", k)
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil {
			t.Fatalf("key %+v: bad base64url", k)
		}
		pub = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	if pub == nil {
		return nil, nil, fmt.Errorf("no key with kid %v in %s", header["kid"], body)
	}
	if pub.N.BitLen() != 2048 {
		t.Errorf("key is %d bits, want 2048", pub.N.BitLen())
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, nil, fmt.Errorf("signature: %v", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		return nil, nil, fmt.Errorf("id_token signature does not verify against the JWKS: %v", err)
	}
	return header, claims, nil
}

var userLink = regexp.MustCompile(`<a href="([^"]*)" data-user="([^"]*)">`)

func TestOIDCFullFlow(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1626874655, 0)}
	s, rp := oidcFake(t, Options{Now: clk.Now})
	q := authorizeQuery(rp)

	// The person picker: one link per user, with the request's parameters.
	resp, page := get(t, s.URL()+"/openid/connect/authorize?"+q.Encode())
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("authorize: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.Contains(page, "<title>Sign in to fake-workspace</title>") {
		t.Errorf("page title missing:\n%s", page)
	}
	if strings.Contains(page, "<script") {
		t.Error("the page has a script")
	}
	links := map[string]string{}
	for _, m := range userLink.FindAllStringSubmatch(page, -1) {
		links[m[2]] = html.UnescapeString(m[1])
	}
	for _, u := range []string{"U0ALICE", "U0BOB", "W0CAROL"} {
		if links[u] == "" {
			t.Fatalf("no data-user=%q link in\n%s", u, page)
		}
	}
	link, err := url.Parse(links["U0ALICE"])
	if err != nil {
		t.Fatal(err)
	}
	for k := range q {
		if link.Query().Get(k) != q.Get(k) {
			t.Errorf("alice's link lost %s: %s", k, link)
		}
	}
	if link.Query().Get("fake_user") != "U0ALICE" {
		t.Errorf("alice's link = %s, want fake_user=U0ALICE", link)
	}

	// Click alice, as a browser: the fake redirects to the app's callback.
	clk.Advance(2 * time.Second)
	follow, err := http.Get(s.URL() + link.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(follow.Body)
	follow.Body.Close()
	if follow.StatusCode != http.StatusOK || string(body) != "signed in" {
		t.Fatalf("after the click: %d %q, want the app's callback", follow.StatusCode, body)
	}
	cb := rp.last(t)
	if cb.Get("from") != "login" || cb.Get("state") != "st-123" || cb.Get("code") == "" {
		t.Fatalf("callback query = %v, want from=login, state=st-123 and a code", cb)
	}
	code := cb.Get("code")

	// Exchange the code; no bot token anywhere.
	clk.Advance(3 * time.Second)
	tok := postForm(t, s, "openid.connect.token", tokenForm(code, rp.callback()), nil)
	if tok["ok"] != true || tok["token_type"] != "Bearer" {
		t.Fatalf("token = %v", tok)
	}
	access, _ := tok["access_token"].(string)
	if !strings.HasPrefix(access, "xoxp-") {
		t.Errorf("access_token = %q, want xoxp-…", access)
	}
	idToken, _ := tok["id_token"].(string)
	header, claims := verifyIDToken(t, s, idToken)
	if header["kid"] != s.OIDCKeyID() {
		t.Errorf("kid = %v, want %s", header["kid"], s.OIDCKeyID())
	}
	sum := sha256.Sum256([]byte(access))
	now := clk.Now().Unix()
	want := map[string]any{
		"iss": "https://slack.com", "sub": "U0ALICE", "aud": oidcClientID,
		"iat": float64(now), "exp": float64(now + 300), "auth_time": float64(now - 3),
		"nonce":                     "n-0S6_WzA2Mj",
		"at_hash":                   base64.RawURLEncoding.EncodeToString(sum[:16]),
		"https://slack.com/team_id": "T0FAKE", "https://slack.com/user_id": "U0ALICE",
		"email": "alice@example.com", "email_verified": true,
		"name": "alice", "given_name": "", "family_name": "", "locale": "en-US",
		"https://slack.com/team_name": "fake-workspace", "https://slack.com/team_domain": "fake-workspace",
	}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %#v, want %#v", k, claims[k], v)
		}
	}
	for k := range claims {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected claim %s = %v", k, claims[k])
		}
	}

	// A code works once.
	again := postForm(t, s, "openid.connect.token", tokenForm(code, rp.callback()), nil)
	if again["ok"] != false || again["error"] != "invalid_code" {
		t.Errorf("second exchange = %v, want invalid_code", again)
	}

	// userInfo with the access token, as a header or a form field.
	for name, ask := range map[string]func() map[string]any{
		"bearer": func() map[string]any {
			return postForm(t, s, "openid.connect.userInfo", nil, http.Header{"Authorization": {"Bearer " + access}})
		},
		"form": func() map[string]any {
			return postForm(t, s, "openid.connect.userInfo", url.Values{"token": {access}}, nil)
		},
		"get": func() map[string]any {
			req, _ := http.NewRequest(http.MethodGet, s.APIURL()+"openid.connect.userInfo", nil)
			req.Header.Set("Authorization", "Bearer "+access)
			return do(t, req)
		},
	} {
		info := ask()
		for k, v := range map[string]any{
			"ok": true, "sub": "U0ALICE", "https://slack.com/user_id": "U0ALICE", "https://slack.com/team_id": "T0FAKE",
			"email": "alice@example.com", "email_verified": true, "name": "alice", "locale": "en-US",
			"https://slack.com/team_name": "fake-workspace", "https://slack.com/team_domain": "fake-workspace",
		} {
			if info[k] != v {
				t.Errorf("userInfo (%s): %s = %#v, want %#v", name, k, info[k], v)
			}
		}
	}
	for tok, wantErr := range map[string]string{"xoxp-bogus": "invalid_auth", "": "not_authed"} {
		h := http.Header{}
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		if got := postForm(t, s, "openid.connect.userInfo", nil, h); got["ok"] != false || got["error"] != wantErr {
			t.Errorf("userInfo with %q = %v, want %s", tok, got, wantErr)
		}
	}

	// Recorded like every Web API call, and the grant is visible.
	if calls := s.Calls("openid.connect.token"); len(calls) != 2 || !calls[0].OK() || calls[1].Error() != "invalid_code" {
		t.Errorf("recorded token calls = %+v", calls)
	}
	if n := len(s.Calls("openid.connect.userInfo")); n != 5 {
		t.Errorf("recorded %d userInfo calls, want 5", n)
	}
	issued := s.OIDCIssued()
	if len(issued) != 1 || !issued[0].Redeemed || issued[0].AccessToken != access || issued[0].User.ID != "U0ALICE" ||
		issued[0].Nonce != "n-0S6_WzA2Mj" || issued[0].RedirectURI != rp.callback() {
		t.Errorf("OIDCIssued = %+v", issued)
	}
}

// A member of another workspace (User.TeamID), no nonce, the credentials
// as HTTP Basic and a JSON body: the claims follow the user, nonce is left out.
func TestOIDCOtherTeamBasicAuthJSON(t *testing.T) {
	t.Parallel()
	s, rp := oidcFake(t, Options{})
	code := signIn(t, s, authorizeQuery(rp, "nonce", "<del>", "scope", "openid,email"), "W0CAROL")
	body, _ := json.Marshal(map[string]string{"code": code, "redirect_uri": rp.callback()})
	req, _ := http.NewRequest(http.MethodPost, s.APIURL()+"openid.connect.token", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(url.QueryEscape(oidcClientID), url.QueryEscape(oidcSecret))
	tok := do(t, req)
	if tok["ok"] != true {
		t.Fatalf("token = %v", tok)
	}
	_, claims := verifyIDToken(t, s, tok["id_token"].(string))
	if claims["https://slack.com/team_id"] != "T0OTHER" || claims["sub"] != "W0CAROL" || claims["email"] != "carol@other.example" {
		t.Errorf("claims = %v, want carol of T0OTHER", claims)
	}
	if _, has := claims["nonce"]; has {
		t.Errorf("nonce = %v, want none: the request had none", claims["nonce"])
	}
	// Scopes decide the claims (OIDC Core §5.4): no profile, no name.
	if _, has := claims["name"]; has {
		t.Errorf("name = %v without the profile scope", claims["name"])
	}
}

func TestOIDCTokenErrors(t *testing.T) {
	t.Parallel()
	s, rp := oidcFake(t, Options{})
	cases := []struct {
		name   string
		change func(url.Values)
		want   string
	}{
		{"wrong secret", func(f url.Values) { f.Set("client_secret", "nope") }, "bad_client_secret"},
		{"no secret", func(f url.Values) { f.Del("client_secret") }, "bad_client_secret"},
		{"unknown client", func(f url.Values) { f.Set("client_id", "1.2") }, "invalid_client_id"},
		{"other redirect_uri", func(f url.Values) { f.Set("redirect_uri", rp.srv.URL+"/elsewhere") }, "bad_redirect_uri"},
		{"redirect_uri left out", func(f url.Values) { f.Del("redirect_uri") }, "bad_redirect_uri"},
		{"refresh grant", func(f url.Values) { f.Set("grant_type", "refresh_token") }, "invalid_grant_type"},
		{"unknown code", func(f url.Values) { f.Set("code", "4724469134.1.deadbeef") }, "invalid_code"},
		{"no code", func(f url.Values) { f.Del("code") }, "invalid_code"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code := signIn(t, s, authorizeQuery(rp), "U0BOB")
			f := tokenForm(code, rp.callback())
			c.change(f)
			if got := postForm(t, s, "openid.connect.token", f, nil); got["ok"] != false || got["error"] != c.want {
				t.Errorf("token = %v, want error %s", got, c.want)
			}
			// A refused exchange does not use the code up.
			if got := postForm(t, s, "openid.connect.token", tokenForm(code, rp.callback()), nil); got["ok"] != true {
				t.Errorf("the right exchange afterwards = %v", got)
			}
		})
	}
}

// Without redirect_uri at authorize, Slack uses the registered one, and
// the token call may leave it out.
func TestOIDCDefaultRedirect(t *testing.T) {
	t.Parallel()
	s, rp := oidcFake(t, Options{})
	code := signIn(t, s, authorizeQuery(rp, "redirect_uri", "<del>"), "U0ALICE")
	if rp.callback() != s.OIDCIssued()[0].RedirectURI {
		t.Fatalf("code sent to %s", s.OIDCIssued()[0].RedirectURI)
	}
	f := tokenForm(code, "")
	f.Del("redirect_uri")
	if got := postForm(t, s, "openid.connect.token", f, nil); got["ok"] != true {
		t.Errorf("token = %v", got)
	}
}

func TestOIDCCodeExpires(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1700000000, 0)}
	s, rp := oidcFake(t, Options{Now: clk.Now})
	early := signIn(t, s, authorizeQuery(rp), "U0ALICE")
	late := signIn(t, s, authorizeQuery(rp), "U0ALICE")
	clk.Advance(10 * time.Minute)
	if got := postForm(t, s, "openid.connect.token", tokenForm(early, rp.callback()), nil); got["ok"] != true {
		t.Errorf("at 10 minutes: %v, want ok", got)
	}
	clk.Advance(time.Second)
	if got := postForm(t, s, "openid.connect.token", tokenForm(late, rp.callback()), nil); got["error"] != "invalid_code" {
		t.Errorf("after 10 minutes: %v, want invalid_code", got)
	}
}

func TestOIDCAuthorizeRefuses(t *testing.T) {
	t.Parallel()
	s, rp := oidcFake(t, Options{})
	open, _ := oidcFake(t, Options{OIDCRedirectURIs: []string{}}) // any http(s) redirect_uri
	unset := New(Options{Users: []User{alice}})                   // no Sign in with Slack app
	if err := unset.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unset.Close)
	cases := []struct {
		name   string
		s      *Server
		q      url.Values
		saying string
	}{
		{"unregistered redirect_uri", s, authorizeQuery(rp, "redirect_uri", "https://evil.example/cb"), "redirect_uri did not match any configured URIs"},
		{"registered one with a different query", s, authorizeQuery(rp, "redirect_uri", rp.srv.URL+"/auth/slack/callback"), "did not match"},
		{"markup in redirect_uri", s, authorizeQuery(rp, "redirect_uri", `https://x.example/"><script>alert(1)</script>`), "did not match"},
		{"javascript redirect", open, authorizeQuery(rp, "redirect_uri", "javascript:alert(1)"), "absolute http(s) URL"},
		{"relative redirect", open, authorizeQuery(rp, "redirect_uri", "/cb"), "absolute http(s) URL"},
		{"fragment", open, authorizeQuery(rp, "redirect_uri", "https://x.example/cb#frag"), "fragment"},
		{"wrong client_id", s, authorizeQuery(rp, "client_id", "999.1"), "Invalid client_id"},
		{"no client_id", s, authorizeQuery(rp, "client_id", "<del>"), "Missing client_id"},
		{"no app configured", unset, authorizeQuery(rp), "OIDCClientID is empty"},
		{"implicit flow", s, authorizeQuery(rp, "response_type", "token"), "response_type"},
		{"no openid scope", s, authorizeQuery(rp, "scope", "profile email"), "must include openid"},
		{"unknown scope", s, authorizeQuery(rp, "scope", "openid chat:write"), "chat:write"},
		{"unknown user", s, authorizeQuery(rp, "fake_user", "U0NOBODY"), "Unknown user"},
		{"unknown user on a redirect not checked yet", s, authorizeQuery(rp, "fake_user", "U0ALICE", "redirect_uri", "https://evil.example/"), "did not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resp, body := get(t, c.s.URL()+"/openid/connect/authorize?"+c.q.Encode())
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 400", resp.StatusCode)
			}
			if loc := resp.Header.Get("Location"); loc != "" {
				t.Errorf("redirected to %s", loc)
			}
			if !strings.Contains(html.UnescapeString(body), c.saying) {
				t.Errorf("page does not say %q:\n%s", c.saying, body)
			}
			if strings.Contains(body, "<script") || strings.Contains(body, "<a ") {
				t.Errorf("error page has a script or a link:\n%s", body)
			}
		})
	}
	t.Cleanup(func() {
		for _, f := range []*Server{s, open, unset} {
			if n := len(f.OIDCIssued()); n != 0 {
				t.Errorf("%d codes issued on refused requests", n)
			}
		}
	})
	if got := postForm(t, unset, "openid.connect.token", tokenForm("x", rp.callback()), nil); got["error"] != "invalid_client_id" {
		t.Errorf("token with no app configured = %v, want invalid_client_id", got)
	}
}

func TestOIDCCancel(t *testing.T) {
	t.Parallel()
	s, rp := oidcFake(t, Options{})
	_, page := get(t, s.URL()+"/openid/connect/authorize?"+authorizeQuery(rp).Encode())
	m := regexp.MustCompile(`<a class="cancel" id="cancel" href="([^"]*)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no Cancel link in\n%s", page)
	}
	cancel, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	q := cancel.Query()
	if !strings.HasPrefix(cancel.String(), rp.srv.URL+"/auth/slack/callback?") || q.Get("from") != "login" ||
		q.Get("error") != "access_denied" || q.Get("state") != "st-123" || q.Has("code") {
		t.Errorf("Cancel goes to %s", cancel)
	}
}

// With no Users configured, any U…/W… id signs in, named after the id, and
// the page offers a field to type it.
func TestOIDCAnyUser(t *testing.T) {
	t.Parallel()
	s, rp := oidcFake(t, Options{Users: []User{}})
	_, page := get(t, s.URL()+"/openid/connect/authorize?"+authorizeQuery(rp).Encode())
	if !strings.Contains(page, `name="fake_user"`) || !strings.Contains(page, `name="nonce" value="n-0S6_WzA2Mj"`) {
		t.Errorf("no user id form carrying the request:\n%s", page)
	}
	code := signIn(t, s, authorizeQuery(rp), "U0ZED")
	tok := postForm(t, s, "openid.connect.token", tokenForm(code, rp.callback()), nil)
	_, claims := verifyIDToken(t, s, tok["id_token"].(string))
	if claims["sub"] != "U0ZED" || claims["name"] != "u0zed" || claims["https://slack.com/team_id"] != "T0FAKE" {
		t.Errorf("claims = %v", claims)
	}
	if resp, _ := get(t, s.URL()+"/openid/connect/authorize?"+authorizeQuery(rp, "fake_user", "C0CHAN").Encode()); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a channel id signed in: %d", resp.StatusCode)
	}
}

func TestOIDCDiscovery(t *testing.T) {
	t.Parallel()
	s, _ := oidcFake(t, Options{})
	resp, body := get(t, s.URL()+"/.well-known/openid-configuration")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"issuer":                 "https://slack.com",
		"authorization_endpoint": s.URL() + "/openid/connect/authorize",
		"token_endpoint":         s.URL() + "/api/openid.connect.token",
		"userinfo_endpoint":      s.URL() + "/api/openid.connect.userInfo",
		"jwks_uri":               s.URL() + "/openid/connect/keys",
	} {
		if d[k] != v {
			t.Errorf("%s = %v, want %s", k, d[k], v)
		}
	}
	// Each endpoint it names answers.
	for _, k := range []string{"jwks_uri", "authorization_endpoint"} {
		r, _ := get(t, d[k].(string))
		if r.StatusCode == http.StatusNotFound {
			t.Errorf("%s: 404", k)
		}
	}
	resp, body = get(t, s.URL()+"/openid/connect/keys")
	var jwks struct{ Keys []map[string]string }
	_ = json.Unmarshal([]byte(body), &jwks)
	if resp.StatusCode != http.StatusOK || len(jwks.Keys) != 1 || jwks.Keys[0]["kid"] != s.OIDCKeyID() || jwks.Keys[0]["e"] != "AQAB" {
		t.Errorf("keys = %d %s", resp.StatusCode, body)
	}
}

// SignIDToken forges what Slack would not issue (here, a token for another
// workspace) with a signature that verifies.
func TestSignIDToken(t *testing.T) {
	t.Parallel()
	s, _ := oidcFake(t, Options{})
	forged := s.SignIDToken(map[string]any{"iss": "https://slack.com", "sub": "U0MALLORY", "aud": oidcClientID,
		"https://slack.com/team_id": "T0EVIL", "exp": 1})
	header, claims := verifyIDToken(t, s, forged)
	if header["kid"] != s.OIDCKeyID() || claims["https://slack.com/team_id"] != "T0EVIL" || claims["exp"] != float64(1) {
		t.Errorf("header %v claims %v", header, claims)
	}
	// Tampered claims, or another fake's key, do not verify.
	parts := strings.Split(forged, ".")
	evil, _ := json.Marshal(map[string]any{"sub": "U0MALLORY", "https://slack.com/team_id": "T0FAKE"})
	if _, _, err := checkIDToken(t, s, parts[0]+"."+base64.RawURLEncoding.EncodeToString(evil)+"."+parts[2]); err == nil {
		t.Error("a token with changed claims verified")
	}
	other, _ := oidcFake(t, Options{})
	if other.OIDCKeyID() == s.OIDCKeyID() {
		t.Error("two fakes share a key")
	}
	if _, _, err := checkIDToken(t, other, forged); err == nil {
		t.Error("another fake's JWKS verified the token")
	}
	h := map[string]any{"alg": "RS256", "typ": "JWT", "kid": other.OIDCKeyID()}
	hb, _ := json.Marshal(h)
	if _, _, err := checkIDToken(t, other, base64.RawURLEncoding.EncodeToString(hb)+"."+parts[1]+"."+parts[2]); err == nil {
		t.Error("another fake's key verified the signature")
	}
}

// Fakes that never see OIDC never make a key; showing the picker does not either.
func TestOIDCKeyIsLazy(t *testing.T) {
	t.Parallel()
	s, rp := oidcFake(t, Options{})
	signIn(t, s, authorizeQuery(rp), "U0ALICE")
	if s.oidc.key != nil {
		t.Error("the RSA key was made before an id_token or the JWKS was needed")
	}
}

// RotateOIDCKey: tokens signed after it carry the new kid and verify against
// the JWKS, which lists the new key alone; one signed before no longer does.
func TestRotateOIDCKey(t *testing.T) {
	t.Parallel()
	s, _ := oidcFake(t, Options{})
	claims := map[string]any{"iss": "https://slack.com", "sub": "U0ALICE", "aud": oidcClientID}
	before, old := s.SignIDToken(claims), s.OIDCKeyID()
	kid := s.RotateOIDCKey()
	if kid == old || s.OIDCKeyID() != kid {
		t.Fatalf("kid %s after rotating from %s (OIDCKeyID %s)", kid, old, s.OIDCKeyID())
	}
	if header, _ := verifyIDToken(t, s, s.SignIDToken(claims)); header["kid"] != kid {
		t.Errorf("a token signed after the rotation has kid %v, want %s", header["kid"], kid)
	}
	if _, _, err := checkIDToken(t, s, before); err == nil {
		t.Error("a token signed with the retired key still verifies")
	}
}
