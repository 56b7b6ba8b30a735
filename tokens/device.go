package tokens

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The device authorization grant (RFC 8628), kept in the store's notes so
// every replica serves every step:
//
//	device:grant:<hash of the device code>  the grant (what is connecting, the token it will be), for CodeTTL
//	device:code:<user code>                 "<grant key hash>" while it waits, "used" once confirmed or denied, for CodeTTL + 1h
//	device:poll:<hash of the device code>   the last poll, for the interval (slow_down)
//
// The device code is a secret only the terminal holds; the token it earns
// is derived from it (secretOf), so nothing in the store can be turned into
// a working token. Confirming stores the token (its id and hash fixed when
// the code was issued), which the store does once: a second confirmation
// of the same code finds the token there. The poll that finds it forgets
// the grant, atomically, so the token is handed out once.

// DeviceRequest is what a terminal sends to start: what to call the
// token, which agents it connects, and the address the bot saw.
type DeviceRequest struct {
	Name  string
	Kinds []string
	Addr  string
}

// Authorization is the device authorization response (RFC 8628 §3.2).
type Authorization struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// grant is a device authorization under way.
type grant struct {
	Name      string    `json:"name"`
	Kinds     []string  `json:"kinds,omitempty"`
	Addr      string    `json:"addr"`
	UserCode  string    `json:"userCode"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	TokenID   string    `json:"tokenId"`
	TokenHash string    `json:"tokenHash"`
	// DeniedBy is who said no on the page ("" while undecided).
	DeniedBy string `json:"deniedBy,omitempty"`
}

// Pending is what the page shows of a code waiting to be confirmed.
type Pending struct {
	Name             string
	Kinds            []string
	Addr             string
	Created, Expires time.Time
	UserCode         string // as shown on the terminal: XXXX-XXXX
}

// Errors of the grant. The page says each in words (what a person typed
// wrong, what expired); the terminal gets the RFC's error codes (PollCode).
var (
	ErrInvalidRequest = errors.New("tokens: invalid request")
	ErrLimited        = errors.New("tokens: too many attempts")
	ErrNoSuchCode     = errors.New("tokens: no such code")
	ErrCodeUsed       = errors.New("tokens: code already used")
	ErrCodeExpired    = errors.New("tokens: code expired")
	ErrPending        = errors.New("authorization_pending")
	ErrSlowDown       = errors.New("slow_down")
	ErrDenied         = errors.New("access_denied")
	ErrExpiredToken   = errors.New("expired_token")
)

// NotAllowed: the person who signed in may not connect agents.
type NotAllowed struct{ Why string }

func (e *NotAllowed) Error() string { return "tokens: may not connect: " + e.Why }

// PollCode is the RFC 8628 error code of a poll's error ("" for one that
// is not the grant's: the store failed).
func PollCode(err error) string {
	for _, e := range []error{ErrPending, ErrSlowDown, ErrDenied, ErrExpiredToken} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	if errors.Is(err, ErrInvalidRequest) {
		return "invalid_request"
	}
	return ""
}

const (
	maxName  = 40
	maxKinds = 4
	maxKind  = 20
	// userAlphabet is RFC 8628 §6.1's: consonants only (no words, no
	// vowels to misread), case-insensitive. Eight of them are 34 bits.
	userAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	userLen      = 8
)

// NormalName is a token's name as the terminal gave it, checked: letters,
// digits, '.', '_' and '-', at most 40; "agent" when empty.
func NormalName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "agent", nil
	}
	if len(name) > maxName || strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
	}) >= 0 {
		return "", fmt.Errorf("%w: the name may hold only letters, digits, '.', '_' and '-' (at most %d)", ErrInvalidRequest, maxName)
	}
	return name, nil
}

func normalKinds(kinds []string) ([]string, error) {
	var out []string
	for _, k := range kinds {
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" {
			continue
		}
		if len(k) > maxKind || strings.IndexFunc(k, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }) >= 0 {
			return nil, fmt.Errorf("%w: an agent kind is a word of letters, digits and '-' (at most %d)", ErrInvalidRequest, maxKind)
		}
		out = append(out, k)
	}
	if len(out) > maxKinds {
		return nil, fmt.Errorf("%w: at most %d agent kinds", ErrInvalidRequest, maxKinds)
	}
	return out, nil
}

// NormalCode reads a user code as a person types it: any case, with or
// without its dash or spaces; ok false when it cannot be one.
func NormalCode(typed string) (string, bool) {
	var b strings.Builder
	for _, r := range strings.ToUpper(typed) {
		switch {
		case strings.ContainsRune(userAlphabet, r):
			b.WriteRune(r)
		case r == '-' || r == ' ':
		default:
			return "", false
		}
	}
	c := b.String()
	return c, len(c) == userLen
}

// ShowCode is a user code as shown: XXXX-XXXX.
func ShowCode(c string) string {
	if len(c) != userLen {
		return c
	}
	return c[:4] + "-" + c[4:]
}

func newUserCode() string {
	b := make([]byte, userLen)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = userAlphabet[int(b[i])%len(userAlphabet)] // 256 = 12·20+16: a slight bias, no weak code
	}
	return string(b)
}

func grantKey(hash string) string { return "device:grant:" + hash }
func codeKey(code string) string  { return "device:code:" + code }
func pollKey(hash string) string  { return "device:poll:" + hash }

const codeUsed = "used"

// take spends one token of a rate limit every replica shares.
func (s *Service) take(ctx context.Context, name string, perMinute, burst int) error {
	ok, err := s.st.Take(ctx, asktype.Bucket{Name: name, PerMinute: perMinute, Burst: burst}, s.now())
	if err != nil {
		return err
	}
	if !ok {
		return ErrLimited
	}
	return nil
}

// Authorize starts a device authorization: a device code for the
// terminal, a user code for the person. Limited per address (ErrLimited).
func (s *Service) Authorize(ctx context.Context, req DeviceRequest) (Authorization, error) {
	name, err := NormalName(req.Name)
	if err != nil {
		return Authorization{}, err
	}
	kinds, err := normalKinds(req.Kinds)
	if err != nil {
		return Authorization{}, err
	}
	if err := s.take(ctx, "device-start:"+req.Addr, 10, 10); err != nil {
		return Authorization{}, err
	}
	now := s.now()
	device := strings.TrimPrefix(newID(), "at_") + strings.TrimPrefix(newID(), "at_") + strings.TrimPrefix(newID(), "at_")
	dh := Hash(device)
	g := grant{Name: name, Kinds: kinds, Addr: req.Addr, Created: now, Expires: now.Add(s.o.CodeTTL), TokenID: newID(), TokenHash: Hash(secretOf(device))}
	for range 5 {
		code := newUserCode()
		got, err := s.st.Remember(ctx, codeKey(code), dh, s.o.CodeTTL+time.Hour, now)
		if err != nil {
			return Authorization{}, err
		}
		if got == dh {
			g.UserCode = code
			break
		}
	}
	if g.UserCode == "" {
		return Authorization{}, errors.New("tokens: no free user code in five tries")
	}
	raw, _ := json.Marshal(g)
	if err := s.st.Put(ctx, grantKey(dh), string(raw), s.o.CodeTTL, now); err != nil {
		return Authorization{}, err
	}
	s.log.Info("agent login started", "name", name, "kinds", kinds, "addr", req.Addr)
	return Authorization{DeviceCode: device, UserCode: ShowCode(g.UserCode), VerificationURI: s.o.VerifyURL,
		VerificationURIComplete: s.o.VerifyURL + "?code=" + ShowCode(g.UserCode),
		ExpiresIn:               int(s.o.CodeTTL / time.Second), Interval: int(s.o.Interval / time.Second)}, nil
}

// lookup reads the grant of a typed code.
func (s *Service) lookup(ctx context.Context, typed string) (grant, string, error) {
	code, ok := NormalCode(typed)
	if !ok {
		return grant{}, "", ErrNoSuchCode
	}
	now := s.now()
	dh, err := s.st.Remember(ctx, codeKey(code), "", 0, now)
	switch {
	case err != nil:
		return grant{}, "", err
	case dh == "":
		return grant{}, "", ErrNoSuchCode
	case dh == codeUsed:
		return grant{}, "", ErrCodeUsed
	}
	raw, err := s.st.Remember(ctx, grantKey(dh), "", 0, now)
	if err != nil {
		return grant{}, "", err
	}
	var g grant
	if raw == "" || json.Unmarshal([]byte(raw), &g) != nil || !now.Before(g.Expires) {
		return grant{}, "", ErrCodeExpired
	}
	if g.DeniedBy != "" {
		return grant{}, "", ErrCodeUsed
	}
	return g, dh, nil
}

// Lookup is what the page shows of a typed code, for the signed-in
// userID at addr: limited per person and per address, so guessing codes
// is hopeless (ErrLimited), and ErrNoSuchCode, ErrCodeUsed or
// ErrCodeExpired for a code that cannot be confirmed.
func (s *Service) Lookup(ctx context.Context, typed, userID, addr string) (Pending, error) {
	if err := s.limitVerify(ctx, userID, addr); err != nil {
		return Pending{}, err
	}
	g, _, err := s.lookup(ctx, typed)
	if err != nil {
		return Pending{}, err
	}
	return Pending{Name: g.Name, Kinds: g.Kinds, Addr: g.Addr, Created: g.Created, Expires: g.Expires, UserCode: ShowCode(g.UserCode)}, nil
}

func (s *Service) limitVerify(ctx context.Context, userID, addr string) error {
	if err := s.take(ctx, "device-verify-user:"+userID, 10, 10); err != nil {
		return err
	}
	return s.take(ctx, "device-verify-addr:"+addr, 30, 30)
}

// MayConnect reports whether userID may connect agents, and why not.
func (s *Service) MayConnect(ctx context.Context, userID string) (bool, string) {
	return s.o.MayConnect(ctx, userID)
}

// Approve confirms a typed code as who (UserID, UserName), at addr: the
// token is theirs from now. *NotAllowed when they may not connect agents
// (nothing is issued); ErrCodeUsed when the code was confirmed or denied
// already (by anyone, on any replica), and Lookup's errors.
func (s *Service) Approve(ctx context.Context, typed string, who Who, addr string) (asktype.AgentToken, error) {
	if ok, why := s.o.MayConnect(ctx, who.UserID); !ok {
		return asktype.AgentToken{}, &NotAllowed{Why: why}
	}
	if err := s.limitVerify(ctx, who.UserID, addr); err != nil {
		return asktype.AgentToken{}, err
	}
	g, _, err := s.lookup(ctx, typed)
	if err != nil {
		return asktype.AgentToken{}, err
	}
	now := s.now()
	name, err := s.freeName(ctx, g.Name, who.UserID, now)
	if err != nil {
		return asktype.AgentToken{}, err
	}
	t := asktype.AgentToken{ID: g.TokenID, Name: name, Owner: who.UserID, OwnerName: who.UserName, Team: who.Team, Kinds: g.Kinds, Hash: g.TokenHash,
		ConnectAddr: g.Addr, Created: now, Expires: now.Add(s.o.TTL)}
	switch err := s.st.AddToken(ctx, t, now); {
	case errors.Is(err, store.ErrTokenExists):
		return asktype.AgentToken{}, ErrCodeUsed
	case errors.Is(err, store.ErrTooManyTokens):
		return asktype.AgentToken{}, &NotAllowed{Why: fmt.Sprintf("you have %d connected agents already; revoke some first (App Home, /askslack agents)", store.MaxOwnerTokens)}
	case err != nil:
		return asktype.AgentToken{}, err
	}
	s.spend(ctx, g.UserCode, now)
	t.Created, t.Expires = store.FromMillis(store.Millis(t.Created)), store.FromMillis(store.Millis(t.Expires))
	s.audit(ctx, asktype.AuditEntry{Event: asktype.EventAgentConnected, Caller: CallerOf(t),
		Respondent: &asktype.AuditRespondent{UserID: who.UserID, UserName: who.UserName, Surface: who.Surface},
		Detail:     fmt.Sprintf("%s, asked for from %s at %s, confirmed from %s", Describe(t), addrOr(g.Addr), g.Created.UTC().Format(time.RFC3339), addrOr(addr))})
	s.log.Info("agent connected", "token", t.ID, "name", t.Name, "owner", t.Owner, "from", g.Addr)
	return t, nil
}

// spend marks a user code used: typed again, it says so.
func (s *Service) spend(ctx context.Context, code string, now time.Time) {
	if err := s.st.Put(ctx, codeKey(code), codeUsed, s.o.CodeTTL+time.Hour, now); err != nil {
		s.log.Warn("marking a login code used failed (it stays single-use: its token is stored)", "err", err)
	}
}

// freeName is name, or name-2, name-3, … when owner has a live token of
// that name: each live token of a person has a caller of its own.
func (s *Service) freeName(ctx context.Context, name, owner string, now time.Time) (string, error) {
	live, err := s.st.LiveTokens(ctx, owner, now)
	if err != nil {
		return "", err
	}
	taken := map[string]bool{}
	for _, t := range live {
		taken[t.Name] = true
	}
	out := name
	for i := 2; taken[out]; i++ {
		suffix := fmt.Sprintf("-%d", i)
		out = name[:min(len(name), maxName-len(suffix))] + suffix
	}
	return out, nil
}

// Deny refuses a typed code as who: the terminal is told access_denied.
func (s *Service) Deny(ctx context.Context, typed string, who Who, addr string) error {
	if err := s.limitVerify(ctx, who.UserID, addr); err != nil {
		return err
	}
	g, dh, err := s.lookup(ctx, typed)
	if err != nil {
		return err
	}
	now := s.now()
	g.DeniedBy = who.UserID
	raw, _ := json.Marshal(g)
	if err := s.st.Put(ctx, grantKey(dh), string(raw), g.Expires.Sub(now), now); err != nil {
		return err
	}
	s.spend(ctx, g.UserCode, now)
	s.log.Info("agent login denied", "name", g.Name, "by", who.UserID, "from", g.Addr)
	return nil
}

// Issued is what a poll that found its token confirmed gets.
type Issued struct {
	Secret string
	Token  asktype.AgentToken
}

// Poll is the terminal's poll with its device code: the token once
// confirmed (once: the next poll is ErrExpiredToken), ErrPending until
// then, ErrSlowDown for a poll sooner than the interval after the last,
// ErrDenied, ErrExpiredToken for a code expired, spent or never issued.
func (s *Service) Poll(ctx context.Context, device string) (Issued, error) {
	if device == "" || len(device) > 200 {
		return Issued{}, fmt.Errorf("%w: device_code is missing", ErrInvalidRequest)
	}
	now := s.now()
	dh := Hash(device)
	mark := newID()
	last, err := s.st.Remember(ctx, pollKey(dh), mark, s.spin, now)
	if err != nil {
		return Issued{}, err
	}
	if last != mark {
		return Issued{}, ErrSlowDown
	}
	raw, err := s.st.Remember(ctx, grantKey(dh), "", 0, now)
	if err != nil {
		return Issued{}, err
	}
	var g grant
	if raw == "" || json.Unmarshal([]byte(raw), &g) != nil || !now.Before(g.Expires) {
		return Issued{}, ErrExpiredToken
	}
	if g.DeniedBy != "" {
		return Issued{}, ErrDenied
	}
	t, err := s.st.Token(ctx, g.TokenID)
	if errors.Is(err, store.ErrNotFound) {
		return Issued{}, ErrPending
	}
	if err != nil {
		return Issued{}, err
	}
	// Handed out once: of polls racing here, one forgets the grant.
	if got, err := s.st.Forget(ctx, grantKey(dh), now); err != nil {
		return Issued{}, err
	} else if got == "" {
		return Issued{}, ErrExpiredToken
	}
	return Issued{Secret: secretOf(device), Token: t}, nil
}
