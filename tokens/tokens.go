// Package tokens is personal agent tokens: how a person connects their own
// agent from a terminal (askslack login) and what the token then is.
//
// A token is issued through the OAuth 2.0 device authorization grant (RFC
// 8628, device.go): the terminal asks for a device code and a short user
// code, the person opens the answer page, signs in with Slack, sees what
// is asking to connect and confirms; the terminal, polling, receives the
// token. It holds the agent role only (it asks; it never answers), its
// asks carry its owner as principal (waterfall.PersonalCaller), and the
// store keeps only its hash. Every request that presents one reads it in
// the store (Authenticate), so a revoke holds on every replica at once;
// revoking also withdraws the token's open asks. Connecting, revoking and
// using a revoked token are in the audit trail (and so in webhooks).
//
// It links neither slack-go nor go-redis: the store's roles, a check of
// who may connect and a way to withdraw asks are given to it.
package tokens

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Store is what the service keeps its state in: the tokens, the device
// grants under way (store.Notes), the rate limits (store.Budget) and the
// audit trail.
type Store interface {
	store.Tokens
	store.Notes
	store.Budget
	Append(ctx context.Context, e asktype.AuditEntry) error
}

// Defaults.
const (
	DefaultTTL      = 90 * 24 * time.Hour
	DefaultCodeTTL  = 10 * time.Minute
	DefaultInterval = 5 * time.Second
	// MaxTTL bounds ASKSLACK_TOKEN_TTL.
	MaxTTL = 366 * 24 * time.Hour
)

// Options configure a Service. Store, VerifyURL and MayConnect are
// required.
type Options struct {
	Store Store
	// VerifyURL is the page a person confirms a connection on
	// (ASKSLACK_WEB_URL/app/device).
	VerifyURL string
	// MayConnect reports whether a Slack user may connect an agent, and
	// why not (shown to them). It must fail closed.
	MayConnect func(ctx context.Context, userID string) (ok bool, why string)
	// Withdraw withdraws the open asks of caller, the token just revoked
	// (reason asktype.Revoked), and says how many; nil withdraws nothing.
	Withdraw func(ctx context.Context, caller string) (int, error)
	// TTL is how long a token lasts (ASKSLACK_TOKEN_TTL, default 90 days);
	// CodeTTL how long a device code waits to be confirmed (10 minutes);
	// Interval how often the terminal may poll (5 s).
	TTL, CodeTTL, Interval time.Duration
	Clock                  clock.Clock
	Logger                 *slog.Logger
}

// Service issues, checks, lists and revokes personal agent tokens.
type Service struct {
	st   Store
	o    Options
	now  func() time.Time
	log  *slog.Logger
	spin time.Duration // the least time between two polls of one code
}

// New checks opts and returns the service.
func New(opts Options) (*Service, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("tokens: Options.Store is required")
	case opts.VerifyURL == "":
		return nil, errors.New("tokens: Options.VerifyURL is required")
	case opts.MayConnect == nil:
		return nil, errors.New("tokens: Options.MayConnect is required")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.CodeTTL <= 0 {
		opts.CodeTTL = DefaultCodeTTL
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := clock.OrReal(opts.Clock)
	// A poll a fifth of the interval early is network jitter, not haste.
	return &Service{st: opts.Store, o: opts, now: c.Now, log: opts.Logger, spin: opts.Interval * 4 / 5}, nil
}

// TTL is how long a new token lasts.
func (s *Service) TTL() time.Duration { return s.o.TTL }

// Prefix starts every personal token's secret, so a scanner (and the
// host API) tells one from any other string.
const Prefix = "askslack_pat_"

// IsPersonal reports whether bearer has the form of a personal token.
func IsPersonal(bearer string) bool { return strings.HasPrefix(bearer, Prefix) }

// CallerOf is the host API caller a token asks as.
func CallerOf(t asktype.AgentToken) string { return waterfall.PersonalCaller(t.Name, t.Owner) }

// Hash is how the store finds a secret: its hex SHA-256.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// secretOf is the token a device code earns: derived from the code, so
// the store never holds it (it holds the code's hash and the token's); the
// terminal that holds the code is the one that gets it.
func secretOf(deviceCode string) string {
	sum := sha256.Sum256([]byte("askslack agent token v1\x00" + deviceCode))
	return Prefix + b32.EncodeToString(sum[:])
}

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID is a token's public id: "at_" and 16 random base32 characters.
func newID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return "at_" + b32.EncodeToString(b)
}

// Refused is a token the host API refuses: unknown, revoked or expired.
// Why is safe to show its holder and says to run askslack login.
type Refused struct {
	Why   string
	Token *asktype.AgentToken // nil when unknown
}

func (e *Refused) Error() string { return e.Why }

// Login is what every refusal tells the holder to do.
const Login = "run `askslack login` to connect this machine again"

// Authenticate returns the live token whose secret is secret, recording
// its use from addr; a *Refused for a token that is unknown, revoked or
// expired (that last two are recorded in the audit trail, at most a few
// times a minute per token), any other error when the store cannot tell.
func (s *Service) Authenticate(ctx context.Context, secret, addr string) (asktype.AgentToken, error) {
	now := s.now()
	t, err := s.st.UseToken(ctx, Hash(secret), addr, now)
	if errors.Is(err, store.ErrNotFound) {
		return asktype.AgentToken{}, &Refused{Why: "this agent token is not known to this bot (it expired long ago, or it was made for another); " + Login}
	}
	if err != nil {
		return asktype.AgentToken{}, err
	}
	if t.Live(now) {
		return t, nil
	}
	why := fmt.Sprintf("this agent token (%s, %s's) expired on %s; %s", t.Name, ownerName(t), day(t.Expires), Login)
	if !t.Revoked.IsZero() {
		why = fmt.Sprintf("this agent token (%s, %s's) was revoked on %s; %s", t.Name, ownerName(t), day(t.Revoked), Login)
	}
	s.refusedUse(ctx, t, addr, now)
	return asktype.AgentToken{}, &Refused{Why: why, Token: &t}
}

