package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
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
// fake Slack's host when SLACK_API_URL points at one.
type Provider struct {
	// Base serves Slack's discovery document,
	// Base/.well-known/openid-configuration ("https://slack.com"), which
	// names the authorize, token (openid.connect.token) and keys endpoints.
	Base string
	// API is the Web API base Base was derived from
	// ("https://slack.com/api/").
	API string
}

// ProviderFor derives the provider from the Web API base URL the bot uses
// ("" means Slack's own): the discovery document lives on the same host as
// /api/.
func ProviderFor(apiURL string) Provider {
	if apiURL == "" {
		return Provider{Base: slackIssuer, API: slackIssuer + "/api/"}
	}
	api := strings.TrimSuffix(apiURL, "/") + "/"
	return Provider{Base: strings.TrimSuffix(strings.TrimSuffix(api, "/"), "/api"), API: api}
}

// identity is who signed in, read from a verified ID token.
type identity struct {
	User, Team, Name, Email string
}

// oidcClient is the relying party (go-oidc and oauth2): it sends people to
// Slack, redeems the code Slack sends back and verifies the ID token it gets
// for it.
type oidcClient struct {
	provider     Provider
	clientID     string
	clientSecret string
	redirect     string
	http         *http.Client // every call to Slack: discovery, keys, token
	now          func() time.Time

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier // nil until the discovery document is read
	oauth    oauth2.Config
}

// skew is how far the clocks of Slack and this replica may disagree.
const skew = 2 * time.Minute

// discover reads Slack's discovery document when a sign-in first needs it,
// and at each later sign-in until it has been read: never at start, so the
// bot starts, and serves all but sign-ins, while Slack is unreachable.
func (c *oidcClient) discover(ctx context.Context) (*oidc.IDTokenVerifier, *oauth2.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.verifier != nil {
		return c.verifier, &c.oauth, nil
	}
	ctx = oidc.ClientContext(ctx, c.http)
	if c.provider.Base != slackIssuer {
		// A fake Slack (SLACK_API_URL) serves Slack's document on its own
		// host, naming Slack's issuer, as its tokens do. Only then is the
		// document's issuer not held to the URL it came from; every token's
		// iss is still checked, against https://slack.com.
		ctx = oidc.InsecureIssuerURLContext(ctx, slackIssuer)
	}
	p, err := oidc.NewProvider(ctx, c.provider.Base)
	if err != nil {
		return nil, nil, fmt.Errorf("reading Slack's OpenID configuration: %w", err)
	}
	c.verifier = p.Verifier(&oidc.Config{ClientID: c.clientID,
		// RS256 only, whatever a token or the document says: never "none",
		// nor an HMAC keyed with Slack's public key.
		SupportedSigningAlgs: []string{oidc.RS256},
		// An expiry is checked as of skew ago.
		Now: func() time.Time { return c.now().Add(-skew) }})
	ep := p.Endpoint()
	// openid.connect.token takes client_id and client_secret in the form
	// (client_secret_post), as the page always sent them.
	ep.AuthStyle = oauth2.AuthStyleInParams
	c.oauth = oauth2.Config{ClientID: c.clientID, ClientSecret: c.clientSecret, Endpoint: ep, RedirectURL: c.redirect,
		Scopes: []string{oidc.ScopeOpenID, "profile", "email"}}
	return c.verifier, &c.oauth, nil
}

// authorize is the URL that sends a person to Slack to sign in.
func (c *oidcClient) authorize(ctx context.Context, state, nonce, team string) (string, error) {
	_, cfg, err := c.discover(ctx)
	if err != nil {
		return "", err
	}
	opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce)}
	if team != "" {
		// Slack signs the person into this workspace, when they are in
		// several; the team check at the callback is what enforces it.
		opts = append(opts, oauth2.SetAuthURLParam("team", team))
	}
	return cfg.AuthCodeURL(state, opts...), nil
}

// errSignIn is a sign-in Slack or the token refused; its text is safe to
// show (it names the check that failed, never a secret).
type errSignIn struct{ why string }

func (e *errSignIn) Error() string { return "sign-in refused: " + e.why }

func refused(format string, args ...any) error { return &errSignIn{why: fmt.Sprintf(format, args...)} }

// redeem exchanges code for an ID token (openid.connect.token) and returns
// who it names, once verified.
func (c *oidcClient) redeem(ctx context.Context, code, nonce string) (identity, error) {
	_, cfg, err := c.discover(ctx)
	if err != nil {
		return identity{}, err
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, c.http), code)
	// Slack refuses with HTTP 200 and {"ok":false,"error":"invalid_code"};
	// oauth2 reads "error" whatever the status.
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode != "":
		return identity{}, refused("Slack refused the sign-in code (%s)", re.ErrorCode)
	case err != nil:
		return identity{}, fmt.Errorf("openid.connect.token: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity{}, refused("Slack sent no ID token")
	}
	return c.verify(ctx, raw, nonce)
}

// verify checks an ID token and returns its identity. go-oidc checks the
// signature (RS256, against Slack's keys, fetched again when a token names a
// key not yet seen: Slack rotated it), the issuer, the audience and the
// expiry; then this sign-in's nonce and Slack's claims are checked here.
func (c *oidcClient) verify(ctx context.Context, token, nonce string) (identity, error) {
	v, _, err := c.discover(ctx)
	if err != nil {
		return identity{}, err
	}
	idt, err := v.Verify(ctx, token)
	if err != nil {
		return identity{}, unverified(err)
	}
	var cl map[string]any
	if err := idt.Claims(&cl); err != nil {
		return identity{}, refused("the ID token's claims: %v", err)
	}
	claim := func(name string) string { s, _ := cl[name].(string); return s }
	user, team := claim(claimUser), claim(claimTeam)
	switch {
	case len(idt.Audience) != 1:
		// go-oidc takes a list that names this app among others; Slack's
		// tokens name the one app.
		return identity{}, refused("the ID token is for another app too")
	case idt.IssuedAt.After(c.now().Add(skew)):
		return identity{}, refused("the ID token is issued in the future")
	case nonce == "" || idt.Nonce != nonce:
		return identity{}, refused("the ID token's nonce is not this sign-in's")
	case user == "" || team == "":
		return identity{}, refused("the ID token names no Slack user or workspace")
	case idt.Subject != "" && idt.Subject != user:
		return identity{}, refused("the ID token's subject is not its user")
	}
	return identity{User: user, Team: team, Name: claim("name"), Email: claim("email")}, nil
}

// unverified words go-oidc's refusal of an ID token for the page. go-oidc
// has decided; its errors are text (but for expiry), read here only to name
// the check that failed. Anything unrecognised is still a refusal; only
// Slack's keys being out of reach is not one.
func unverified(err error) error {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return refused("the ID token has expired")
	case strings.Contains(msg, "fetching keys"):
		return fmt.Errorf("reading Slack's OpenID keys: %w", err)
	case strings.HasPrefix(msg, "oidc: malformed jwt: "):
		detail := strings.TrimPrefix(strings.TrimPrefix(msg, "oidc: malformed jwt: "), "go-jose/go-jose: ")
		return refused("the ID token is not a JWT of three base64url parts signed RS256 (%s)", detail)
	case strings.HasPrefix(msg, "failed to verify signature"):
		return refused("the ID token is signed with a key Slack does not publish, or its signature does not verify")
	case strings.HasPrefix(msg, "oidc: id token issued by"):
		return refused("the ID token was issued by another provider than Slack")
	case strings.HasPrefix(msg, "oidc: expected audience"):
		return refused("the ID token is for another app")
	}
	return refused("the ID token does not verify (%s)", msg)
}
