package waterfall

import (
	"encoding/json"
	"errors"

	"github.com/askslack/askslack/asktype"
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
// are not checked: one surface cannot make up a quorum on its own. A person
// signed in on the answer page votes as the Slack user they are: approving
// in Slack and again in the browser is one vote.
func VoterOf(r Respondent) string {
	switch {
	case r.SlackUser() != "":
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
