package waterfall

import "time"

// View is everything a message about one ask depends on, on any surface:
// the pure input of the renderers (blocks for Slack). ViewOf builds it from
// a record; the tests and `askslack render` build it by hand.
type View struct {
	CallID string
	// Request is read, never modified: it is shared with every reader of
	// the ask (waterfall.Record).
	Request *Request
	Phase   Phase
	// Deadline of a timed ask; Now is when the message is rendered (for
	// the coarse "about N minutes left" line).
	Deadline time.Time
	Now      time.Time
	// Settlement is the answer shown in PhaseSettled, PhaseQueued and
	// PhaseDelivered.
	Settlement *Settlement
	// Delivered, in PhaseDelivered, is when the agent admitted the late
	// answer (the steered message reached it).
	Delivered time.Time
	// Abandoned, in PhaseAborted, says the agent stopped waiting (its
	// connection closed and it never came back) rather than withdrawing.
	Abandoned bool
	// Elsewhere, in PhaseAborted, says the agent's own prompt (its
	// terminal) was answered first.
	Elsewhere bool
	// Revoked, in PhaseAborted, says the personal agent token that asked
	// was revoked (askslack login's token), so the question went with it.
	Revoked bool
	// Votes is where a quorum ask's vote stands (quorum.go); zero for an
	// ask that takes the first answer.
	Votes Votes
	// Picked, when set, is what the person already chose in the message
	// or their Home tab (one entry per question): the modals, and the
	// choice controls of a Home tab published again, start from it.
	Picked []Picked
	// Link, when set, is the ask's page on the answer page (web): the
	// message of an ask still taking answers offers it.
	Link string
}

// ViewOf is the view of a stored ask's record as of now.
func ViewOf(r *Record, now time.Time) View {
	return View{
		CallID:     r.Ask.CallID,
		Request:    r.Request,
		Phase:      r.Phase,
		Deadline:   r.Ask.Deadline,
		Now:        now,
		Settlement: r.Answered(),
		Delivered:  delivered(r),
		Abandoned:  r.Abandoned(),
		Elsewhere:  r.AnsweredElsewhere(),
		Revoked:    r.TokenRevoked(),
		Votes:      VotesOf(r),
	}
}

func delivered(r *Record) time.Time {
	if r.Phase != PhaseDelivered {
		return time.Time{}
	}
	return r.Ask.SettledAt
}

// Picked is what a person already chose for one question in a message or
// form that keeps state (Slack's state.values): the offered labels chosen
// and any free text typed.
type Picked struct {
	Selected []string
	Text     string
	// Touched is true when the state holds an element for the question.
	Touched bool
}
