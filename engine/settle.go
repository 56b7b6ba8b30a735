package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// maxDecisions bounds how often one answer is decided again because other
// votes landed first: each retry means another vote got in, so more than
// this many voters racing on one ask is the only way to run out.
const maxDecisions = 16

// decideAndApply runs the policy on rec (the ask as this replica read it,
// decoded once) for s and applies the decision, deciding again on the
// fresh record while other votes land first, and, with late, when the
// window closed under it (the answer is then a late one, for the agent's
// next turn).
func (h *Host) decideAndApply(ctx context.Context, rec *waterfall.Record, s waterfall.Settlement, late bool) (waterfall.Outcome, error) {
	for i := 0; ; i++ {
		out, err := h.apply(ctx, rec, s)
		again := errors.Is(err, store.ErrVotesMoved) || (late && errors.Is(err, store.ErrContinued) && out.Record != nil && out.Record.Request != nil)
		if !again || i == maxDecisions {
			if errors.Is(err, store.ErrVotesMoved) {
				err = unavailable(err)
			}
			return out, err
		}
		rec = out.Record
	}
}

// apply decides once, on rec, and makes the conditional write.
func (h *Host) apply(ctx context.Context, rec *waterfall.Record, s waterfall.Settlement) (waterfall.Outcome, error) {
	a := rec.Ask
	if !a.State.Active() {
		// Settled and aborted are final: the record read says who won.
		return h.refused(rec, store.StateError(a.State))
	}
	req := rec.Request
	if err := waterfall.ValidateAnswer(req.Questions, &s.Answer); err != nil {
		return waterfall.Outcome{}, err
	}
	if err := waterfall.ValidateEdits(req, &s.Answer); err != nil {
		return waterfall.Outcome{}, err
	}
	s.Answer = waterfall.Normalize(req.Questions, s.Answer)
	waterfall.NormalizeEdits(req, &s.Answer)
	if err := h.checkEdit(ctx, rec, s); err != nil {
		return waterfall.Outcome{Record: rec}, err
	}
	votes, err := waterfall.Ballots(a)
	if err != nil {
		return waterfall.Outcome{}, err
	}
	d := h.policy.Decide(rec, votes, s)
	if d.Refuse != nil {
		why := d.Refuse.Error()
		var e *waterfall.Error
		if errors.As(d.Refuse, &e) {
			why = e.Message // what the answerer is told, without the code
		}
		h.Refused(ctx, waterfall.RefusedClick(rec, s.Respondent, why))
		return waterfall.Outcome{Record: rec}, d.Refuse
	}
	if cs := waterfall.Changes(req, d.Settlement.Item(waterfall.PermissionQuestionID)); d.Settle && len(cs) > 0 {
		d.Detail = editedDetail(d, cs)
	}
	p, err := voteParams(a, req, s, d, len(votes))
	if err != nil {
		return waterfall.Outcome{}, err
	}
	cur, err := h.store.Vote(ctx, a.CallID, p)
	switch {
	case err == nil:
		if d.Settle {
			h.remember(ctx, req, d.Settlement)
		}
		return h.applied(cur, d, s), nil
	case errors.Is(err, store.ErrContinued) && cur != nil && a.State == asktype.Open:
		out := outcomeOn(cur)
		h.notify(out.Record) // the late answer itself closed the window
		return out, err
	case errors.Is(err, store.ErrVotesMoved):
		return outcomeOn(cur), err
	}
	return h.refused(outcomeOn(cur).Record, err)
}

// maxEditDetail bounds the diff an edited allow puts in the audit trail.
const maxEditDetail = 4000

// editedDetail is the audit detail of an allow with edits: the diff, after
// what the entry would say anyway (on whose behalf an API caller answered).
func editedDetail(d waterfall.Decision, cs []waterfall.Change) string {
	detail := d.Detail
	if detail == "" {
		raw, _ := json.Marshal(d.Settlement)
		_, detail = store.AuditRespondentOf(raw)
	}
	edits := waterfall.EditDetail(cs, maxEditDetail)
	if detail == "" {
		return edits
	}
	return detail + "; " + edits
}

// voteParams is the store's form of decision d about answer s on a.
func voteParams(a *asktype.Ask, req *waterfall.Request, s waterfall.Settlement, d waterfall.Decision, seen int) (store.VoteParams, error) {
	vote, err := json.Marshal(s)
	if err != nil {
		return store.VoteParams{}, err
	}
	p := store.VoteParams{Voter: waterfall.VoterOf(s.Respondent), Vote: vote, At: s.Respondent.At, State: a.State, Seen: seen, Settle: d.Settle, Detail: d.Detail}
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
func (h *Host) applied(cur *asktype.Ask, d waterfall.Decision, s waterfall.Settlement) waterfall.Outcome {
	out := outcomeOn(cur) // decoded once: for the caller and the observers
	switch {
	case !d.Settle:
		h.metrics.Transition("voted")
		h.notify(out.Record)
		out.Voted = true
		return out
	case cur.State == asktype.Settled:
		h.metrics.Transition("settled")
	default:
		h.metrics.Transition("queued")
	}
	h.answered(cur, s.Respondent.At)
	h.notify(out.Record)
	out.Settlement, out.Queued = &d.Settlement, cur.State == asktype.Continued
	return out
}

// steered is the late answer s as the steered message queued for the agent.
func steered(callID string, req *waterfall.Request, s waterfall.Settlement) waterfall.SteeredMessage {
	return waterfall.SteeredMessage{
		ID:         waterfall.MessageID(callID),
		CallID:     callID,
		Source:     waterfall.Source{Kind: "user-question", CallID: callID},
		Answers:    s.Answers,
		Respondent: s.Respondent,
		Approvers:  s.Approvers,
		Text:       waterfall.Text(callID, req.Questions, s),
		QueuedAt:   s.Respondent.At,
	}
}

// outcomeOn is an outcome about a as it now stands (nil: no ask read).
func outcomeOn(a *asktype.Ask) waterfall.Outcome {
	if a == nil {
		return waterfall.Outcome{}
	}
	r, err := waterfall.Decode(a)
	if err != nil {
		r = &waterfall.Record{Ask: a} // undecodable: the stored ask alone
	}
	return waterfall.Outcome{Record: r}
}
