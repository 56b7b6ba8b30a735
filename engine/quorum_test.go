package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

func planAsk(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a1", SessionID: "s1"}, Questions: []waterfall.Question{{
		ID: "plan", Question: "Approve this plan?", Detail: "1. Migrate.\n2. Deploy.", Options: []waterfall.Option{{Label: "Approve"}, {Label: "Keep planning"}},
		Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
	}}}
}

func permissionRequest(callID, tool string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a1", SessionID: "s1"}, Questions: []waterfall.Question{{
		ID: waterfall.PermissionQuestionID, Header: tool, Question: "Allow it?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}},
	}}}
}

func pick(id, label, custom string) waterfall.Answer {
	sel := []string{}
	if label != "" {
		sel = []string{label}
	}
	return waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: id, Selected: sel, Custom: custom}}}
}

func TestParseQuorum(t *testing.T) {
	c, err := waterfall.ParseQuorum("plan=2, permission:Bash(kubectl apply *)=2,permission:Bash(terraform apply*)=3,permission=1,permission:Write=2")
	if err != nil {
		t.Fatal(err)
	}
	if c.Plan != 2 || c.Permission != 1 || len(c.Tools) != 3 || c.Tools[0] != (waterfall.ToolQuorum{Tool: "Bash", Pattern: "kubectl apply *", N: 2}) ||
		c.Tools[2] != (waterfall.ToolQuorum{Tool: "Write", N: 2}) {
		t.Fatalf("parsed %+v", c)
	}
	for _, bad := range []string{"plan", "plan=0", "plan=11", "question=2", "plan:Bash=2", "permission:Bash(=2", "permission:Ba sh=2", "plan=two"} {
		if _, err := waterfall.ParseQuorum(bad); err == nil || !strings.Contains(err.Error(), "ASKSLACK_QUORUM") {
			t.Errorf("ParseQuorum(%q) = %v, want an error naming the variable", bad, err)
		}
	}
}

func TestRequiredApprovals(t *testing.T) {
	c, _ := waterfall.ParseQuorum("plan=2,permission:Bash(kubectl apply *)=3,permission:Write=2")
	raised := planAsk("p")
	raised.Approvals = 3
	lower := planAsk("p")
	lower.Approvals = 1
	for _, tc := range []struct {
		name string
		req  *waterfall.Request
		want int
	}{
		{"a plan takes the configured floor", planAsk("p"), 2},
		{"an ask raises it", raised, 3},
		{"never lowers it", lower, 2},
		{"a question takes the first answer", request("q"), 1},
		{"a tool with a command pattern: the command is unknown, so it counts", permissionRequest("x", "Bash"), 3},
		{"a whole tool", permissionRequest("x", "Write"), 2},
		{"another tool", permissionRequest("x", "Read"), 1},
	} {
		if got := waterfall.RequiredApprovals(tc.req, c); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestQuorumFieldsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		mod  func(r *waterfall.Request)
		base func() *waterfall.Request
		want string
	}{
		{func(r *waterfall.Request) { r.Approvals = 2 }, func() *waterfall.Request { return request("q") }, "plans and tool permissions only"},
		{func(r *waterfall.Request) { r.Approvals = 11 }, func() *waterfall.Request { return planAsk("p") }, "approvals must be"},
		{func(r *waterfall.Request) { r.Approvals = -1 }, func() *waterfall.Request { return planAsk("p") }, "approvals must be"},
		{func(r *waterfall.Request) { r.Approvers = []string{"<!channel>"} }, func() *waterfall.Request { return planAsk("p") }, "Slack user ids"},
		{func(r *waterfall.Request) { r.Approvers = []string{"alice"} }, func() *waterfall.Request { return planAsk("p") }, "Slack user ids"},
		{func(r *waterfall.Request) { r.Approvers = make([]string, 51) }, func() *waterfall.Request { return planAsk("p") }, "at most 50"},
	} {
		r := tc.base()
		tc.mod(r)
		err := waterfall.Validate(r)
		if waterfall.CodeOf(err) != waterfall.CodeBadRequest || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want BAD_REQUEST saying %q", r, err, tc.want)
		}
	}
	ok := planAsk("p")
	ok.Approvals, ok.Approvers = 2, []string{"U0ALICE", "S0OPS"}
	if err := waterfall.Validate(ok); err != nil {
		t.Fatal(err)
	}
}

