package engine

import (
	"context"
	"errors"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/rules"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// RuleOptions turn standing rules on for a Host (UseRules).
type RuleOptions struct {
	// Store keeps the rules; every match reads it, so a revoke on any
	// replica holds before this replica's next match.
	Store store.Rules
	// MayAnswer reports whether the person who granted a rule may answer
	// req themselves: a rule answers only asks its granter could have
	// answered (a rule never widens who may answer). An error counts as
	// no (fail closed). nil: every granter may.
	MayAnswer func(ctx context.Context, userID string, req *waterfall.Request) (bool, error)
	// Answered is told of every ask a rule answered, after it settled
	// (the session-thread notice); nil tells nobody. It must not block.
	Answered func(rec *waterfall.Record, r asktype.Rule)
}

// UseRules makes h answer the permission asks a live standing rule covers
// (see AnswerByRule). Call it while wiring, before any ask.
func (h *Host) UseRules(o RuleOptions) { h.rules = &o }

// allowRulesApply reports whether an allow rule may answer req: quorum
// asks are never answered by an allow rule. req is as it is stored, its
// Quorum fixed (RequiredApprovals, withQuorum): 0 when one answer decides.
func allowRulesApply(req *waterfall.Request) bool {
	return req.Kind() == waterfall.KindPermission && req.Quorum <= 1
}

// ruleAsk is what the grammar matches of req, or false for an ask no rule
// answers (no permission, or not a permission ask).
func ruleAsk(req *waterfall.Request) (rules.Ask, bool) {
	p := req.Permission
	if p == nil || req.Kind() != waterfall.KindPermission {
		return rules.Ask{}, false
	}
	return rules.Ask{Tool: p.Tool, Command: p.Command, Path: p.Path, Repo: p.Repo, Caller: req.Caller}, true
}

// coveringRule returns the live rule that answers req, if any: deny rules
// over allow rules (allow rules only where allowRulesApply), the most
// specific, and only rules whose granter may answer req. Errors reading the
// rules or checking a granter fail closed: the ask is asked.
func (h *Host) coveringRule(ctx context.Context, req *waterfall.Request, now time.Time) (asktype.Rule, bool) {
	if h.rules == nil {
		return asktype.Rule{}, false
	}
	a, ok := ruleAsk(req)
	if !ok {
		return asktype.Rule{}, false
	}
	live, err := h.rules.Store.LiveRules(ctx, now)
	if err != nil {
		h.log.Warn("reading standing rules failed; asking instead", "callId", req.CallID, "err", err)
		return asktype.Rule{}, false
	}
	byID := make(map[int64]asktype.Rule, len(live))
	var cands []rules.Rule
	for _, r := range live {
		if r.Effect == string(rules.Allow) && !allowRulesApply(req) {
			continue
		}
		byID[r.ID] = r
		cands = append(cands, waterfall.GrammarRule(r))
	}
	for len(cands) > 0 {
		m, ok := rules.Match(cands, a)
		if !ok {
			return asktype.Rule{}, false
		}
		r := byID[m.ID]
		if h.rules.MayAnswer == nil {
			return r, true
		}
		may, err := h.rules.MayAnswer(ctx, r.GrantedBy, req)
		if err != nil {
			h.log.Warn("checking a rule's granter failed; the rule is passed over", "rule", r.ID, "callId", req.CallID, "err", err)
		}
		if err == nil && may {
			return r, true
		}
		cands = without(cands, m.ID)
	}
	return asktype.Rule{}, false
}

func without(rs []rules.Rule, id int64) []rules.Rule {
	out := rs[:0:0]
	for _, r := range rs {
		if r.ID != id {
			out = append(out, r)
		}
	}
	return out
}

// answerByRule settles a, just created from req, by the live rule that
// covers it: the use is counted in the step that checks the rule is still
// live, and a rule revoked or run out meanwhile sends the match round
// again. It reports false when no rule answered (the ask is then asked).
func (h *Host) answerByRule(ctx context.Context, a *asktype.Ask, req *waterfall.Request, r asktype.Rule) (*asktype.Ask, bool) {
	for range 3 {
		now := h.clock.Now()
		used, err := h.rules.Store.UseRule(ctx, r.ID, now)
		if errors.Is(err, store.ErrNotFound) {
			var ok bool
			if r, ok = h.coveringRule(ctx, req, now); !ok {
				return nil, false
			}
			continue
		}
		if err != nil {
			h.log.Warn("counting a rule's use failed; asking instead", "rule", r.ID, "callId", a.CallID, "err", err)
			return nil, false
		}
		label := waterfall.PermissionAllow
		if used.Effect == string(rules.Deny) {
			label = waterfall.PermissionDeny
		}
		ref := waterfall.RuleRefOf(used)
		s := waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: waterfall.PermissionQuestionID, Selected: []string{label}}}},
			Respondent: waterfall.Respondent{UserName: ref.Name(now), Surface: waterfall.SurfaceRule, Rule: ref, At: now}}
		// Through the settlement seam like any answer: the policy decides.
		rec, err := waterfall.Decode(a)
		var out waterfall.Outcome
		if err == nil {
			out, err = h.decideAndApply(ctx, rec, s, false)
		}
		if err != nil {
			h.log.Warn("answering by a standing rule failed; asking instead", "rule", r.ID, "callId", a.CallID, "err", err)
			return nil, false
		}
		// The tool, not the match: logs carry no tool input (docs/security.md).
		h.log.Info("answered by a standing rule", "callId", a.CallID, "rule", used.ID, "effect", used.Effect, "tool", used.Tool)
		if out.Record.Request != nil && h.rules.Answered != nil {
			h.rules.Answered(out.Record, used)
		}
		return out.Record.Ask, true
	}
	return nil, false
}

