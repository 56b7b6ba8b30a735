package slackbot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/rules"
	"github.com/askslack/askslack/waterfall"
)

// RuleSettings say who may grant standing rules in Slack.
type RuleSettings struct {
	// Admins (ASKSLACK_RULE_ADMINS: user and group ids) may grant and
	// revoke rules; nil: whoever may answer an ask may grant a rule from
	// it, and revoke rules. Either way a rule covers only asks its granter
	// could have answered (engine.RuleOptions.MayAnswer), and granting
	// one from an ask needs the right to answer that ask.
	Admins Authorizer
}

// UseRules turns the rule buttons, form, listing and Revoke on. Call it
// while wiring.
func (b *Bot) UseRules(s RuleSettings) { b.rules = &s }

// Replies of the rule form and listing.
const (
	textRulesOff       = "Standing rules are not enabled here."
	textNotRuleAdmin   = "Only rule admins (ASKSLACK_RULE_ADMINS) may grant or revoke standing rules."
	textNoPermission   = "This question does not say what it is about, so no rule can match it."
	textRuleGone       = "That rule is no longer live: it was revoked or it ran out."
	textRulesFailed    = "Sorry, the rules could not be read right now. Please try again in a minute."
	maxHomeRules       = 5
	maxCommandRules    = 40
	ruleFieldErrorSize = 150
)

// mayGrant reports whether user may grant a rule from the ask req: a rule
// admin (when there are admins) who may also answer req. A rule covers only
// asks its granter could answer, so granting one from an ask they cannot
// answer would cover nothing, and would answer this one.
func (b *Bot) mayGrant(ctx context.Context, user string, req *waterfall.Request) (admin bool, ok bool, why string) {
	if b.rules == nil {
		return false, false, textRulesOff
	}
	if b.rules.Admins != nil {
		if ok, _ := b.rules.Admins.Allowed(ctx, user, &waterfall.Request{}); !ok {
			return false, false, textNotRuleAdmin
		}
		admin = true
	}
	if ok, why := b.authz.Allowed(ctx, user, req); !ok {
		return admin, false, why
	}
	return admin, true, ""
}

// mayRevoke reports whether user may revoke r: a rule admin, when there
// are admins; otherwise its granter or anyone who may answer questions.
// Revoking only ever sends asks back to people.
func (b *Bot) mayRevoke(ctx context.Context, user string, r asktype.Rule) bool {
	if b.rules == nil {
		return false
	}
	if b.rules.Admins != nil {
		ok, _ := b.rules.Admins.Allowed(ctx, user, &waterfall.Request{})
		return ok
	}
	if r.GrantedBy == user {
		return true
	}
	ok, _ := b.authz.Allowed(ctx, user, &waterfall.Request{})
	return ok
}

// ruleAskOf is what the grammar matches of req.
func ruleAskOf(req *waterfall.Request) (rules.Ask, bool) {
	p := req.Permission
	if p == nil || req.Kind() != waterfall.KindPermission {
		return rules.Ask{}, false
	}
	return rules.Ask{Tool: p.Tool, Command: p.Command, Path: p.Path, Repo: p.Repo, Caller: req.Caller}, true
}

// openRuleForm is Allow rule… / Deny rule…: the form, prefilled from
// the ask, with its preview.
func (b *Bot) openRuleForm(ctx context.Context, c *click) string {
	a, ok := ruleAskOf(c.req)
	if !ok {
		b.tell(c.fb, textNoPermission)
		return resultInvalid
	}
	admin, ok, why := b.mayGrant(ctx, c.user(), c.req)
	if !ok {
		b.refused(ctx, waterfall.RefusedClick(c.ask, c.respondent(), why))
		b.tell(c.fb, why)
		return resultRefused
	}
	effect := rules.Allow
	if c.read.Kind == blocks.KindDenyRule {
		effect = rules.Deny
	}
	r := rules.Suggest(a, effect)
	f := blocks.RuleForm{Meta: c.meta(), Effect: string(effect), Tool: a.Tool, Match: r.Command + r.Path,
		Repo: a.Repo, Caller: a.Caller, Admin: admin}
	switch {
	case a.Command != "":
		f.Field = "command"
	case a.Path != "":
		f.Field = "path"
	}
	b.rulePreview(ctx, &f, r)
	return b.openView(ctx, c, blocks.RuleModal(f))
}

