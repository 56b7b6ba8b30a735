package slackfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Sign in with Slack: Slack's OpenID Connect provider, as documented at
// https://docs.slack.dev/authentication/sign-in-with-slack,
// https://docs.slack.dev/reference/methods/openid.connect.token and
// https://docs.slack.dev/reference/methods/openid.connect.userInfo.
// The fake serves Slack's paths on its own host:
//
//	GET  /openid/connect/authorize          a person picker (no passwords here), then 302 with code and state
//	POST /api/openid.connect.token          code → access_token + id_token (RS256 JWT)
//	POST /api/openid.connect.userInfo       the signed-in user, by access token (GET works too)
//	GET  /openid/connect/keys               the JWKS that verifies id_tokens
//	GET  /.well-known/openid-configuration  discovery, with this host's URLs

const (
	// oidcIssuer is the "iss" of Slack's id_tokens and the issuer of its
	// discovery document (https://slack.com/.well-known/openid-configuration),
	// kept as is so that an app checks the issuer it will meet on Slack.
	oidcIssuer = "https://slack.com"
	// oidcCodeTTL: Slack's temporary OAuth codes expire after ten minutes
	// (Sign in with Slack follows the OAuth v2 flow:
	// https://docs.slack.dev/authentication/sign-in-with-slack).
	oidcCodeTTL = 10 * time.Minute
	// oidcIDTokenTTL: Slack's example id_token has exp = iat + 300
	// (https://docs.slack.dev/reference/methods/openid.connect.token).
	oidcIDTokenTTL = 300 * time.Second
	// oidcLocale is the only locale Slack's examples show.
	oidcLocale = "en-US"
)

// oidcScopes are the scopes Sign in with Slack knows (scopes_supported in
// Slack's discovery document); openid is required.
var oidcScopes = []string{"openid", "profile", "email"}

// OIDCGrant is one authorization code issued by /openid/connect/authorize,
// and what became of it.
type OIDCGrant struct {
	Code     string
	ClientID string
	// RedirectURI is where the code was sent: the request's redirect_uri,
	// or the first registered one when the request had none.
	RedirectURI string
	State       string
	Nonce       string // exactly as given at authorize; "" if none
	User        User   // the person who signed in (TeamID filled in)
	Scopes      []string
	Issued      time.Time
	// Redeemed: openid.connect.token exchanged the code (it works once).
	Redeemed    bool
	AccessToken string // the xoxp- token issued for it; "" until redeemed
}

type oidcCode struct {
	OIDCGrant
	// redirectSent: the authorize request carried redirect_uri, so
	// openid.connect.token must repeat it (the "potential gotcha" of
	// https://docs.slack.dev/reference/methods/openid.connect.token).
	redirectSent bool
}

// oidcState is the Server's Sign in with Slack state. The key is made on
// first use: most fakes never see OIDC, and an RSA-2048 key costs tens of
// milliseconds (more under -race).
type oidcState struct {
	keyMu sync.Mutex // guards key and kid (not under Server.mu: making one takes a while)
	key   *rsa.PrivateKey
	kid   string

	// Under Server.mu.
	codes  map[string]*oidcCode // code → grant
	order  []*oidcCode          // in issue order, for OIDCIssued
	tokens map[string]*oidcCode // access token → grant, for userInfo
	seq    int
}

// oidcKey returns the fake's signing key and its kid, making them on first use.
func (s *Server) oidcKey() (*rsa.PrivateKey, string) {
	o := &s.oidc
	o.keyMu.Lock()
	defer o.keyMu.Unlock()
	if o.key == nil {
		o.key, o.kid = newOIDCKey()
	}
	return o.key, o.kid
}

func newOIDCKey() (*rsa.PrivateKey, string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(fmt.Sprintf("slackfake: generating the OIDC key: %v", err))
	}
	return k, jwkThumbprint(&k.PublicKey)
}

// RotateOIDCKey replaces the key that signs id_tokens with a new one, under
// a new kid, as Slack rotates its keys: from now on tokens are signed with
// it and the JWKS lists it alone (a token signed with the old key no longer
// verifies once a client has fetched the keys again). It returns the new kid.
func (s *Server) RotateOIDCKey() string {
	k, kid := newOIDCKey()
	o := &s.oidc
	o.keyMu.Lock()
	defer o.keyMu.Unlock()
	o.key, o.kid = k, kid
	return kid
}

