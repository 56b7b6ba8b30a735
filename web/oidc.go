package web

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Slack's OpenID Connect provider ("Sign in with Slack",
// https://docs.slack.dev/authentication/sign-in-with-slack): the issuer and
// the claims its ID tokens carry beyond the standard ones
// (https://docs.slack.dev/reference/methods/openid.connect.token).
const (
	slackIssuer = "https://slack.com"
	claimTeam   = "https://slack.com/team_id"
	claimUser   = "https://slack.com/user_id"
)

// Provider is where Slack's OpenID Connect endpoints are: slack.com, or the
// fake Slack's host when SLACK_API_URL points at one. The paths are Slack's.
type Provider struct {
	// Base is the scheme and host of the authorize and keys endpoints
	// ("https://slack.com").
	Base string
	// API is the Web API base the token method is called on
	// ("https://slack.com/api/").
	API string
}

// ProviderFor derives the provider from the Web API base URL the bot uses
// ("" means Slack's own): the authorize page and the keys live on the same
// host as /api/.
func ProviderFor(apiURL string) Provider {
	if apiURL == "" {
		return Provider{Base: slackIssuer, API: slackIssuer + "/api/"}
	}
	api := strings.TrimSuffix(apiURL, "/") + "/"
	return Provider{Base: strings.TrimSuffix(strings.TrimSuffix(api, "/"), "/api"), API: api}
}

func (p Provider) authorizeURL() string { return p.Base + "/openid/connect/authorize" }
func (p Provider) keysURL() string      { return p.Base + "/openid/connect/keys" }
func (p Provider) tokenURL() string     { return p.API + "openid.connect.token" }

// identity is who signed in, read from a verified ID token.
type identity struct {
	User, Team, Name, Email string
}

// oidcClient is the relying party: it sends people to Slack, redeems the
// code Slack sends back and verifies the ID token it gets for it.
type oidcClient struct {
	provider     Provider
	clientID     string
	clientSecret string
	redirect     string
	http         *http.Client
	now          func() time.Time
	keys         keyCache
}

// authorize is the URL that sends a person to Slack to sign in.
func (c *oidcClient) authorize(state, nonce, team string) string {
	q := url.Values{
		"response_type": {"code"},
		"scope":         {"openid profile email"},
		"client_id":     {c.clientID},
		"state":         {state},
		"nonce":         {nonce},
		"redirect_uri":  {c.redirect},
	}
	if team != "" {
		// Slack signs the person into this workspace, when they are in
		// several; the team check below is what enforces it.
		q.Set("team", team)
	}
	return c.provider.authorizeURL() + "?" + q.Encode()
}

// errSignIn is a sign-in Slack or the token refused; its text is safe to
// show (it names the check that failed, never a secret).
type errSignIn struct{ why string }

func (e *errSignIn) Error() string { return "sign-in refused: " + e.why }

func refused(format string, args ...any) error { return &errSignIn{why: fmt.Sprintf(format, args...)} }

