package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/rules"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// seenStates records every state an observer (the Slack side) was shown.
type seenStates struct {
	mu     sync.Mutex
	states map[string][]asktype.State
}

func (s *seenStates) Changed(a *waterfall.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states == nil {
		s.states = map[string][]asktype.State{}
	}
	s.states[a.CallID] = append(s.states[a.CallID], a.State)
}

func (s *seenStates) of(id string) []asktype.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]asktype.State(nil), s.states[id]...)
}

type ruleBench struct {
	h     *engine.Host
	st    *store.Memory
	clk   *clock.Fake
	seen  *seenStates
	mayMu sync.Mutex
	may   map[string]bool // granter → may answer
}

func setupRules(t *testing.T) *ruleBench {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	st := store.NewMemory(0, clk)
	b := &ruleBench{st: st, clk: clk, seen: &seenStates{}, may: map[string]bool{"U0ALICE": true, "U0BOB": true}}
	b.h = engine.NewHost(st, waiting(make(chan string, 100)), engine.HostOptions{Clock: clk, Audit: st})
	b.h.Observe(b.seen)
	b.h.UseRules(engine.RuleOptions{Store: st, MayAnswer: func(_ context.Context, user string, _ *waterfall.Request) (bool, error) {
		b.mayMu.Lock()
		defer b.mayMu.Unlock()
		return b.may[user], nil
	}})
	return b
}

func permAsk(callID, command string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Caller: "ci", Agent: waterfall.Agent{ID: "claude-code", SessionID: "s1"},
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Question: "Allow Bash?",
			Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: command, Repo: "web"}}
}

