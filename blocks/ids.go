package blocks

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Kind says what an interactive element does. Action ids are
// "askslack.<kind>" (plus ".<option>" where one block holds several buttons,
// because action ids must be unique within a block), so the bot routes by a
// stable prefix and never by display text.
type Kind string

// The kinds of interactive elements askslack renders.
const (
	KindPick     Kind = "pick"     // a button that answers a single-select question with one option
	KindSelect   Kind = "select"   // a static select / radio that answers (single question) or records a choice (batch)
	KindCheck    Kind = "check"    // checkboxes / multi-select menu: recorded in state, settled by Submit
	KindSubmit   Kind = "submit"   // settles the choices recorded in state.values
	KindOther    Kind = "other"    // opens the "Other…" modal
	KindDecline  Kind = "decline"  // plan review: "Decline with feedback…" modal
	KindPreview  Kind = "preview"  // opens an option's preview (PreviewModal); the option is in the action id or the selected value
	KindFullPlan Kind = "fullplan" // opens the question's full text and plan (DetailModal)
	KindPage     Kind = "page"     // inside DetailPage: shows another page (Action.Page) of the same modal
	KindEdit     Kind = "edit"     // a tool permission's "Edit & allow…": opens EditModal
	// KindAllowRule and KindDenyRule open the standing-rule form of a
	// permission ask (rules.go).
	KindAllowRule Kind = "allowrule"
	KindDenyRule  Kind = "denyrule"
)

// Callback ids of the modals askslack opens.
const (
	CallbackOther    = "askslack.other"
	CallbackDecline  = "askslack.decline"
	CallbackReadOnly = "askslack.readonly"
)

const actionPrefix = "askslack."

// Action is a decoded interaction: which ask, which question, which option.
type Action struct {
	Kind     Kind
	CallID   string
	Question int // index into the request's questions; -1 for the whole ask
	Option   int // index into the question's options; -1 when none
	Page     int // KindPage: the page of DetailPage to show; else 0
}

// blockID names a block that belongs to question qi of an ask; -1 is the
// ask as a whole. "ask/<callId>/<qi>", optionally followed by "/<role>":
// call ids never contain '/' (waterfall.ValidID), so the encoding is
// unambiguous and survives restarts.
func blockID(callID string, qi int) string {
	return "ask/" + callID + "/" + strconv.Itoa(qi)
}

// actionID returns "askslack.<kind>" or "askslack.<kind>.<option>".
func actionID(k Kind, option int) string {
	if option < 0 {
		return actionPrefix + string(k)
	}
	return actionPrefix + string(k) + "." + strconv.Itoa(option)
}

// ErrForeign reports an action that askslack did not render.
var ErrForeign = errors.New("blocks: not an askslack action")

// Decode finds the ask, question and option an interaction refers to, from
// the block_id and action_id Slack echoes back. value is the button's value
// or, for a menu, the selected option's value (DecodeAction picks it): it
// names the option of a preview menu (KindPreview without an option in the
// action id); other kinds carry the option in the action id or, for
// stateful controls, in state.values (FromState). KindPage carries the page
// in Action.Page. Decode does not consult the request: callers check the
// indexes against the stored questions (see Resolve).
func Decode(blockIDStr, actionIDStr, value string) (Action, error) {
	rest, ok := strings.CutPrefix(actionIDStr, actionPrefix)
	if !ok {
		return Action{}, ErrForeign
	}
	a := Action{Question: -1, Option: -1}
	kind, opt, hasOpt := strings.Cut(rest, ".")
	a.Kind = Kind(kind)
	switch a.Kind {
	case KindPick, KindSelect, KindCheck, KindSubmit, KindOther, KindDecline, KindPreview, KindFullPlan, KindPage, KindAllowRule, KindDenyRule, KindEdit:
	default:
		return Action{}, fmt.Errorf("%w: unknown kind %q", ErrForeign, kind)
	}
	if hasOpt {
		n, err := strconv.Atoi(opt)
		if err != nil || n < 0 {
			return Action{}, fmt.Errorf("blocks: bad option in action id %q", actionIDStr)
		}
		a.Option = n
	}
	b, ok := strings.CutPrefix(blockIDStr, "ask/")
	if !ok {
		return Action{}, fmt.Errorf("%w: block id %q", ErrForeign, blockIDStr)
	}
	callID, rest, ok := strings.Cut(b, "/")
	if !ok || !waterfall.ValidID(callID) {
		return Action{}, fmt.Errorf("blocks: bad call id in block id %q", blockIDStr)
	}
	a.CallID = callID
	qs, _, _ := strings.Cut(rest, "/") // a suffix names the block's role
	q, err := strconv.Atoi(qs)
	if err != nil || q < -1 {
		return Action{}, fmt.Errorf("blocks: bad question in block id %q", blockIDStr)
	}
	a.Question = q
	switch {
	case a.Kind == KindPage:
		if a.Option < 0 {
			return Action{}, fmt.Errorf("blocks: page action without page %q", actionIDStr)
		}
		a.Page, a.Option = a.Option, -1
	case a.Kind == KindPreview && a.Option < 0 && value != "":
		// A preview menu: the chosen option arrives as the selected value.
		n, err := ParseOptionValue(value)
		if err != nil {
			return Action{}, err
		}
		a.Option = n
	case a.Kind == KindPick && a.Option < 0:
		return Action{}, fmt.Errorf("blocks: pick action without option %q", actionIDStr)
	}
	return a, nil
}

// NeedsQuestion reports whether an action of this kind refers to one
// question (an ask-wide block id, question -1, is then invalid).
func (k Kind) NeedsQuestion() bool {
	switch k {
	case KindPick, KindSelect, KindCheck, KindDecline, KindPreview, KindFullPlan, KindPage, KindAllowRule, KindDenyRule, KindEdit:
		return true
	}
	return false
}

// DecodeAction is Decode for one element of a block_actions payload: the
// value is the button's value, or the selected option's value of a menu
// (which is how a preview menu names its option).
func DecodeAction(act *slack.BlockAction) (Action, error) {
	value := act.Value
	if value == "" {
		value = act.SelectedOption.Value
	}
	return Decode(act.BlockID, act.ActionID, value)
}

// OptionValue is the value carried by an option object or button for option
// oi. Option values must stay ≤75 characters, so they carry the index, never
// the label: the answer always uses the offered label from the stored request.
func OptionValue(oi int) string { return strconv.Itoa(oi) }

// ParseOptionValue reverses OptionValue.
func ParseOptionValue(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("blocks: bad option value %q", v)
	}
	return n, nil
}

// Resolve checks an action's indexes against the request it belongs to and
// returns the question it refers to (nil for the ask as a whole).
func Resolve(a Action, req *waterfall.Request) (*waterfall.Question, error) {
	if a.Question < 0 {
		if a.Kind.NeedsQuestion() {
			return nil, fmt.Errorf("blocks: %s action without a question", a.Kind)
		}
		return nil, nil
	}
	if a.Question >= len(req.Questions) {
		return nil, fmt.Errorf("blocks: question %d out of range", a.Question)
	}
	q := &req.Questions[a.Question]
	if a.Option >= len(q.Options) {
		return nil, fmt.Errorf("blocks: option %d out of range", a.Option)
	}
	return q, nil
}