// rulePreview fills the form's preview for rule r.
func (b *Bot) rulePreview(ctx context.Context, f *blocks.RuleForm, r rules.Rule) {
	if err := rules.Check(r); err != nil {
		f.PreviewNote = "This rule cannot be saved: " + err.Error() + "."
		return
	}
	got, looked, err := b.host.Preview(ctx, r, 20)
	if err != nil {
		f.PreviewNote = "The preview could not be read."
		return
	}
	f.Looked = looked
	for _, a := range got {
		f.Preview = append(f.Preview, a.Command+a.Path)
	}
}

// ruleState is what the rule form holds.
type ruleState struct {
	match              string
	repoAll, callerAll bool
	until              string
}

func ruleStateOf(st *slack.ViewState) ruleState {
	var s ruleState
	if st == nil {
		return s
	}
	v := st.Values
	s.match = strings.TrimSpace(v[blocks.RuleMatchBlock][blocks.RuleMatchInput].Value)
	s.repoAll = v[blocks.RuleRepoBlock][blocks.RuleRepoInput].SelectedOption.Value == blocks.ScopeAll
	s.callerAll = v[blocks.RuleCallerBlock][blocks.RuleCallerInput].SelectedOption.Value == blocks.ScopeAll
	s.until = v[blocks.RuleUntilBlock][blocks.RuleUntilInput].SelectedOption.Value
	return s
}

// formRule is the rule the form describes for the ask a.
func formRule(effect rules.Effect, a rules.Ask, s ruleState) rules.Rule {
	r := rules.Rule{Effect: effect, Tool: a.Tool}
	switch {
	case a.Command != "":
		r.Command = s.match
	case a.Path != "":
		r.Path = s.match
	}
	if !s.repoAll {
		r.Repo = a.Repo
	}
	if !s.callerAll {
		r.Caller = a.Caller
	}
	return r
}

