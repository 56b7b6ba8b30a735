package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// ASKSLACK_DELIVERY=both: the question is in the channel and, with the same
// controls, in the principal's DMs; an answer in the DM settles the ask and
// both messages show it.
func TestE2EDeliveryBothUpdatesEveryCopy(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_DELIVERY"] = "both"
	b := d.start(viaHTTP)

	req := oneQuestion("both-1", "Yes", "No")
	req.Agent.Principal = alice.Email
	a := b.askAsync(ctx, req)
	var inChannel, inDM slackfake.Message
	if err := d.fake.WaitUntil(ctx, func() bool {
		inChannel, inDM = slackfake.Message{}, slackfake.Message{}
		for _, m := range d.fake.Messages() {
			if !bytes.Contains(m.Blocks, []byte("ask/both-1/")) || !hasControls(m) {
				continue
			}
			if m.Channel == "C0QUESTIONS" {
				inChannel = m
			} else if strings.HasPrefix(m.Channel, "D") {
				inDM = m
			}
		}
		return inChannel.TS != "" && inDM.TS != ""
	}); err != nil {
		t.Fatalf("want the question in the channel and in alice's DMs: %+v / %+v", inChannel, inDM)
	}
	if !strings.Contains(string(inDM.Blocks), "Also asked in <#C0QUESTIONS>") {
		t.Fatalf("the DM copy does not point at the channel: %s", inDM.Blocks)
	}
	if !strings.HasPrefix(inChannel.Text, "<@"+alice.ID+">") {
		t.Fatalf("the channel question does not mention alice: %q", inChannel.Text)
	}
	b.waitLog(ctx, `"question posted","callId":"both-1"`)
	click(t, ctx, d.fake, inDM, "Yes")
	if r, err := a.wait(t); err != nil || r.Answers[0].Selected[0] != "Yes" {
		t.Fatalf("the answer from the DM copy: %+v %v", r, err)
	}
	for _, m := range []slackfake.Message{inChannel, inDM} {
		waitMessage(t, ctx, d.fake, m.Channel, m.TS, "answered in "+m.Channel, func(m slackfake.Message) bool {
			return !hasControls(m) && strings.Contains(string(m.Blocks), "Yes")
		})
	}

	// A principal Slack cannot DM: the channel alone, saying why.
	req = oneQuestion("both-2", "Yes", "No")
	req.Agent.Principal = "nobody@example.com"
	b.askAsync(ctx, req)
	m := waitPosted(t, ctx, d.fake, "both-2")
	if m.Channel != "C0QUESTIONS" || !strings.Contains(string(m.Blocks), "Not also sent as a direct message") {
		t.Fatalf("an unknown principal's question: channel %s, blocks %s", m.Channel, m.Blocks)
	}
}

