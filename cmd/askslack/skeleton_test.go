package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// The walking skeleton through both transports: ask over HTTP → message
// posted → click → answer returned → message updated and locked → a later
// clicker is told who answered.
func TestE2EAskAnsweredByClick(t *testing.T) {
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
			req := oneQuestion("call-click-"+string(tr), "Yes", "No")
			a := b.askAsync(ctx, req)
			msg := waitPosted(t, ctx, d.fake, req.CallID)
			if msg.Channel != testChannel || !strings.Contains(msg.Text, "Deploy to production now?") {
				t.Fatalf("posted %q in %s", msg.Text, msg.Channel)
			}
			resp, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{})
			if err != nil || resp.Status != http.StatusOK {
				t.Fatalf("click: %v %+v", err, resp)
			}
			if resp.Transport.String() != string(tr) {
				t.Fatalf("delivered over %s, want %s", resp.Transport, tr)
			}
			res, err := a.wait(t)
			if err != nil {
				t.Fatal(err)
			}
			if res.Pending || len(res.Answers) != 1 || res.Answers[0].ID != "q1" || fmt.Sprint(res.Answers[0].Selected) != "[Yes]" {
				t.Fatalf("answer = %+v", res)
			}
			if res.Respondent.UserID != alice.ID || res.Respondent.Surface != "slack" || res.Respondent.At.IsZero() || res.Respondent.MessageTS != msg.TS {
				t.Fatalf("respondent = %+v", res.Respondent)
			}
			upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
			if !strings.Contains(string(upd.Blocks), "<@U0ALICE>") || !strings.Contains(string(upd.Blocks), "Yes") {
				t.Fatalf("answered message does not say who answered what: %s", upd.Blocks)
			}
			// bob clicks the stale copy he still sees: told who answered, nothing changes.
			if _, err := d.fake.ClickButtonIn(ctx, msg, bob, "No", slackfake.Delivery{}); err != nil {
				t.Fatal(err)
			}
			e := waitEphemeral(t, ctx, d.fake, bob.ID, "Already answered by <@U0ALICE>")
			if !strings.Contains(e.Text, "Yes") {
				t.Fatalf("ephemeral %q does not name the answer", e.Text)
			}
			st, err := b.client().Get(ctx, req.CallID, 0)
			if err != nil || st.State != "settled" || fmt.Sprint(st.Answers[0].Selected) != "[Yes]" {
				t.Fatalf("status after a second click: %+v %v", st, err)
			}
		})
	}
}

