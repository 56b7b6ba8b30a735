package slackbot

import (
	"context"
	"slices"
	"strings"

	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/waterfall"
)

// Approvers narrows an Authorizer to an ask's approvers
// (waterfall.Request.Approvers: user ids, and user group ids whose members
// count): whoever the Authorizer admits and the ask names. An ask without
// approvers is the Authorizer's alone. The approvers only narrow: an ask
// cannot name someone the configuration does not admit.
type Approvers struct {
	Authorizer
	// groups resolves group members (its cache), never as a list itself.
	groups *Allowlist
}

// NewApprovers wraps base (nil: Everyone) with each ask's approvers, whose
// groups it resolves through api.
func NewApprovers(base Authorizer, api API, c clock.Clock) *Approvers {
	if base == nil {
		base = Everyone{}
	}
	return &Approvers{Authorizer: base, groups: &Allowlist{API: api, Clock: c}}
}

// whyNotApprover is shown to someone the ask does not name.
const whyNotApprover = "This ask names who may approve it, and you are not one of them."

// Allowed implements Authorizer.
func (a *Approvers) Allowed(ctx context.Context, userID string, req *waterfall.Request) (bool, string) {
	if ok, why := a.Authorizer.Allowed(ctx, userID, req); !ok {
		return false, why
	}
	if len(req.Approvers) == 0 || slices.Contains(req.Approvers, userID) {
		return true, ""
	}
	unchecked := false
	for _, id := range req.Approvers {
		if !strings.HasPrefix(id, "S") {
			continue
		}
		members, err := a.groups.groupMembers(ctx, id)
		if err != nil {
			unchecked = true // fail closed, but say it may pass later
			continue
		}
		if slices.Contains(members, userID) {
			return true, ""
		}
	}
	if unchecked {
		return false, whyUnchecked
	}
	return false, whyNotApprover
}