// ASKSLACK_THREADS=session: each session's questions are replies in one
// thread under a parent line, the first broadcast to the channel; a
// mention in the thread answers its one open question.
func TestE2ESessionThreads(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_THREADS"] = "session"
	b := d.start(viaHTTP)

	ask := func(id, session string) (*asked, slackfake.Message) {
		t.Helper()
		req := oneQuestion(id, "Yes", "No")
		req.Agent = waterfall.Agent{ID: "claude", SessionID: session, SourceTaskID: "askslack · 1a2b3c4d", Principal: alice.ID}
		a := b.askAsync(ctx, req)
		m := waitPosted(t, ctx, d.fake, id)
		b.waitLog(ctx, `"question posted","callId":"`+id+`"`)
		return a, m
	}
	a1, q1 := ask("thr-1", "sess-a")
	a2, q2 := ask("thr-2", "sess-a")
	_, q3 := ask("thr-3", "sess-b")
	if q1.ThreadTS == "" || q2.ThreadTS != q1.ThreadTS || q3.ThreadTS == "" || q3.ThreadTS == q1.ThreadTS {
		t.Fatalf("threads: %q %q %q; want sess-a's two questions in one thread, sess-b's in another", q1.ThreadTS, q2.ThreadTS, q3.ThreadTS)
	}
	if !q1.Broadcast || q2.Broadcast {
		t.Fatalf("broadcast: first %v, second %v; want only the session's first question in the channel", q1.Broadcast, q2.Broadcast)
	}
	parent, ok := d.fake.Message(q1.Channel, q1.ThreadTS)
	if !ok || !strings.Contains(string(parent.Blocks), "*claude* is working on *askslack · 1a2b3c4d*") || hasControls(parent) {
		t.Fatalf("parent line: %+v", parent)
	}
	parents := 0
	for _, m := range d.fake.Messages() {
		if strings.Contains(string(m.Blocks), "is working on") {
			parents++
		}
	}
	if parents != 2 {
		t.Fatalf("%d parent lines; want one per session", parents)
	}

	// Two questions are open in sess-a's thread: a mention cannot say which.
	_, ev := d.fake.Mention(alice, q1.Channel, q1.ThreadTS, "yes please")
	if _, err := d.fake.SendEvent(ctx, ev, "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "Several questions of this session")

	click(t, ctx, d.fake, q1, "No")
	if r, err := a1.wait(t); err != nil || r.Answers[0].Selected[0] != "No" {
		t.Fatalf("answer in the thread: %+v %v", r, err)
	}
	waitMessage(t, ctx, d.fake, q1.Channel, q1.TS, "answered in its thread", func(m slackfake.Message) bool {
		return !hasControls(m) && m.ThreadTS == q1.ThreadTS
	})
	// Now one is open there: the mention answers it.
	_, ev = d.fake.Mention(alice, q2.Channel, q2.ThreadTS, "ship it")
	if _, err := d.fake.SendEvent(ctx, ev, "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if r, err := a2.wait(t); err != nil || r.Answers[0].Custom != "ship it" {
		t.Fatalf("answer by mention in the session thread: %+v %v", r, err)
	}
}

// ASKSLACK_REMIND and ASKSLACK_ESCALATE: an unanswered question gets a
// reply in its thread at each offset mentioning its principal, then the
// escalation group once; an answered one gets none.
func TestE2ERemindersAndEscalation(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_REMIND"] = "2s,3s"
	d.env["ASKSLACK_ESCALATE"] = "S0ONCALL"
	d.bindPrincipals(alice.ID) // askFor asks as the caller bound to alice
	b := d.start(viaHTTP)

	answered, qa := askFor(t, ctx, d, b, "rem-answered", alice.ID, "Answered at once?")
	click(t, ctx, d.fake, qa, "Yes")
	if _, err := answered.wait(t); err != nil {
		t.Fatal(err)
	}
	_, q := askFor(t, ctx, d, b, "rem-waiting", alice.ID, "Nobody answers this?")

	replies := func(m slackfake.Message) []slackfake.Message {
		var out []slackfake.Message
		for _, r := range d.fake.Messages() {
			if r.Channel == m.Channel && r.ThreadTS == m.TS {
				out = append(out, r)
			}
		}
		return out
	}
	if err := d.fake.WaitUntil(ctx, func() bool { return len(replies(q)) >= 3 }); err != nil {
		t.Fatalf("replies in the waiting question's thread: %+v", replies(q))
	}
	got := replies(q)
	for i, r := range got[:2] {
		if !strings.HasPrefix(r.Text, "<@"+alice.ID+">") || !strings.Contains(r.Text, "Still waiting for an answer to “Nobody answers this?”") {
			t.Fatalf("reminder %d: %q", i+1, r.Text)
		}
	}
	if !strings.HasPrefix(got[2].Text, "<!subteam^S0ONCALL>") || !strings.Contains(got[2].Text, "escalating") {
		t.Fatalf("escalation: %q", got[2].Text)
	}
	waitMetric(t, ctx, b, `askslack_reminders_total{kind="escalation",result="sent"} 1`)
	waitMetric(t, ctx, b, `askslack_reminders_total{kind="reminder",result="sent"} 2`)
	// The answered question was asked first: its reminders would be out
	// by now.
	if n := len(replies(qa)); n != 0 {
		t.Fatalf("the answered question got %d reminders", n)
	}
}

// A click on a question that is a reply in a thread (a session's thread)
// is answered, when it is not the answer, by an ephemeral in that thread,
// where the person clicked, not at the top of the channel.
func TestE2EEphemeralsInTheThread(t *testing.T) {
	t.Parallel()
	for _, tr := range []transport{viaHTTP, viaSocket} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			d := newDeployment(t, false)
			d.env["ASKSLACK_THREADS"] = "session"
			d.env["ASKSLACK_ALLOWED_USERS"] = alice.ID
			b := d.start(tr)
			if tr == viaSocket {
				if err := d.fake.WaitConnected(ctx, 1); err != nil {
					t.Fatal(err)
				}
			}
			id := "thread-eph-" + safe(t)
			a := b.askAsync(ctx, oneQuestion(id, "Yes", "No"))
			msg := waitPosted(t, ctx, d.fake, id)
			if msg.ThreadTS == "" {
				t.Fatalf("the question is not in a thread: %+v", msg)
			}
			b.waitLog(ctx, `"question posted","callId":"`+id+`"`)

			if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "Yes", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			refused := waitEphemeral(t, ctx, d.fake, bob.ID, "may answer")
			if _, err := d.fake.ClickButtonIn(ctx, msg, alice, "Yes", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			if r, err := a.wait(t); err != nil || r.Answers[0].Selected[0] != "Yes" {
				t.Fatalf("alice's answer: %+v %v", r, err)
			}
			if _, err := d.fake.ClickButtonIn(ctx, msg, alice, "No", delivery(tr)); err != nil {
				t.Fatal(err)
			}
			late := waitEphemeral(t, ctx, d.fake, alice.ID, "Already answered")
			for _, e := range []slackfake.Ephemeral{refused, late} {
				if e.ThreadTS != msg.ThreadTS {
					t.Errorf("ephemeral %q to %s shows in thread %q; want the question's thread %q", e.Text, e.User, e.ThreadTS, msg.ThreadTS)
				}
			}
		})
	}
}
