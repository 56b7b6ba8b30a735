package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
)

// verifierAt is a relying party for the fake, as TestVerifyIDToken's, and
// the claims of a token it takes.
func verifierAt(t *testing.T) (*slackfake.Server, *oidcClient, map[string]any) {
	t.Helper()
	fake := slackfake.New(slackfake.Options{OIDCClientID: clientID})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	now := time.Now()
	c := &oidcClient{provider: ProviderFor(fake.APIURL()), clientID: clientID, http: http.DefaultClient, now: func() time.Time { return now }}
	return fake, c, map[string]any{"iss": "https://slack.com", "sub": "U0ALICE", "aud": clientID, "exp": now.Add(5 * time.Minute).Unix(),
		"iat": now.Unix(), "nonce": "n0nce", claimTeam: "T0FAKE", claimUser: "U0ALICE", "name": "alice"}
}

// TestKeyRotatedAtSlack: once Slack signs with a new key, a token naming its
// kid verifies at once (the keys are fetched again for a kid not seen), and
// a token signed with the key Slack withdrew no longer does.
func TestKeyRotatedAtSlack(t *testing.T) {
	t.Parallel()
	fake, c, claims := verifierAt(t)
	ctx := context.Background()
	old := fake.SignIDToken(claims)
	if _, err := c.verify(ctx, old, "n0nce"); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}
	fake.RotateOIDCKey()
	id, err := c.verify(ctx, fake.SignIDToken(claims), "n0nce")
	if err != nil || id.User != "U0ALICE" {
		t.Fatalf("a token signed with the new key: %+v %v", id, err)
	}
	if _, err := c.verify(ctx, old, "n0nce"); err == nil || !isRefusal(err) {
		t.Fatalf("a token signed with the withdrawn key: %v", err)
	}
}

// TestAlgorithmConfusion: a token that says HS256 and is MACed with Slack's
// public key (in any encoding a confused verifier might use as the secret),
// or says none, is refused: RS256 is the only algorithm taken.
func TestAlgorithmConfusion(t *testing.T) {
	t.Parallel()
	fake, c, claims := verifierAt(t)
	pub := fake.OIDCPublicKey()
	pkix, _ := x509.MarshalPKIXPublicKey(pub)
	pkcs1 := x509.MarshalPKCS1PublicKey(pub)
	resp, err := http.Get(strings.TrimSuffix(fake.APIURL(), "/api/") + "/openid/connect/keys")
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	enc := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(claims)
	signed := func(alg string, secret []byte) string {
		head, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT", "kid": fake.OIDCKeyID()})
		input := enc(head) + "." + enc(payload)
		if secret == nil {
			return input + "."
		}
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(input))
		return input + "." + enc(m.Sum(nil))
	}
	for name, tok := range map[string]string{
		"HS256 keyed with the PKIX PEM":  signed("HS256", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})),
		"HS256 keyed with the PKIX DER":  signed("HS256", pkix),
		"HS256 keyed with the PKCS1 PEM": signed("HS256", pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: pkcs1})),
		"HS256 keyed with the JWKS":      signed("HS256", jwks),
		"HS256 keyed with the modulus":   signed("HS256", pub.N.Bytes()),
		"none":                           signed("none", nil),
		"None":                           signed("None", nil),
	} {
		id, err := c.verify(context.Background(), tok, "n0nce")
		if err == nil || !isRefusal(err) || !strings.Contains(err.Error(), "RS256") {
			t.Errorf("%s: %+v %v; want a refusal naming RS256", name, id, err)
		}
	}
}

// slackAt routes every request of a client to h, whatever its host: the
// page's client talking to "https://slack.com" in a test.
type slackAt struct{ h http.Handler }

func (s slackAt) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w.Result(), nil
}

// TestDiscoveryAgainstSlackIsStrict: against slack.com itself, a discovery
// document naming another issuer is not taken (the leniency the fake needs
// is for other hosts only), and no sign-in goes ahead on it.
func TestDiscoveryAgainstSlackIsStrict(t *testing.T) {
	t.Parallel()
	var asked []string // the transport serves in the caller's goroutine
	doc := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.String())
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": "https://slack.example", "authorization_endpoint": "https://slack.example/authorize",
			"token_endpoint": "https://slack.example/token", "jwks_uri": "https://slack.example/keys", "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	c := &oidcClient{provider: ProviderFor(""), clientID: clientID, http: &http.Client{Transport: slackAt{doc}}, now: time.Now}
	_, err := c.authorize(context.Background(), "state", "nonce", "T0FAKE")
	if err == nil || !strings.Contains(err.Error(), "did not match") {
		t.Fatalf("a document at slack.com naming another issuer: %v", err)
	}
	if _, err := c.verify(context.Background(), "a.b.c", "nonce"); err == nil || isRefusal(err) {
		t.Fatalf("verifying without Slack's document: %v; want an error that is not a refusal", err)
	}
	if len(asked) != 2 || asked[0] != "https://slack.com/.well-known/openid-configuration" {
		t.Fatalf("asked %v; want Slack's discovery document, once per try", asked)
	}
}

// flaky is a transport that fails Slack's discovery document while down.
type flaky struct {
	mu        sync.Mutex
	down      bool
	discovery int
}

func (f *flaky) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == "/.well-known/openid-configuration" {
		f.discovery++
		if f.down {
			return nil, errors.New("dial tcp: connection refused")
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (f *flaky) set(down bool) (discovery int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
	return f.discovery
}

// TestSlackUnreachableAtStart: the page starts without asking Slack
// anything; a sign-in while Slack's document cannot be read says to try
// again, and the next one, Slack back, reads it and signs in. The code is
// redeemed with the app's credentials in the form (client_secret_post).
func TestSlackUnreachableAtStart(t *testing.T) {
	t.Parallel()
	f := &flaky{down: true}
	e := newEnv(t, func(o *Options) { o.HTTP = &http.Client{Transport: f, Timeout: 10 * time.Second} })
	if n := f.set(true); n != 0 {
		t.Fatalf("the page read Slack's document %d times before anyone signed in", n)
	}
	b := e.browser()
	if p := b.get(e.base + "/app/login"); p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "try again") {
		t.Fatalf("a sign-in with Slack unreachable: %d %s", p.status, p.body)
	}
	f.set(false)
	e.mustSignIn(b, alice)
	e.mustSignIn(e.browser(), bob)
	if n := f.set(false); n != 2 {
		t.Fatalf("Slack's document read %d times; want 2 (the failed try, then once)", n)
	}
	for _, call := range e.fake.Calls("openid.connect.token") {
		if call.Params["client_id"] != clientID || call.Params["client_secret"] != clientSecret || call.Params["redirect_uri"] != e.base+CallbackPath {
			t.Errorf("openid.connect.token got %v; want client_id, client_secret and redirect_uri in the form", call.Params)
		}
	}
	if q, _ := url.ParseQuery(strings.SplitN(e.startSignIn(e.browser(), "/app/"), "?", 2)[1]); q.Get("team") != "T0FAKE" || q.Get("nonce") == "" ||
		q.Get("scope") != "openid profile email" || q.Get("response_type") != "code" {
		t.Errorf("the authorize URL's query: %v", q)
	}
}
