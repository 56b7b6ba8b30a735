package hostapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/tokens"
	"github.com/askslack/askslack/waterfall"
)

// Tokens is what the API asks of personal agent tokens (tokens.Service):
// the bearer check, the device grant's two endpoints, and listing and
// revoking for operators.
type Tokens interface {
	Authenticate(ctx context.Context, secret, addr string) (asktype.AgentToken, error)
	Authorize(ctx context.Context, req tokens.DeviceRequest) (tokens.Authorization, error)
	Poll(ctx context.Context, device string) (tokens.Issued, error)
	List(ctx context.Context, owner string) ([]asktype.AgentToken, error)
	Revoke(ctx context.Context, id string, who tokens.Who, owner string) (asktype.AgentToken, int, error)
}

// The device grant's endpoints (RFC 8628): called by askslack login with
// no bearer token, form-encoded, answered in the RFC's JSON.
const (
	DeviceCodePath  = "/v1/device/code"
	DeviceTokenPath = "/v1/device/token"
	// GrantDeviceCode is the grant_type of a device poll (RFC 8628 §3.4).
	GrantDeviceCode = "urn:ietf:params:oauth:grant-type:device_code"
	// LoginClientID is the client_id askslack login sends.
	LoginClientID = "askslack-cli"
)

// whyOperators refuses the token routes to anyone else.
const whyOperators = "only operators (ASKSLACK_ADMIN_TOKENS) list and revoke everyone's agent tokens"

// OAuthError is the error body of the device endpoints (RFC 6749 §5.2).
type OAuthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// DeviceToken is a successful device poll (RFC 6749 §5.1), with what the
// token is beside it.
type DeviceToken struct {
	AccessToken string    `json:"access_token"`
	TokenType   string    `json:"token_type"`
	ExpiresIn   int64     `json:"expires_in"`
	Token       TokenInfo `json:"askslack_token"`
}

// TokenInfo is a personal agent token as the API shows it: never its
// secret, nor its hash.
type TokenInfo struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Caller      string    `json:"caller"`
	Owner       string    `json:"owner"`
	OwnerName   string    `json:"ownerName,omitempty"`
	Kinds       []string  `json:"kinds,omitempty"`
	ConnectAddr string    `json:"connectAddr,omitempty"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`
	LastUsed    time.Time `json:"lastUsed,omitzero"`
	LastAddr    string    `json:"lastAddr,omitempty"`
	Revoked     time.Time `json:"revoked,omitzero"`
	RevokedBy   string    `json:"revokedBy,omitempty"`
}

// InfoOf is t as the API shows it.
func InfoOf(t asktype.AgentToken) TokenInfo {
	return TokenInfo{ID: t.ID, Name: t.Name, Caller: tokens.CallerOf(t), Owner: t.Owner, OwnerName: t.OwnerName, Kinds: t.Kinds,
		ConnectAddr: t.ConnectAddr, Created: t.Created, Expires: t.Expires, LastUsed: t.LastUsed, LastAddr: t.LastAddr,
		Revoked: t.Revoked, RevokedBy: t.RevokedBy}
}

// Whoami is GET /v1/whoami: who the bearer is to the bot.
type Whoami struct {
	Caller    string     `json:"caller"`
	Roles     []string   `json:"roles"`
	Principal string     `json:"principal,omitempty"`
	Token     *TokenInfo `json:"token,omitempty"`
}

// TokenList is GET /v1/tokens.
type TokenList struct {
	Tokens []TokenInfo `json:"tokens"`
}

