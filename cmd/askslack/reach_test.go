package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
)

// Issue 14's reach, through the real binary on both transports: /askslack,
// the Home tab and answering by mention.
func TestE2EReach(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{viaHTTP, viaSocket} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			d := newDeployment(t, false)
			d.env["ASKSLACK_ALLOWED_USERS"] = alice.ID + "," + carol.ID // bob may not answer
			d.env["ASKSLACK_REQUIRE_PRINCIPAL"] = "true"
			d.bindPrincipals(alice.ID, carol.ID)
			b := d.start(tr)
			if tr == viaSocket {
				if err := d.fake.WaitConnected(testCtx(t), 1); err != nil {
					t.Fatal(err)
				}
			}
			t.Run("Command", func(t *testing.T) { command(t, d, b, tr) })
			t.Run("Home", func(t *testing.T) { home(t, d, b, tr) })
			t.Run("Mention", func(t *testing.T) { mentionAnswer(t, d, b, tr) })
		})
	}
}

func delivery(tr transport) slackfake.Delivery {
	if tr == viaHTTP {
		return slackfake.Delivery{Transport: slackfake.TransportHTTP}
	}
	return slackfake.Delivery{Transport: slackfake.TransportSocket}
}

// askFor starts an ask for principal and waits for its message: through
// the caller bound to it when the deployment binds one (bindPrincipals).
func askFor(t *testing.T, ctx context.Context, d *deployment, b *bot, callID, principal, question string) (*asked, slackfake.Message) {
	t.Helper()
	req := oneQuestion(callID, "Yes", "No")
	req.Questions[0].Question = question
	var a *asked
	if d.bound[principal] != "" {
		a = askWith(ctx, d.clientFor(b, principal), req) // the operator bound it: it restricts who answers
	} else {
		req.Agent.Principal = principal // a hint: whom to mention, whose DMs
		a = b.askAsync(ctx, req)
	}
	m := waitPosted(t, ctx, d.fake, callID)
	// Slack has the message a little before the store knows its ts.
	b.waitLog(ctx, `"question posted","callId":"`+callID+`"`)
	return a, m
}

func slash(t *testing.T, ctx context.Context, d *deployment, tr transport, who slackfake.User, text string) {
	t.Helper()
	res, err := d.fake.SendCommand(ctx, slackfake.Command{User: who, Channel: testChannel, Command: "/askslack", Text: text}, delivery(tr))
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("/askslack %s: %+v %v", text, res, err)
	}
}

func command(t *testing.T, d *deployment, b *bot, tr transport) {
	ctx := testCtx(t)
	id := safe(t)
	_, older := askFor(t, ctx, d, b, "cmd-old-"+id, alice.ID, "Older question "+id+"?")
	_, _ = askFor(t, ctx, d, b, "cmd-new-"+id, alice.ID, "Newer question "+id+"?")
	_, _ = askFor(t, ctx, d, b, "cmd-carol-"+id, carol.ID, "Carol's question "+id+"?")

	slash(t, ctx, d, tr, alice, "list")
	all := waitEphemeralBlocks(t, ctx, d.fake, alice.ID, "Older question "+id)
	newer, old := strings.Index(all, "Newer question "+id), strings.Index(all, "Older question "+id)
	if newer < 0 || newer > old || strings.Contains(all, "Carol's question "+id) {
		t.Fatalf("alice's list is not her questions newest first: %s", all)
	}
	if !strings.Contains(all, "/archives/"+older.Channel+"/p"+strings.ReplaceAll(older.TS, ".", "")) {
		t.Fatalf("no permalink to the question: %s", all)
	}
	slash(t, ctx, d, tr, bob, "list")
	waitEphemeral(t, ctx, d.fake, bob.ID, "No open questions")

	slash(t, ctx, d, tr, alice, "status cmd-old-"+id)
	waitEphemeral(t, ctx, d.fake, alice.ID, "cmd-old-"+id+"`: open")
	slash(t, ctx, d, tr, bob, "status cmd-old-"+id) // exists, but not bob's: no details
	slash(t, ctx, d, tr, bob, "status nosuch-"+id)
	waitCount(t, ctx, d.fake, bob.ID, "There is no question with that id", 2)

	slash(t, ctx, d, tr, carol, "")
	waitEphemeral(t, ctx, d.fake, carol.ID, "/askslack list")
}

