package slackbot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Principals maps an ask's principal (agent.principal) to a Slack user id:
// an id as is, an email through users.lookupByEmail; "" when it names
// nobody Slack knows. Look-ups are cached for TTL; a failed look-up is an
// error and is not cached.
type Principals struct {
	API interface {
		GetUserByEmailContext(ctx context.Context, email string) (*slack.User, error)
	}
	TTL time.Duration    // default 10m
	Now func() time.Time // default time.Now

	mu sync.Mutex
	m  map[string]cached[string]
}

// User resolves principal p.
func (ps *Principals) User(ctx context.Context, p string) (string, error) {
	if blocks.IsUserID(p) {
		return p, nil
	}
	if !strings.Contains(p, "@") {
		return "", nil
	}
	now, ttl := time.Now, 10*time.Minute
	if ps.Now != nil {
		now = ps.Now
	}
	if ps.TTL > 0 {
		ttl = ps.TTL
	}
	ps.mu.Lock()
	c, ok := ps.m[p]
	ps.mu.Unlock()
	if ok && now().Sub(c.at) < ttl {
		return c.v, nil
	}
	u, err := ps.API.GetUserByEmailContext(ctx, p)
	id := ""
	switch {
	case err == nil && u != nil:
		id = u.ID
	case err != nil && SlackError(err) != "users_not_found":
		return "", fmt.Errorf("slackbot: looking up principal %s: %w", p, err)
	}
	ps.mu.Lock()
	if ps.m == nil {
		ps.m = map[string]cached[string]{}
	}
	ps.m[p] = cached[string]{id, now()}
	ps.mu.Unlock()
	return id, nil
}

// IsMentionID reports whether s is a Slack user id (U…, W…) or user-group
// id (S…): what ASKSLACK_MENTION may name.
func IsMentionID(s string) bool {
	if blocks.IsUserID(s) {
		return true
	}
	return len(s) >= 2 && s[0] == 'S' && blocks.IsUserID("U"+s[1:])
}

// mentionText is the start of a question's notification text: the ask's
// principal, when Slack knows them, then every configured id. It is built
// from ids alone (never from anything the agent wrote, which stays
// escaped), so it pings exactly these people. A principal that cannot be
// looked up right now is left out rather than holding the post back.
func (s *Surface) mentionText(ctx context.Context, req *waterfall.Request) string {
	var ids []string
	if req.Agent.Principal != "" && s.principals != nil {
		id, err := s.principals.User(ctx, req.Agent.Principal)
		if err != nil {
			s.log.Warn("cannot look up the ask's principal to mention them", "callId", req.CallID, "err", err)
		}
		if id != "" {
			ids = append(ids, id)
		}
	}
	for _, id := range s.mention {
		if !containsString(ids, id) {
			ids = append(ids, id)
		}
	}
	return mentionsOf(ids)
}

// mentionsOf is the mrkdwn that pings ids (users and user groups).
func mentionsOf(ids []string) string {
	var b strings.Builder
	for _, id := range ids {
		if id[0] == 'S' {
			fmt.Fprintf(&b, "<!subteam^%s> ", id)
		} else {
			fmt.Fprintf(&b, "<@%s> ", id)
		}
	}
	return b.String()
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
