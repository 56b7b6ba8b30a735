package webhook_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/webhook"
)

func TestTypeOfMapsTheAuditEvents(t *testing.T) {
	for ev, want := range map[string]string{
		asktype.EventAsked: "ask.created", asktype.EventAnswered: "ask.answered", asktype.EventQueued: "ask.answered late",
		asktype.EventContinued: "ask.continued", asktype.EventWithdrawn: "ask.withdrawn", asktype.EventAbandoned: "ask.withdrawn",
		asktype.EventRuleGranted: "rule.granted", asktype.EventRuleRevoked: "rule.revoked",
		asktype.EventAgentConnected: "agent.connected", asktype.EventAgentRevoked: "agent.revoked", asktype.EventAgentRefused: "agent.refused",
		asktype.EventPosted: "", asktype.EventRefused: "", asktype.EventVoted: "", asktype.EventDelivered: "", "unreadable": "",
	} {
		typ, late, ok := webhook.TypeOf(ev)
		got := typ
		if late {
			got += " late"
		}
		if got != want || ok != (want != "") {
			t.Errorf("TypeOf(%s) = %q, %v; want %q", ev, got, ok, want)
		}
	}
}

// The bodies of an ask's life, built from the trail and the record as the
// dispatcher builds them: what was asked, who answered what, why it ended;
// the same id for the same entry and endpoint, another for another
// endpoint.
func TestBodyOfAnAsksEvents(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory(0, nil)
	at := time.Now().UTC().Truncate(time.Second)
	createAsk(t, st, "b1", at)
	if _, err := st.Settle(ctx, "b1", answerJSON("U0ALICE", "alice", "Yes"), at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	a := &asktype.Ask{CallID: "b2", SessionID: "s", Request: request("b2", strings.Repeat("é", 5000)), Created: at, Deadline: at.Add(time.Minute)}
	if _, _, err := st.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Settle(ctx, "b2", answerJSON("U0BOB", "bob", "No"), at.Add(2*time.Minute)); err == nil {
		t.Fatal("a late answer settled the ask")
	}
	if _, err := st.QueueReply(ctx, "b2", answerJSON("U0BOB", "bob", "No"), at.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	createAsk(t, st, "b3", at)
	if _, err := st.Abort(store.WithActor(ctx, "ops"), "b3", at.Add(time.Minute), asktype.Elsewhere); err != nil {
		t.Fatal(err)
	}
	es, _, err := st.Audit(ctx, asktype.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]webhook.Body{}
	for i := range es {
		rec, _ := st.Get(ctx, es[i].CallID)
		if b, ok := webhook.BodyOf("audit", &es[i], rec); ok {
			bodies[es[i].CallID+" "+b.Type] = b
			var back webhook.Body
			if err := json.Unmarshal(b.Marshal(), &back); err != nil || back.ID != b.ID {
				t.Fatalf("the body does not read back: %v", err)
			}
		}
	}
	created := bodies["b1 ask.created"]
	if created.Seq != 1 || created.Caller != "alice-laptop" || created.Agent == nil || created.Agent.ID != "agent-1" || !created.CreatedAt.Equal(at) ||
		created.Ask == nil || created.Ask.Kind != "question" || created.Ask.Questions[0].Question != "Deploy?" ||
		strings.Join(created.Ask.Questions[0].Options, ",") != "Yes,No" || created.Ask.Answers != nil || created.Detail != "question" {
		t.Errorf("ask.created %+v", created)
	}
	answered := bodies["b1 ask.answered"]
	if answered.Late || answered.Respondent == nil || answered.Respondent.UserID != "U0ALICE" || answered.Respondent.Surface != "slack" ||
		len(answered.Ask.Answers) != 1 || answered.Ask.Answers[0].Selected[0] != "Yes" {
		t.Errorf("ask.answered %+v", answered)
	}
	late := bodies["b2 ask.answered"]
	if !late.Late || late.Respondent.UserName != "bob" || late.Ask.Answers[0].Selected[0] != "No" {
		t.Errorf("the late ask.answered %+v", late)
	}
	if q := late.Ask.Questions[0].Question; len([]rune(q)) != 4000 || !strings.HasSuffix(q, "…") {
		t.Errorf("a long question is not cut to 4000 characters: %d", len([]rune(q)))
	}
	if c := bodies["b2 ask.continued"]; c.Type != "ask.continued" {
		t.Errorf("no ask.continued: %v", bodies)
	}
	w := bodies["b3 ask.withdrawn"]
	if w.Reason != "elsewhere" || !strings.Contains(w.Detail, "terminal") {
		t.Errorf("ask.withdrawn %+v", w)
	}
	b, _ := webhook.BodyOf("audit", &es[0], nil)
	if b.ID != created.ID || b.Ask != nil {
		t.Errorf("an ask past retention: id %s (want %s), ask %+v", b.ID, created.ID, b.Ask)
	}
	if other, _ := webhook.BodyOf("other", &es[0], nil); other.ID == created.ID || !strings.HasPrefix(other.ID, "wh_") {
		t.Errorf("another endpoint's id %q; this one's %q", other.ID, created.ID)
	}
}

func request(id, question string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"callId": id, "agent": map[string]any{"id": "agent-1", "sessionId": "sess-1"},
		"questions": []any{map[string]any{"id": "q1", "question": question, "options": []any{map[string]any{"label": "Yes"}, map[string]any{"label": "No"}}}}})
	return b
}

func answerJSON(user, name, label string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"answers": []any{map[string]any{"id": "q1", "selected": []string{label}}},
		"respondent": map[string]any{"userId": user, "userName": name, "at": time.Now().UTC(), "surface": "slack"}})
	return b
}

// createAsk stores an untimed question asked by alice's laptop at at.
func createAsk(t *testing.T, st store.Store, id string, at time.Time) {
	t.Helper()
	a := &asktype.Ask{CallID: id, SessionID: "sess-1", Caller: "alice-laptop", Kind: "question", AgentID: "agent-1", AgentSession: "sess-1",
		Request: request(id, "Deploy?"), Created: at}
	if _, created, err := st.Create(context.Background(), a); err != nil || !created {
		t.Fatalf("Create(%s): %v %v", id, created, err)
	}
}

// TestBodyCarriesAnEditedAllow: an allow with changes (Edit & allow) says
// which fields changed and names what runs by its SHA-256, not only
// "Allow", and never the value (it is tool input).
func TestBodyCarriesAnEditedAllow(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory(0, nil)
	at := time.Now().UTC().Truncate(time.Second)
	createAsk(t, st, "e1", at)
	s, _ := json.Marshal(map[string]any{"answers": []any{map[string]any{"id": "q1", "selected": []string{"Yes"}, "edited": map[string]string{"command": "ls"}}},
		"respondent": map[string]any{"userId": "U0ALICE", "userName": "alice", "at": at, "surface": "slack"}})
	if _, err := st.Settle(ctx, "e1", s, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	es, _, _ := st.Audit(ctx, asktype.AuditQuery{CallID: "e1"})
	rec, _ := st.Get(ctx, "e1")
	for i := range es {
		if b, ok := webhook.BodyOf("audit", &es[i], rec); ok && b.Type == webhook.AskAnswered {
			if got := b.Ask.Answers[0].Edited["command"]; got != "sha256:"+sum("ls") || !strings.Contains(string(b.Marshal()), `"edited":{"command":"sha256:`) {
				t.Fatalf("body %s", b.Marshal())
			}
			return
		}
	}
	t.Fatal("no ask.answered body")
}
