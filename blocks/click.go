package blocks

import (
	"errors"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Click is one block action on a question read against the ask it names,
// in one pass: what was clicked (Action), the question it is about, and
// what it means — a choice Slack keeps for a later Submit, the answer it
// gives, or what the controls hold for a modal to start from. The Slack
// surface decodes a click with DecodeAction, reads the ask, reads the click
// with ReadClick, and from then on decides on this value alone.
type Click struct {
	Action
	// Target is the question clicked (Action.Question is its index); nil
	// for an ask-wide action.
	Target *waterfall.Question
	// Records: the click only records a choice that Slack keeps in
	// state.values for a later Submit (a checkbox tick, a select in a
	// batch). Nothing changes, so it needs neither permission nor an
	// active ask.
	Records bool
	// Answer is the answer a pick, a lone select or Submit gives, unless
	// Unreadable says why what it carries is no answer.
	Answer     waterfall.Answer
	Unreadable error
	// Picked is what the controls hold, one per question (Other…: its
	// modal starts from it); nil when they hold nothing readable.
	Picked []waterfall.Picked
}

// ErrNothingPicked: a Submit with nothing chosen or typed.
var ErrNothingPicked = errors.New("blocks: nothing picked")

// ReadClick reads a decoded action against the request it belongs to and
// the state.values its payload carries. An action the request cannot have
// rendered (an index out of range) is an error; a click whose payload
// holds no answer (an unknown option, nothing picked) is read, with
// Unreadable set, so that who clicked is checked before it is refused.
func ReadClick(a Action, act *slack.BlockAction, state map[string]map[string]slack.BlockAction, req *waterfall.Request) (Click, error) {
	q, err := Resolve(a, req)
	if err != nil {
		return Click{}, err
	}
	c := Click{Action: a, Target: q}
	switch a.Kind {
	case KindCheck:
		c.Records = true
	case KindSelect:
		if len(req.Questions) > 1 {
			c.Records = true // a select in a batch: Submit reads it
			break
		}
		oi, err := ParseOptionValue(act.SelectedOption.Value)
		switch {
		case err != nil:
			c.Unreadable = err
		case oi >= len(q.Options):
			c.Unreadable = errors.New("blocks: option out of range")
		default:
			c.Answer = waterfall.SingleAnswer(q, []string{q.Options[oi].Label}, "")
		}
	case KindPick:
		c.Answer = waterfall.SingleAnswer(q, []string{q.Options[a.Option].Label}, "")
	case KindSubmit:
		c.Picked, c.Unreadable = FromState(a.CallID, req, state)
		if c.Unreadable == nil {
			var any bool
			if c.Answer, any = waterfall.AnswerOf(req, c.Picked); !any {
				c.Unreadable = ErrNothingPicked
			}
		}
	case KindOther:
		c.Picked, _ = FromState(a.CallID, req, state) // the modal starts from what reads
	}
	return c, nil
}
