package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

func TestRequestKind(t *testing.T) {
	t.Parallel()
	plan := planRequest("p")
	perm := request("x")
	perm.Questions[0].ID = waterfall.PermissionQuestionID
	for _, c := range []struct {
		req  *waterfall.Request
		want string
	}{{request("q"), waterfall.KindQuestion}, {plan, waterfall.KindPlan}, {perm, waterfall.KindPermission}} {
		if got := c.req.Kind(); got != c.want {
			t.Errorf("%s: Kind = %s, want %s", c.req.CallID, got, c.want)
		}
	}
}

func planRequest(callID string) *waterfall.Request {
	r := request(callID)
	r.Questions[0].Detail = "the plan"
	r.Questions[0].Intent = &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "A"}
	return r
}

// claims takes every ask; answers come through Host.Answer.
var claims = waterfall.AnswererFunc(func(context.Context, *waterfall.Request, waterfall.Next) (waterfall.Settlement, error) {
	return waterfall.Settlement{}, waterfall.ErrClaimed
})

// answers records the time-to-answer observations.
type answers struct{ seen chan string }

func (answers) Transition(string) {}
func (a answers) Answered(kind string, took time.Duration) {
	a.seen <- fmt.Sprintf("%s %s", kind, took)
}

// The Host records the ask's kind and agent with it, and observes how long
// each answer took, once per ask, in window or late.
func TestTimeToAnswerIsObservedOncePerAnsweredAsk(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(time.UnixMilli(1_800_000_000_000))
	seen := make(chan string, 10)
	st := store.NewMemory(0, c)
	h := engine.NewHost(st, claims, engine.HostOptions{Clock: c, Metrics: answers{seen}, Audit: st})
	ctx := context.Background()
	if _, err := h.Open(ctx, planRequest("p1")); err != nil {
		t.Fatal(err)
	}
	a, _ := st.Get(ctx, "p1")
	if a.Kind != waterfall.KindPlan || a.AgentID != "a1" || a.AgentSession != "s1" {
		t.Fatalf("stored ask: kind %q agent %q session %q", a.Kind, a.AgentID, a.AgentSession)
	}
	c.Advance(90 * time.Second)
	if _, err := h.Answer(ctx, "p1", answerA(), waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack}); err != nil {
		t.Fatal(err)
	}
	_, _ = h.Answer(ctx, "p1", answerA(), waterfall.Respondent{UserID: "U2", Surface: waterfall.SurfaceSlack})
	if got := recv(t, seen); got != "plan 1m30s" {
		t.Fatalf("observed %q", got)
	}

	late := request("late")
	late.TimeoutMs = ms(time.Minute)
	if _, err := h.Open(ctx, late); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Minute)
	if _, err := h.Expire(ctx, "late"); err != nil {
		t.Fatal(err)
	}
	if out, err := h.Answer(ctx, "late", answerA(), waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack}); err != nil || !out.Queued {
		t.Fatalf("late answer: %+v %v", out, err)
	}
	if got := recv(t, seen); got != "question 2m0s" {
		t.Fatalf("observed %q", got)
	}
	select {
	case got := <-seen:
		t.Fatalf("observed again: %s", got)
	default:
	}
}

