package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// stillWaiting fails the test when the agent already has an answer.
func stillWaiting(t *testing.T, a *asked, why string) {
	t.Helper()
	select {
	case <-a.done:
		t.Fatalf("%s, yet the agent got %+v, %v", why, a.res, a.err)
	default:
	}
}

// approvers names the respondents' users in order.
func approverIDs(rs []waterfall.Respondent) string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.UserID
	}
	return strings.Join(ids, ",")
}

// ASKSLACK_QUORUM=plan=2 through the real binary: one approval shows on
// the message and leaves the agent waiting; the same person again counts
// once; the second person's approval settles the plan, the agent gets
// both approvers (the last as the respondent), the message names both,
// and a later clicker is told who decided.
func TestE2EQuorumTwoApprovalsSettleAPlan(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_QUORUM"] = "plan=2"
	b := d.start(viaHTTP)
	req := planRequest("quorum-plan")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if !strings.Contains(string(msg.Blocks), "Needs 2 approvals") {
		t.Fatalf("the question does not say it needs two approvals: %s", msg.Blocks)
	}
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "Your approval counts: 1 of 2")
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "showing the first vote", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "Approved by <@U0ALICE> · 1 of 2 — waiting for one more")
	})
	stillWaiting(t, a, "one approval of two")
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "You already approved this")
	stillWaiting(t, a, "the same person approved twice")
	if st, err := b.client().Get(ctx, req.CallID, 0); err != nil || st.State != "open" {
		t.Fatalf("after a repeated approval: %+v, %v", st, err)
	}
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || mustJSON(res.Answers) != `[{"id":"plan","selected":["Approve"]}]` {
		t.Fatalf("the agent got %+v, %v", res, err)
	}
	if res.Respondent.UserID != bob.ID || approverIDs(res.Approvers) != "U0ALICE,U0BOB" {
		t.Fatalf("respondent %+v, approvers %+v; want bob deciding after alice", res.Respondent, res.Approvers)
	}
	upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	if !strings.Contains(string(upd.Blocks), "Approved by <@U0ALICE>, <@U0BOB> (2 approvals)") {
		t.Fatalf("the answered plan does not name both approvers: %s", upd.Blocks)
	}
	if _, err := d.fake.ClickButtonIn(ctx, msg, carol, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, carol.ID, "Already answered by <@U0BOB>")
}

// Any decline ends a quorum ask at once, declined, with the decliner's
// reason, whatever approvals came before; an ask raises the quorum itself
// ("approvals") with nothing configured, and its approvers narrow who
// counts.
func TestE2EQuorumOneDeclineEndsIt(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	req := planRequest("quorum-decline")
	req.Approvals, req.Approvers = 3, []string{alice.ID, bob.ID, carol.ID}
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	mallory := slackfake.User{ID: "U0MALLORY", Name: "mallory"}
	if _, err := d.fake.ClickButton(ctx, mallory, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, mallory.ID, "you are not one of them")
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "showing alice's vote", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), "1 of 3 — waiting for 2 more")
	})
	stillWaiting(t, a, "one approval of three")
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "Decline with feedback…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	view := waitView(t, ctx, d.fake, bob.ID, req.CallID)
	if _, err := d.fake.SubmitView(ctx, bob, view.ID, map[string][]string{blocks.TextBlockID(req.CallID, 0): {"Not during the freeze."}}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.wait(t)
	if err != nil || mustJSON(res.Answers) != `[{"id":"plan","selected":[],"custom":"Not during the freeze."}]` || res.Respondent.UserID != bob.ID || len(res.Approvers) != 0 {
		t.Fatalf("the agent got %+v, %v; want bob's decline", res, err)
	}
	upd := waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	if !strings.Contains(string(upd.Blocks), "declined") {
		t.Fatalf("the plan does not say declined: %s", upd.Blocks)
	}
}

