package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// ExerciseVotes checks the settlement seam's store half (store.Votes):
// votes recorded atomically with the decision, the count the decision saw
// checked, the late path, the audit events, and concurrent voters on two
// replicas (shared: two stores on one state; the same Memory twice).
func ExerciseVotes(t *testing.T, setup func(t *testing.T) store.Store, shared func(t *testing.T) (a, b store.Store)) {
	par := func(t *testing.T) store.Store { t.Parallel(); return setup(t) }
	t.Run("VoteWaitsThenSettlesOnTheCountItSaw", func(t *testing.T) { checkVoteWaitsThenSettles(t, par(t)) })
	t.Run("FirstAnswerWinsIsOneVoteThatSettles", func(t *testing.T) { checkVoteFirstAnswerWins(t, par(t)) })
	t.Run("VoteAtTheDeadlineContinuesAndLateVotesQueueTheReply", func(t *testing.T) { checkVoteLate(t, par(t)) })
	t.Run("VoteOnAnotherStateChangesNothing", func(t *testing.T) { checkVoteWrongState(t, par(t)) })
	t.Run("RefusedVoteKeepsTheAskOpenEverywhere", func(t *testing.T) { checkVoteRefusedKeepsIndexes(t, par(t)) })
	t.Run("VotesAreAudited", func(t *testing.T) { checkVoteAudit(t, par(t)) })
	t.Run("ConcurrentVotersOnTwoReplicasSettleOnce", func(t *testing.T) {
		t.Parallel()
		a, b := shared(t)
		checkVotersSettleOnce(t, a, b)
	})
}

// vote is a vote of user's, as waterfall stores it (a settlement's JSON).
func vote(user string) json.RawMessage { return settlement(user) }

