package hostapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/tokens"
	"github.com/askslack/askslack/waterfall"
)

// tokenServer serves the API with an agent, an operator and personal
// tokens; it returns the server and the tokens service.
func tokenServer(t *testing.T) (*hostapi.Server, *tokens.Service, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(time.Now())
	st := store.NewMemory(0, fake)
	svc, err := tokens.New(tokens.Options{Store: st, VerifyURL: "http://127.0.0.1:8080/app/device", Clock: fake,
		MayConnect: func(context.Context, string) (bool, string) { return true, "" }})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ag, _ := hostapi.ParseCredentials("ASKSLACK_API_TOKENS", hostapi.RoleAgent, []string{"ci:ci-secret-0123456789"}, true, &n)
	ad, _ := hostapi.ParseCredentials("ASKSLACK_ADMIN_TOKENS", hostapi.RoleAdmin, []string{"ops:ops-secret-0123456789"}, false, &n)
	callers, err := hostapi.NewCallers(append(ag, ad...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return started(t, hostapi.NewServer(engine.NewHost(st, instant, engine.HostOptions{}),
		hostapi.Options{Callers: callers, Leases: st, Tokens: svc})), svc, fake
}

func form(h http.Handler, path string, v url.Values) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(v.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = "192.0.2.9:5000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func oauthError(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e hostapi.OAuthError
	_ = json.Unmarshal(w.Body.Bytes(), &e)
	return e.Error
}

func TestDeviceGrantAndPersonalTokens(t *testing.T) {
	t.Parallel()
	srv, svc, fake := tokenServer(t)
	if w := form(srv, hostapi.DeviceCodePath, url.Values{"name": {"alice-laptop"}}); w.Code != http.StatusUnauthorized || oauthError(t, w) != "invalid_client" {
		t.Fatalf("no client_id: %d %s", w.Code, w.Body)
	}
	w := form(srv, hostapi.DeviceCodePath, url.Values{"client_id": {hostapi.LoginClientID}, "name": {"alice-laptop"}, "kinds": {"claude,codex"}})
	var a tokens.Authorization
	if err := json.Unmarshal(w.Body.Bytes(), &a); w.Code != http.StatusOK || err != nil || a.DeviceCode == "" || a.Interval != 5 {
		t.Fatalf("device code: %d %s", w.Code, w.Body)
	}
	poll := url.Values{"client_id": {hostapi.LoginClientID}, "grant_type": {hostapi.GrantDeviceCode}, "device_code": {a.DeviceCode}}
	if w := form(srv, hostapi.DeviceTokenPath, poll); oauthError(t, w) != "authorization_pending" {
		t.Fatalf("first poll: %d %s", w.Code, w.Body)
	}
	if w := form(srv, hostapi.DeviceTokenPath, poll); oauthError(t, w) != "slow_down" {
		t.Fatalf("a poll at once: %d %s", w.Code, w.Body)
	}
	bad := url.Values{"client_id": {hostapi.LoginClientID}, "grant_type": {"password"}}
	if w := form(srv, hostapi.DeviceTokenPath, bad); oauthError(t, w) != "unsupported_grant_type" {
		t.Fatalf("another grant: %d %s", w.Code, w.Body)
	}
	tok, err := svc.Approve(context.Background(), a.UserCode, tokens.Who{UserID: "U0ALICE", UserName: "alice"}, "")
	if err != nil {
		t.Fatal(err)
	}
	fake.Advance(5 * time.Second)
	w = form(srv, hostapi.DeviceTokenPath, poll)
	var issued hostapi.DeviceToken
	if err := json.Unmarshal(w.Body.Bytes(), &issued); w.Code != http.StatusOK || err != nil || issued.TokenType != "Bearer" ||
		issued.Token.ID != tok.ID || issued.Token.Caller != "alice-laptop@U0ALICE" || issued.ExpiresIn <= 0 {
		t.Fatalf("the poll after confirming: %d %s", w.Code, w.Body)
	}
	fake.Advance(5 * time.Second)
	if w := form(srv, hostapi.DeviceTokenPath, poll); oauthError(t, w) != "expired_token" {
		t.Fatalf("polling again: %d %s", w.Code, w.Body)
	}
	bearer := "Bearer " + issued.AccessToken

	// It asks as alice's agent, bound to her.
	w = do(srv, http.MethodPost, "/v1/asks", "192.0.2.9:1", bearer, ask)
	if w.Code != http.StatusOK {
		t.Fatalf("ask with the personal token: %d %s", w.Code, w.Body)
	}
	w = do(srv, http.MethodPost, "/v1/asks", "192.0.2.9:1", bearer, strings.Replace(ask, `"id":"a"`, `"id":"a","principal":"U0BOB"`, 1))
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), waterfall.CodePrincipalMismatch) {
		t.Fatalf("naming another principal: %d %s", w.Code, w.Body)
	}
	// It never answers, lists tokens, or revokes another's.
	if w := do(srv, http.MethodPost, "/v1/asks/c1/answer", "192.0.2.9:1", bearer, `{"answers":[]}`); w.Code != http.StatusForbidden {
		t.Fatalf("answer with a personal token: %d", w.Code)
	}
	if w := do(srv, http.MethodGet, "/v1/tokens", "192.0.2.9:1", bearer, ""); w.Code != http.StatusForbidden {
		t.Fatalf("list with a personal token: %d", w.Code)
	}
	if w := do(srv, http.MethodDelete, "/v1/tokens/at_other", "192.0.2.9:1", bearer, ""); w.Code != http.StatusForbidden {
		t.Fatalf("revoking another token: %d", w.Code)
	}
	var me hostapi.Whoami
	w = do(srv, http.MethodGet, "/v1/whoami", "192.0.2.9:1", bearer, "")
	if err := json.Unmarshal(w.Body.Bytes(), &me); err != nil || me.Caller != "alice-laptop@U0ALICE" || me.Principal != "U0ALICE" ||
		me.Token == nil || me.Token.ID != tok.ID || strings.Join(me.Roles, ",") != "agent" || strings.Contains(w.Body.String(), tok.Hash) {
		t.Fatalf("whoami: %s", w.Body)
	}
	// Operators list it (without secret or hash) and revoke it.
	w = do(srv, http.MethodGet, "/v1/tokens", "192.0.2.9:1", "Bearer ops-secret-0123456789", "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), tok.ID) || strings.Contains(w.Body.String(), tok.Hash) || strings.Contains(w.Body.String(), issued.AccessToken) {
		t.Fatalf("operator's list: %d %s", w.Code, w.Body)
	}
	if w := do(srv, http.MethodGet, "/v1/tokens", "192.0.2.9:1", "Bearer ci-secret-0123456789", ""); w.Code != http.StatusForbidden {
		t.Fatalf("an agent's list: %d", w.Code)
	}
	if w := do(srv, http.MethodDelete, "/v1/tokens/"+tok.ID, "192.0.2.9:1", "Bearer ops-secret-0123456789", ""); w.Code != http.StatusOK {
		t.Fatalf("operator's revoke: %d %s", w.Code, w.Body)
	}
	w = do(srv, http.MethodPost, "/v1/asks", "192.0.2.9:1", bearer, strings.Replace(ask, "c1", "c2", 1))
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "askslack login") || !strings.Contains(w.Body.String(), "revoked") {
		t.Fatalf("ask after the revoke: %d %s", w.Code, w.Body)
	}
	if w := do(srv, http.MethodPost, "/v1/asks", "192.0.2.9:1", "Bearer "+tokens.Prefix+"made-up", ask); w.Code != http.StatusUnauthorized ||
		!strings.Contains(w.Body.String(), "askslack login") {
		t.Fatalf("a made-up personal token: %d %s", w.Code, w.Body)
	}
}

// A bot that does not connect agents says why, to askslack login.
func TestDeviceGrantOffSaysWhatToConfigure(t *testing.T) {
	t.Parallel()
	st := store.NewMemory(0, nil)
	srv := started(t, hostapi.NewServer(engine.NewHost(st, instant, engine.HostOptions{}), hostapi.Options{Leases: st,
		LoginOff: hostapi.LoginOffWhy("ASKSLACK_WEB_URL, SLACK_CLIENT_ID and SLACK_CLIENT_SECRET")}))
	w := form(srv, hostapi.DeviceCodePath, url.Values{"client_id": {hostapi.LoginClientID}})
	var e hostapi.OAuthError
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != http.StatusBadRequest || e.Error != "unauthorized_client" ||
		!strings.Contains(e.Description, "ASKSLACK_WEB_URL, SLACK_CLIENT_ID and SLACK_CLIENT_SECRET") {
		t.Fatalf("device code with login off: %d %s", w.Code, w.Body)
	}
}