// ruleSubmission saves the rule the form holds and answers the ask it was
// opened from. Field errors keep the form open and say what is wrong.
func (b *Bot) ruleSubmission(ctx context.Context, ic *slack.InteractionCallback) (string, *slack.ViewSubmissionResponse) {
	meta, err := blocks.DecodeMeta(ic.View.PrivateMetadata)
	if err != nil {
		return resultInvalid, nil
	}
	fieldErr := func(msg string) *slack.ViewSubmissionResponse {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{blocks.RuleUntilBlock: truncate(msg, ruleFieldErrorSize)})
	}
	ask, err := b.host.Current(ctx, meta.CallID)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			return resultInvalid, fieldErr(textGoneModal)
		}
		return resultError, fieldErr(tryAgain)
	}
	req := ask.Request
	a, ok := ruleAskOf(req)
	if !ok {
		return resultInvalid, fieldErr(textNoPermission)
	}
	who := waterfall.Respondent{UserID: ic.User.ID, UserName: userName(ic.User), Surface: waterfall.SurfaceSlack, Channel: meta.Channel, MessageTS: meta.TS}
	admin, ok, why := b.mayGrant(ctx, ic.User.ID, req)
	if !ok {
		r := waterfall.RefusedClick(ask, who, why)
		b.pool.Submit("", func(ctx context.Context) { b.refused(ctx, r) })
		return resultRefused, fieldErr(why)
	}
	effect := rules.Allow
	label := waterfall.PermissionAllow
	if ic.View.CallbackID == blocks.CallbackDenyRule {
		effect, label = rules.Deny, waterfall.PermissionDeny
	}
	st := ruleStateOf(ic.View.State)
	r := formRule(effect, a, st)
	matchErr := func(msg string) *slack.ViewSubmissionResponse {
		block := blocks.RuleMatchBlock
		if r.Command == "" && r.Path == "" {
			block = blocks.RuleUntilBlock
		}
		return slack.NewErrorsViewSubmissionResponse(map[string]string{block: truncate(msg, ruleFieldErrorSize)})
	}
	if err := rules.Check(r); err != nil {
		return resultInvalid, matchErr(err.Error())
	}
	if !r.Matches(a) {
		return resultInvalid, matchErr("This rule would not match the ask it is granted from; widen it, or answer this ask on its own.")
	}
	var until time.Time
	known := false
	for _, d := range blocks.Durations {
		if d.Value == st.until {
			known = true
			if d.For > 0 {
				until = b.host.Now().Add(d.For)
			}
		}
	}
	if !known {
		return resultInvalid, fieldErr("Choose how long the rule lasts.")
	}
	saved, err := b.host.GrantRule(ctx, meta.CallID, waterfall.Grant{Rule: r, Until: until, Admin: admin}, who)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeBadRequest {
			return resultInvalid, matchErr(err.(*waterfall.Error).Message)
		}
		b.log.Error("saving a standing rule failed", "callId", meta.CallID, "err", err)
		return resultError, fieldErr(tryAgain)
	}
	// The tool, not the match: a pattern is often the command asked, and
	// logs carry no tool input (docs/security.md).
	b.log.Info("standing rule granted", "rule", saved.ID, "effect", saved.Effect, "tool", r.Tool, "by", ic.User.ID, "callId", meta.CallID)
	ans := waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: waterfall.PermissionQuestionID, Selected: []string{label}}}}
	out, err := b.host.Answer(ctx, meta.CallID, ans, who)
	if err != nil {
		// The rule stands; the ask had moved on. Say so where they are.
		msg, _ := refusal(req, out, err)
		b.ephemeralIn(ctx, meta.Channel, "", ic.User.ID, fmt.Sprintf("Rule %d is saved. %s", saved.ID, msg))
		return resultDuplicate, nil
	}
	if out.Queued {
		return resultQueued, nil
	}
	return resultSettled, nil
}

// refreshRuleFormAction is Enter in the rule form's match field: refresh
// the preview (an action of that id elsewhere is not ours).
func (b *Bot) refreshRuleFormAction(ctx context.Context, ic *slack.InteractionCallback, _ *slack.BlockAction, _ *feedback) string {
	if !blocks.IsRuleCallback(ic.View.CallbackID) {
		return resultIgnored
	}
	return b.refreshRuleForm(ctx, ic)
}

// refreshRuleForm re-renders the form with the preview of the match as
// edited, keeping every choice made.
func (b *Bot) refreshRuleForm(ctx context.Context, ic *slack.InteractionCallback) string {
	meta, err := blocks.DecodeMeta(ic.View.PrivateMetadata)
	if err != nil {
		return resultInvalid
	}
	ask, err := b.host.Current(ctx, meta.CallID)
	if err != nil {
		return resultInvalid
	}
	req := ask.Request
	a, ok := ruleAskOf(req)
	if !ok {
		return resultInvalid
	}
	admin, ok, _ := b.mayGrant(ctx, ic.User.ID, req)
	if !ok {
		return resultRefused
	}
	effect := rules.Allow
	if ic.View.CallbackID == blocks.CallbackDenyRule {
		effect = rules.Deny
	}
	st := ruleStateOf(ic.View.State)
	r := formRule(effect, a, st)
	f := blocks.RuleForm{Meta: meta, Effect: string(effect), Tool: a.Tool, Match: st.match, Repo: a.Repo, Caller: a.Caller,
		RepoAll: st.repoAll, CallerAll: st.callerAll, Until: st.until, Admin: admin}
	switch {
	case a.Command != "":
		f.Field = "command"
	case a.Path != "":
		f.Field = "path"
	}
	b.rulePreview(ctx, &f, r)
	return b.updateView(ctx, ic, blocks.RuleModal(f))
}

