package blocks

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Standing rules in Slack: the "Allow rule…" and "Deny rule…" buttons
// of a permission message, the form they open, the listing of live rules
// (App Home, /askslack rules) and the one-line notice of an ask a rule
// answered.

// Callback ids of the rule form, one per effect.
const (
	CallbackAllowRule = "askslack.rule.allow"
	CallbackDenyRule  = "askslack.rule.deny"
)

// Inputs of the rule form: block ids (under "rule/") and action ids.
const (
	RuleMatchBlock  = "rule/match"
	RuleRepoBlock   = "rule/repo"
	RuleCallerBlock = "rule/caller"
	RuleUntilBlock  = "rule/until"
	RuleMatchInput  = "askslack.rule.match"
	RuleRepoInput   = "askslack.rule.repo"
	RuleCallerInput = "askslack.rule.caller"
	RuleUntilInput  = "askslack.rule.until"
	// RulePreviewBlock holds the preview, re-rendered when the match is
	// edited (Enter in the match field dispatches an action).
	RulePreviewBlock = "rule/preview"
	// RevokeAction is a Revoke button; its block id is RevokeBlockID.
	RevokeAction = "askslack.revoke"
)

// Scope values of the form's radios, and its durations.
const (
	ScopeOne = "one"
	ScopeAll = "all"
)

// Durations is what the form offers, in order: value → label.
var Durations = []struct {
	Value, Label string
	For          time.Duration // 0: until revoked
}{
	{"1h", "1 hour", time.Hour},
	{"8h", "8 hours", 8 * time.Hour},
	{"7d", "7 days", 7 * 24 * time.Hour},
	{"revoked", "Until revoked", 0},
}

// DefaultDuration is the form's preselected duration.
const DefaultDuration = "8h"

// IsRuleCallback reports a rule form's callback id.
func IsRuleCallback(id string) bool { return id == CallbackAllowRule || id == CallbackDenyRule }

// ruleControls are a permission message's Allow rule… and Deny rule…
// buttons: only an ask that says what it is about (waterfall.Permission)
// can be matched by a rule.
func ruleControls(v waterfall.View) []slack.Block {
	if v.Request == nil || v.Request.Permission == nil || v.Request.Kind() != waterfall.KindPermission {
		return nil
	}
	allow := slack.NewButtonBlockElement(actionID(KindAllowRule, -1), "allow", plain("Allow rule…", maxButtonText))
	allow.AccessibilityLabel = "Answer Allow and allow asks like this from now on"
	deny := slack.NewButtonBlockElement(actionID(KindDenyRule, -1), "deny", plain("Deny rule…", maxButtonText))
	deny.AccessibilityLabel = "Answer Deny and deny asks like this from now on"
	return []slack.Block{slack.NewActionBlock(blockID(v.CallID, 0)+"/rule", allow, deny)}
}

// RuleForm is what the rule form shows.
type RuleForm struct {
	Meta   Meta
	Effect string // "allow" or "deny"
	Tool   string
	// Field says what Match matches: "command", "path", or "" (the tool
	// alone: no match field).
	Field string
	Match string
	// Repo and Caller are the ask's; "" hides that scope's choice.
	Repo, Caller string
	// RepoAll, CallerAll and Until are the form's current choices.
	RepoAll, CallerAll bool
	Until              string
	// Preview lists the recent asks the rule would have matched, newest
	// first, out of Looked recent asks; PreviewNote replaces it when the
	// match cannot be read.
	Preview     []string
	Looked      int
	PreviewNote string
	// Admin says the granter is a rule admin; otherwise the form says
	// the rule covers only asks they could have answered.
	Admin bool
}

