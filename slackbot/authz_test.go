package slackbot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

func allowlistOn(t *testing.T, l *Allowlist) *slackfake.Server {
	t.Helper()
	t.Parallel()
	fake := slackfake.New(slackfake.Options{
		BotToken: "xoxb-test",
		Users: []slackfake.User{
			{ID: "U0ALICE", Name: "alice", Email: "alice@example.com"},
			{ID: "U0BOB", Name: "bob", Email: "bob@example.com"},
			{ID: "U0EVE", Name: "eve", Email: "eve@example.com"},
		},
		UserGroups: map[string][]string{"S0OPS": {"U0BOB"}},
	})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	l.API = slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))
	return fake
}

// askedFor is an ask of a caller the operator bound to principal (or of an
// unbound caller, with no principal, when principal is "").
func askedFor(principal string) *waterfall.Request {
	return &waterfall.Request{CallID: "c1", Caller: "for-" + principal, Agent: waterfall.Agent{ID: "a", Principal: principal}}
}

// bindings binds the callers of askedFor to their principals.
var bindings = map[string]string{
	"for-alice@example.com": "alice@example.com", "for-U0EVE": "U0EVE", "for-eve@example.com": "eve@example.com",
	"for-bob@example.com": "bob@example.com",
}

// A principal the agent named itself, its caller unbound, restricts
// nothing: otherwise an agent would choose its own approver (issue 21).
func TestAllowlistUnboundPrincipalGrantsNothing(t *testing.T) {
	l := &Allowlist{RequirePrincipal: true, Users: []string{"U0ALICE", "U0BOB"}, Bindings: bindings}
	allowlistOn(t, l)
	ctx := context.Background()
	req := &waterfall.Request{CallID: "c1", Caller: "rogue", Agent: waterfall.Agent{ID: "a", Principal: "U0EVE"}}
	if ok, _ := l.Allowed(ctx, "U0EVE", req); ok {
		t.Fatal("an unlisted user was allowed because the agent named her as its principal")
	}
	if ok, why := l.Allowed(ctx, "U0BOB", req); !ok {
		t.Fatalf("the allowlist alone decides for an unbound caller: %s", why)
	}
}

func TestAllowlistFailsClosedWhenThePrincipalLookupFails(t *testing.T) {
	l := &Allowlist{RequirePrincipal: true, Bindings: bindings}
	fake := allowlistOn(t, l)
	ctx := context.Background()
	for _, slackErr := range []string{"missing_scope", "ratelimited", "internal_error"} {
		fake.FailNext("users.lookupByEmail", 1, slackErr, 1)
		ok, why := l.Allowed(ctx, "U0EVE", askedFor("alice@example.com"))
		if ok || !strings.Contains(why, "try again") {
			t.Fatalf("lookup failing with %s: allowed=%v why=%q; want a refusal asking to try again", slackErr, ok, why)
		}
	}
	// The failures were not cached as "no principal": once Slack answers,
	// only the principal may answer.
	if ok, _ := l.Allowed(ctx, "U0EVE", askedFor("alice@example.com")); ok {
		t.Fatal("someone other than the principal was allowed after the lookup recovered")
	}
	if ok, why := l.Allowed(ctx, "U0ALICE", askedFor("alice@example.com")); !ok {
		t.Fatalf("the principal was refused: %s", why)
	}
}

func TestAllowlistPrincipalMustAlsoBeListed(t *testing.T) {
	l := &Allowlist{RequirePrincipal: true, Users: []string{"U0ALICE"}, Groups: []string{"S0OPS"}, Bindings: bindings}
	allowlistOn(t, l)
	ctx := context.Background()
	if ok, _ := l.Allowed(ctx, "U0EVE", askedFor("U0EVE")); ok {
		t.Fatal("an ask named an unlisted principal and so widened the operator's allowlist")
	}
	if ok, _ := l.Allowed(ctx, "U0EVE", askedFor("eve@example.com")); ok {
		t.Fatal("an unlisted principal (by email) was allowed")
	}
	if ok, why := l.Allowed(ctx, "U0BOB", askedFor("bob@example.com")); !ok {
		t.Fatalf("a principal in an allowed group was refused: %s", why)
	}
	if ok, _ := l.Allowed(ctx, "U0ALICE", askedFor("bob@example.com")); ok {
		t.Fatal("a listed user who is not the principal was allowed")
	}
}

func TestAllowlistGroupLookupFailsClosedWithoutAKnownList(t *testing.T) {
	c := clock.NewFake(time.Unix(1_800_000_000, 0))
	l := &Allowlist{Groups: []string{"S0OPS"}, TTL: time.Minute, Clock: c}
	fake := allowlistOn(t, l)
	ctx := context.Background()
	fake.FailNext("usergroups.users.list", 1, "internal_error", 0)
	if ok, why := l.Allowed(ctx, "U0BOB", askedFor("")); ok || why != whyUnchecked {
		t.Fatalf("group lookup failing with nothing known: allowed=%v why=%q", ok, why)
	}
	if ok, why := l.Allowed(ctx, "U0BOB", askedFor("")); !ok {
		t.Fatalf("a group member was refused once Slack answered: %s", why)
	}
	// Past the TTL, a failing refresh keeps the last list Slack gave.
	c.Advance(2 * time.Minute)
	fake.FailNext("usergroups.users.list", 1, "internal_error", 0)
	if ok, _ := l.Allowed(ctx, "U0BOB", askedFor("")); !ok {
		t.Fatal("a known member was refused while a refresh failed")
	}
	if ok, _ := l.Allowed(ctx, "U0EVE", askedFor("")); ok {
		t.Fatal("a non-member was allowed")
	}
}
