package main

import (
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
)

// What a clicker is told (an ephemeral: "already answered by alice") is a
// Slack call that may take seconds under a slow Slack; a burst of them must
// not hold back the next click's settle. The paced chaos run found agents
// waiting minutes for an answer clicked long before: their clicks sat
// behind ephemerals on the same workers. Here every ephemeral is held at
// the fake, more of them than the bot has workers, and a click on another
// question still settles it.
func TestE2EClickSettlesWhileEphemeralsHang(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	ctx := testCtx(t)
	to := slackfake.Delivery{Transport: slackfake.TransportHTTP, To: "http://" + b.addr + "/slack/interactions"}

	first := b.askAsync(ctx, oneQuestion("tells-first", "Yes", "No"))
	m := waitPosted(t, ctx, d.fake, "tells-first")
	if _, err := d.fake.ClickButtonIn(ctx, m, alice, "Yes", to); err != nil {
		t.Fatal(err)
	}
	if _, err := first.wait(t); err != nil {
		t.Fatal(err)
	}

	// Twelve late clicks on the answered question (its buttons as they
	// were): each is told who answered, and every one of those ephemerals
	// hangs at Slack.
	const late = 12 // more than the bot's 8 workers
	var holds []*slackfake.Hold
	for range late {
		holds = append(holds, d.fake.HoldNext("chat.postEphemeral"))
	}
	t.Cleanup(func() {
		for _, h := range holds {
			h.Release()
		}
	})
	for range late {
		if _, err := d.fake.ClickButtonIn(ctx, m, bob, "Yes", to); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range holds[:8] {
		select {
		case <-h.Arrived():
		case <-ctx.Done():
			t.Fatalf("only %d of the late clicks' ephemerals reached Slack", i)
		}
	}

	second := b.askAsync(ctx, oneQuestion("tells-second", "Yes", "No"))
	m2 := waitPosted(t, ctx, d.fake, "tells-second")
	if _, err := d.fake.ClickButtonIn(ctx, m2, alice, "Yes", to); err != nil {
		t.Fatal(err)
	}
	res, err := second.wait(t)
	if err != nil || res.Respondent.UserID != alice.ID {
		t.Fatalf("the second question's click with the ephemerals hanging = %+v, %v; want alice's answer", res, err)
	}
	// Settled while every ephemeral still hung: the click did not wait for
	// one of them to give up (before, it waited for an ephemeral's client
	// timeout to free a worker).
	for i, h := range holds {
		select {
		case <-h.Abandoned():
			t.Fatalf("ephemeral %d gave up before the second question settled: the click waited behind it", i)
		default:
		}
	}
}
