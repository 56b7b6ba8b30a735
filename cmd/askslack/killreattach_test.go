package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// Blocking agents whose replica is SIGKILLed re-attach once it is back, and
// each then ends with its ask's outcome as soon as there is one — here a
// withdrawal made through the other replica — never waits on for nothing.
func TestE2EAgentsOfAKilledReplicaNeverHang(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, true)
	d.env["ASKSLACK_REATTACH_GRACE"] = "1s"
	d.env["ASKSLACK_CLAIM_LEASE"] = "2s"
	d.env["ASKSLACK_LOG_LEVEL"] = "debug" // the test waits for "blocking ask parked"
	addrs := []string{freeAddr(t), freeAddr(t)}
	b0 := d.startAt(viaHTTP, addrs[0])
	_ = d.startAt(viaHTTP, addrs[1])
	ctx := testCtx(t)
	var waiting []*asked
	for i := range 10 {
		id := fmt.Sprintf("killed-%02d", i)
		c := &hostapi.Client{BaseURL: "http://" + addrs[0], Reattach: time.Minute}
		waiting = append(waiting, askWith(ctx, c, oneQuestion(id, "Yes", "No")))
		waitPosted(t, ctx, d.fake, id)
	}
	time.Sleep(500 * time.Millisecond) // let them park
	b0.kill()
	time.Sleep(3 * time.Second) // down longer than the grace: nobody saw the callers go, so the asks stay open
	b0 = d.startAt(viaHTTP, addrs[0])
	for i := range waiting {
		b0.waitLog(ctx, fmt.Sprintf(`"blocking ask parked","callId":"killed-%02d"`, i)) // re-attached
	}
	other := &hostapi.Client{BaseURL: "http://" + addrs[1]}
	for i := range waiting {
		if _, err := other.Abort(ctx, fmt.Sprintf("killed-%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range waiting {
		select {
		case <-a.done:
			if waterfall.CodeOf(a.err) != waterfall.CodeAskAborted {
				t.Errorf("killed-%02d: %+v, %v; want ASK_ABORTED", i, a.res, a.err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("killed-%02d: the agent still waits 20s after its replica came back", i)
		}
	}
}

// Issue 20 part 2 through the binary: a replica is SIGKILLed while Slack
// holds its posts but before it has recorded them (Slack answers slowly,
// after storing). The questions are then answered through the other
// replica, and every message loses its buttons.
func TestE2EPostsOfAKilledReplicaAreBroughtInStep(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, true)
	d.env["ASKSLACK_CLAIM_LEASE"] = "2s"
	d.env["ASKSLACK_RECONCILE_AFTER"] = "4s"
	d.env["ASKSLACK_REATTACH_GRACE"] = "30s"
	addrs := []string{freeAddr(t), freeAddr(t)}
	b0 := d.startAt(viaHTTP, addrs[0])
	d.startAt(viaHTTP, addrs[1])
	ctx := testCtx(t)
	d.fake.SetChaos(slackfake.Chaos{Methods: []string{"chat.postMessage"}, MaxLatency: 3 * time.Second, Seed: 1})
	const n = 10
	for i := range n {
		c := &hostapi.Client{BaseURL: "http://" + addrs[0]}
		if _, err := c.Open(ctx, oneQuestion(fmt.Sprintf("ghost-%02d", i), "Yes", "No")); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []slackfake.Message
	for i := range n {
		msgs = append(msgs, waitPosted(t, ctx, d.fake, fmt.Sprintf("ghost-%02d", i))) // in Slack, maybe not yet recorded
	}
	b0.kill()
	d.fake.SetChaos(slackfake.Chaos{})
	for i, m := range msgs {
		to := "http://" + addrs[1] + "/slack/interactions"
		if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Yes", slackfake.Delivery{Transport: slackfake.TransportHTTP, To: to}); err != nil {
			t.Fatalf("ghost-%02d: %v", i, err)
		}
	}
	for _, m := range msgs {
		waitMessage(t, ctx, d.fake, m.Channel, m.TS, "buttons gone after the answer", func(m slackfake.Message) bool { return !hasControls(m) })
	}
}
