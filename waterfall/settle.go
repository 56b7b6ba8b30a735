package waterfall

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/askslack/askslack/asktype"

	"github.com/askslack/askslack/store"
)

// The settlement seam. Every answer to an ask, from any surface or from
// the answerer chain, goes through one decision: given the ask (its
// Record), the votes recorded so far and the new answer, a Policy says
// settle now, record a vote and wait, or refuse. The Host applies the
// decision with one conditional store write (store.Votes.Vote) that
// records the vote atomically with it and fails when another vote landed
// since the record the decision saw; the Host then decides again on the
// fresh record. Policies are pure: they read, the Host and the store act.

// Ballot is one recorded vote, decoded: who answered what, and when (the
// respondent's At).
type Ballot struct {
	// Voter is the key the vote was recorded under (VoterOf).
	Voter string
	Settlement
}

// Decision is what a Policy decides about one answer.
type Decision struct {
	// Refuse, when set, is what the answerer is told (a *Error): the
	// answer does not count and nothing is recorded.
	Refuse error
	// Settle ends the vote: an open ask settles with Settlement, a
	// continued one queues it as the late answer for the agent. When false
	// (and not refused) the answer is recorded as a vote and the ask waits.
	Settle     bool
	Settlement Settlement
	// Detail is the audit trail's detail of the vote or settle ("" for
	// none): "approved; 1 of 2", "approved by alice, bob".
	Detail string
}

// Policy decides what an answer does to an ask. Decide gets the ask as
// the Host read it (open or continued), the votes recorded on it, oldest
// first, and the new answer (validated and normalised, its respondent's At
// set). It must not block or write anything: it may run more than once for
// one answer, on fresher records, when other votes land first.
type Policy interface {
	Decide(rec *Record, votes []Ballot, s Settlement) Decision
}

// FirstAnswer is the default policy: the first valid answer settles the
// ask (or, on a continued ask, is queued as the late answer).
type FirstAnswer struct{}

// Decide implements Policy.
func (FirstAnswer) Decide(_ *Record, _ []Ballot, s Settlement) Decision {
	return Decision{Settle: true, Settlement: s}
}

// VoterOf is the key a respondent's votes are recorded under: one key per
// person. A Slack user is their user id; an answer surface (an API caller)
// is its own name whatever person it claims to answer for, since claims
// are not checked: one surface cannot make up a quorum on its own.
func VoterOf(r Respondent) string {
	switch {
	case r.Surface == SurfaceSlack && r.UserID != "":
		return "slack:" + r.UserID
	case r.UserName != "":
		return r.Surface + ":" + r.UserName
	case r.UserID != "":
		return r.Surface + ":" + r.UserID
	}
	return r.Surface
}

// Ballots decodes the votes recorded on a.
func Ballots(a *asktype.Ask) ([]Ballot, error) {
	out := make([]Ballot, 0, len(a.Votes))
	for _, v := range a.Votes {
		b := Ballot{Voter: v.Voter}
		if err := json.Unmarshal(v.Vote, &b.Settlement); err != nil {
			return nil, errors.New("waterfall: a vote of " + a.CallID + " does not decode: " + err.Error())
		}
		out = append(out, b)
	}
	return out, nil
}

// maxDecisions bounds how often one answer is decided again because other
// votes landed first: each retry means another vote got in, so more than
// this many voters racing on one ask is the only way to run out.
const maxDecisions = 16

// decideAndApply runs the policy on a (as this replica read it) for s and
// applies the decision, deciding again on the fresh record while other
// votes land first, and, with late, when the window closed under it (the
// answer is then a late one, for the agent's next turn).
func (h *Host) decideAndApply(ctx context.Context, a *asktype.Ask, s Settlement, late bool) (Outcome, error) {
	for i := 0; ; i++ {
		out, err := h.apply(ctx, a, s)
		again := errors.Is(err, store.ErrVotesMoved) || (late && errors.Is(err, store.ErrContinued) && out.Ask != nil)
		if !again || i == maxDecisions {
			if errors.Is(err, store.ErrVotesMoved) {
				err = unavailable(err)
			}
			return out, err
		}
		a = out.Ask
	}
}

// apply decides once, on a, and makes the conditional write.
func (h *Host) apply(ctx context.Context, a *asktype.Ask, s Settlement) (Outcome, error) {
	if !a.State.Active() {
		// Settled and aborted are final: the record read says who won.
		return h.refused(a, store.StateError(a.State))
	}
	rec, err := Decode(a)
	if err != nil {
		return Outcome{}, err
	}
	req := rec.Request
	if err := ValidateAnswer(req.Questions, &s.Answer); err != nil {
		return Outcome{}, err
	}
	s.Answer = Normalize(req.Questions, s.Answer)
	votes, err := Ballots(a)
	if err != nil {
		return Outcome{}, err
	}
	d := h.policy.Decide(rec, votes, s)
	if d.Refuse != nil {
		why := d.Refuse.Error()
		var e *Error
		if errors.As(d.Refuse, &e) {
			why = e.Message // what the answerer is told, without the code
		}
		h.Refused(ctx, RefusedClick(rec, s.Respondent, why))
		return Outcome{Ask: a}, d.Refuse
	}
	p, err := voteParams(a, req, s, d, len(votes))
	if err != nil {
		return Outcome{}, err
	}
	cur, err := h.store.Vote(ctx, a.CallID, p)
	switch {
	case err == nil:
		return h.applied(cur, d, s), nil
	case errors.Is(err, store.ErrContinued) && cur != nil && a.State == asktype.Open:
		h.changed(cur) // the late answer itself closed the window
		return Outcome{Ask: cur}, err
	case errors.Is(err, store.ErrVotesMoved):
		return Outcome{Ask: cur}, err
	}
	return h.refused(cur, err)
}

// voteParams is the store's form of decision d about answer s on a.
func voteParams(a *asktype.Ask, req *Request, s Settlement, d Decision, seen int) (store.VoteParams, error) {
	vote, err := json.Marshal(s)
	if err != nil {
		return store.VoteParams{}, err
	}
	p := store.VoteParams{Voter: VoterOf(s.Respondent), Vote: vote, At: s.Respondent.At, State: a.State, Seen: seen, Settle: d.Settle, Detail: d.Detail}
	switch {
	case !d.Settle:
	case a.State == asktype.Open:
		p.Settlement, err = json.Marshal(d.Settlement)
	default:
		p.Settlement, err = json.Marshal(steered(a.CallID, req, d.Settlement))
	}
	return p, err
}

// applied accounts for a decision the store took.
func (h *Host) applied(cur *asktype.Ask, d Decision, s Settlement) Outcome {
	switch {
	case !d.Settle:
		h.metrics.Transition("voted")
		h.changed(cur)
		return Outcome{Ask: cur, Voted: true}
	case cur.State == asktype.Settled:
		h.metrics.Transition("settled")
	default:
		h.metrics.Transition("queued")
	}
	h.answered(cur, s.Respondent.At)
	h.changed(cur)
	return Outcome{Ask: cur, Settlement: &d.Settlement, Queued: cur.State == asktype.Continued}
}

// steered is the late answer s as the steered message queued for the agent.
func steered(callID string, req *Request, s Settlement) SteeredMessage {
	return SteeredMessage{
		ID:         MessageID(callID),
		CallID:     callID,
		Source:     Source{Kind: "user-question", CallID: callID},
		Answers:    s.Answers,
		Respondent: s.Respondent,
		Approvers:  s.Approvers,
		Text:       Text(callID, req.Questions, s),
		QueuedAt:   s.Respondent.At,
	}
}
