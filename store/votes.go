package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Votes is the settlement seam's store half: the domain (waterfall's
// settlement policy) decides, on the ask as it read it, what one answer
// does — settle the ask, or be recorded as a vote while the ask waits for
// more — and Vote applies that decision atomically with recording the vote
// (who, what, when), its audit event, the version bump and the change
// hint, provided the ask still holds the votes the decision saw. When
// another vote landed meanwhile, Vote changes nothing and returns
// ErrVotesMoved with the ask as it stands, and the domain decides again.
//
// "First valid answer wins" is the decision VoteParams{Seen: 0, Settle:
// true}: in Redis it costs what Settle did, one round trip.
type Votes interface {
	// Vote records p's vote on the ask, and, with p.Settle, ends the vote
	// in the same atomic step: an open ask settles with p.Settlement, a
	// continued one queues p.Settlement as its late reply (a steered
	// message). It fails, changing nothing, with ErrVotesMoved when the
	// ask holds another number of votes than p.Seen; with the state
	// sentinel (ErrSettled, ErrAborted, ErrContinued, ErrOpen) when the ask
	// is not in p.State; with ErrReplyQueued when a late reply already
	// waits. An answer at or past an open ask's deadline closes the window
	// (open → continued, as Settle does) and returns ErrContinued with the
	// continued ask, recording no vote: the domain decides again on it.
	Vote(ctx context.Context, callID string, p VoteParams) (*asktype.Ask, error)
}

// VoteParams is one decided answer for Votes.Vote.
type VoteParams struct {
	// Voter is who votes (the domain's key of a person), Vote what they
	// voted (opaque JSON, waterfall's), At when.
	Voter string
	Vote  json.RawMessage
	At    time.Time
	// State is the state the decision saw: Open (settle) or Continued
	// (queue a late reply).
	State asktype.State
	// Seen is how many votes the decision saw on the ask.
	Seen int
	// Settle ends the vote with Settlement (see Votes.Vote).
	Settle     bool
	Settlement json.RawMessage
	// Detail is the audit event's detail ("" for none): the "voted" event
	// of a vote that waits, or the answer's when it settles (a claim's
	// "on behalf of …" is used when Detail is empty).
	Detail string
}

// ErrVotesMoved refuses a vote decided on a stale count of votes: another
// vote landed first. The ask returned with it is the one to decide on.
var ErrVotesMoved = errors.New("store: another vote landed first")

// VoteEntry is the stored JSON of one vote (Ask.Votes' element), with At
// in milliseconds as the stores keep times.
func VoteEntry(p VoteParams) ([]byte, error) {
	return json.Marshal(asktype.Vote{Voter: p.Voter, Vote: p.Vote, At: FromMillis(Millis(p.At)).UTC()})
}

// VoteAudit is who the audit event of p names and its detail: the
// settlement's respondent when p settles, the voter's otherwise.
func VoteAudit(p VoteParams) (*asktype.AuditRespondent, string) {
	raw := p.Vote
	if p.Settle {
		raw = p.Settlement
	}
	who, detail := AuditRespondentOf(raw)
	if p.Detail != "" {
		detail = p.Detail
	}
	return who, detail
}