// Refusals go to the trail at most refusalBurst at once and
// refusalsPerMinute after, per refused party; the next one recorded says
// how many were left out.
func TestRefusalsAreRateLimitedPerParty(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(time.UnixMilli(1_800_000_000_000))
	st := store.NewMemory(0, c)
	h := engine.NewHost(st, nil, engine.HostOptions{Clock: c, Audit: st})
	ctx := context.Background()
	for range 25 {
		h.Refused(ctx, waterfall.Refusal{Key: "api:mallory", Caller: "mallory", Why: "agents do not answer"})
	}
	h.Refused(ctx, waterfall.Refusal{Key: "api:ci", Caller: "ci", Why: "agents do not answer"})
	got, _, _ := h.Audit(ctx, asktype.AuditQuery{Limit: 100})
	if len(got) != 11 || got[10].Caller != "ci" {
		t.Fatalf("%d entries recorded (last %+v); want mallory's first 10 and ci's", len(got), got[len(got)-1])
	}
	c.Advance(time.Minute)
	h.Refused(ctx, waterfall.Refusal{Key: "api:mallory", Caller: "mallory", Why: "agents do not answer"})
	got, _, _ = h.Audit(ctx, asktype.AuditQuery{Limit: 100})
	if last := got[len(got)-1]; !strings.Contains(last.Detail, "15 earlier refusals") || last.Event != asktype.EventRefused {
		t.Fatalf("the refusal after the pause: %+v", last)
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_800_000_000_000).UTC()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	alice := &asktype.AuditRespondent{UserID: "U1", UserName: "alice", Surface: "slack"}
	bob := &asktype.AuditRespondent{UserID: "U2", UserName: "bob", Surface: "slack"}
	console := &asktype.AuditRespondent{UserName: "console", Surface: "api"}
	agent := func(id string) *asktype.AuditAgent { return &asktype.AuditAgent{ID: id} }
	es := []asktype.AuditEntry{
		{At: at(-time.Hour), CallID: "old", Event: asktype.EventAsked, Agent: agent("claude")}, // before the window
		{At: at(0), CallID: "a", Event: asktype.EventAsked, Agent: agent("claude")},
		{At: at(time.Minute), CallID: "a", Event: asktype.EventAnswered, Respondent: alice},
		{At: at(0), CallID: "b", Event: asktype.EventAsked, Agent: agent("claude")},
		{At: at(5 * time.Minute), CallID: "b", Event: asktype.EventContinued},
		{At: at(20 * time.Minute), CallID: "b", Event: asktype.EventQueued, Respondent: bob},
		{At: at(0), CallID: "c", Event: asktype.EventAsked, Agent: agent("codex")},
		{At: at(2 * time.Minute), CallID: "c", Event: asktype.EventWithdrawn},
		{At: at(0), CallID: "d", Event: asktype.EventAsked, Agent: agent("codex")},
		{At: at(3 * time.Minute), CallID: "d", Event: asktype.EventAnswered, Respondent: alice},
		{At: at(0), CallID: "e", Event: asktype.EventAsked, Agent: agent("codex")},
		{At: at(time.Second), CallID: "e", Event: asktype.EventRefused, Respondent: bob},
		{At: at(10 * time.Second), CallID: "e", Event: asktype.EventAnswered, Respondent: console},
		{At: at(time.Minute), CallID: "old", Event: asktype.EventAnswered, Respondent: alice},
		{At: at(0), CallID: "open", Event: asktype.EventAsked, Agent: agent("codex")},
		// A standing rule's answer: counted, in no person's tally, not in
		// the time people took.
		{At: at(0), CallID: "r", Event: asktype.EventAsked, Agent: agent("claude")},
		{At: at(time.Millisecond), CallID: "r", Event: asktype.EventAnswered, Respondent: &asktype.AuditRespondent{UserName: "rule 1 by alice", Surface: waterfall.SurfaceRule}},
	}
	s := waterfall.Summarize(es, t0, at(time.Hour))
	if s.Asked != 7 || s.InWindow != 4 || s.ByRule != 1 || s.ByPeople() != 4 || s.Late != 1 || s.Never != 2 {
		t.Fatalf("tally %+v", s.Tally)
	}
	// Answers took 10s, 1m, 3m, 20m: nearest rank p50 = 1m, p90 = 20m.
	if s.P50 != time.Minute || s.P90 != 20*time.Minute {
		t.Errorf("p50 %s p90 %s", s.P50, s.P90)
	}
	// Waited: a 1m, b 5m (its window), c 2m, d 3m, e 10s, open 1h, r 1ms.
	if want := time.Minute + 5*time.Minute + 2*time.Minute + 3*time.Minute + 10*time.Second + time.Hour + time.Millisecond; s.Waited != want {
		t.Errorf("waited %s, want %s", s.Waited, want)
	}
	// Ordered by asks and answers (6 each), then by name.
	if len(s.Agents) != 2 || s.Agents[1].Key != "codex" || s.Agents[1].Asked != 4 || s.Agents[1].Never != 2 || s.Agents[0].Asked != 3 || s.Agents[0].ByRule != 1 {
		t.Errorf("agents %+v", s.Agents)
	}
	a, ok := s.Person("U1")
	if !ok || a.InWindow != 2 || a.Late != 0 || a.P50 != time.Minute || a.P90 != 3*time.Minute || a.Name != "alice" {
		t.Errorf("alice %+v", a)
	}
	if b, _ := s.Person("U2"); b.Late != 1 || b.InWindow != 0 {
		t.Errorf("bob %+v", b)
	}
	if len(s.People) != 3 || s.People[0].Key != "U1" {
		t.Errorf("people %+v", s.People)
	}
}