// revokeClick is a listing's Revoke.
func (b *Bot) revokeClick(ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction, fb *feedback) string {
	id, ok := blocks.ParseRevokeBlockID(act.BlockID)
	if !ok || b.rules == nil {
		return resultInvalid
	}
	live, err := b.host.Rules(ctx)
	if err != nil {
		b.tell(fb, textRulesFailed)
		return resultError
	}
	var r *asktype.Rule
	for i := range live {
		if live[i].ID == id {
			r = &live[i]
		}
	}
	if r == nil {
		b.tell(fb, textRuleGone)
		return resultDuplicate
	}
	who := waterfall.Respondent{UserID: ic.User.ID, UserName: userName(ic.User), Surface: waterfall.SurfaceSlack}
	if !b.mayRevoke(ctx, ic.User.ID, *r) {
		b.refused(ctx, waterfall.RefusedRule(r.Caller, who, fmt.Sprintf("revoking rule %d: %s", id, textNotRuleAdmin)))
		b.tell(fb, textNotRuleAdmin)
		return resultRefused
	}
	if _, err := b.host.RevokeRule(ctx, id, who); err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			b.tell(fb, textRuleGone)
			return resultDuplicate
		}
		b.tell(fb, textRulesFailed)
		return resultError
	}
	b.log.Info("standing rule revoked", "rule", id, "by", ic.User.ID)
	b.tell(fb, fmt.Sprintf("Rule %d is revoked: asks it matched are asked again.", id))
	return resultSettled
}

// ruleItems lists the live rules for user, with Revoke where they may.
func (b *Bot) ruleItems(ctx context.Context, user string) ([]blocks.RuleItem, error) {
	live, err := b.host.Rules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]blocks.RuleItem, 0, len(live))
	for _, r := range live {
		out = append(out, blocks.RuleItem{ID: r.ID, Effect: r.Effect, Match: waterfall.GrammarRule(r).String(), Repo: r.Repo, Caller: r.Caller,
			By: r.GrantedBy, Granted: r.Granted, Until: r.Until, Uses: r.Uses, Revoke: b.mayRevoke(ctx, user, r)})
	}
	return out, nil
}

// homeRules are the Home tab's rule blocks and a digest of what they show
// (a change to the rules is a change to the tab); none when rules are off
// or none is live.
func (b *Bot) homeRules(ctx context.Context, user string) ([]slack.Block, string) {
	if b.rules == nil {
		return nil, ""
	}
	items, err := b.ruleItems(ctx, user)
	if err != nil {
		b.log.Warn("listing rules for the Home tab failed", "user", user, "err", err)
		return nil, "rules unavailable"
	}
	if len(items) == 0 {
		return nil, "" // a tab without rules stays as it was
	}
	d := sha256.New()
	for _, r := range items {
		fmt.Fprintf(d, "%d %d %t\n", r.ID, r.Uses, r.Revoke)
	}
	return append([]slack.Block{slack.NewDividerBlock()}, blocks.RuleBlocks(items, maxHomeRules)...), hex.EncodeToString(d.Sum(nil)[:8])
}

// rulesFor is /askslack rules.
func (b *Bot) rulesFor(ctx context.Context, user string) blocks.Message {
	if b.rules == nil {
		return blocks.Message{Text: textRulesOff}
	}
	items, err := b.ruleItems(ctx, user)
	if err != nil {
		b.log.Error("listing rules failed", "err", err)
		return blocks.Message{Text: textRulesFailed}
	}
	text := fmt.Sprintf("%d standing rules", len(items))
	return blocks.Message{Text: text, Blocks: blocks.RuleBlocks(items, maxCommandRules)}
}