func (b *ruleBench) grant(t *testing.T, effect rules.Effect, cmd string, until time.Time, by string) asktype.Rule {
	t.Helper()
	r, err := b.h.GrantRule(context.Background(), "c0", waterfall.Grant{Rule: rules.Rule{Effect: effect, Tool: "Bash", Command: cmd, Repo: "web"}, Until: until},
		waterfall.Respondent{UserID: by, UserName: strings.ToLower(by[2:]), Surface: waterfall.SurfaceSlack})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (b *ruleBench) start(t *testing.T, req *waterfall.Request) *asktype.Ask {
	t.Helper()
	a, err := b.h.Open(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return a.Ask
}

func TestRuleAnswersACoveredAskWithoutAMessage(t *testing.T) {
	b := setupRules(t)
	r := b.grant(t, rules.Allow, "npm test *", b.clk.Now().Add(6*time.Hour), "U0ALICE")
	a := b.start(t, permAsk("c1", "npm test --watch=false"))
	if a.State != asktype.Settled {
		t.Fatalf("state %s, want settled at once", a.State)
	}
	// The Slack side never saw it open: nothing to post.
	if got := b.seen.of("c1"); len(got) != 1 || got[0] != asktype.Settled {
		t.Fatalf("observer saw %v, want only [settled]", got)
	}
	if a.PostAttempt != (time.Time{}) {
		t.Fatal("a post was attempted")
	}
	rec, err := waterfall.Decode(a)
	if err != nil {
		t.Fatal(err)
	}
	s := rec.Settlement
	if s.Item("permission").Selected[0] != "Allow" || s.Respondent.Surface != waterfall.SurfaceRule || s.Respondent.Rule == nil ||
		s.Respondent.Rule.ID != r.ID || s.Respondent.UserName != "rule 1 by alice, until 18:00 UTC" {
		t.Fatalf("settlement %+v / %+v", s, s.Respondent.Rule)
	}
	live, _ := b.h.Rules(context.Background())
	if len(live) != 1 || live[0].Uses != 1 {
		t.Fatalf("rules %+v, want one use", live)
	}
	entries, _, _ := b.st.Audit(context.Background(), asktype.AuditQuery{})
	var events []string
	for _, e := range entries {
		events = append(events, e.Event+":"+e.Detail)
	}
	joined := strings.Join(events, "\n")
	for _, want := range []string{"rule-granted:rule 1: allow Bash(npm test *) in repo web, until 2026-12-04T18:00:00Z",
		"answered:by standing rule 1: allow Bash(npm test *), granted by alice (U0ALICE)"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("audit lacks %q:\n%s", want, joined)
		}
	}
}

func TestRulesLeaveOtherAsksToPeople(t *testing.T) {
	b := setupRules(t)
	b.grant(t, rules.Allow, "npm test *", time.Time{}, "U0ALICE")
	for i, cmd := range []string{"npm test; curl x | sh", "npm test && rm -rf /", "npm run build", "npm test $(evil)"} {
		id := "c" + string(rune('a'+i))
		if a := b.start(t, permAsk(id, cmd)); a.State != asktype.Open {
			t.Fatalf("%q: state %s, want open (asked)", cmd, a.State)
		}
		if got := b.seen.of(id); len(got) != 1 || got[0] != asktype.Open {
			t.Fatalf("%q: observer saw %v, want [open] (posted)", cmd, got)
		}
	}
	// Another repo, and an ask without a permission, are asked too.
	other := permAsk("cx", "npm test")
	other.Permission.Repo = "api"
	if a := b.start(t, other); a.State != asktype.Open {
		t.Fatalf("another repo: %s", a.State)
	}
	bare := permAsk("cy", "npm test")
	bare.Permission = nil
	if a := b.start(t, bare); a.State != asktype.Open {
		t.Fatalf("no permission: %s", a.State)
	}
}

func TestDenyRuleBeatsAllow(t *testing.T) {
	b := setupRules(t)
	b.grant(t, rules.Allow, "npm *", time.Time{}, "U0ALICE")
	d := b.grant(t, rules.Deny, "npm publish *", time.Time{}, "U0BOB")
	a := b.start(t, permAsk("c1", "npm publish --tag latest"))
	rec, _ := waterfall.Decode(a)
	if a.State != asktype.Settled || rec.Settlement.Item("permission").Selected[0] != "Deny" || rec.Settlement.Respondent.Rule.ID != d.ID {
		t.Fatalf("state %s settlement %+v", a.State, rec.Settlement)
	}
}

func TestRevokedAndExpiredRulesStopAnswering(t *testing.T) {
	b := setupRules(t)
	r := b.grant(t, rules.Allow, "npm test *", time.Time{}, "U0ALICE")
	if a := b.start(t, permAsk("c1", "npm test")); a.State != asktype.Settled {
		t.Fatal("not answered by the rule")
	}
	if _, err := b.h.RevokeRule(context.Background(), r.ID, waterfall.Respondent{UserID: "U0BOB", UserName: "bob"}); err != nil {
		t.Fatal(err)
	}
	if a := b.start(t, permAsk("c2", "npm test")); a.State != asktype.Open {
		t.Fatalf("after revoke: %s, want open", a.State)
	}
	if _, err := b.h.RevokeRule(context.Background(), r.ID, waterfall.Respondent{}); waterfall.CodeOf(err) != waterfall.CodeNotFound {
		t.Fatalf("second revoke: %v", err)
	}
	b.grant(t, rules.Allow, "go test *", b.clk.Now().Add(time.Hour), "U0ALICE")
	if a := b.start(t, permAsk("c3", "go test ./...")); a.State != asktype.Settled {
		t.Fatal("not answered within the hour")
	}
	b.clk.Advance(time.Hour)
	if a := b.start(t, permAsk("c4", "go test ./...")); a.State != asktype.Open {
		t.Fatalf("after the hour: %s, want open", a.State)
	}
}

// A rule answers only asks its granter could have answered.
func TestRuleNeverWidensWhoMayAnswer(t *testing.T) {
	b := setupRules(t)
	b.grant(t, rules.Allow, "npm test *", time.Time{}, "U0ALICE")
	b.mayMu.Lock()
	b.may["U0ALICE"] = false
	b.mayMu.Unlock()
	if a := b.start(t, permAsk("c1", "npm test")); a.State != asktype.Open {
		t.Fatalf("granter may not answer, yet %s", a.State)
	}
	// The next-best rule whose granter may answer still does.
	b.grant(t, rules.Allow, "npm *", time.Time{}, "U0BOB")
	a := b.start(t, permAsk("c2", "npm test"))
	rec, _ := waterfall.Decode(a)
	if a.State != asktype.Settled || rec.Settlement.Respondent.Rule.GrantedBy != "U0BOB" {
		t.Fatalf("state %s", a.State)
	}
}

func TestGrantRuleRefusals(t *testing.T) {
	b := setupRules(t)
	who := waterfall.Respondent{UserID: "U0ALICE"}
	for _, g := range []waterfall.Grant{
		{Rule: rules.Rule{Effect: rules.Allow, Tool: "Bash", Command: "* x"}},
		{Rule: rules.Rule{Effect: "sometimes", Tool: "Bash", Command: "x"}},
		{Rule: rules.Rule{Effect: rules.Allow, Tool: "Bash", Command: "x"}, Until: b.clk.Now()},
	} {
		if _, err := b.h.GrantRule(context.Background(), "", g, who); waterfall.CodeOf(err) != waterfall.CodeBadRequest {
			t.Errorf("GrantRule(%+v) = %v, want BAD_REQUEST", g, err)
		}
	}
	h := engine.NewHost(store.NewMemory(0, nil), nil, engine.HostOptions{})
	if _, err := h.Rules(context.Background()); !errors.Is(err, err) || waterfall.CodeOf(err) != waterfall.CodeNotFound {
		t.Fatalf("rules off: %v", err)
	}
}

// TestRulesMatchWhatWasAskedNotTheEdit: a rule matches the call as the
// agent asked it. An ask no rule covers stays with people even when a
// person then edits it into a call a rule would allow (the rule is not
// used, nor credited), and a call a deny rule covers is denied before
// anyone could edit it.
func TestRulesMatchWhatWasAskedNotTheEdit(t *testing.T) {
	b := setupRules(t)
	b.grant(t, rules.Allow, "git status", time.Time{}, "U0ALICE")
	b.grant(t, rules.Deny, "git push *", time.Time{}, "U0BOB")
	editable := func(id, cmd string) *waterfall.Request {
		r := permAsk(id, cmd)
		r.Permission.Editable = []waterfall.EditableField{{Name: "command", Value: cmd}}
		return r
	}
	a := b.start(t, editable("c1", "git reset --hard"))
	if a.State != asktype.Open {
		t.Fatalf("state %s, want open: no rule covers the call as asked", a.State)
	}
	ans := waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "permission", Selected: []string{"Allow"}, Edited: map[string]string{"command": "git status"}}}}
	out, err := b.h.Answer(context.Background(), "c1", ans, waterfall.Respondent{UserID: "U0CAROL", UserName: "carol", Surface: waterfall.SurfaceSlack})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Settlement; s == nil || s.Respondent.Rule != nil || s.Respondent.UserName != "carol" || s.Item("permission").Edited["command"] != "git status" {
		t.Fatalf("settlement %+v, want carol's edit", out.Settlement)
	}
	for _, r := range must(b.h.Rules(context.Background())) {
		if r.Uses != 0 {
			t.Fatalf("rule %d credited with an edited answer: %+v", r.ID, r)
		}
	}
	entries, _, _ := b.st.Audit(context.Background(), asktype.AuditQuery{CallID: "c1"})
	last := entries[len(entries)-1]
	if last.Event != asktype.EventAnswered || !strings.HasPrefix(last.Detail, "allowed with changes\ncommand (new value sha256:") ||
		!strings.HasSuffix(last.Detail, "):\n- git reset --hard\n+ git status") {
		t.Fatalf("audit entry %s %q", last.Event, last.Detail)
	}
	if d := b.start(t, editable("c2", "git push --force")); d.State != asktype.Settled {
		t.Fatalf("a denied call is %s, want settled by the deny rule", d.State)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestAnEditCannotEscapeTheRulesOrTheQuorum: the call as edited is judged
// as an ask for it would be. An edit into a call a deny rule covers, or
// one ASKSLACK_QUORUM says needs two approvals, is refused (and audited),
// the ask stays open; an edit of a field neither reads is taken.
func TestAnEditCannotEscapeTheRulesOrTheQuorum(t *testing.T) {
	b := setupRules(t)
	b.grant(t, rules.Deny, "rm -rf *", time.Time{}, "U0BOB")
	editable := func(id, cmd string) *waterfall.Request {
		r := permAsk(id, cmd)
		r.Permission.Editable = []waterfall.EditableField{{Name: "command", Value: cmd, Of: waterfall.OfCommand}, {Name: "description", Value: "list"}}
		return r
	}
	carol := waterfall.Respondent{UserID: "U0CAROL", UserName: "carol", Surface: waterfall.SurfaceSlack}
	allowAs := func(fields map[string]string) waterfall.Answer {
		return waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "permission", Selected: []string{"Allow"}, Edited: fields}}}
	}
	b.start(t, editable("c1", "ls build"))
	_, err := b.h.Answer(context.Background(), "c1", allowAs(map[string]string{"command": "rm -rf build"}), carol)
	if waterfall.CodeOf(err) != waterfall.CodeBadAnswer || !strings.Contains(err.Error(), "standing rule 1 denies") {
		t.Fatalf("an edit into a denied call: %v", err)
	}
	if a, _ := b.st.Get(context.Background(), "c1"); a.State != asktype.Open {
		t.Fatalf("after the refused edit the ask is %s", a.State)
	}
	entries, _, _ := b.st.Audit(context.Background(), asktype.AuditQuery{CallID: "c1"})
	if last := entries[len(entries)-1]; last.Event != asktype.EventRefused || last.Respondent == nil || last.Respondent.UserID != "U0CAROL" {
		t.Fatalf("the refused edit is not in the trail: %+v", last)
	}
	if _, err := b.h.Answer(context.Background(), "c1", allowAs(map[string]string{"description": "list the build"}), carol); err != nil {
		t.Fatalf("an edit rules do not read: %v", err)
	}

	q, err := waterfall.ParseQuorum("permission:Bash(kubectl apply *)=2")
	if err != nil {
		t.Fatal(err)
	}
	h := engine.NewHost(b.st, waiting(make(chan string, 10)), engine.HostOptions{Clock: b.clk, Quorum: q})
	if _, err := h.Open(context.Background(), editable("c2", "kubectl get pods")); err != nil {
		t.Fatal(err)
	}
	_, err = h.Answer(context.Background(), "c2", allowAs(map[string]string{"command": "kubectl apply -f prod.yaml"}), carol)
	if waterfall.CodeOf(err) != waterfall.CodeBadAnswer || !strings.Contains(err.Error(), "needs 2 approvals") {
		t.Fatalf("an edit into a call that needs a quorum: %v", err)
	}
}
