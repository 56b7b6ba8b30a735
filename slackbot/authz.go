package slackbot

import (
	"context"
	"strings"
	"sync"
	"time"

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
// set and an ask's principal maps to a Slack user — only that user.
type Allowlist struct {
	API              API
	Users            []string
	Groups           []string
	RequirePrincipal bool
	// TTL is how long group members and principal lookups are cached.
	TTL time.Duration

	mu        sync.Mutex
	groups    map[string]cached[[]string]
	principal map[string]cached[string]
}

type cached[T any] struct {
	v  T
	at time.Time
}

// Allowed implements Authorizer.
func (l *Allowlist) Allowed(ctx context.Context, userID string, req *waterfall.Request) (bool, string) {
	if l.RequirePrincipal && req.Agent.Principal != "" {
		if id := l.principalUser(ctx, req.Agent.Principal); id != "" {
			if id == userID {
				return true, ""
			}
			return false, "Only <@" + id + ">, on whose behalf the agent asks, may answer this question."
		}
	}
	if len(l.Users) == 0 && len(l.Groups) == 0 {
		return true, ""
	}
	for _, u := range l.Users {
		if u == userID {
			return true, ""
		}
	}
	for _, g := range l.Groups {
		for _, m := range l.groupMembers(ctx, g) {
			if m == userID {
				return true, ""
			}
		}
	}
	return false, "You are not on the list of people who may answer the agent's questions."
}

func (l *Allowlist) ttl() time.Duration {
	if l.TTL <= 0 {
		return 5 * time.Minute
	}
	return l.TTL
}

func (l *Allowlist) groupMembers(ctx context.Context, group string) []string {
	l.mu.Lock()
	c, ok := l.groups[group]
	l.mu.Unlock()
	if ok && time.Since(c.at) < l.ttl() {
		return c.v
	}
	members, err := l.API.GetUserGroupMembersContext(ctx, group)
	if err != nil {
		// Keep serving the last known members rather than refusing everyone
		// while Slack is unavailable.
		return c.v
	}
	l.mu.Lock()
	if l.groups == nil {
		l.groups = map[string]cached[[]string]{}
	}
	l.groups[group] = cached[[]string]{members, time.Now()}
	l.mu.Unlock()
	return members
}

// principalUser maps a principal to a Slack user id: an id as is, an email
// through users.lookupByEmail; "" when it maps to nobody.
func (l *Allowlist) principalUser(ctx context.Context, p string) string {
	if isUserID(p) {
		return p
	}
	if !strings.Contains(p, "@") {
		return ""
	}
	l.mu.Lock()
	c, ok := l.principal[p]
	l.mu.Unlock()
	if ok && time.Since(c.at) < l.ttl() {
		return c.v
	}
	u, err := l.API.GetUserByEmailContext(ctx, p)
	id := ""
	if err == nil && u != nil {
		id = u.ID
	} else if err != nil && SlackError(err) != "users_not_found" {
		return c.v // Slack unavailable: keep the last answer
	}
	l.mu.Lock()
	if l.principal == nil {
		l.principal = map[string]cached[string]{}
	}
	l.principal[p] = cached[string]{id, time.Now()}
	l.mu.Unlock()
	return id
}

func isUserID(s string) bool {
	if len(s) < 3 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for _, r := range s[1:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
