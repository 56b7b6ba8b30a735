package slackbot

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

const testSecret = "s3cret"

var alice = slackfake.User{ID: "U0ALICE", Name: "alice"}

// setupDispatch is setupPost with interactions delivered over HTTP, signed,
// to the bot's own handler.
func setupDispatch(t *testing.T, wrap ...func(store.Store) store.Store) *postBundle {
	t.Helper()
	p := setupPost(t, slackfake.Options{SigningSecret: testSecret, Users: []slackfake.User{alice}}, wrap...)
	srv := httptest.NewServer(HTTPHandler(p.bot, testSecret, slog.Default()))
	t.Cleanup(srv.Close)
	p.fake.SetInteractionURL(srv.URL + "/slack/interactions")
	return p
}

// posted starts a blocking ask and returns its message once posted.
func (p *postBundle) posted(t *testing.T, req *waterfall.Request) slackfake.Message {
	t.Helper()
	_, cancel := p.askInBackground(req)
	t.Cleanup(cancel)
	return p.waitMessage(t, req.CallID, "question posted", func(a *asktype.Ask, m slackfake.Message) bool { return hasButtons(m) })
}

func pickFiles(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: "files", Question: "Which files?", MultiSelect: true,
		Options: []waterfall.Option{{Label: "a.go"}, {Label: "b.go"}, {Label: "c.go"}}}}}
}

// The "Other…" modal of a multi-select question starts with the boxes the
// person already ticked in the message.
func TestOtherModalStartsFromTheMessagesTicks(t *testing.T) {
	p := setupDispatch(t)
	m := p.posted(t, pickFiles("c1"))
	ctx := testCtx(t)
	if _, err := p.fake.ToggleCheckbox(ctx, alice, m.Channel, m.TS, "askslack.check", "b.go", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Other…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	call, err := p.fake.WaitFor(ctx, "views.open", nil)
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Blocks []struct {
			Element struct {
				InitialOptions []struct {
					Value string `json:"value"`
				} `json:"initial_options"`
			} `json:"element"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(call.Params["view"]), &view); err != nil {
		t.Fatal(err)
	}
	var initial []string
	for _, b := range view.Blocks {
		for _, o := range b.Element.InitialOptions {
			initial = append(initial, o.Value)
		}
	}
	if len(initial) != 1 || initial[0] != "1" {
		t.Fatalf("modal's initial options = %v, want b.go (value 1) as ticked in the message; view %s", initial, call.Params["view"])
	}
	if !strings.Contains(string(call.Response), `"ok":true`) {
		t.Fatalf("views.open refused the prefilled modal: %s", call.Response)
	}
}

// A signed payload naming an ask-wide block (-1) on a pick button is
// refused and logged; the process lives and the ask is untouched.
func TestImpossibleActionIsRefusedNotFatal(t *testing.T) {
	p := setupDispatch(t)
	m := p.posted(t, yesNo("c1"))
	payload := map[string]any{
		"type": "block_actions", "user": map[string]any{"id": alice.ID, "name": alice.Name},
		"container":  map[string]any{"type": "message", "channel_id": m.Channel, "message_ts": m.TS},
		"trigger_id": p.fake.IssueTrigger(alice.ID),
		"actions":    []any{map[string]any{"type": "button", "action_id": "askslack.pick.0", "block_id": "ask/c1/-1", "value": "0"}},
	}
	resp, err := p.fake.Deliver(testCtx(t), payload, slackfake.Delivery{})
	if err != nil || resp.Status != 200 {
		t.Fatalf("delivery: %+v %v", resp, err)
	}
	p.bot.Stop(context.Background()) // waits for the background work of the click
	a, _ := p.st.Get(context.Background(), "c1")
	if a.State != asktype.Open {
		t.Fatalf("ask = %s after an impossible click", a.State)
	}
}

// flakyGet fails Get while down is set, as an unreachable store would.
type flakyGet struct {
	store.Store
	down *atomic.Bool
}

func (f *flakyGet) Get(ctx context.Context, callID string) (*asktype.Ask, error) {
	if f.down.Load() {
		return nil, context.DeadlineExceeded
	}
	return f.Store.Get(ctx, callID)
}

func (f *flakyGet) Current(ctx context.Context, callID string) (*asktype.Ask, error) {
	return f.Get(ctx, callID)
}

// A store error while a modal is submitted says "try again", not that the
// question is gone.
func TestModalSubmissionOnStoreErrorSaysTryAgain(t *testing.T) {
	var down atomic.Bool
	p := setupDispatch(t, func(st store.Store) store.Store { return &flakyGet{Store: st, down: &down} })
	m := p.posted(t, yesNo("c1"))
	ctx := testCtx(t)
	if _, err := p.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Other…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.fake.WaitFor(ctx, "views.open", nil); err != nil {
		t.Fatal(err)
	}
	views := p.fake.OpenViews(alice.ID)
	if len(views) != 1 {
		t.Fatalf("open views: %d", len(views))
	}
	down.Store(true)
	resp, err := p.fake.SubmitView(ctx, alice, views[0].ID, map[string][]string{"ask/c1/0/text": {"mine"}}, slackfake.Delivery{})
	down.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.Body), "try again") || strings.Contains(string(resp.Body), "no longer") {
		t.Fatalf("modal answer = %s; want a try-again error", resp.Body)
	}
}

// Without the message's metadata in the payload, a click is checked
// against where the ask it names says its messages are: a block naming
// another posted ask is refused and answers nothing, and a block naming
// an ask that is gone does not mark a message it cannot vouch for.
func TestClickWithoutMetadataChecksTheStoredMessage(t *testing.T) {
	p := setupDispatch(t)
	ctx := testCtx(t)
	m1 := p.posted(t, yesNo("c1"))
	p.posted(t, yesNo("c2"))
	p.waitMessage(t, "c2", "recorded", func(a *asktype.Ask, _ slackfake.Message) bool { return a.Message.Posted() })
	click := func(named string) {
		t.Helper()
		blocks := json.RawMessage(strings.ReplaceAll(string(m1.Blocks), "ask/c1/", "ask/"+named+"/"))
		blockID, el := findElement(t, blocks, "askslack.pick.0")
		payload := map[string]any{
			"type":       "block_actions",
			"user":       map[string]any{"id": alice.ID, "name": alice.Name},
			"container":  map[string]any{"type": "message", "channel_id": m1.Channel, "message_ts": m1.TS},
			"channel":    map[string]any{"id": m1.Channel},
			"message":    map[string]any{"type": "message", "ts": m1.TS, "text": m1.Text},
			"trigger_id": p.fake.IssueTrigger(alice.ID),
			"state":      map[string]any{"values": map[string]any{}},
			"actions":    []any{actionOf(t, blockID, el, "")},
		}
		if resp, err := p.fake.Deliver(ctx, payload, slackfake.Delivery{}); err != nil || resp.Status != 200 {
			t.Fatalf("delivery: %+v %v", resp, err)
		}
	}
	click("c2")
	click("gone")
	_ = p.bot.Stop(ctx) // both clicks handled
	for _, id := range []string{"c1", "c2"} {
		if a, err := p.st.Get(ctx, id); err != nil || a.State != asktype.Open {
			t.Fatalf("%s after clicks naming other asks: %+v %v", id, a, err)
		}
	}
	if m, _ := p.fake.Message(m1.Channel, m1.TS); m.Updated != 0 || !hasButtons(m) {
		t.Fatalf("c1's message changed: %+v", m)
	}
}
