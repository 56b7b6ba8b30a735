package slackbot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/waterfall"
)

// Authorizer decides whether a Slack user may answer an ask. why is shown to
// a refused user.
type Authorizer interface {
	Allowed(ctx context.Context, userID string, req *waterfall.Request) (ok bool, why string)
}

// Everyone lets anyone who can see the message answer.
type Everyone struct{}

// Allowed implements Authorizer.
func (Everyone) Allowed(context.Context, string, *waterfall.Request) (bool, string) { return true, "" }

// Allowlist admits listed users and members of listed user groups (resolved
// through usergroups.users.list and cached), and — when RequirePrincipal is
// set and the operator bound the ask's caller to a principal (Bindings,
// ASKSLACK_CALLER_PRINCIPALS; a personal agent token's caller is bound to
// its owner) that maps to a Slack user — only that user,
// who must also pass the lists when they are set: an ask cannot widen who
// may answer. A principal the agent named itself (an unbound caller's
// agent.principal) is a hint for mentions and DMs and restricts nothing:
// the agent would otherwise pick its own approver.
// It fails closed: when Slack cannot tell who the principal is or who is in
// a group, nobody is admitted until it can.
type Allowlist struct {
	API              API
	Users            []string
	Groups           []string
	RequirePrincipal bool
	// Bindings maps an API caller's name to the principal the operator
	// bound it to; only those principals restrict who may answer.
	Bindings map[string]string
	// TTL is how long group members and principal lookups are cached.
	TTL time.Duration
	// Clock times the caches; nil means real time.
	Clock clock.Clock

	mu         sync.Mutex
	groups     map[string]cached[[]string]
	principals *Principals
}

type cached[T any] struct {
	v  T
	at time.Time
}

// Refusals shown to the clicker.
const (
	whyUnchecked = "Sorry, I couldn't check who may answer this question; please try again in a minute."
	whyNotListed = "You are not on the list of people who may answer the agent's questions."
)

// Allowed implements Authorizer.
func (l *Allowlist) Allowed(ctx context.Context, userID string, req *waterfall.Request) (bool, string) {
	bound := l.Bindings[req.Caller]
	if owner, ok := waterfall.PersonalOwner(req.Caller); ok && bound == "" {
		// A personal agent token's asks are bound to the person who
		// connected it, as ASKSLACK_CALLER_PRINCIPALS binds a caller.
		bound = owner
	}
	if l.RequirePrincipal && bound != "" {
		id, err := l.principalUser(ctx, bound)
		if err != nil {
			return false, whyUnchecked
		}
		if id != "" && id != userID {
			return false, "Only <@" + id + ">, on whose behalf the agent asks, may answer this question."
		}
	}
	listed, err := l.listed(ctx, userID)
	switch {
	case err != nil:
		return false, whyUnchecked
	case !listed:
		return false, whyNotListed
	}
	return true, ""
}

// listed reports whether the lists admit userID (no lists admit everyone).
func (l *Allowlist) listed(ctx context.Context, userID string) (bool, error) {
	if len(l.Users) == 0 && len(l.Groups) == 0 {
		return true, nil
	}
	if slices.Contains(l.Users, userID) {
		return true, nil
	}
	var errs []error
	for _, g := range l.Groups {
		members, err := l.groupMembers(ctx, g)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if slices.Contains(members, userID) {
			return true, nil
		}
	}
	return false, errors.Join(errs...)
}

func (l *Allowlist) ttl() time.Duration {
	if l.TTL <= 0 {
		return 5 * time.Minute
	}
	return l.TTL
}

func (l *Allowlist) now() time.Time { return clock.OrReal(l.Clock).Now() }

// groupMembers returns a group's members. While Slack is unavailable it
// keeps serving the last list it got; with none, it fails.
func (l *Allowlist) groupMembers(ctx context.Context, group string) ([]string, error) {
	l.mu.Lock()
	c, ok := l.groups[group]
	l.mu.Unlock()
	if ok && l.now().Sub(c.at) < l.ttl() {
		return c.v, nil
	}
	members, err := l.API.GetUserGroupMembersContext(ctx, group)
	if err != nil {
		if ok {
			return c.v, nil
		}
		return nil, fmt.Errorf("slackbot: members of %s: %w", group, err)
	}
	l.mu.Lock()
	if l.groups == nil {
		l.groups = map[string]cached[[]string]{}
	}
	l.groups[group] = cached[[]string]{members, l.now()}
	l.mu.Unlock()
	return members, nil
}

// principalUser maps a principal to a Slack user id (see Principals).
func (l *Allowlist) principalUser(ctx context.Context, p string) (string, error) {
	l.mu.Lock()
	if l.principals == nil {
		l.principals = &Principals{API: l.API, TTL: l.ttl(), Now: l.now}
	}
	ps := l.principals
	l.mu.Unlock()
	return ps.User(ctx, p)
}