// Quorum 2 on two replicas sharing Redis: three people approve each plan
// at the same instant, each through another replica. Every plan settles
// exactly once (one "answered" in the audit trail) with two distinct
// approvers, and the agent on either replica gets them.
func TestE2EQuorumConcurrentVotesOnTwoReplicasSettleOnce(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, true)
	d.env["ASKSLACK_QUORUM"] = "plan=2"
	d.env["ASKSLACK_API_TOKENS"] = "alice-laptop:" + aliceLaptop
	d.env["ASKSLACK_ADMIN_TOKENS"] = "ops:" + opsToken
	addrs := []string{freeAddr(t), freeAddr(t)}
	bots := []*bot{d.startAt(viaHTTP, addrs[0]), d.startAt(viaHTTP, addrs[1])}
	ctx := testCtx(t)
	const plans = 6
	users := []slackfake.User{alice, bob, carol}
	var wg sync.WaitGroup
	for i := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := planRequest(fmt.Sprintf("quorum-race-%d", i))
			agent := bots[i%2].client()
			agent.Token = aliceLaptop
			a := askWith(ctx, agent, req)
			m := waitPosted(t, ctx, d.fake, req.CallID)
			var clicks sync.WaitGroup
			for k, u := range users {
				clicks.Go(func() {
					to := "http://" + addrs[(i+k)%2] + "/slack/interactions"
					_, _ = d.fake.ClickButton(ctx, u, m.Channel, m.TS, "Approve", slackfake.Delivery{Transport: slackfake.TransportHTTP, To: to})
				})
			}
			clicks.Wait()
			res, err := a.wait(t)
			if err != nil || len(res.Approvers) != 2 || res.Approvers[0].UserID == res.Approvers[1].UserID || res.Approvers[1].UserID != res.Respondent.UserID {
				t.Errorf("%s: the agent got %+v, %v; want two distinct approvers, the last deciding", req.CallID, res, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	admin := bots[1].client()
	admin.Token = opsToken
	for i := range plans {
		id := fmt.Sprintf("quorum-race-%d", i)
		var answered, voted int
		deadline := time.Now().Add(10 * time.Second)
		for { // the chainer moves each replica's events into the trail moments later
			answered, voted = 0, 0
			if err := admin.AuditAll(ctx, asktype.AuditQuery{CallID: id}, func(e *asktype.AuditEntry) error {
				switch e.Event {
				case asktype.EventAnswered:
					answered++
				case asktype.EventVoted:
					voted++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if (answered >= 1 && voted >= 1) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if answered != 1 || voted != 1 {
			t.Errorf("%s: %d answered and %d voted events; want one vote and one settle", id, answered, voted)
		}
	}
}

// askslack hook against a bot with a quorum: the plan (Claude) and the
// Bash permission (Codex) are decided only by the second approval, and
// the decision JSON names both approvers.
func TestE2EHookQuorum(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	d.env["ASKSLACK_QUORUM"] = "plan=2,permission:Bash=2"
	b := d.start(viaHTTP)
	url, f := "http://"+b.addr, d.fake
	approveTwice := func(t *testing.T, h *hookProc, label string) {
		ctx := testCtx(t)
		m := posted(t, ctx, f)
		click(t, ctx, f, m, label) // alice
		waitMessage(t, ctx, f, m.Channel, m.TS, "showing alice's vote", func(m slackfake.Message) bool {
			return strings.Contains(string(m.Blocks), "1 of 2 — waiting for one more")
		})
		select {
		case <-h.done:
			t.Fatal("the hook decided on one approval of two")
		default:
		}
		if _, err := f.ClickButton(ctx, bob, m.Channel, m.TS, label, slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("ClaudePlan", func(t *testing.T) {
		h := startHook(t, url, hookInput(t, "claude_permission_exitplanmode.json"), "claude")
		approveTwice(t, h, "Approve")
		h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
		  "updatedInput":{"plan":"## Refactor auth\n1. Extract ...","planFilePath":"/home/u/.claude/plans/refactor-auth.md"},
		  "message":"Approved in Slack by alice and bob."}}}`)
	})
	t.Run("CodexBash", func(t *testing.T) {
		h := startHook(t, url, hookInput(t, "codex_permission.json"), "codex")
		approveTwice(t, h, "Allow")
		h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"Approved in Slack by alice and bob."}}}`)
	})
}

// A timed quorum ask: the vote in the window counts, the window closes
// with too few (the agent moves on, pending), a further vote still counts,
// and the late answer reaches the agent only once the count is met, with
// both approvers.
func TestE2EQuorumTimedWindowClosesWithTooFew(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_QUORUM"] = "plan=2"
	b := d.start(viaHTTP)
	req := planRequest("quorum-timed")
	req.Agent.SessionID = "sess-quorum"
	wait := float64(1500)
	req.TimeoutMs = &wait
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "Your approval counts: 1 of 2")
	res, err := a.wait(t)
	if err != nil || !res.Pending {
		t.Fatalf("when the window closed with one approval of two: %+v, %v; want pending", res, err)
	}
	c := b.client()
	if msgs, err := c.Messages(ctx, "sess-quorum", 0); err != nil || len(msgs) != 0 {
		t.Fatalf("a late answer queued with one approval: %+v, %v", msgs, err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "still open with alice's vote", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "Still open") && strings.Contains(string(m.Blocks), "1 of 2")
	})
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Messages(ctx, "sess-quorum", 10*time.Second)
	if err != nil || len(msgs) != 1 || msgs[0].Respondent.UserID != bob.ID || approverIDs(msgs[0].Approvers) != "U0ALICE,U0BOB" {
		t.Fatalf("the late answer: %+v, %v; want bob's, naming both approvers", msgs, err)
	}
}