// RuleModal is the form "Allow rule…" / "Deny rule…" opens: the match,
// editable, with a preview of what it would have matched; the scope; how
// long. Submitting answers the ask and creates the rule.
func RuleModal(f RuleForm) slack.ModalViewRequest {
	verb, title, callback := "Allow", "Allow rule", CallbackAllowRule
	if f.Effect == "deny" {
		verb, title, callback = "Deny", "Deny rule", CallbackDenyRule
	}
	intro := fmt.Sprintf("*%s* this ask now, and answer asks like it the same way without asking, until the rule ends or someone revokes it.", verb)
	if !f.Admin {
		intro += " The rule covers only asks you could answer yourself."
	}
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText(intro), nil, nil)}
	switch f.Field {
	case "command", "path":
		hint := "Words must match exactly. `*` matches within one word (never `;`, `&`, `|`, `$`, quotes or redirects); a last word `*` matches any further plain words."
		ph := "npm test *"
		if f.Field == "path" {
			hint = "A path glob relative to the repository: `*` within one folder, `**` any folders; never files or folders starting with a dot."
			ph = "src/**/*.go"
		}
		in := slack.NewPlainTextInputBlockElement(plain(ph, maxPlaceholder), RuleMatchInput).WithInitialValue(Truncate(f.Match, 1000)).WithMaxLength(1000)
		in.DispatchActionConfig = &slack.DispatchActionConfig{TriggerActionsOn: []string{"on_enter_pressed"}}
		label := fmt.Sprintf("%s %s", Truncate(oneLine(f.Tool), 100), f.Field)
		bs = append(bs, slack.NewInputBlock(RuleMatchBlock, plain(label, maxInputLabel), plain(hint+" Press Enter to refresh the preview.", maxInputLabel), in).WithDispatchAction(true))
	default:
		bs = append(bs, slack.NewSectionBlock(mrkdwnText("Every use of "+code(Truncate(oneLine(f.Tool), 100))+" that names no command or file."), nil, nil))
	}
	bs = append(bs, slack.NewSectionBlock(mrkdwnText(previewText(f)), nil, nil, slack.SectionBlockOptionBlockID(RulePreviewBlock)))
	if f.Repo != "" {
		bs = append(bs, scopeInput(RuleRepoBlock, RuleRepoInput, "Repositories", "Only "+Truncate(oneLine(f.Repo), 60), "Every repository", f.RepoAll))
	}
	if f.Caller != "" {
		bs = append(bs, scopeInput(RuleCallerBlock, RuleCallerInput, "Callers", "Only "+Truncate(oneLine(f.Caller), 60), "Every caller", f.CallerAll))
	}
	var opts []*slack.OptionBlockObject
	var initial *slack.OptionBlockObject
	for _, d := range Durations {
		o := slack.NewOptionBlockObject(d.Value, plain(d.Label, maxOptionText), nil)
		opts = append(opts, o)
		if d.Value == f.Until || (f.Until == "" && d.Value == DefaultDuration) {
			initial = o
		}
	}
	radios := slack.NewRadioButtonsBlockElement(RuleUntilInput, opts...)
	radios.InitialOption = initial
	bs = append(bs, slack.NewInputBlock(RuleUntilBlock, plain("For how long", maxInputLabel), nil, radios))
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain(title, maxModalTitle),
		Submit:          plain(verb+" and save", maxModalTitle),
		Close:           plain("Cancel", maxModalTitle),
		Blocks:          slack.Blocks{BlockSet: bs},
		PrivateMetadata: f.Meta.Encode(),
		CallbackID:      callback,
	}
}

func scopeInput(blockID, actionID, label, one, all string, pickAll bool) slack.Block {
	o1 := slack.NewOptionBlockObject(ScopeOne, plain(one, maxOptionText), nil)
	o2 := slack.NewOptionBlockObject(ScopeAll, plain(all, maxOptionText), nil)
	r := slack.NewRadioButtonsBlockElement(actionID, o1, o2)
	r.InitialOption = o1
	if pickAll {
		r.InitialOption = o2
	}
	return slack.NewInputBlock(blockID, plain(label, maxInputLabel), nil, r)
}

// maxPreview is how many matched asks the preview lists.
const maxPreview = 20

