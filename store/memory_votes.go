package store

import (
	"context"
	"slices"

	"github.com/askslack/askslack/asktype"
)

// Vote implements Votes, in the critical section every transition takes.
func (m *Memory) Vote(_ context.Context, callID string, p VoteParams) (*asktype.Ask, error) {
	// The JSON Redis stores: both stores refuse a vote that does not encode.
	if _, err := VoteEntry(p); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.get(callID)
	if a == nil {
		return nil, ErrNotFound
	}
	if a.State != p.State {
		return clone(&a.Ask), StateError(a.State)
	}
	if a.State == asktype.Open && !a.Deadline.IsZero() && !p.At.Before(a.Deadline) {
		// Late: close the window as Settle does; the caller decides again.
		m.continued(a)
		m.changed(a)
		m.audit(a, p.At, asktype.EventContinued, nil, "the window closed: an answer came late")
		return clone(&a.Ask), ErrContinued
	}
	return m.transitionLocked(a, func(a *memAsk) error {
		switch {
		case a.State == asktype.Continued && a.Reply != nil:
			return ErrReplyQueued
		case len(a.Votes) != p.Seen:
			return ErrVotesMoved
		}
		v := asktype.Vote{Voter: p.Voter, Vote: slices.Clone(p.Vote), At: msTime(p.At).UTC()}
		// A new slice: readers may hold the old one.
		a.Votes = append(slices.Clip(a.Votes), v)
		who, detail := VoteAudit(p)
		switch {
		case !p.Settle:
			m.audit(a, p.At, asktype.EventVoted, who, detail)
		case a.State == asktype.Open:
			a.State, a.Settlement, a.SettledAt = asktype.Settled, slices.Clone(p.Settlement), msTime(p.At)
			a.expires = p.At.Add(m.retention)
			m.audit(a, p.At, asktype.EventAnswered, who, detail)
		default:
			a.Reply, a.ReplyAt = slices.Clone(p.Settlement), msTime(p.At)
			m.audit(a, p.At, asktype.EventQueued, who, detail)
		}
		return nil
	})
}
