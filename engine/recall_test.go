package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

type memoryBench struct {
	h   *engine.Host
	st  *store.Memory
	clk *clock.Fake
}

func setupMemory(t *testing.T, notes store.Notes) *memoryBench {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	st := store.NewMemory(0, clk)
	h := engine.NewHost(st, waiting(make(chan string, 100)), engine.HostOptions{Clock: clk})
	if notes == nil {
		notes = st
	}
	h.UseMemory(engine.MemoryOptions{Notes: notes, For: 7 * 24 * time.Hour})
	return &memoryBench{h: h, st: st, clk: clk}
}

// open stores req and returns its Recall as stored.
func (b *memoryBench) open(t *testing.T, req *waterfall.Request) []waterfall.Recall {
	t.Helper()
	r, err := b.h.Open(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return r.Request.Recall
}

func (b *memoryBench) answer(t *testing.T, callID string, it waterfall.AnswerItem, who waterfall.Respondent) {
	t.Helper()
	if _, err := b.h.Answer(context.Background(), callID, waterfall.Answer{Answers: []waterfall.AnswerItem{it}}, who); err != nil {
		t.Fatal(err)
	}
}

var aliceInSlack = waterfall.Respondent{UserID: "U0ALICE", UserName: "alice", Surface: waterfall.SurfaceSlack}

func dbQuestion(callID string) *waterfall.Request {
	r := request(callID)
	r.Questions[0].Question, r.Questions[0].Options = "Which database?", []waterfall.Option{{Label: "Postgres"}, {Label: "SQLite"}}
	return r
}

// TestAnswerMemory: the same question from the same caller and agent
// recalls who chose what last time (options in any order); another caller,
// another agent, other options or other text recall nothing; a later
// answer replaces the memory, which lapses after its time.
func TestAnswerMemory(t *testing.T) {
	b := setupMemory(t, nil)
	if rc := b.open(t, dbQuestion("c1")); rc != nil {
		t.Fatalf("a first ask recalls %+v", rc)
	}
	b.answer(t, "c1", waterfall.AnswerItem{ID: "q1", Selected: []string{"SQLite"}}, aliceInSlack)
	b.clk.Advance(48 * time.Hour)

	again := dbQuestion("c2")
	again.Questions[0].Options = []waterfall.Option{{Label: "SQLite"}, {Label: "Postgres"}} // another order
	rc := b.open(t, again)
	if len(rc) != 1 || rc[0].Question != "q1" || rc[0].By != "alice" || rc[0].Selected[0] != "SQLite" || !rc[0].At.Equal(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("recall = %+v, want alice's SQLite two days ago", rc)
	}
	for name, mod := range map[string]func(r *waterfall.Request){
		"another caller": func(r *waterfall.Request) { r.Caller = "ci" },
		"another agent":  func(r *waterfall.Request) { r.Agent.ID = "other" },
		"other text":     func(r *waterfall.Request) { r.Questions[0].Question = "Which store?" },
		"another option": func(r *waterfall.Request) {
			r.Questions[0].Options = append(r.Questions[0].Options, waterfall.Option{Label: "Redis"})
		},
		"now multiselect": func(r *waterfall.Request) { r.Questions[0].MultiSelect = true },
		"a new meaning":   func(r *waterfall.Request) { r.Questions[0].Options[1].Description = "now in production" },
		"another detail":  func(r *waterfall.Request) { r.Questions[0].Detail = "for the EU region" },
		"another channel": func(r *waterfall.Request) { r.Channel = "C0PUBLIC" },
	} {
		r := dbQuestion("x-" + strings.ReplaceAll(name, " ", "-"))
		mod(r)
		if rc := b.open(t, r); rc != nil {
			t.Errorf("%s: recalls %+v", name, rc)
		}
	}
	// bob answers c2 otherwise: the memory is his now.
	b.answer(t, "c2", waterfall.AnswerItem{ID: "q1", Selected: []string{"Postgres"}}, waterfall.Respondent{UserName: "console", Surface: waterfall.SurfaceAPI,
		Claim: &waterfall.Claimant{UserName: "bob"}})
	if rc := b.open(t, dbQuestion("c3")); len(rc) != 1 || rc[0].By != "bob" || rc[0].Via != "console" || rc[0].Selected[0] != "Postgres" {
		t.Fatalf("recall = %+v, want bob's Postgres", rc)
	}
	b.clk.Advance(8 * 24 * time.Hour)
	if rc := b.open(t, dbQuestion("c4")); rc != nil {
		t.Fatalf("a memory older than its time recalls %+v", rc)
	}
}

// TestAnswerMemoryKeepsNoSecrets: typed text is never kept, permissions
// and rules are never remembered, and what a caller sends as recall is
// replaced: no agent can claim "last time alice chose Approve".
func TestAnswerMemoryKeepsNoSecrets(t *testing.T) {
	b := setupMemory(t, nil)
	b.open(t, dbQuestion("c1"))
	b.answer(t, "c1", waterfall.AnswerItem{ID: "q1", Custom: "hunter2"}, aliceInSlack)
	forged := dbQuestion("c2")
	forged.Recall = []waterfall.Recall{{Question: "q1", Selected: []string{"Postgres"}, By: "alice", At: b.clk.Now()}}
	if rc := b.open(t, forged); rc != nil {
		t.Fatalf("recall = %+v after typed text and a forged recall", rc)
	}

	perm := func(id string) *waterfall.Request {
		return &waterfall.Request{CallID: id, Agent: waterfall.Agent{ID: "a1"}, Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID,
			Question: "Allow Bash?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
			Permission: &waterfall.Permission{Tool: "Bash", Command: "ls"}}
	}
	b.open(t, perm("p1"))
	b.answer(t, "p1", waterfall.AnswerItem{ID: waterfall.PermissionQuestionID, Selected: []string{"Allow"}}, aliceInSlack)
	if rc := b.open(t, perm("p2")); rc != nil {
		t.Fatalf("a permission recalls %+v", rc)
	}
}

// failingNotes is a store whose notes are down.
type failingNotes struct{ store.Notes }

func (failingNotes) Remember(context.Context, string, string, time.Duration, time.Time) (string, error) {
	return "", errors.New("notes down")
}

func (failingNotes) Put(context.Context, string, string, time.Duration, time.Time) error {
	return errors.New("notes down")
}

// TestAnswerMemoryDownAsksAnyway: the memory failing costs the hint, never
// the question or its answer.
func TestAnswerMemoryDownAsksAnyway(t *testing.T) {
	b := setupMemory(t, failingNotes{})
	if rc := b.open(t, dbQuestion("c1")); rc != nil {
		t.Fatalf("recall %+v from a failing store", rc)
	}
	b.answer(t, "c1", waterfall.AnswerItem{ID: "q1", Selected: []string{"SQLite"}}, aliceInSlack)
	a, err := b.st.Get(context.Background(), "c1")
	if err != nil || a.State.Active() {
		t.Fatalf("ask after the answer: %+v %v", a, err)
	}
}

// TestAnswerMemoryForgetsWhatIsNoLongerLastTime: a question answered with
// typed text (or skipped) the next time leaves no older choice behind.
func TestAnswerMemoryForgetsWhatIsNoLongerLastTime(t *testing.T) {
	b := setupMemory(t, nil)
	b.open(t, dbQuestion("c1"))
	b.answer(t, "c1", waterfall.AnswerItem{ID: "q1", Selected: []string{"SQLite"}}, aliceInSlack)
	if rc := b.open(t, dbQuestion("c2")); len(rc) != 1 {
		t.Fatalf("recall = %+v, want alice's", rc)
	}
	b.answer(t, "c2", waterfall.AnswerItem{ID: "q1", Custom: "DuckDB"}, aliceInSlack)
	if rc := b.open(t, dbQuestion("c3")); rc != nil {
		t.Fatalf("recall = %+v after a typed answer, want none", rc)
	}
}