// OIDCKeyID is the kid of the key that signs id_tokens (in their header and
// in the JWKS at /openid/connect/keys). It makes the key if need be.
func (s *Server) OIDCKeyID() string {
	_, kid := s.oidcKey()
	return kid
}

// OIDCPublicKey is the public half of the key that signs id_tokens.
func (s *Server) OIDCPublicKey() *rsa.PublicKey {
	k, _ := s.oidcKey()
	return &k.PublicKey
}

// SignIDToken signs claims, as they are, with the fake's key: an RS256 JWT
// whose header carries the fake's kid, so it verifies against the JWKS the
// fake serves. For tests that forge what Slack would never issue, such as a
// token for another workspace or one already expired. It panics if claims do
// not marshal to JSON.
func (s *Server) SignIDToken(claims map[string]any) string {
	return s.signJWT(claims)
}

// OIDCIssued returns every code /openid/connect/authorize issued, oldest
// first, and whether it was redeemed.
func (s *Server) OIDCIssued() []OIDCGrant {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]OIDCGrant, 0, len(s.oidc.order))
	for _, c := range s.oidc.order {
		g := c.OIDCGrant
		g.Scopes = slices.Clone(g.Scopes)
		out = append(out, g)
	}
	return out
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// signJWT makes a JWS compact serialization: header and claims base64url
// encoded, signed RSASSA-PKCS1-v1_5 with SHA-256 (RS256, RFC 7518 §3.3),
// the one alg in Slack's id_token_signing_alg_values_supported.
func (s *Server) signJWT(claims any) string {
	key, kid := s.oidcKey()
	header, _ := json.Marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
	}{"RS256", "JWT", kid})
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(fmt.Sprintf("slackfake: id_token claims: %v", err))
	}
	input := b64url(header) + "." + b64url(payload)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:])
	if err != nil {
		panic(fmt.Sprintf("slackfake: signing an id_token: %v", err))
	}
	return input + "." + b64url(sig)
}