// Unsigned, wrongly signed and stale requests are refused with 401 and
// settle nothing; a properly signed click afterwards still answers.
func TestE2ESignatureRequired(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	req := oneQuestion("call-sig", "Yes", "No")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	for name, dl := range map[string]slackfake.Delivery{
		"unsigned": {Unsigned: true}, "bad signature": {BadSignature: true}, "stale": {Stale: true},
	} {
		dl.Transport = slackfake.TransportHTTP
		resp, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", dl)
		if err != nil || resp.Status != http.StatusUnauthorized {
			t.Fatalf("%s: status %d, err %v; want 401", name, resp.Status, err)
		}
	}
	st, err := b.client().Get(ctx, req.CallID, 0)
	if err != nil || st.State != "open" {
		t.Fatalf("after forged clicks the ask is %+v (%v), want open", st.State, err)
	}
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "No", slackfake.Delivery{Transport: slackfake.TransportHTTP, RetryNum: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || res.Respondent.UserID != bob.ID || res.Answers[0].Selected[0] != "No" {
		t.Fatalf("answer %+v %v", res, err)
	}
}

// Two people click different buttons at once: one answer stands, the other
// person is told who answered.
func TestE2EConcurrentClicksSettleOnce(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	req := oneQuestion("call-race", "Yes", "No")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	var wg sync.WaitGroup
	for _, c := range []struct {
		u      slackfake.User
		button string
	}{{alice, "Yes"}, {bob, "No"}} {
		wg.Go(func() {
			if _, err := d.fake.ClickButtonIn(ctx, msg, c.u, c.button, slackfake.Delivery{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	res, err := a.wait(t)
	if err != nil {
		t.Fatal(err)
	}
	winner, loser := alice, bob
	if res.Respondent.UserID == bob.ID {
		winner, loser = bob, alice
	}
	waitEphemeral(t, ctx, d.fake, loser.ID, "Already answered by <@"+winner.ID+">")
	for _, e := range d.fake.Ephemerals() {
		if e.User == winner.ID {
			t.Fatalf("the winner was told %q", e.Text)
		}
	}
}

// Restarting the bot between post and click loses nothing: the harness
// re-attaches by callId and the click after the restart answers it.
func TestE2ERestartLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, true)
	first := d.start(viaHTTP)
	req := oneQuestion("call-restart", "Yes", "No")
	c := first.client()
	msg := func() slackfake.Message {
		a := askWith(ctx, c, req)
		m := waitPosted(t, ctx, d.fake, req.CallID)
		first.kill() // a crash: nothing is drained
		_, err := a.wait(t)
		if err == nil {
			t.Fatal("the ask returned although the bot died")
		}
		return m
	}()
	second := d.start(viaHTTP)
	a := askWith(ctx, second.client(), req) // the harness re-attaches with the same callId
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "No", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || res.Answers[0].Selected[0] != "No" {
		t.Fatalf("answer after restart: %+v %v", res, err)
	}
	if n := len(d.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("chat.postMessage called %d times; a re-attach must not post again", n)
	}
}

// DELETE withdraws the question: the blocking ask gets ASK_ABORTED and the
// message says the agent withdrew it.
func TestE2EAbort(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	req := oneQuestion("call-abort", "Yes", "No")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if _, err := b.client().Abort(ctx, req.CallID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.wait(t); waterfall.CodeOf(err) != waterfall.CodeAskAborted {
		t.Fatalf("ask after abort: %v", err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "withdrawn", func(m slackfake.Message) bool {
		return !hasControls(m) && strings.Contains(string(m.Blocks), "withdrew")
	})
	var we *waterfall.Error
	if _, err := b.client().Get(ctx, "no-such-call", 0); !errors.As(err, &we) || we.Code != waterfall.CodeNotFound {
		t.Fatalf("unknown call: %v", err)
	}
}

// `askslack ask` in a terminal: asks the running bot and prints the answer.
func TestE2EAskSubcommand(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	cmd := exec.CommandContext(ctx, binPath, "ask", "--url", "http://"+b.addr, "--call-id", "cli-1",
		"--question", "Deploy now?", "--option", "Yes", "--option", "No")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	msg := waitPosted(t, ctx, d.fake, "cli-1")
	if _, err := d.fake.ClickButton(ctx, carol, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("askslack ask: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "answered by carol") || !strings.Contains(out.String(), "Deploy now?: Yes") {
		t.Fatalf("askslack ask printed:\n%s", out.String())
	}
}

// A bad request is refused with the seed's code before anything is posted.
func TestE2EBadRequests(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	for _, c := range []struct {
		name string
		req  *waterfall.Request
		code string
	}{
		{"no questions", &waterfall.Request{CallID: "c1", Agent: waterfall.Agent{ID: "a"}}, waterfall.CodeEmptyQuestions},
		{"delegated", &waterfall.Request{CallID: "c2", Agent: waterfall.Agent{ID: "a", OwnerID: "boss"}, Questions: oneQuestion("x", "A").Questions}, waterfall.CodeDelegatedCaller},
		{"bad approve", &waterfall.Request{CallID: "c3", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
			ID: "p", Question: "Approve?", Detail: "plan", Options: []waterfall.Option{{Label: "Go"}},
			Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Yes"}}}}, waterfall.CodeBadRequest},
	} {
		_, err := b.client().Ask(ctx, c.req)
		if waterfall.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if n := len(d.fake.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("%d messages posted for invalid requests", n)
	}
	_ = context.Background
}