// refusedUse records a revoked or expired token's use, within a budget per
// token every replica shares: a hook retrying with a revoked token costs
// the trail a few entries a minute.
func (s *Service) refusedUse(ctx context.Context, t asktype.AgentToken, addr string, now time.Time) {
	ok, err := s.st.Take(ctx, asktype.Bucket{Name: "token-refused:" + t.ID, PerMinute: 2, Burst: 3}, now)
	if err != nil || !ok {
		return
	}
	state := "expired"
	if !t.Revoked.IsZero() {
		state = "revoked"
	}
	s.audit(ctx, asktype.AuditEntry{Event: asktype.EventAgentRefused, Caller: CallerOf(t),
		Detail: fmt.Sprintf("%s, %s, presented from %s", Describe(t), state, addrOr(addr))})
	s.log.Warn("a revoked or expired agent token was presented", "token", t.ID, "owner", t.Owner, "state", state, "addr", addr)
}

// Describe names a token in the audit trail and logs: its id, name,
// agents and expiry (never its secret or hash).
func Describe(t asktype.AgentToken) string {
	d := fmt.Sprintf("agent token %s %q", t.ID, t.Name)
	if len(t.Kinds) > 0 {
		d += " (" + strings.Join(t.Kinds, ", ") + ")"
	}
	return d + " of " + strings.TrimSpace(t.OwnerName+" ("+t.Owner+")") + ", expires " + t.Expires.UTC().Format(time.RFC3339)
}

func ownerName(t asktype.AgentToken) string {
	if t.OwnerName != "" {
		return t.OwnerName
	}
	return t.Owner
}

func day(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func addrOr(a string) string {
	if a == "" {
		return "an unknown address"
	}
	return a
}

func (s *Service) audit(ctx context.Context, e asktype.AuditEntry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	e.At = s.now()
	if err := s.st.Append(ctx, e); err != nil {
		s.log.Warn("recording an agent token event in the audit trail failed", "event", e.Event, "err", err)
	}
}

// List is the live tokens of owner ("" for everyone's), newest first.
func (s *Service) List(ctx context.Context, owner string) ([]asktype.AgentToken, error) {
	return s.st.LiveTokens(ctx, owner, s.now())
}

// Who revokes a token: a person in Slack or on the page (UserID), an
// operator's API token (Operator), or the agent itself (Self: askslack
// logout).
type Who struct {
	UserID, UserName, Surface string
	// Team is the workspace the person signed in to (the answer page's
	// session): a token they confirm belongs to it.
	Team     string
	Operator string
	Self     bool
}

func (w Who) label() string {
	switch {
	case w.Self:
		return "the agent itself (askslack logout)"
	case w.Operator != "":
		return "operator " + w.Operator
	}
	return strings.TrimSpace(w.UserName + " (" + w.UserID + ")")
}

// ErrNotFound: no live token with that id (or, for a person, none of
// theirs).
var ErrNotFound = errors.New("tokens: no such live token")

// Revoke ends token id on every replica and withdraws its open asks.
// owner, when set, restricts it to that person's own tokens (App Home,
// /askslack agents); ErrNotFound otherwise. It returns the token revoked
// and how many asks were withdrawn.
func (s *Service) Revoke(ctx context.Context, id string, who Who, owner string) (asktype.AgentToken, int, error) {
	if owner != "" {
		t, err := s.st.Token(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && t.Owner != owner) {
			return asktype.AgentToken{}, 0, ErrNotFound
		}
		if err != nil {
			return asktype.AgentToken{}, 0, err
		}
	}
	by := who.UserID
	switch {
	case who.Self:
		by = "self"
	case who.Operator != "":
		by = "operator:" + who.Operator
	}
	t, err := s.st.RevokeToken(ctx, id, by, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return asktype.AgentToken{}, 0, ErrNotFound
	}
	if err != nil {
		return asktype.AgentToken{}, 0, err
	}
	e := asktype.AuditEntry{Event: asktype.EventAgentRevoked, Caller: CallerOf(t), Detail: Describe(t) + ", revoked by " + who.label()}
	if who.UserID != "" {
		e.Respondent = &asktype.AuditRespondent{UserID: who.UserID, UserName: who.UserName, Surface: who.Surface}
	}
	s.audit(ctx, e)
	n := s.withdraw(ctx, t)
	s.log.Info("agent token revoked", "token", t.ID, "owner", t.Owner, "by", who.label(), "withdrawn", n)
	return t, n, nil
}

// withdraw withdraws the revoked token's open asks: work the revoke owes,
// so not hung off the request that asked for it.
func (s *Service) withdraw(ctx context.Context, t asktype.AgentToken) int {
	if s.o.Withdraw == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	n, err := s.o.Withdraw(ctx, CallerOf(t))
	if err != nil {
		s.log.Warn("withdrawing a revoked agent token's asks failed", "token", t.ID, "withdrawn", n, "err", err)
	}
	return n
}