// redeem exchanges code for an ID token (openid.connect.token) and returns
// who it names, after checking its signature against Slack's keys, its
// issuer, audience, lifetime and nonce.
func (c *oidcClient) redeem(ctx context.Context, code, nonce string) (identity, error) {
	form := url.Values{"client_id": {c.clientID}, "client_secret": {c.clientSecret}, "code": {code},
		"redirect_uri": {c.redirect}, "grant_type": {"authorization_code"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.provider.tokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return identity{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return identity{}, fmt.Errorf("openid.connect.token: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		OK      bool   `json:"ok"`
		Error   string `json:"error"`
		IDToken string `json:"id_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return identity{}, fmt.Errorf("openid.connect.token: HTTP %d: %w", resp.StatusCode, err)
	}
	if !out.OK {
		return identity{}, refused("Slack refused the sign-in code (%s)", out.Error)
	}
	return c.verify(ctx, out.IDToken, nonce)
}

// skew is how far the clocks of Slack and this replica may disagree.
const skew = 2 * time.Minute

// verify checks an ID token (RS256 only, never "none" nor an HMAC a public
// key could be used to forge) and returns its identity.
func (c *oidcClient) verify(ctx context.Context, token, nonce string) (identity, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return identity{}, refused("the ID token is not a JWT")
	}
	var head struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := decodeSegment(parts[0], &head); err != nil {
		return identity{}, refused("the ID token's header: %v", err)
	}
	if head.Alg != "RS256" {
		return identity{}, refused("the ID token is signed with %q, not RS256", head.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return identity{}, refused("the ID token's signature is not base64url")
	}
	key, err := c.keys.key(ctx, c, head.Kid)
	if err != nil {
		return identity{}, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) != nil {
		return identity{}, refused("the ID token's signature does not verify against Slack's keys")
	}
	var cl struct {
		Iss   string          `json:"iss"`
		Sub   string          `json:"sub"`
		Aud   json.RawMessage `json:"aud"`
		Exp   float64         `json:"exp"`
		Iat   float64         `json:"iat"`
		Nonce string          `json:"nonce"`
		Team  string          `json:"https://slack.com/team_id"`
		User  string          `json:"https://slack.com/user_id"`
		Name  string          `json:"name"`
		Email string          `json:"email"`
	}
	if err := decodeSegment(parts[1], &cl); err != nil {
		return identity{}, refused("the ID token's claims: %v", err)
	}
	now := c.now()
	switch {
	case cl.Iss != slackIssuer:
		return identity{}, refused("the ID token was issued by %q, not Slack", cl.Iss)
	case !audience(cl.Aud, c.clientID):
		return identity{}, refused("the ID token is for another app")
	case now.After(time.Unix(int64(cl.Exp), 0).Add(skew)):
		return identity{}, refused("the ID token has expired")
	case time.Unix(int64(cl.Iat), 0).After(now.Add(skew)):
		return identity{}, refused("the ID token is issued in the future")
	case nonce == "" || cl.Nonce != nonce:
		return identity{}, refused("the ID token's nonce is not this sign-in's")
	case cl.User == "" || cl.Team == "":
		return identity{}, refused("the ID token names no Slack user or workspace")
	case cl.Sub != "" && cl.Sub != cl.User:
		return identity{}, refused("the ID token's subject is not its user")
	}
	return identity{User: cl.User, Team: cl.Team, Name: cl.Name, Email: cl.Email}, nil
}

// audience reports whether aud (a string or an array) names clientID.
func audience(aud json.RawMessage, clientID string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == clientID
	}
	var many []string
	if json.Unmarshal(aud, &many) == nil {
		return len(many) == 1 && many[0] == clientID
	}
	return false
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// keyCache holds Slack's signing keys (the JWKS), fetched when a token
// names a key it does not hold, at most once a minute: a token with a
// made-up kid cannot make every sign-in fetch the keys.
type keyCache struct {
	mu      sync.Mutex
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

func (k *keyCache) key(ctx context.Context, c *oidcClient, kid string) (*rsa.PublicKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if key, ok := k.keys[kid]; ok {
		return key, nil
	}
	if !k.fetched.IsZero() && c.now().Sub(k.fetched) < time.Minute {
		return nil, refused("the ID token is signed with a key Slack does not publish")
	}
	keys, err := fetchKeys(ctx, c.http, c.provider.keysURL())
	if err != nil {
		return nil, err
	}
	k.keys, k.fetched = keys, c.now()
	if key, ok := keys[kid]; ok {
		return key, nil
	}
	return nil, refused("the ID token is signed with a key Slack does not publish")
}

// fetchKeys reads a JWKS document's RSA signing keys by kid.
func fetchKeys(ctx context.Context, hc *http.Client, u string) (map[string]*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("Slack's OpenID keys: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("Slack's OpenID keys: HTTP %d", resp.StatusCode)
	}
	var doc struct {
		Keys []struct {
			Kty, Kid, Use, Alg, N, E string
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("Slack's OpenID keys: %w", err)
	}
	out := map[string]*rsa.PublicKey{}
	for _, k := range doc.Keys {
		if k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err := errors.Join(err1, err2); err != nil || len(e) > 4 {
			continue
		}
		out[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	if len(out) == 0 {
		return nil, errors.New("Slack's OpenID keys: no RS256 signing key")
	}
	return out, nil
}
