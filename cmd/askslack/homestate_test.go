package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// homeAsk starts an ask of questions and waits until its message is posted.
func homeAsk(t *testing.T, ctx context.Context, d *deployment, b *bot, callID string, qs ...waterfall.Question) *asked {
	t.Helper()
	req := &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "agent-1", SessionID: "sess-" + callID}, Questions: qs}
	a := b.askAsync(ctx, req)
	waitPosted(t, ctx, d.fake, callID)
	b.waitLog(ctx, `"question posted","callId":"`+callID+`"`)
	return a
}

func choices(id, question string, multi bool, labels ...string) waterfall.Question {
	q := waterfall.Question{ID: id, Question: question, MultiSelect: multi}
	for _, l := range labels {
		q.Options = append(q.Options, waterfall.Option{Label: l})
	}
	return q
}

// openHome sends app_home_opened for user and waits until the tab lists
// every callID.
func openHome(t *testing.T, ctx context.Context, d *deployment, tr transport, user slackfake.User, callIDs ...string) {
	t.Helper()
	if _, err := d.fake.SendEvent(ctx, d.fake.HomeOpened(user), "", delivery(tr)); err != nil {
		t.Fatal(err)
	}
	waitHome(t, ctx, d.fake, user.ID, "listed the questions", func(v string) bool {
		for _, id := range callIDs {
			if !strings.Contains(v, `"ask/`+id+`/`) {
				return false
			}
		}
		return true
	})
}

// homeTicks is what user's Home tab would send as ticked in block blockID.
func homeTicks(f *slackfake.Server, user, blockID string) []string {
	var out []string
	for _, entry := range f.HomeState(user)[blockID].(map[string]any) {
		list, _ := entry.(map[string]any)["selected_options"].([]any)
		for _, o := range list {
			out = append(out, o.(map[string]any)["value"].(string))
		}
	}
	slices.Sort(out)
	return out
}