// clientAddr is the address a request came from, as the bot sees it.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// personal identifies a bearer that has a personal token's form; handled
// reports false for any other request (a configured token, or none). A
// refused token is answered here: 401 with the reason and the login hint.
func (s *Server) personal(w http.ResponseWriter, r *http.Request) (c Caller, handled bool) {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !tokens.IsPersonal(got) || s.tokens == nil || s.callers.matches(got) {
		return Caller{}, false
	}
	t, err := s.tokens.Authenticate(r.Context(), got, clientAddr(r))
	var refused *tokens.Refused
	switch {
	case errors.As(err, &refused):
		w.Header().Set("WWW-Authenticate", `Bearer realm="askslack", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", refused.Why)
		return Caller{}, true
	case err != nil:
		s.fail(w, waterfall.Errorf(waterfall.CodeUnavailable, "agent tokens cannot be checked just now: %v", err))
		return Caller{}, true
	}
	return Caller{Name: tokens.CallerOf(t), Role: RoleAgent, Principal: t.Owner, Token: &t}, false
}

// deviceRoute reports whether r is one of the device grant's endpoints,
// served (with no bearer token) when it is.
func (s *Server) deviceRoute(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case DeviceCodePath, DeviceTokenPath:
	default:
		return false
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, OAuthError{Error: "invalid_request", Description: "POST a form"})
		return true
	}
	if s.tokens == nil {
		why := s.loginOff
		if why == "" {
			why = "this bot does not connect agents with askslack login"
		}
		writeJSON(w, http.StatusBadRequest, OAuthError{Error: "unauthorized_client", Description: why})
		return true
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, OAuthError{Error: "invalid_request", Description: "the body is not a form"})
		return true
	}
	if id := r.PostForm.Get("client_id"); id != LoginClientID {
		writeJSON(w, http.StatusUnauthorized, OAuthError{Error: "invalid_client", Description: "client_id must be " + LoginClientID})
		return true
	}
	if r.URL.Path == DeviceCodePath {
		s.deviceCode(w, r)
	} else {
		s.deviceToken(w, r)
	}
	return true
}

// deviceCode is the device authorization endpoint (RFC 8628 §3.1): name
// and kinds (space- or comma-separated) say what is connecting.
func (s *Server) deviceCode(w http.ResponseWriter, r *http.Request) {
	kinds := strings.FieldsFunc(r.PostForm.Get("kinds"), func(c rune) bool { return c == ',' || c == ' ' })
	a, err := s.tokens.Authorize(r.Context(), tokens.DeviceRequest{Name: r.PostForm.Get("name"), Kinds: kinds, Addr: clientAddr(r)})
	switch {
	case errors.Is(err, tokens.ErrInvalidRequest):
		writeJSON(w, http.StatusBadRequest, OAuthError{Error: "invalid_request", Description: strings.TrimPrefix(err.Error(), tokens.ErrInvalidRequest.Error()+": ")})
	case errors.Is(err, tokens.ErrLimited):
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusTooManyRequests, OAuthError{Error: "slow_down", Description: "too many logins from this address; wait a minute"})
	case err != nil:
		s.log.Error("starting an agent login failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, OAuthError{Error: "temporarily_unavailable", Description: "the bot cannot start a login just now; try again in a minute"})
	default:
		writeJSON(w, http.StatusOK, a)
	}
}

// deviceToken is the token endpoint's device grant (RFC 8628 §3.4–3.5).
func (s *Server) deviceToken(w http.ResponseWriter, r *http.Request) {
	if gt := r.PostForm.Get("grant_type"); gt != GrantDeviceCode {
		writeJSON(w, http.StatusBadRequest, OAuthError{Error: "unsupported_grant_type", Description: "grant_type must be " + GrantDeviceCode})
		return
	}
	got, err := s.tokens.Poll(r.Context(), r.PostForm.Get("device_code"))
	if err == nil {
		writeJSON(w, http.StatusOK, DeviceToken{AccessToken: got.Secret, TokenType: "Bearer",
			ExpiresIn: int64(got.Token.Expires.Sub(s.clock.Now()) / time.Second), Token: InfoOf(got.Token)})
		return
	}
	code := tokens.PollCode(err)
	desc := map[string]string{
		"authorization_pending": "waiting for you to confirm in the browser",
		"slow_down":             "polling faster than the interval; wait 5 seconds more between polls",
		"access_denied":         "the connection was denied in the browser",
		"expired_token":         "the code expired or was already used; run askslack login again",
		"invalid_request":       "device_code is missing",
	}[code]
	if code == "" {
		s.log.Error("an agent login poll failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, OAuthError{Error: "temporarily_unavailable", Description: "the bot cannot answer just now; keep polling"})
		return
	}
	writeJSON(w, http.StatusBadRequest, OAuthError{Error: code, Description: desc})
}

// whoami is GET /v1/whoami: any caller learns who it is.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r)
	out := Whoami{Caller: c.Name, Roles: strings.Split(c.Role.String(), "+"), Principal: c.Principal}
	if out.Principal == "" {
		out.Principal = s.principals[c.Name]
	}
	if c.Token != nil {
		info := InfoOf(*c.Token)
		out.Token = &info
	}
	writeJSON(w, http.StatusOK, out)
}

// listTokens is GET /v1/tokens (operators): every live personal token.
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.require(w, r, RoleAdmin, whyOperators); !ok {
		return
	}
	if s.tokens == nil {
		writeJSON(w, http.StatusOK, TokenList{Tokens: []TokenInfo{}})
		return
	}
	ts, err := s.tokens.List(r.Context(), strings.TrimSpace(r.URL.Query().Get("owner")))
	if err != nil {
		s.fail(w, waterfall.Errorf(waterfall.CodeUnavailable, "listing agent tokens: %v", err))
		return
	}
	out := TokenList{Tokens: make([]TokenInfo, 0, len(ts))}
	for _, t := range ts {
		out.Tokens = append(out.Tokens, InfoOf(t))
	}
	writeJSON(w, http.StatusOK, out)
}

// revokeToken is DELETE /v1/tokens/{id}: an operator revokes any token; a
// personal token may revoke itself (askslack logout), and nothing else.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r)
	id := r.PathValue("id")
	self := c.Token != nil && c.Token.ID == id
	if !self {
		if _, ok := s.require(w, r, RoleAdmin, whyOperators); !ok {
			return
		}
	}
	if s.tokens == nil {
		s.fail(w, waterfall.Errorf(waterfall.CodeNotFound, "no live agent token %q", id))
		return
	}
	who := tokens.Who{Operator: c.Name, Self: self}
	t, n, err := s.tokens.Revoke(r.Context(), id, who, "")
	switch {
	case errors.Is(err, tokens.ErrNotFound):
		s.fail(w, waterfall.Errorf(waterfall.CodeNotFound, "no live agent token %q", id))
	case err != nil:
		s.fail(w, waterfall.Errorf(waterfall.CodeUnavailable, "revoking the agent token: %v", err))
	default:
		writeJSON(w, http.StatusOK, struct {
			Token     TokenInfo `json:"token"`
			Withdrawn int       `json:"withdrawn"`
		}{InfoOf(t), n})
	}
}

// LoginOffWhy is what askslack login is told by a bot whose answer page
// is off.
func LoginOffWhy(missing string) string {
	return fmt.Sprintf("this bot's answer page is off, and askslack login signs you in on it: the operator sets %s (docs/web.md); until then, ask them for a token (ASKSLACK_API_TOKENS)", missing)
}
