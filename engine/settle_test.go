package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// twoPeople is a test policy: two different people must answer; the
// second one's answer settles. The same person again is refused.
type twoPeople struct{}

func (twoPeople) Decide(_ *waterfall.Record, votes []waterfall.Ballot, s waterfall.Settlement) waterfall.Decision {
	for _, v := range votes {
		if v.Voter == waterfall.VoterOf(s.Respondent) {
			return waterfall.Decision{Refuse: waterfall.Errorf(waterfall.CodeForbidden, "you already answered")}
		}
	}
	if len(votes)+1 < 2 {
		return waterfall.Decision{Detail: "1 of 2"}
	}
	return waterfall.Decision{Settle: true, Settlement: s}
}

// staleStore serves Current from a snapshot taken once, as a replica whose
// change feed has not announced another replica's vote yet.
type staleStore struct {
	*store.Memory
	mu   sync.Mutex
	snap *asktype.Ask
}

func (s *staleStore) Current(ctx context.Context, callID string) (*asktype.Ask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil {
		return s.snap, nil
	}
	return s.Memory.Current(ctx, callID)
}

func slackUser(id string) waterfall.Respondent {
	return waterfall.Respondent{UserID: id, UserName: id + "-name", Surface: waterfall.SurfaceSlack}
}

// The seam: a policy's "record a vote and wait" records it, its refusal
// changes nothing and is audited, its "settle" settles with the votes
// kept, and a vote after that is ALREADY_SETTLED naming the winner.
func TestPolicyVotesWaitRefuseSettle(t *testing.T) {
	t.Parallel()
	st := store.NewMemory(0, nil)
	h := engine.NewHost(st, waiting(make(chan string, 4)), engine.HostOptions{Policy: twoPeople{}, Audit: st})
	ctx := context.Background()
	if _, err := h.Open(ctx, request("c1")); err != nil {
		t.Fatal(err)
	}
	out, err := h.Answer(ctx, "c1", answerA(), slackUser("U1"))
	if err != nil || !out.Voted || out.Settlement != nil || out.Record.State != asktype.Open || len(out.Record.Votes) != 1 {
		t.Fatalf("first vote: %+v, %v", out, err)
	}
	again, err := h.Answer(ctx, "c1", answerA(), slackUser("U1"))
	if waterfall.CodeOf(err) != waterfall.CodeForbidden || again.Record == nil || len(again.Record.Votes) != 1 {
		t.Fatalf("the same person again: %+v, %v", again, err)
	}
	done, err := h.Answer(ctx, "c1", answerA(), slackUser("U2"))
	if err != nil || done.Voted || done.Record.State != asktype.Settled || done.Settlement.Respondent.UserID != "U2" {
		t.Fatalf("second person: %+v, %v", done, err)
	}
	r, err := h.Get(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	votes, err := waterfall.Ballots(r.Ask)
	if err != nil || len(votes) != 2 || votes[0].Respondent.UserID != "U1" || votes[1].Voter != "slack:U2" {
		t.Fatalf("votes kept: %+v, %v", votes, err)
	}
	late, err := h.Answer(ctx, "c1", answerA(), slackUser("U3"))
	if !errors.Is(err, waterfall.ErrAlreadySettled) || late.Settlement.Respondent.UserID != "U2" {
		t.Fatalf("a vote after the settle: %+v, %v", late, err)
	}
	es, _, err := st.Audit(ctx, asktype.AuditQuery{CallID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Event+":"+e.Detail)
	}
	want := []string{"asked:question", "voted:1 of 2", "refused:you already answered", "answered:"}
	if len(got) != len(want) {
		t.Fatalf("audit = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("audit = %q, want %q", got, want)
		}
	}
}

// A decision made on a stale record (another replica's vote not seen yet)
// is refused by the store and made again on the fresh record.
func TestPolicyDecidesAgainWhenAnotherVoteLandedFirst(t *testing.T) {
	t.Parallel()
	mem := store.NewMemory(0, nil)
	st := &staleStore{Memory: mem}
	h := engine.NewHost(st, waiting(make(chan string, 4)), engine.HostOptions{Policy: twoPeople{}})
	other := engine.NewHost(mem, nil, engine.HostOptions{Policy: twoPeople{}})
	ctx := context.Background()
	a, err := h.Open(ctx, request("c1"))
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.snap = a.Ask // this replica will decide on a record with no votes
	st.mu.Unlock()
	if out, err := other.Answer(ctx, "c1", answerA(), slackUser("U1")); err != nil || !out.Voted {
		t.Fatalf("the other replica's vote: %+v, %v", out, err)
	}
	out, err := h.Answer(ctx, "c1", answerA(), slackUser("U2"))
	if err != nil || out.Record.State != asktype.Settled || len(out.Record.Votes) != 2 {
		t.Fatalf("decided on a stale record: %+v, %v; want the store to refuse it and the host to decide again", out, err)
	}
	// And the same person on a stale record is refused once the fresh
	// record shows their vote, not counted twice.
	b, _ := h.Open(ctx, request("c2"))
	st.mu.Lock()
	st.snap = b.Ask
	st.mu.Unlock()
	if _, err := other.Answer(ctx, "c2", answerA(), slackUser("U1")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Answer(ctx, "c2", answerA(), slackUser("U1")); waterfall.CodeOf(err) != waterfall.CodeForbidden {
		t.Fatalf("the same person through a stale replica: %v", err)
	}
	if cur, _ := mem.Get(ctx, "c2"); cur.State != asktype.Open || len(cur.Votes) != 1 {
		t.Fatalf("c2 = %s with %d votes", cur.State, len(cur.Votes))
	}
}

// A vote at the deadline closes the window and counts as a late vote.
func TestPolicyLateVoteCountsOnTheContinuedAsk(t *testing.T) {
	t.Parallel()
	st := store.NewMemory(0, nil)
	h := engine.NewHost(st, waiting(make(chan string, 4)), engine.HostOptions{Policy: twoPeople{}})
	ctx := context.Background()
	req := request("c1")
	req.TimeoutMs = ms(time.Minute)
	a, err := h.Open(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	late := slackUser("U1")
	late.At = a.Deadline
	out, err := h.Answer(ctx, "c1", answerA(), late)
	if err != nil || !out.Voted || out.Record.State != asktype.Continued || len(out.Record.Votes) != 1 {
		t.Fatalf("a vote at the deadline: %+v, %v", out, err)
	}
	second := slackUser("U2")
	second.At = a.Deadline.Add(time.Second)
	out, err = h.Answer(ctx, "c1", answerA(), second)
	if err != nil || !out.Queued || out.Record.Reply == nil {
		t.Fatalf("the late vote that completes: %+v, %v; want the reply queued", out, err)
	}
	msgs, err := h.Messages(ctx, "s1", 0)
	if err != nil || len(msgs) != 1 || msgs[0].Respondent.UserID != "U2" {
		t.Fatalf("queued for the agent: %+v, %v", msgs, err)
	}
}
