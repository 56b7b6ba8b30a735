package engine

import (
	"context"
	"errors"

	"github.com/askslack/askslack/rules"
	"github.com/askslack/askslack/waterfall"
)

// checkEdit refuses an edited allow (Edit & allow, waterfall/edit.go) whose
// call, as edited, the deployment's policy would not let one person allow:
// one that needs more approvals than one (ASKSLACK_QUORUM names it), or one
// a live deny rule covers. The ask was judged as the agent asked it; an
// edit must not turn it into a call that would have been judged otherwise.
// The refusal is the person's to read, and the trail's.
func (h *Host) checkEdit(ctx context.Context, rec *waterfall.Record, s waterfall.Settlement) error {
	req := rec.Request
	p := waterfall.EditedPermission(req, s.Item(waterfall.PermissionQuestionID))
	if p == req.Permission {
		return nil // nothing rules or quorum read was edited
	}
	edited := *req
	edited.Permission, edited.Quorum = p, 0
	var refusal error
	if n := waterfall.RequiredApprovals(&edited, h.quorum); n > 1 {
		refusal = waterfall.Errorf(waterfall.CodeBadAnswer, "the call as edited needs %d approvals (ASKSLACK_QUORUM): allow or deny it as asked, or have the agent ask for it as edited", n)
	} else if r, ok := h.coveringRule(ctx, &edited, h.clock.Now()); ok && r.Effect == string(rules.Deny) {
		refusal = waterfall.Errorf(waterfall.CodeBadAnswer, "standing rule %d denies the call as edited (%s): allow or deny it as asked", r.ID, waterfall.GrammarRule(r))
	}
	if refusal != nil {
		var e *waterfall.Error
		why := refusal.Error()
		if errors.As(refusal, &e) {
			why = e.Message
		}
		h.Refused(ctx, waterfall.RefusedClick(rec, s.Respondent, why))
	}
	return refusal
}