// Rules lists the live standing rules, oldest first.
func (h *Host) Rules(ctx context.Context) ([]asktype.Rule, error) {
	if h.rules == nil {
		return nil, waterfall.Errorf(waterfall.CodeNotFound, "standing rules are not enabled")
	}
	rs, err := h.rules.Store.LiveRules(ctx, h.clock.Now())
	return rs, unavailable(err)
}

// GrantRule stores a new standing rule granted by who from the ask callID
// ("" for none) and records it in the audit trail. BAD_REQUEST names what
// is wrong with the rule; too many live rules is BAD_REQUEST too.
func (h *Host) GrantRule(ctx context.Context, callID string, g waterfall.Grant, who waterfall.Respondent) (asktype.Rule, error) {
	if h.rules == nil {
		return asktype.Rule{}, waterfall.Errorf(waterfall.CodeNotFound, "standing rules are not enabled")
	}
	if err := rules.Check(g.Rule); err != nil {
		return asktype.Rule{}, waterfall.Errorf(waterfall.CodeBadRequest, "the rule: %v", err)
	}
	now := h.clock.Now()
	if !g.Until.IsZero() && !now.Before(g.Until) {
		return asktype.Rule{}, waterfall.Errorf(waterfall.CodeBadRequest, "the rule would end before it starts")
	}
	r := g.Rule
	rec := asktype.Rule{Effect: string(r.Effect), Tool: r.Tool, Command: r.Command, Path: r.Path, Repo: r.Repo, Caller: r.Caller,
		GrantedBy: who.UserID, GrantedByName: who.UserName, Admin: g.Admin, FromCall: callID, Granted: now, Until: g.Until}
	got, err := h.rules.Store.AddRule(ctx, rec, now)
	if errors.Is(err, store.ErrTooManyRules) {
		return asktype.Rule{}, waterfall.Errorf(waterfall.CodeBadRequest, "there are already %d live rules; revoke some first", store.MaxRules)
	}
	if err != nil {
		return asktype.Rule{}, unavailable(err)
	}
	h.ruleAudit(ctx, asktype.EventRuleGranted, callID, got, who)
	return got, nil
}

// RevokeRule ends a live rule on every replica and records who did it.
// NOT_FOUND when no live rule has that id.
func (h *Host) RevokeRule(ctx context.Context, id int64, who waterfall.Respondent) (asktype.Rule, error) {
	if h.rules == nil {
		return asktype.Rule{}, waterfall.Errorf(waterfall.CodeNotFound, "standing rules are not enabled")
	}
	r, err := h.rules.Store.RevokeRule(ctx, id, h.clock.Now())
	if errors.Is(err, store.ErrNotFound) {
		return asktype.Rule{}, waterfall.Errorf(waterfall.CodeNotFound, "no live rule %d", id)
	}
	if err != nil {
		return asktype.Rule{}, unavailable(err)
	}
	h.ruleAudit(ctx, asktype.EventRuleRevoked, r.FromCall, r, who)
	return r, nil
}

func (h *Host) ruleAudit(ctx context.Context, event, callID string, r asktype.Rule, who waterfall.Respondent) {
	if h.audit == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := h.audit.Append(ctx, asktype.AuditEntry{At: h.clock.Now(), CallID: callID, Event: event,
		Respondent: &asktype.AuditRespondent{UserID: who.UserID, UserName: who.UserName, Surface: who.Surface}, Detail: waterfall.RuleDetail(r)})
	if err != nil {
		h.log.Warn("recording a rule in the audit trail failed", "rule", r.ID, "event", event, "err", err)
	}
}

// noteAsk remembers what a new permission ask is about, for the rule
// form's preview; best effort (the preview is a help, never a check).
func (h *Host) noteAsk(ctx context.Context, req *waterfall.Request, now time.Time) {
	a, ok := ruleAsk(req)
	if h.rules == nil || !ok {
		return
	}
	err := h.rules.Store.NoteAsk(ctx, asktype.RecentAsk{CallID: req.CallID, At: now, Tool: a.Tool, Command: a.Command, Path: a.Path, Repo: a.Repo, Caller: a.Caller})
	if err != nil {
		h.log.Debug("noting a permission ask for rule previews failed", "callId", req.CallID, "err", err)
	}
}

// Preview is up to limit of the latest permission asks r would have
// answered, newest first, out of how many recent asks were looked at.
func (h *Host) Preview(ctx context.Context, r rules.Rule, limit int) ([]asktype.RecentAsk, int, error) {
	if h.rules == nil {
		return nil, 0, nil
	}
	recent, err := h.rules.Store.RecentAsks(ctx, store.MaxRecentAsks)
	if err != nil {
		return nil, 0, unavailable(err)
	}
	var out []asktype.RecentAsk
	for _, a := range recent {
		if len(out) < limit && r.Matches(rules.Ask{Tool: a.Tool, Command: a.Command, Path: a.Path, Repo: a.Repo, Caller: a.Caller}) {
			out = append(out, a)
		}
	}
	return out, len(recent), nil
}