// A Home-tab block_actions carries its selection in view.state.values and
// no top-level state (real captures): a Submit from the Home tab settles
// what was ticked there, a batch too, "Other…" starts from the ticks, and
// the tab re-published after an answer keeps the ticks of the questions
// still on it.
func TestE2EHomeSubmitReadsViewState(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{viaHTTP, viaSocket} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			d := newDeployment(t, false)
			b := d.start(tr)
			if tr == viaSocket {
				if err := d.fake.WaitConnected(ctx, 1); err != nil {
					t.Fatal(err)
				}
			}
			id := safe(t)
			multiID, otherID, batchID := "hm-multi-"+id, "hm-other-"+id, "hm-batch-"+id
			multi := homeAsk(t, ctx, d, b, multiID, choices("files", "Which files?", true, "a.go", "b.go", "c.go"))
			homeAsk(t, ctx, d, b, otherID, choices("dirs", "Which directories?", true, "src", "docs"))
			batch := homeAsk(t, ctx, d, b, batchID,
				choices("colour", "Which colour?", false, "red", "blue"),
				choices("size", "Which size?", false, "small", "medium"))
			openHome(t, ctx, d, tr, alice, multiID, otherID, batchID)

			for _, tick := range []struct{ block, label string }{
				{"ask/" + otherID + "/0", "docs"}, {"ask/" + multiID + "/0", "a.go"}, {"ask/" + multiID + "/0", "c.go"},
			} {
				if _, err := d.fake.ToggleHomeCheckbox(ctx, alice, tick.block, tick.label, delivery(tr)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.fake.ClickHome(ctx, alice, "ask/"+multiID+"/", "Submit", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			res, err := multi.wait(t)
			if err != nil || len(res.Answers) != 1 || !slices.Equal(res.Answers[0].Selected, []string{"a.go", "c.go"}) {
				t.Fatalf("Submit from the Home tab: %+v %v", res, err)
			}
			waitHome(t, ctx, d.fake, alice.ID, "dropped the answered question", func(v string) bool { return !strings.Contains(v, `"ask/`+multiID+`/`) })
			if got := homeTicks(d.fake, alice.ID, "ask/"+otherID+"/0"); !slices.Equal(got, []string{"1"}) {
				t.Fatalf("the refresh after the answer wiped the other question's ticks: %v", got)
			}

			if _, err := d.fake.ClickHome(ctx, alice, "ask/"+otherID+"/", "Other…", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			modal := waitView(t, ctx, d.fake, alice.ID, otherID)
			if !ticked(t, modal.JSON, "docs") {
				t.Fatalf("the Other… modal from the Home tab did not start from the ticks: %s", modal.JSON)
			}

			for _, pick := range []struct{ block, label string }{{"ask/" + batchID + "/0", "blue"}, {"ask/" + batchID + "/1", "medium"}} {
				if _, err := d.fake.SelectHome(ctx, alice, pick.block, []string{pick.label}, delivery(tr)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.fake.ClickHome(ctx, alice, "ask/"+batchID+"/", "Submit answers", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			res, err = batch.wait(t)
			if err != nil || len(res.Answers) != 2 || !slices.Equal(res.Answers[0].Selected, []string{"blue"}) || !slices.Equal(res.Answers[1].Selected, []string{"medium"}) {
				t.Fatalf("batch Submit from the Home tab: %+v %v", res, err)
			}
			for _, e := range d.fake.Ephemerals() {
				if strings.Contains(e.Text, "Nothing is selected") {
					t.Fatalf("told %s nothing was selected: %+v", e.User, e)
				}
			}
		})
	}
}

// ticked reports whether a view's JSON has an option labelled label among
// some element's initial_options.
func ticked(t *testing.T, view []byte, label string) bool {
	t.Helper()
	var found bool
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if init, ok := x["initial_options"].([]any); ok {
				for _, o := range init {
					if txt, _ := o.(map[string]any)["text"].(map[string]any); txt != nil && txt["text"] == label {
						found = true
					}
				}
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	var v any
	if err := json.Unmarshal(view, &v); err != nil {
		t.Fatal(err)
	}
	walk(v)
	return found
}

// What a click on the Home tab is told (nothing selected, already
// answered by …) shows where the person is: at the top of their Home tab,
// re-published after the click. An ephemeral in the question's channel is
// invisible from the Home tab, and refused (user_not_in_channel) for
// someone who is not in that channel, like alice here.
func TestE2EHomeFeedbackOnTheTab(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{viaHTTP, viaSocket} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			d := newDeployment(t, false)
			d.fake.SetMembers(testChannel, bob.ID, carol.ID)
			b := d.start(tr)
			if tr == viaSocket {
				if err := d.fake.WaitConnected(ctx, 1); err != nil {
					t.Fatal(err)
				}
			}
			id := safe(t)
			multiID, singleID := "fb-multi-"+id, "fb-single-"+id
			homeAsk(t, ctx, d, b, multiID, choices("files", "Which files?", true, "a.go", "b.go"))
			single := homeAsk(t, ctx, d, b, singleID, choices("go", "Ship it?", false, "Yes", "No"))
			openHome(t, ctx, d, tr, alice, multiID, singleID)

			if _, err := d.fake.ClickHome(ctx, alice, "ask/"+multiID+"/", "Submit", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			waitHome(t, ctx, d.fake, alice.ID, "said nothing was selected", func(v string) bool {
				return strings.Contains(v, "Nothing is selected yet") && strings.Contains(v, `"ask/`+multiID+`/`)
			})

			stale, _ := d.fake.Home(alice.ID)
			msg := waitPosted(t, ctx, d.fake, singleID)
			if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "No", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			if res, err := single.wait(t); err != nil || res.Respondent.UserID != bob.ID {
				t.Fatalf("bob's answer: %+v %v", res, err)
			}
			if _, err := d.fake.ClickHomeIn(ctx, stale, alice, "ask/"+singleID+"/", "Yes", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			waitHome(t, ctx, d.fake, alice.ID, "said who answered", func(v string) bool {
				return strings.Contains(v, "Already answered by <@"+bob.ID+">") && !strings.Contains(v, `"ask/`+singleID+`/`)
			})
			for _, e := range d.fake.Ephemerals() {
				if e.User == alice.ID {
					t.Errorf("alice was told in a channel she cannot see from her Home tab: %+v", e)
				}
			}
			for _, c := range d.fake.Calls("chat.postEphemeral") {
				if !c.OK() {
					t.Errorf("an ephemeral Slack refused: %s %s", c.Params, c.Response)
				}
			}
		})
	}
}