// jwk is one key of the JWKS, fields in the order Slack's
// https://slack.com/openid/connect/keys lists them.
type jwk struct {
	E   string `json:"e"`
	N   string `json:"n"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Kty string `json:"kty"`
	Use string `json:"use"`
}

func jwkOf(pub *rsa.PublicKey, kid string) jwk {
	return jwk{E: b64url(big.NewInt(int64(pub.E)).Bytes()), N: b64url(pub.N.Bytes()),
		Alg: "RS256", Kid: kid, Kty: "RSA", Use: "sig"}
}

// jwkThumbprint is the RFC 7638 thumbprint of an RSA key, a kid that
// looks like Slack's (43 base64url characters) and names this key only.
func jwkThumbprint(pub *rsa.PublicKey) string {
	j := jwkOf(pub, "")
	// RFC 7638 §3.2: the required members, in lexicographic order, no spaces.
	sum := sha256.Sum256([]byte(`{"e":"` + j.E + `","kty":"RSA","n":"` + j.N + `"}`))
	return b64url(sum[:])
}

// atHash is the OIDC at_hash of an access token (OpenID Connect Core 1.0
// §3.1.3.6): base64url of the left half of its SHA-256, for RS256.
func atHash(accessToken string) string {
	sum := sha256.Sum256([]byte(accessToken))
	return b64url(sum[:len(sum)/2])
}

// handleOIDCKeys serves the JWKS (jwks_uri).
func (s *Server) handleOIDCKeys(w http.ResponseWriter, r *http.Request) {
	key, kid := s.oidcKey()
	writeJSON(w, http.StatusOK, map[string][]jwk{"keys": {jwkOf(&key.PublicKey, kid)}})
}

// handleOIDCDiscovery serves Slack's discovery document
// (https://slack.com/.well-known/openid-configuration) with the endpoints
// on this host, so an OIDC library can be pointed at the fake; the issuer
// stays Slack's, since that is what the id_tokens say.
func (s *Server) handleOIDCDiscovery(w http.ResponseWriter, r *http.Request) {
	base := "http://" + r.Host
	writeJSON(w, http.StatusOK, struct {
		Issuer                   string   `json:"issuer"`
		AuthorizationEndpoint    string   `json:"authorization_endpoint"`
		TokenEndpoint            string   `json:"token_endpoint"`
		UserinfoEndpoint         string   `json:"userinfo_endpoint"`
		JWKSURI                  string   `json:"jwks_uri"`
		ScopesSupported          []string `json:"scopes_supported"`
		ResponseTypes            []string `json:"response_types_supported"`
		ResponseModes            []string `json:"response_modes_supported"`
		GrantTypes               []string `json:"grant_types_supported"`
		SubjectTypes             []string `json:"subject_types_supported"`
		SigningAlgs              []string `json:"id_token_signing_alg_values_supported"`
		ClaimsSupported          []string `json:"claims_supported"`
		ClaimsParameter          bool     `json:"claims_parameter_supported"`
		RequestParameter         bool     `json:"request_parameter_supported"`
		RequestURIParameter      bool     `json:"request_uri_parameter_supported"`
		TokenEndpointAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}{
		Issuer:                   oidcIssuer,
		AuthorizationEndpoint:    base + "/openid/connect/authorize",
		TokenEndpoint:            base + "/api/openid.connect.token",
		UserinfoEndpoint:         base + "/api/openid.connect.userInfo",
		JWKSURI:                  base + "/openid/connect/keys",
		ScopesSupported:          oidcScopes,
		ResponseTypes:            []string{"code"},
		ResponseModes:            []string{"query"},
		GrantTypes:               []string{"authorization_code"},
		SubjectTypes:             []string{"public"},
		SigningAlgs:              []string{"RS256"},
		ClaimsSupported:          []string{"sub", "auth_time", "iss"},
		RequestURIParameter:      true,
		TokenEndpointAuthMethods: []string{"client_secret_post", "client_secret_basic"},
	})
}

// authorizeRequest is a validated /openid/connect/authorize query.
type authorizeRequest struct {
	query        url.Values // as received, less fake_user
	redirect     string
	redirectSent bool
	scopes       []string
}

// checkAuthorize validates an authorize query, or says what is wrong with
// it. Every problem is shown on Slack's side, never sent to redirect_uri:
// the client and its redirect_uri are checked first, and an error for a
// redirect_uri not yet known to be the app's would hand the request to
// whoever wrote that URL.
func (s *Server) checkAuthorize(q url.Values) (authorizeRequest, string) {
	a := authorizeRequest{query: url.Values{}}
	for k, v := range q {
		if k != "fake_user" {
			a.query[k] = v
		}
	}
	switch id := q.Get("client_id"); {
	case s.opts.OIDCClientID == "":
		return a, "Sign in with Slack is not set up on this fake Slack (Options.OIDCClientID is empty)."
	case id == "":
		return a, "Missing client_id parameter."
	case id != s.opts.OIDCClientID:
		return a, "Invalid client_id parameter."
	}
	a.redirect, a.redirectSent = q.Get("redirect_uri"), q.Has("redirect_uri")
	if !a.redirectSent {
		// redirect_uri is optional: Slack then uses the app's configured
		// Redirect URL (Sign in with Slack follows the OAuth v2 flow,
		// https://docs.slack.dev/authentication/sign-in-with-slack); the
		// fake takes the first of OIDCRedirectURIs.
		if len(s.opts.OIDCRedirectURIs) == 0 {
			return a, "Missing redirect_uri parameter, and the app has no Redirect URLs configured."
		}
		a.redirect = s.opts.OIDCRedirectURIs[0]
	}
	u, err := url.Parse(a.redirect)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return a, "Invalid redirect_uri: it must be an absolute http(s) URL. Passed URI: " + a.redirect
	case u.Fragment != "" || strings.Contains(a.redirect, "#"):
		// RFC 6749 §3.1.2: a redirection endpoint has no fragment.
		return a, "Invalid redirect_uri: it must not have a fragment. Passed URI: " + a.redirect
	case len(s.opts.OIDCRedirectURIs) > 0 && !slices.Contains(s.opts.OIDCRedirectURIs, a.redirect):
		// Slack's own words on its error page.
		return a, "redirect_uri did not match any configured URIs. Passed URI: " + a.redirect
	}
	if rt := q.Get("response_type"); rt != "code" {
		return a, fmt.Sprintf("Invalid response_type %q: Sign in with Slack supports only \"code\".", rt)
	}
	// Space separated per OIDC; Slack's own SDKs also send commas.
	a.scopes = strings.FieldsFunc(q.Get("scope"), func(r rune) bool { return r == ' ' || r == ',' })
	for _, sc := range a.scopes {
		if !slices.Contains(oidcScopes, sc) {
			return a, fmt.Sprintf("Invalid permissions requested: %q (Sign in with Slack knows openid, profile and email).", sc)
		}
	}
	if !slices.Contains(a.scopes, "openid") {
		return a, "Invalid permissions requested: the scope must include openid."
	}
	return a, ""
}

// withQuery appends extra to u's query, keeping the query u already has as
// it is (an app may route on it).
func withQuery(u string, extra url.Values) string {
	if strings.Contains(u, "?") {
		return u + "&" + extra.Encode()
	}
	return u + "?" + extra.Encode()
}

// handleOIDCAuthorize is Slack's authorization endpoint. Slack would ask
// the person to sign in and consent; the fake has no passwords, so it lists
// the workspace's people and the chosen link (fake_user=…) stands for the
// sign-in and the consent.
func (s *Server) handleOIDCAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, problem := s.checkAuthorize(q)
	if problem != "" {
		s.logf("slackfake: openid/connect/authorize refused: %s", problem)
		s.writeAuthorizePage(w, http.StatusBadRequest, authorizePage{Error: problem})
		return
	}
	state := q.Get("state")
	id := q.Get("fake_user")
	if id == "" {
		s.writeAuthorizePage(w, http.StatusOK, s.pickerPage(a, state))
		return
	}
	u, known := s.user(id)
	if !known {
		s.writeAuthorizePage(w, http.StatusBadRequest, authorizePage{Error: "Unknown user " + id + "."})
		return
	}
	s.mu.Lock()
	code := s.issueOIDCCodeLocked(a, q, u)
	s.mu.Unlock()
	back := url.Values{"code": {code}}
	if state != "" {
		back.Set("state", state)
	}
	s.logf("slackfake: openid/connect/authorize: %s signs in, code sent to %s", u.ID, a.redirect)
	http.Redirect(w, r, withQuery(a.redirect, back), http.StatusFound)
}

func (s *Server) issueOIDCCodeLocked(a authorizeRequest, q url.Values, u User) string {
	o := &s.oidc
	if o.codes == nil {
		o.codes = map[string]*oidcCode{}
		o.tokens = map[string]*oidcCode{}
	}
	o.seq++
	now := s.opts.Now()
	// Shaped like the code in Slack's method reference: "4724469134.4644010092847.232b…".
	code := fmt.Sprintf("%d.%d.%s", 4724469134, 4644010092847+int64(o.seq), randHex(32))
	c := &oidcCode{OIDCGrant: OIDCGrant{
		Code: code, ClientID: q.Get("client_id"), RedirectURI: a.redirect,
		State: q.Get("state"), Nonce: q.Get("nonce"), User: u,
		Scopes: slices.Clone(a.scopes), Issued: now,
	}, redirectSent: a.redirectSent}
	o.codes[code] = c
	o.order = append(o.order, c)
	s.notifyLocked()
	return code
}

// teamDomainOf is the domain of a user's workspace: the fake's, or, for a
// user of another workspace (User.TeamID), a name made from its id.
func (s *Server) teamDomainOf(teamID string) string {
	if teamID == s.opts.TeamID {
		return s.opts.TeamDomain
	}
	return strings.ToLower(teamID)
}

// oidcClaims are the user's claims the granted scopes allow (OpenID
// Connect Core 1.0 §5.4: email → email, email_verified; profile → name,
// given_name, family_name, locale, …), with Slack's names and values
// (https://docs.slack.dev/reference/methods/openid.connect.token,
// https://docs.slack.dev/reference/methods/openid.connect.userInfo). The
// openid scope alone gives sub and Slack's user and team ids.
func (s *Server) oidcClaims(g OIDCGrant, into map[string]any) {
	u := g.User
	into["sub"] = u.ID
	into["https://slack.com/user_id"] = u.ID
	into["https://slack.com/team_id"] = u.TeamID
	if slices.Contains(g.Scopes, "email") {
		into["email"] = u.Email
		into["email_verified"] = true
	}
	if slices.Contains(g.Scopes, "profile") {
		into["name"] = u.Name
		into["given_name"] = ""
		into["family_name"] = ""
		into["locale"] = oidcLocale
		into["https://slack.com/team_name"] = s.teamDomainOf(u.TeamID)
		into["https://slack.com/team_domain"] = s.teamDomainOf(u.TeamID)
	}
}

// handleOIDCToken is openid.connect.token. It is a Web API method (recorded
// in Calls; FailNext, HoldNext, DelayNext and DropNext apply) but it is
// authenticated by the app's client_id and client_secret, as form or JSON
// fields (client_secret_post) or HTTP Basic (client_secret_basic), not by a
// token.
func (s *Server) handleOIDCToken(w http.ResponseWriter, r *http.Request) {
	const method = "openid.connect.token"
	body, _ := io.ReadAll(r.Body)
	params, _ := parseParams(r, body)
	clientID, secret := params["client_id"], params["client_secret"]
	if id, sec, basic := r.BasicAuth(); basic {
		// RFC 6749 §2.3.1: the Basic credentials are form-urlencoded first.
		if v, err := url.QueryUnescape(id); err == nil && clientID == "" {
			clientID = v
		}
		if v, err := url.QueryUnescape(sec); err == nil && secret == "" {
			secret = v
		}
	}
	// Sign outside the lock the first time: making the key takes a while.
	s.oidcKey()
	if h := s.takeHold(method); h != nil && !s.held(r, h) {
		return
	}
	s.serve(w, r, method, params, body, func() reply {
		if rep, stopped := s.faultedLocked(method, params); stopped {
			return rep
		}
		return s.oidcTokenLocked(params, clientID, secret)
	})
}

func (s *Server) oidcTokenLocked(p map[string]string, clientID, secret string) reply {
	if gt, given := p["grant_type"]; given && gt != "authorization_code" {
		// refresh_token needs token rotation, which the fake does not model.
		return fail("invalid_grant_type")
	}
	if s.opts.OIDCClientID == "" || clientID != s.opts.OIDCClientID {
		return fail("invalid_client_id")
	}
	if s.opts.OIDCClientSecret != "" && secret != s.opts.OIDCClientSecret {
		return fail("bad_client_secret")
	}
	now := s.opts.Now()
	c := s.oidc.codes[p["code"]]
	if c == nil || c.Redeemed || c.ClientID != clientID || now.Sub(c.Issued) > oidcCodeTTL {
		return fail("invalid_code")
	}
	// redirect_uri is optional here, but "required if your app passed it as
	// a parameter to /openid/connect/authorize", and must then match.
	if ru, given := p["redirect_uri"]; (given || c.redirectSent) && ru != c.RedirectURI {
		return fail("bad_redirect_uri")
	}
	c.Redeemed = true
	s.oidc.seq++
	c.AccessToken = fmt.Sprintf("xoxp-%d-%d-%d-%s", 4724469134, 1000000000000+int64(s.oidc.seq), now.Unix(), randHex(16))
	s.oidc.tokens[c.AccessToken] = c

	claims := map[string]any{
		"iss":       oidcIssuer,
		"aud":       clientID,
		"iat":       now.Unix(),
		"exp":       now.Add(oidcIDTokenTTL).Unix(),
		"auth_time": c.Issued.Unix(), // when the person picked themselves
		"at_hash":   atHash(c.AccessToken),
	}
	if c.Nonce != "" {
		claims["nonce"] = c.Nonce
	}
	s.oidcClaims(c.OIDCGrant, claims)
	return ok("access_token", c.AccessToken, "token_type", "Bearer", "id_token", s.signJWT(claims))
}

// handleOIDCUserInfo is openid.connect.userInfo: the user behind an access
// token from openid.connect.token (Authorization: Bearer or a "token"
// field). Recorded in Calls like the other Web API methods.
func (s *Server) handleOIDCUserInfo(w http.ResponseWriter, r *http.Request) {
	const method = "openid.connect.userInfo"
	body, _ := io.ReadAll(r.Body)
	params, token := parseParams(r, body)
	if h := s.takeHold(method); h != nil && !s.held(r, h) {
		return
	}
	s.serve(w, r, method, params, body, func() reply {
		if rep, stopped := s.faultedLocked(method, params); stopped {
			return rep
		}
		if token == "" {
			return fail("not_authed")
		}
		c := s.oidc.tokens[token]
		if c == nil {
			return fail("invalid_auth")
		}
		rep := ok()
		s.oidcClaims(c.OIDCGrant, rep.body)
		return rep
	})
}