func previewText(f RuleForm) string {
	if f.PreviewNote != "" {
		return ":warning: " + Escape(Truncate(f.PreviewNote, 500))
	}
	if len(f.Preview) == 0 {
		return fmt.Sprintf("_It would have matched none of the last %d permission asks._", f.Looked)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*It would have matched %d of the last %d permission asks:*", len(f.Preview), f.Looked)
	for i, p := range f.Preview {
		if i == maxPreview {
			break
		}
		b.WriteString("\n• " + code(Truncate(oneLine(p), 120)))
	}
	return Truncate(b.String(), maxSectionText)
}

// RuleItem is one live rule, as listed.
type RuleItem struct {
	ID      int64
	Effect  string
	Match   string // Bash(npm test *)
	Repo    string // "" every repo
	Caller  string // "" every caller
	By      string // Slack user id of the granter
	Granted time.Time
	Until   time.Time // zero: until revoked
	Uses    int64
	// Revoke shows a Revoke button.
	Revoke bool
}

// RevokeBlockID is the block of rule id's line in a listing.
func RevokeBlockID(id int64) string { return "rule/" + strconv.FormatInt(id, 10) }

// ParseRevokeBlockID reverses RevokeBlockID.
func ParseRevokeBlockID(s string) (int64, bool) {
	v, ok := strings.CutPrefix(s, "rule/")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil && id > 0
}

// RuleLine is one rule in a sentence: effect, match, scope, who granted it
// and when, until when, and how often it was used.
func RuleLine(r RuleItem) string {
	s := fmt.Sprintf("*%d* · %s %s", r.ID, strings.ToUpper(r.Effect[:1])+r.Effect[1:], code(Truncate(oneLine(r.Match), 200)))
	scope := "every repo"
	if r.Repo != "" {
		scope = "repo " + code(Truncate(oneLine(r.Repo), 60))
	}
	if r.Caller != "" {
		scope += ", caller " + code(Truncate(oneLine(r.Caller), 60))
	}
	s += " · " + scope
	if IsUserID(r.By) {
		s += " · by <@" + r.By + ">"
	}
	s += " " + slackDate(r.Granted)
	if r.Until.IsZero() {
		s += " · until revoked"
	} else {
		s += " · until " + slackDate(r.Until)
	}
	return s + fmt.Sprintf(" · used %d×", r.Uses)
}

// maxListedRules bounds a listing's rules (a Home tab shows fewer).
const maxListedRules = 40

// RuleBlocks lists rules, each a line with a Revoke button where allowed,
// at most max of them, then a note of how many more there are.
func RuleBlocks(rs []RuleItem, max int) []slack.Block {
	max = min(max, maxListedRules)
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText("*Standing rules*"), nil, nil, slack.SectionBlockOptionBlockID("rule/head"))}
	if len(rs) == 0 {
		return append(bs, note("rule/none", "No standing rules. Grant one with *Allow rule…* or *Deny rule…* on a permission question."))
	}
	for i, r := range rs {
		if i == max {
			bs = append(bs, note("rule/more", fmt.Sprintf("%d more: `/askslack rules` lists them all.", len(rs)-max)))
			break
		}
		var acc *slack.Accessory
		if r.Revoke {
			btn := slack.NewButtonBlockElement(RevokeAction, strconv.FormatInt(r.ID, 10), plain("Revoke", maxButtonText)).WithStyle(slack.StyleDanger)
			btn.Confirm = slack.NewConfirmationBlockObject(plain("Revoke this rule?", 100),
				plain(fmt.Sprintf("Rule %d stops answering at once, on every replica; matching asks are asked again.", r.ID), 300),
				plain("Revoke", 30), plain("Keep it", 30))
			acc = slack.NewAccessory(btn)
		}
		bs = append(bs, slack.NewSectionBlock(mrkdwnText(RuleLine(r)), nil, acc, slack.SectionBlockOptionBlockID(RevokeBlockID(r.ID))))
	}
	return bs
}

// RuleNotice is the one-line notice, in the session's thread, of an ask a
// rule answered: which rule, what it answered, for which agent.
func RuleNotice(agent, answer string, r RuleItem, what string) string {
	s := fmt.Sprintf(":robot_face: %s %s for %s by standing rule %d (%s", answer, code(Truncate(oneLine(what), 200)),
		bold(Truncate(oneLine(agent), 60)), r.ID, code(Truncate(oneLine(r.Match), 200)))
	if IsUserID(r.By) {
		s += ", granted by <@" + r.By + ">"
	}
	return s + ")"
}
