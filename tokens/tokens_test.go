package tokens_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/tokens"
)

type bundle struct {
	svc       *tokens.Service
	st        *store.Memory
	clock     *clock.Fake
	withdrawn []string
	mu        sync.Mutex
}

var (
	alice = tokens.Who{UserID: "U0ALICE", UserName: "alice", Surface: "web"}
	bob   = tokens.Who{UserID: "U0BOB", UserName: "bob", Surface: "web"}
	eve   = tokens.Who{UserID: "U0EVE", UserName: "eve", Surface: "web"}
)

func setup(t *testing.T) *bundle {
	t.Helper()
	t.Parallel()
	b := &bundle{clock: clock.NewFake(time.UnixMilli(1_800_000_000_000))}
	b.st = store.NewMemory(0, b.clock)
	svc, err := tokens.New(tokens.Options{Store: b.st, VerifyURL: "https://askslack.example.com/app/device", Clock: b.clock,
		MayConnect: func(_ context.Context, user string) (bool, string) {
			if user == eve.UserID {
				return false, "You are not on the list of people who may answer the agent's questions."
			}
			return true, ""
		},
		Withdraw: func(_ context.Context, caller string) (int, error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.withdrawn = append(b.withdrawn, caller)
			return 2, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	b.svc = svc
	return b
}

func (b *bundle) start(t *testing.T, name string) tokens.Authorization {
	t.Helper()
	a, err := b.svc.Authorize(context.Background(), tokens.DeviceRequest{Name: name, Kinds: []string{"claude", "Codex"}, Addr: "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// poll polls once the interval has passed.
func (b *bundle) poll(dev string) (tokens.Issued, error) {
	b.clock.Advance(5 * time.Second)
	return b.svc.Poll(context.Background(), dev)
}

func (b *bundle) trail(t *testing.T) []asktype.AuditEntry {
	t.Helper()
	es, _, err := b.st.Audit(context.Background(), asktype.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestLoginIssuesOneTokenToTheTerminal(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	a := b.start(t, "alice-laptop")
	if len(a.UserCode) != 9 || a.UserCode[4] != '-' || a.Interval != 5 || a.ExpiresIn != 600 ||
		a.VerificationURIComplete != "https://askslack.example.com/app/device?code="+a.UserCode {
		t.Fatalf("authorization %+v", a)
	}
	if _, err := b.poll(a.DeviceCode); !errors.Is(err, tokens.ErrPending) {
		t.Fatalf("poll before confirming = %v, want authorization_pending", err)
	}
	if _, err := b.svc.Poll(ctx, a.DeviceCode); !errors.Is(err, tokens.ErrSlowDown) {
		t.Fatalf("a poll at once after the last = %v, want slow_down", err)
	}
	p, err := b.svc.Lookup(ctx, strings.ToLower(strings.ReplaceAll(a.UserCode, "-", " ")), alice.UserID, "198.51.100.2")
	if err != nil || p.Name != "alice-laptop" || strings.Join(p.Kinds, ",") != "claude,codex" || p.Addr != "192.0.2.1" || p.UserCode != a.UserCode {
		t.Fatalf("Lookup = %+v, %v", p, err)
	}
	tok, err := b.svc.Approve(ctx, a.UserCode, alice, "198.51.100.2")
	if err != nil || tok.Owner != alice.UserID || tok.Name != "alice-laptop" || !tok.Expires.Equal(b.clock.Now().Add(tokens.DefaultTTL)) {
		t.Fatalf("Approve = %+v, %v", tok, err)
	}
	if _, err := b.svc.Approve(ctx, a.UserCode, bob, "198.51.100.3"); !errors.Is(err, tokens.ErrCodeUsed) {
		t.Fatalf("a second confirmation = %v, want ErrCodeUsed", err)
	}
	if _, err := b.svc.Lookup(ctx, a.UserCode, bob.UserID, "198.51.100.3"); !errors.Is(err, tokens.ErrCodeUsed) {
		t.Fatalf("the used code looked up = %v, want ErrCodeUsed", err)
	}
	got, err := b.poll(a.DeviceCode)
	if err != nil || !tokens.IsPersonal(got.Secret) || got.Token.ID != tok.ID {
		t.Fatalf("poll after confirming = %+v, %v", got, err)
	}
	if _, err := b.poll(a.DeviceCode); !errors.Is(err, tokens.ErrExpiredToken) {
		t.Fatalf("a poll after the token was handed out = %v, want expired_token", err)
	}
	used, err := b.svc.Authenticate(ctx, got.Secret, "192.0.2.1")
	if err != nil || used.ID != tok.ID || tokens.CallerOf(used) != "alice-laptop@U0ALICE" || used.LastAddr != "192.0.2.1" {
		t.Fatalf("Authenticate = %+v, %v", used, err)
	}
	if _, err := b.svc.Authenticate(ctx, tokens.Prefix+"nonsense", "192.0.2.1"); !isRefused(err, "not known") {
		t.Fatalf("an unknown token = %v", err)
	}
	if e := b.trail(t); len(e) != 1 || e[0].Event != asktype.EventAgentConnected || e[0].Caller != "alice-laptop@U0ALICE" ||
		e[0].Respondent == nil || e[0].Respondent.UserID != alice.UserID || !strings.Contains(e[0].Detail, "from 192.0.2.1") {
		t.Fatalf("the trail: %+v", e)
	}
}

func isRefused(err error, substr string) bool {
	var r *tokens.Refused
	return errors.As(err, &r) && strings.Contains(r.Why, substr) && strings.Contains(r.Why, "askslack login")
}

func TestRevokedAndExpiredTokensAreRefusedWithTheLoginHint(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	issue := func(name string) tokens.Issued {
		a := b.start(t, name)
		if _, err := b.svc.Approve(ctx, a.UserCode, alice, ""); err != nil {
			t.Fatal(err)
		}
		got, err := b.poll(a.DeviceCode)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	one, two := issue("laptop"), issue("laptop")
	if two.Token.Name != "laptop-2" {
		t.Fatalf("a second live token of one name is named %q, want laptop-2", two.Token.Name)
	}
	if _, _, err := b.svc.Revoke(ctx, one.Token.ID, bob, bob.UserID); !errors.Is(err, tokens.ErrNotFound) {
		t.Fatalf("bob revoking alice's token as its owner = %v, want ErrNotFound", err)
	}
	revoked, n, err := b.svc.Revoke(ctx, one.Token.ID, alice, alice.UserID)
	if err != nil || n != 2 || revoked.RevokedBy != alice.UserID {
		t.Fatalf("Revoke = %+v, %d, %v", revoked, n, err)
	}
	if strings.Join(b.withdrawn, ",") != "laptop@U0ALICE" {
		t.Fatalf("withdrew the asks of %v", b.withdrawn)
	}
	for range 5 {
		if _, err := b.svc.Authenticate(ctx, one.Secret, "203.0.113.5"); !isRefused(err, "was revoked on") {
			t.Fatalf("the revoked token = %v", err)
		}
	}
	if _, err := b.svc.Authenticate(ctx, two.Secret, "192.0.2.1"); err != nil {
		t.Fatalf("the other token = %v", err)
	}
	b.clock.Advance(tokens.DefaultTTL)
	if _, err := b.svc.Authenticate(ctx, two.Secret, "192.0.2.1"); !isRefused(err, "expired on") {
		t.Fatalf("the expired token = %v", err)
	}
	var refused, revokes int
	for _, e := range b.trail(t) {
		switch e.Event {
		case asktype.EventAgentRefused:
			refused++
		case asktype.EventAgentRevoked:
			revokes++
			if e.Respondent == nil || e.Respondent.UserID != alice.UserID || !strings.Contains(e.Detail, "revoked by alice") {
				t.Fatalf("revoke entry %+v", e)
			}
		}
	}
	// Five uses of the revoked token are three entries (the budget), the
	// expired one's one more.
	if refused != 4 || revokes != 1 {
		t.Fatalf("%d refused and %d revoked entries, want 4 and 1", refused, revokes)
	}
	if _, _, err := b.svc.Revoke(ctx, two.Token.ID, tokens.Who{Operator: "ops"}, ""); !errors.Is(err, tokens.ErrNotFound) {
		t.Fatalf("revoking an expired token = %v, want ErrNotFound", err)
	}
}

func TestCodesTypedWrongExpiredDeniedOrNotAllowed(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for _, typed := range []string{"", "AEIO-UAEI", "BCDF-GHJ", "BCDF-GHJK"} {
		if _, err := b.svc.Lookup(ctx, typed, bob.UserID, "x"); !errors.Is(err, tokens.ErrNoSuchCode) {
			t.Fatalf("Lookup(%q) = %v, want ErrNoSuchCode", typed, err)
		}
	}
	a := b.start(t, "eve-box")
	var na *tokens.NotAllowed
	if _, err := b.svc.Approve(ctx, a.UserCode, eve, ""); !errors.As(err, &na) || !strings.Contains(na.Why, "not on the list") {
		t.Fatalf("eve confirming = %v, want NotAllowed", err)
	}
	if _, err := b.poll(a.DeviceCode); !errors.Is(err, tokens.ErrPending) {
		t.Fatalf("after eve was refused the code still waits: %v", err)
	}
	if err := b.svc.Deny(ctx, a.UserCode, bob, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.poll(a.DeviceCode); !errors.Is(err, tokens.ErrDenied) {
		t.Fatalf("poll after a denial = %v, want access_denied", err)
	}
	if _, err := b.svc.Approve(ctx, a.UserCode, bob, ""); !errors.Is(err, tokens.ErrCodeUsed) {
		t.Fatalf("confirming a denied code = %v, want ErrCodeUsed", err)
	}
	late := b.start(t, "slow")
	b.clock.Advance(tokens.DefaultCodeTTL)
	if _, err := b.svc.Lookup(ctx, late.UserCode, bob.UserID, "y"); !errors.Is(err, tokens.ErrCodeExpired) {
		t.Fatalf("an expired code = %v, want ErrCodeExpired", err)
	}
	if _, err := b.svc.Poll(ctx, late.DeviceCode); !errors.Is(err, tokens.ErrExpiredToken) {
		t.Fatalf("polling an expired code = %v, want expired_token", err)
	}
	if _, err := b.svc.Poll(ctx, "never-issued"); !errors.Is(err, tokens.ErrExpiredToken) {
		t.Fatalf("polling a made-up code = %v, want expired_token", err)
	}
	if _, err := b.svc.Authorize(ctx, tokens.DeviceRequest{Name: "bad name!"}); !errors.Is(err, tokens.ErrInvalidRequest) {
		t.Fatalf("a bad name = %v", err)
	}
}

// Guessing codes runs into the per-person limit long before it finds one.
func TestGuessingCodesIsLimited(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	a := b.start(t, "target")
	limited := false
	for range 30 {
		_, err := b.svc.Lookup(ctx, "BCDF-GHJK", "U0GUESS", "203.0.113.66")
		if errors.Is(err, tokens.ErrLimited) {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("30 guesses in a row were not limited")
	}
	if _, err := b.svc.Approve(ctx, a.UserCode, tokens.Who{UserID: "U0GUESS"}, "203.0.113.66"); !errors.Is(err, tokens.ErrLimited) {
		t.Fatalf("the guesser confirming the right code while limited = %v, want ErrLimited", err)
	}
}