func quorumHost(t *testing.T, cfg string) (*engine.Host, *store.Memory) {
	t.Helper()
	t.Parallel()
	c, err := waterfall.ParseQuorum(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory(0, nil)
	return engine.NewHost(st, waiting(make(chan string, 8)), engine.HostOptions{Policy: waterfall.QuorumPolicy{}, Quorum: c, Audit: st}), st
}

// Two approvals settle a plan with quorum 2; the same person twice counts
// once; every approver reaches the agent, the last one as the respondent.
func TestQuorumTwoApprovalsSettleOnce(t *testing.T) {
	h, _ := quorumHost(t, "plan=2")
	ctx := context.Background()
	a, err := h.Open(ctx, planAsk("p1"))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := waterfall.DecodeRequest(a.Ask); r.Quorum != 2 {
		t.Fatalf("stored quorum %d, want 2", r.Quorum)
	}
	out, err := h.Answer(ctx, "p1", pick("plan", "Approve", ""), slackUser("U1"))
	if err != nil || !out.Voted {
		t.Fatalf("first approval: %+v, %v", out, err)
	}
	rec, _ := h.Get(ctx, "p1")
	if v := waterfall.VotesOf(rec); v.Need != 2 || len(v.Approved) != 1 || v.Missing() != 1 {
		t.Fatalf("votes after one approval: %+v", v)
	}
	if _, err := h.Answer(ctx, "p1", pick("plan", "Approve", ""), slackUser("U1")); waterfall.CodeOf(err) != waterfall.CodeForbidden || !strings.Contains(err.Error(), "already approved") {
		t.Fatalf("the same person twice: %v", err)
	}
	done, err := h.Answer(ctx, "p1", pick("plan", "Approve", ""), slackUser("U2"))
	if err != nil || done.Record.State != asktype.Settled {
		t.Fatalf("second approval: %+v, %v", done, err)
	}
	s := done.Settlement
	if s.Respondent.UserID != "U2" || len(s.Approvers) != 2 || s.Approvers[0].UserID != "U1" || waterfall.ApproverNames(s) != "U1-name and U2-name" {
		t.Fatalf("settlement: %+v", s)
	}
	if _, err := h.Answer(ctx, "p1", pick("plan", "Approve", ""), slackUser("U3")); waterfall.CodeOf(err) != waterfall.CodeAlreadySettled {
		t.Fatalf("a late vote: %v", err)
	}
}

// Any decline settles at once, declined, with the decliner's reason.
func TestQuorumOneDeclineEndsIt(t *testing.T) {
	h, _ := quorumHost(t, "plan=3")
	ctx := context.Background()
	if _, err := h.Open(ctx, planAsk("p1")); err != nil {
		t.Fatal(err)
	}
	if out, err := h.Answer(ctx, "p1", pick("plan", "Approve", ""), slackUser("U1")); err != nil || !out.Voted {
		t.Fatalf("approval: %+v, %v", out, err)
	}
	out, err := h.Answer(ctx, "p1", pick("plan", "", "Split step 2 first."), slackUser("U2"))
	if err != nil || out.Record.State != asktype.Settled || out.Settlement.Respondent.UserID != "U2" || len(out.Settlement.Approvers) != 0 {
		t.Fatalf("decline: %+v, %v", out, err)
	}
	rec, _ := h.Get(ctx, "p1")
	if waterfall.Approves(rec.Request, rec.Settlement.Answer) || rec.Settlement.Answers[0].Custom != "Split step 2 first." {
		t.Fatalf("settled with %+v, want the decline and its reason", rec.Settlement)
	}
}

// Approvers narrow who counts: someone else, and an answer surface, are
// refused; an ask's own raise works without any configuration.
func TestQuorumApproversNarrowWhoCounts(t *testing.T) {
	h, _ := quorumHost(t, "")
	ctx := context.Background()
	req := permissionRequest("x1", "Bash")
	req.Approvals, req.Approvers = 2, []string{"U0ONE", "U0TWO"}
	if _, err := h.Open(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Answer(ctx, "x1", pick("permission", "Allow", ""), slackUser("U0NINE")); waterfall.CodeOf(err) != waterfall.CodeForbidden {
		t.Fatalf("a non-approver: %v", err)
	}
	api := waterfall.Respondent{Surface: waterfall.SurfaceAPI, UserName: "console", Claim: &waterfall.Claimant{UserID: "U0ONE"}}
	if _, err := h.Answer(ctx, "x1", pick("permission", "Allow", ""), api); waterfall.CodeOf(err) != waterfall.CodeForbidden {
		t.Fatalf("an answer surface claiming an approver: %v", err)
	}
	if out, err := h.Answer(ctx, "x1", pick("permission", "Allow", ""), slackUser("U0ONE")); err != nil || !out.Voted {
		t.Fatalf("approver 1: %+v, %v", out, err)
	}
	rec, _ := h.Get(ctx, "x1")
	if w := waterfall.VotesOf(rec).Waiting(); len(w) != 1 || w[0] != "U0TWO" {
		t.Fatalf("waiting for %v, want [U0TWO]", w)
	}
	// The same person signed in on the answer page is the same voter…
	web := waterfall.Respondent{Surface: waterfall.SurfaceWeb, UserID: "U0ONE", UserName: "one"}
	if _, err := h.Answer(ctx, "x1", pick("permission", "Allow", ""), web); waterfall.CodeOf(err) != waterfall.CodeForbidden {
		t.Fatalf("approver 1 again, from the browser: %v", err)
	}
	// …and a named approver there counts as in Slack.
	web.UserID = "U0TWO"
	if out, err := h.Answer(ctx, "x1", pick("permission", "Allow", ""), web); err != nil || out.Record.State != asktype.Settled {
		t.Fatalf("approver 2, from the browser: %+v, %v", out, err)
	}
}

// Timed: a vote in the window counts; the window closes with too few and
// the ask continues; a late vote completes the count and only then is
// the answer queued for the agent.
func TestQuorumTimedWindowClosesWithTooFew(t *testing.T) {
	h, _ := quorumHost(t, "plan=3")
	ctx := context.Background()
	req := planAsk("p1")
	req.TimeoutMs = ms(time.Minute)
	a, err := h.Open(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	in := slackUser("U1")
	in.At = a.Created.Add(time.Second)
	if out, err := h.Answer(ctx, "p1", pick("plan", "Approve", ""), in); err != nil || !out.Voted || out.Record.State != asktype.Open {
		t.Fatalf("in the window: %+v, %v", out, err)
	}
	// The second approval comes after the window: it closes it, and counts.
	second := slackUser("U2")
	second.At = a.Deadline.Add(time.Second)
	out, err := h.Answer(ctx, "p1", pick("plan", "Approve", ""), second)
	if err != nil || !out.Voted || out.Record.State != asktype.Continued || len(out.Record.Votes) != 2 {
		t.Fatalf("after the window, too few: %+v, %v", out, err)
	}
	if msgs, _ := h.Messages(ctx, "s1", 0); len(msgs) != 0 {
		t.Fatalf("queued with two approvals of three: %+v", msgs)
	}
	third := slackUser("U3")
	third.At = a.Deadline.Add(time.Minute)
	out, err = h.Answer(ctx, "p1", pick("plan", "Approve", ""), third)
	if err != nil || !out.Queued {
		t.Fatalf("the late vote that completes: %+v, %v", out, err)
	}
	msgs, err := h.Messages(ctx, "s1", 0)
	if err != nil || len(msgs) != 1 || len(msgs[0].Approvers) != 3 || msgs[0].Respondent.UserID != "U3" {
		t.Fatalf("queued: %+v, %v", msgs, err)
	}
}
