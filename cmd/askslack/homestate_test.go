package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

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
			// A refresh round may publish the tab first (the click's publish
			// then meets hash_conflict and goes again, with the ticks).
			short, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			if err := d.fake.WaitUntil(short, func() bool {
				return slices.Equal(homeTicks(d.fake, alice.ID, "ask/"+otherID+"/0"), []string{"1"})
			}); err != nil {
				t.Fatalf("the refresh after the answer wiped the other question's ticks: %v", homeTicks(d.fake, alice.ID, "ask/"+otherID+"/0"))
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

// Home tab publishes carry the hash of the tab they replace, and read the
// listing after it: a refresh rendered before a question was answered,
// whose views.publish reaches Slack after the tab showing the answer, is
// refused (hash_conflict) and rendered again, so the answered question
// never comes back with live buttons.
func TestE2EHomeOlderRenderCannotOverwriteANewerOne(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	id := safe(t)
	first, second := "ho-1-"+id, "ho-2-"+id
	homeAsk(t, ctx, d, b, first, choices("go", "Ship it?", false, "Yes", "No"))
	openHome(t, ctx, d, viaHTTP, alice, first)
	before, _ := d.fake.Home(alice.ID)

	// The refresh a new question starts renders both questions, and its
	// views.publish is held back before it reaches Slack.
	hold := d.fake.HoldNext("views.publish")
	defer hold.Release()
	homeAsk(t, ctx, d, b, second, choices("go", "Ship this too?", false, "Yes", "No"))
	select {
	case <-hold.Arrived():
	case <-ctx.Done():
		t.Fatal("no refresh of the Home tab")
	}
	// Meanwhile alice answers the first question on her tab, which is
	// published again without it.
	if _, err := d.fake.ClickHomeIn(ctx, before, alice, "ask/"+first+"/", "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitHome(t, ctx, d.fake, alice.ID, "showed the answer", func(v string) bool {
		return !strings.Contains(v, `"ask/`+first+`/`) && strings.Contains(v, `"ask/`+second+`/`)
	})
	n := len(d.fake.Calls("views.publish"))
	hold.Release()
	// Until the held publish and whatever followed it are done: a publish
	// that went through, or a tab found to show the listing already.
	unchanged := strings.Count(b.logs.String(), "Home tab unchanged")
	if err := poll(ctx, func() bool {
		calls := d.fake.Calls("views.publish")
		return len(calls) > n && (calls[len(calls)-1].OK() || strings.Count(b.logs.String(), "Home tab unchanged") > unchanged)
	}); err != nil {
		for _, c := range d.fake.Calls("views.publish") {
			t.Logf("views.publish hash=%q → %s", c.Params["hash"], c.Response)
		}
		t.Fatal(err)
	}
	calls := d.fake.Calls("views.publish")
	held := calls[n]
	if held.Params["hash"] != before.Hash || held.Error() != "hash_conflict" {
		t.Errorf("the held refresh went with hash %q and got %q; want the tab's hash %q refused with hash_conflict",
			held.Params["hash"], held.Error(), before.Hash)
	}
	for _, c := range calls[n:] {
		if c.OK() && strings.Contains(c.Params["view"], `"ask/`+first+`/`) {
			t.Fatalf("a render from before the answer overwrote the tab: %s", c.Params["view"])
		}
	}
}

// A refresh that does not change what a person may answer leaves their
// tab alone: publishing it again would wipe what they ticked and not
// submitted yet.
func TestE2EHomeRefreshKeepsUnsubmittedTicks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_REQUIRE_PRINCIPAL"] = "true"
	d.bindPrincipals(alice.ID, carol.ID)
	b := d.start(viaHTTP)
	id := safe(t)
	mine, carols := "tick-a-"+id, "tick-c-"+id
	req := &waterfall.Request{CallID: mine, Agent: waterfall.Agent{ID: "agent-1", SessionID: "s-" + mine, Principal: alice.ID},
		Questions: []waterfall.Question{choices("files", "Which files?", true, "a.go", "b.go")}}
	askWith(ctx, d.clientFor(b, alice.ID), req)
	waitPosted(t, ctx, d.fake, mine)
	b.waitLog(ctx, `"question posted","callId":"`+mine+`"`)
	// carol opens her tab first, alice last: a refresh round visits alice first.
	openHome(t, ctx, d, viaHTTP, carol)
	openHome(t, ctx, d, viaHTTP, alice, mine)
	if _, err := d.fake.ToggleHomeCheckbox(ctx, alice, "ask/"+mine+"/0", "a.go", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}

	askFor(t, ctx, d, b, carols, carol.ID, "Carol's question?")
	waitHome(t, ctx, d.fake, carol.ID, "listed carol's new question", func(v string) bool { return strings.Contains(v, `"ask/`+carols+`/`) })
	if got := homeTicks(d.fake, alice.ID, "ask/"+mine+"/0"); !slices.Equal(got, []string{"0"}) {
		t.Fatalf("a refresh that changed nothing for alice wiped her ticks: %v", got)
	}
}

// poll waits until cond holds, checking every 20ms: for conditions on the
// bot's logs, which reach the test through a pipe with no signal to wait on.
func poll(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