// waitEphemeralBlocks waits for an ephemeral to user whose blocks contain
// substr and returns its blocks.
func waitEphemeralBlocks(t *testing.T, ctx context.Context, f *slackfake.Server, user, substr string) string {
	t.Helper()
	var got string
	err := f.WaitUntil(ctx, func() bool {
		for _, e := range f.Ephemerals() {
			if e.User == user && strings.Contains(string(e.Blocks), substr) {
				got = string(e.Blocks)
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no ephemeral to %s with blocks containing %q", user, substr)
	}
	return got
}

// waitCount waits until user has n ephemerals containing substr.
func waitCount(t *testing.T, ctx context.Context, f *slackfake.Server, user, substr string, n int) {
	t.Helper()
	err := f.WaitUntil(ctx, func() bool {
		c := 0
		for _, e := range f.Ephemerals() {
			if e.User == user && strings.Contains(e.Text, substr) {
				c++
			}
		}
		return c >= n
	})
	if err != nil {
		t.Fatalf("fewer than %d ephemerals to %s containing %q: %+v", n, user, substr, f.Ephemerals())
	}
}

// waitHome waits until user's Home tab satisfies pred.
func waitHome(t *testing.T, ctx context.Context, f *slackfake.Server, user, what string, pred func(view string) bool) string {
	t.Helper()
	var got string
	err := f.WaitUntil(ctx, func() bool {
		v, ok := f.Home(user)
		got = string(v.JSON)
		return ok && pred(got)
	})
	if err != nil {
		t.Fatalf("%s's Home tab never %s: %s", user, what, got)
	}
	return got
}

func home(t *testing.T, d *deployment, b *bot, tr transport) {
	ctx := testCtx(t)
	id := safe(t)
	aliceAsk, msg := askFor(t, ctx, d, b, "home-a-"+id, alice.ID, "Alice's home question?")
	_, _ = askFor(t, ctx, d, b, "home-c-"+id, carol.ID, "Carol's home question?")
	for _, u := range []slackfake.User{alice, carol, bob} {
		if _, err := d.fake.SendEvent(ctx, d.fake.HomeOpened(u), "", delivery(tr)); err != nil {
			t.Fatal(err)
		}
	}
	has := func(v, callID string) bool { return strings.Contains(v, `"ask/`+callID+`/`) }
	waitHome(t, ctx, d.fake, alice.ID, "listed alice's question only", func(v string) bool {
		return has(v, "home-a-"+id) && !has(v, "home-c-"+id)
	})
	waitHome(t, ctx, d.fake, carol.ID, "listed carol's question only", func(v string) bool {
		return has(v, "home-c-"+id) && !has(v, "home-a-"+id)
	})
	waitHome(t, ctx, d.fake, bob.ID, "told bob how to connect an agent", func(v string) bool {
		return strings.Contains(v, "How to connect an agent") && !strings.Contains(v, `"ask/`)
	})
	if _, err := d.fake.ClickHome(ctx, alice, "ask/home-a-"+id+"/", "Yes", delivery(tr)); err != nil {
		t.Fatal(err)
	}
	res, err := aliceAsk.wait(t)
	if err != nil || len(res.Answers) != 1 || res.Answers[0].Selected[0] != "Yes" || res.Respondent.UserID != alice.ID {
		t.Fatalf("answer from Home: %+v %v", res, err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	waitHome(t, ctx, d.fake, alice.ID, "dropped the answered question", func(v string) bool { return !has(v, "home-a-"+id) })
}

func mentionAnswer(t *testing.T, d *deployment, b *bot, tr transport) {
	ctx := testCtx(t)
	id := safe(t)
	a, msg := askFor(t, ctx, d, b, "mention-"+id, alice.ID, "Which colour?")

	// bob may not answer: refused, nothing changes.
	_, ev := d.fake.Mention(bob, msg.Channel, msg.TS, "red")
	if _, err := d.fake.SendEvent(ctx, ev, "", delivery(tr)); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, bob.ID, "may answer this question")

	// A thread that is no question gets an explanation.
	chatter := d.fake.AddMessage(msg.Channel, carol.ID, "lunch?")
	_, ev = d.fake.Mention(alice, msg.Channel, chatter.TS, "pizza")
	if _, err := d.fake.SendEvent(ctx, ev, "", delivery(tr)); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "not an open question")

	// alice answers; Slack delivers the event twice.
	mention, ev := d.fake.Mention(alice, msg.Channel, msg.TS, "blue, <!channel> & teal")
	first, err := d.fake.SendEvent(ctx, ev, "", delivery(tr))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || res.Answers[0].Custom != "blue, <!channel> & teal" || len(res.Answers[0].Selected) != 0 {
		t.Fatalf("answer by mention: %+v %v", res, err)
	}
	if _, err := d.fake.SendEvent(ctx, ev, first.EventID, slackfake.Delivery{Transport: delivery(tr).Transport, RetryNum: 1}); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, ctx, b, `askslack_interactions_total{result="duplicate",type="app_mention"} 1`)
	if err := d.fake.WaitUntil(ctx, func() bool { return len(d.fake.Reactions(msg.Channel, mention.TS, "white_check_mark")) == 1 }); err != nil {
		t.Fatal("no check mark on the mention")
	}
	upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })
	if strings.Contains(string(upd.Blocks), "<!channel>") {
		t.Fatalf("the answer was not escaped: %s", upd.Blocks)
	}
	for _, e := range d.fake.Ephemerals() {
		if e.User == alice.ID && strings.Contains(e.Text, "Already answered") {
			t.Fatalf("the redelivered mention answered again: %q", e.Text)
		}
	}
}

// Slack may redeliver an event to another replica: the event id is
// remembered in Redis, so the mention answers once across replicas.
func TestE2EMentionRedeliveredToAnotherReplica(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, true)
	d.bindPrincipals(alice.ID) // askFor asks as the caller bound to alice
	a, b := d.start(viaHTTP), d.start(viaHTTP)
	ctx := testCtx(t)
	d.fake.SetEventsURL("http://" + a.addr + "/slack/events")
	asked, msg := askFor(t, ctx, d, a, "mention-twice", alice.ID, "Which colour?")
	_, ev := d.fake.Mention(alice, msg.Channel, msg.TS, "teal")
	first, err := d.fake.SendEvent(ctx, ev, "", slackfake.Delivery{Transport: slackfake.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := asked.wait(t); err != nil || res.Answers[0].Custom != "teal" {
		t.Fatalf("answer %+v %v", res, err)
	}
	d.fake.SetEventsURL("http://" + b.addr + "/slack/events")
	if _, err := d.fake.SendEvent(ctx, ev, first.EventID, slackfake.Delivery{Transport: slackfake.TransportHTTP, RetryNum: 1}); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, ctx, b, `askslack_interactions_total{result="duplicate",type="app_mention"} 1`)
	for _, e := range d.fake.Ephemerals() {
		if e.User == alice.ID {
			t.Fatalf("the redelivered mention was handled again: %q", e.Text)
		}
	}
}