func checkVoteWaitsThenSettles(t *testing.T, s store.Store) {
	ctx := context.Background()
	created := mustCreate(t, s, newAsk("v1"))
	changes, stop := s.Changes("v1")
	defer stop()
	a, err := s.Vote(ctx, "v1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: t0.Add(time.Second), State: asktype.Open})
	if err != nil || a.State != asktype.Open || len(a.Votes) != 1 || a.Version <= created.Version {
		t.Fatalf("a vote that waits: %+v, %v", a, err)
	}
	if v := a.Votes[0]; v.Voter != "U1" || !v.At.Equal(t0.Add(time.Second)) || string(v.Vote) != string(vote("U1")) {
		t.Fatalf("recorded vote = %+v", v)
	}
	waitHint(t, changes)
	// A vote decided on no votes: another landed first, nothing changes.
	moved, err := s.Vote(ctx, "v1", store.VoteParams{Voter: "U2", Vote: vote("U2"), At: t0.Add(2 * time.Second), State: asktype.Open, Seen: 0, Settle: true, Settlement: vote("U2")})
	if !errors.Is(err, store.ErrVotesMoved) || moved == nil || moved.State != asktype.Open || len(moved.Votes) != 1 || moved.Version != a.Version {
		t.Fatalf("a vote on a stale count: %+v, %v; want ErrVotesMoved and the ask as it stands", moved, err)
	}
	done, err := s.Vote(ctx, "v1", store.VoteParams{Voter: "U2", Vote: vote("U2"), At: t0.Add(3 * time.Second), State: asktype.Open, Seen: 1, Settle: true, Settlement: vote("U2")})
	if err != nil || done.State != asktype.Settled || len(done.Votes) != 2 || string(done.Settlement) != string(vote("U2")) || !done.SettledAt.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("the vote that settles: %+v, %v", done, err)
	}
	if got, err := s.Get(ctx, "v1"); err != nil || len(got.Votes) != 2 || got.Votes[0].Voter != "U1" || got.Votes[1].Voter != "U2" {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	late, err := s.Vote(ctx, "v1", store.VoteParams{Voter: "U3", Vote: vote("U3"), At: t0.Add(4 * time.Second), State: asktype.Open, Seen: 2, Settle: true, Settlement: vote("U3")})
	if !errors.Is(err, store.ErrSettled) || string(late.Settlement) != string(vote("U2")) || len(late.Votes) != 2 {
		t.Fatalf("a vote after the settle: %+v, %v; want ErrSettled naming the winner", late, err)
	}
}

func checkVoteFirstAnswerWins(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("f1", time.Minute))
	a, err := s.Vote(ctx, "f1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: t0.Add(time.Second), State: asktype.Open, Settle: true, Settlement: vote("U1")})
	if err != nil || a.State != asktype.Settled || string(a.Settlement) != string(vote("U1")) || len(a.Votes) != 1 {
		t.Fatalf("first answer: %+v, %v", a, err)
	}
	b, err := s.Vote(ctx, "f1", store.VoteParams{Voter: "U2", Vote: vote("U2"), At: t0.Add(2 * time.Second), State: asktype.Open, Settle: true, Settlement: vote("U2")})
	if !errors.Is(err, store.ErrSettled) || string(b.Settlement) != string(vote("U1")) {
		t.Fatalf("second answer: %+v, %v", b, err)
	}
	// Settled: no longer a wait anyone must expire, claim or count as open.
	if due, _ := s.Due(ctx, t0.Add(time.Hour), 10); len(due) != 0 {
		t.Fatalf("Due lists a settled ask: %v", due)
	}
	if c, err := s.Counts(ctx); err != nil || c.Open != 0 || c.TimedOpen != 0 {
		t.Fatalf("counts after the settle: %+v, %v", c, err)
	}
}

func checkVoteLate(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("l1", time.Minute))
	at := t0.Add(time.Minute)
	a, err := s.Vote(ctx, "l1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: at, State: asktype.Open})
	if !errors.Is(err, store.ErrContinued) || a.State != asktype.Continued || len(a.Votes) != 0 {
		t.Fatalf("a vote at the deadline: %+v, %v; want the window closed and no vote", a, err)
	}
	w, err := s.Vote(ctx, "l1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: at, State: asktype.Continued})
	if err != nil || w.State != asktype.Continued || len(w.Votes) != 1 || len(w.Reply) != 0 {
		t.Fatalf("a late vote that waits: %+v, %v", w, err)
	}
	reply := json.RawMessage(`{"id":"reply:l1","answers":[],"respondent":{"userId":"U2","surface":"slack"}}`)
	q, err := s.Vote(ctx, "l1", store.VoteParams{Voter: "U2", Vote: vote("U2"), At: at.Add(time.Second), State: asktype.Continued, Seen: 1, Settle: true, Settlement: reply})
	if err != nil || q.State != asktype.Continued || string(q.Reply) != string(reply) || !q.ReplyAt.Equal(at.Add(time.Second)) || len(q.Votes) != 2 {
		t.Fatalf("the late vote that completes: %+v, %v; want the reply queued", q, err)
	}
	if rs, err := s.Replies(ctx, "s1"); err != nil || len(rs) != 1 || rs[0].CallID != "l1" {
		t.Fatalf("Replies = %v, %v", callIDs(rs), err)
	}
	again, err := s.Vote(ctx, "l1", store.VoteParams{Voter: "U3", Vote: vote("U3"), At: at.Add(2 * time.Second), State: asktype.Continued, Seen: 2, Settle: true, Settlement: reply})
	if !errors.Is(err, store.ErrReplyQueued) || len(again.Votes) != 2 {
		t.Fatalf("a vote once the reply waits: %+v, %v", again, err)
	}
	if done, err := s.AckReply(ctx, "l1", at.Add(time.Hour)); err != nil || done.State != asktype.Settled || string(done.Settlement) != string(reply) {
		t.Fatalf("AckReply: %+v, %v", done, err)
	}
}

func checkVoteWrongState(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := mustCreate(t, s, newAsk("w1"))
	if got, err := s.Vote(ctx, "w1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: t0, State: asktype.Continued, Settle: true, Settlement: vote("U1")}); !errors.Is(err, store.ErrOpen) || got.Version != a.Version || len(got.Votes) != 0 {
		t.Fatalf("a late vote on an open ask: %+v, %v", got, err)
	}
	if _, err := s.Abort(ctx, "w1", t0, asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Vote(ctx, "w1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: t0, State: asktype.Open}); !errors.Is(err, store.ErrAborted) {
		t.Fatalf("a vote on a withdrawn ask: %v", err)
	}
	if _, err := s.Vote(ctx, "nope", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: t0, State: asktype.Open}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a vote on no ask: %v", err)
	}
}

// A refused vote (another landed first) leaves an open timed ask in every
// index an open ask is in: still due, still counted, still claimable.
func checkVoteRefusedKeepsIndexes(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, timed("k1", time.Minute))
	if _, err := s.Vote(ctx, "k1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: t0, State: asktype.Open}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Vote(ctx, "k1", store.VoteParams{Voter: "U2", Vote: vote("U2"), At: t0, State: asktype.Open, Settle: true, Settlement: vote("U2")}); !errors.Is(err, store.ErrVotesMoved) {
		t.Fatalf("want ErrVotesMoved, got %v", err)
	}
	if due, err := s.Due(ctx, t0.Add(time.Hour), 10); err != nil || len(due) != 1 {
		t.Fatalf("Due = %v, %v; the open ask left the deadlines", due, err)
	}
	if c, err := s.Counts(ctx); err != nil || c.Open != 1 || c.TimedOpen != 1 {
		t.Fatalf("Counts = %+v, %v", c, err)
	}
	if u, err := s.Unclaimed(ctx, t0, 10); err != nil || len(u) != 1 {
		t.Fatalf("Unclaimed = %v, %v", u, err)
	}
}

func checkVoteAudit(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newAsk("a1"))
	if _, err := s.Vote(ctx, "a1", store.VoteParams{Voter: "U1", Vote: vote("U1"), At: t0, State: asktype.Open, Detail: "approved; 1 of 2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Vote(ctx, "a1", store.VoteParams{Voter: "U2", Vote: vote("U2"), At: t0.Add(time.Second), State: asktype.Open, Seen: 1, Settle: true, Settlement: vote("U2"), Detail: "approved by U1-name, U2-name"}); err != nil {
		t.Fatal(err)
	}
	var es []asktype.AuditEntry
	for range 100 { // Redis chains outboxes moments after the transition
		if es = Trail(t, s, asktype.AuditQuery{CallID: "a1"}); len(es) >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := fmt.Sprint(events(es)); got != "[a1:asked a1:voted a1:answered]" {
		t.Fatalf("events = %s", got)
	}
	if v := es[1]; v.Respondent == nil || v.Respondent.UserID != "U1" || v.Detail != "approved; 1 of 2" {
		t.Fatalf("voted entry = %+v", v)
	}
	if a := es[2]; a.Respondent == nil || a.Respondent.UserID != "U2" || a.Detail != "approved by U1-name, U2-name" {
		t.Fatalf("answered entry = %+v", a)
	}
}

// checkVotersSettleOnce: twelve voters on two replicas, each deciding on
// the record it read and deciding again when another vote landed first,
// for a count of three: exactly one vote settles, after exactly three
// votes, and every voter learns the outcome.
func checkVotersSettleOnce(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	mustCreate(t, a, newAsk("q1"))
	const need, voters = 3, 12
	var settled, recorded atomic.Int32
	var wg sync.WaitGroup
	for i := range voters {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprint("U", i)
			cur, err := s.Get(ctx, "q1")
			for range 100 {
				if err != nil {
					t.Errorf("%s: %v", user, err)
					return
				}
				if cur.State != asktype.Open {
					return
				}
				seen := len(cur.Votes)
				p := store.VoteParams{Voter: user, Vote: vote(user), At: t0, State: asktype.Open, Seen: seen, Settle: seen+1 >= need}
				if p.Settle {
					p.Settlement = vote(user)
				}
				cur, err = s.Vote(ctx, "q1", p)
				switch {
				case err == nil && p.Settle:
					settled.Add(1)
					return
				case err == nil:
					recorded.Add(1)
					return
				case errors.Is(err, store.ErrVotesMoved), errors.Is(err, store.ErrSettled):
					err = nil // decide again on the ask as it stands
				}
			}
			t.Errorf("%s never got a decision through", user)
		}()
	}
	wg.Wait()
	got, err := b.Get(ctx, "q1")
	if err != nil {
		t.Fatal(err)
	}
	if settled.Load() != 1 || recorded.Load() != need-1 || got.State != asktype.Settled || len(got.Votes) != need {
		t.Fatalf("settled %d times after %d waiting votes; the ask: %s with %d votes", settled.Load(), recorded.Load(), got.State, len(got.Votes))
	}
	seen := map[string]bool{}
	for _, v := range got.Votes {
		if seen[v.Voter] {
			t.Fatalf("%s voted twice: %+v", v.Voter, got.Votes)
		}
		seen[v.Voter] = true
	}
}
