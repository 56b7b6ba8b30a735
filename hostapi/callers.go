package hostapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/askslack/askslack/asktype"
)

// Who calls the host API. Every bearer token has a name and a role; an ask
// belongs to the agent caller that made it. The party a question gates
// never holds a way to answer it: agents ask, people answer (in Slack, or
// through an answer surface that names itself), operators look.

// Role is what a caller may do; a caller may hold several (development
// mode holds them all).
type Role uint8

const (
	// RoleAgent asks, and reads, waits on and withdraws its own asks and
	// sessions. It never answers.
	RoleAgent Role = 1 << iota
	// RoleAnswer answers any ask in its own name (another UI a team
	// builds) and reads any ask to show it. It cannot ask.
	RoleAnswer
	// RoleAdmin reads everything, withdraws anything and reads the audit
	// trail.
	RoleAdmin

	roleAll = RoleAgent | RoleAnswer | RoleAdmin
)

func (r Role) String() string {
	var s []string
	for _, x := range []struct {
		r Role
		n string
	}{{RoleAgent, "agent"}, {RoleAnswer, "answer"}, {RoleAdmin, "admin"}} {
		if r&x.r != 0 {
			s = append(s, x.n)
		}
	}
	return strings.Join(s, "+")
}

// Caller is who made a request: the name of the token it presented and its
// roles. A personal agent token (askslack login) is an agent caller named
// for it and its owner (waterfall.PersonalCaller), its owner the
// principal of its asks.
type Caller struct {
	Name string
	Role Role
	// Principal is the person a personal token works for ("" for a
	// configured token: ASKSLACK_CALLER_PRINCIPALS binds those).
	Principal string
	// Token is the personal token presented; nil for any other.
	Token *asktype.AgentToken
}

// Can reports whether the caller holds role r.
func (c Caller) Can(r Role) bool { return c.Role&r != 0 }

// owns reports whether an ask made by caller name is the caller's: its
// own, or any ask for a caller that reads everything.
func (c Caller) owns(name string) bool {
	return c.Can(RoleAnswer|RoleAdmin) || c.Name == name
}

// LocalCaller is the caller of development mode: no tokens configured, a
// loopback caller holds every role.
const LocalCaller = "local"

// Credential is one accepted bearer token.
type Credential struct {
	Name string
	Role Role
	// sum is the SHA-256 of the secret: configured as "sha256:<hex>" so no
	// plaintext sits in a ConfigMap, or hashed from the plain secret.
	sum [sha256.Size]byte
}

// Callers identifies the caller of each request from its bearer token.
// With no credentials it is in development mode: loopback callers hold
// every role, anyone else is refused.
type Callers struct {
	creds []Credential
}

// minSecret is the shortest secret accepted: a token an agent holds is a
// password to the API, and short ones are guessed.
const minSecret = 16

// ParseCredentials reads one role's tokens as configured in variable
// (named in errors): "name:secret" or "name:sha256:<64 hex>", a name may
// repeat (two secrets while rotating). A bare secret without a name is an
// agent named token-N when bare is true (the older ASKSLACK_API_TOKENS
// form) and an error otherwise. next numbers the bare ones across calls.
func ParseCredentials(variable string, role Role, entries []string, bare bool, next *int) ([]Credential, error) {
	var out []Credential
	for i, e := range entries {
		e = strings.TrimSpace(e)
		name, secret, named := strings.Cut(e, ":")
		if !named || (name == "sha256" && len(secret) == 2*sha256.Size && !strings.Contains(secret, ":")) {
			if !bare {
				return nil, fmt.Errorf("%s: entry %d has no name; write name:secret", variable, i+1)
			}
			*next++
			name, secret = fmt.Sprintf("token-%d", *next), e
		}
		if name == "" {
			return nil, fmt.Errorf("%s: entry %d has an empty name", variable, i+1)
		}
		if !validName(name) {
			return nil, fmt.Errorf("%s: caller name %q may hold only letters, digits, '.', '_' and '-' (at most 64)", variable, name)
		}
		c := Credential{Name: name, Role: role}
		if h, ok := strings.CutPrefix(secret, "sha256:"); ok {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%s: the secret of %q is not sha256:<64 hex digits>", variable, name)
			}
			copy(c.sum[:], b)
		} else {
			if secret == "" {
				return nil, fmt.Errorf("%s: %q has an empty secret", variable, name)
			}
			if len(secret) < minSecret {
				return nil, fmt.Errorf("%s: the secret of %q is shorter than %d characters", variable, name, minSecret)
			}
			c.sum = sha256.Sum256([]byte(secret))
		}
		out = append(out, c)
	}
	return out, nil
}

// NewCallers checks that no name holds two roles and returns the caller
// table. variables names the variable each role was read from, for errors.
func NewCallers(creds []Credential, variables map[Role]string) (*Callers, error) {
	roles := map[string]Role{}
	for _, c := range creds {
		if r, ok := roles[c.Name]; ok && r != c.Role {
			return nil, fmt.Errorf("%s and %s both name %q: a caller has one role", variables[r], variables[c.Role], c.Name)
		}
		roles[c.Name] = c.Role
	}
	return &Callers{creds: creds}, nil
}

// Development reports whether no token is configured (loopback callers
// hold every role).
func (c *Callers) Development() bool { return c == nil || len(c.creds) == 0 }

// matches reports whether bearer is one of the configured tokens.
func (c *Callers) matches(bearer string) bool {
	if c.Development() {
		return false
	}
	sum := sha256.Sum256([]byte(bearer))
	found := false
	for i := range c.creds {
		if subtle.ConstantTimeCompare(sum[:], c.creds[i].sum[:]) == 1 {
			found = true
		}
	}
	return found
}

// Identify returns the caller of r, false when it presented no valid token
// (or, in development mode, does not call from loopback).
func (c *Callers) Identify(r *http.Request) (Caller, bool) {
	if c.Development() {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		ip := net.ParseIP(host)
		if err == nil && ip != nil && ip.IsLoopback() {
			return Caller{Name: LocalCaller, Role: roleAll}, true
		}
		return Caller{}, false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || got == "" {
		return Caller{}, false
	}
	sum := sha256.Sum256([]byte(got))
	// Every credential is compared, in constant time, so the time taken
	// tells nothing of which one (or how much of one) matched.
	found := -1
	for i := range c.creds {
		if subtle.ConstantTimeCompare(sum[:], c.creds[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Caller{}, false
	}
	return Caller{Name: c.creds[found].Name, Role: c.creds[found].Role}, true
}

// validName: letters, digits, '.', '_', '-'; never '/' (see
// waterfall.SessionKey) nor ':' (the token syntax).
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

type callerKey struct{}

func withCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerOf is the caller ServeHTTP identified.
func callerOf(r *http.Request) Caller {
	c, _ := r.Context().Value(callerKey{}).(Caller)
	return c
}
