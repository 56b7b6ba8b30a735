package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// A replica told to stop (SIGTERM, as a rolling update does) right after
// answers came in through it, with their message updates waiting for
// Slack's chat.update budget (paced at Slack's own rates), leaves none of
// those questions with live buttons: it renders them before it exits or
// hands them to the other replica, which renders them at once — with no
// sweep to rely on (ASKSLACK_RECONCILE_AFTER is ten minutes here). Before,
// the queue was dropped on SIGTERM and the questions stayed live until the
// sweep, a minute later as shipped.
func TestE2ESigtermRendersQueuedUpdates(t *testing.T) {
	d := newDeployment(t, true)
	d.env["ASKSLACK_SLACK_PACING"] = "true"
	d.env["ASKSLACK_RECONCILE_AFTER"] = "10m"
	a, b := d.start(viaHTTP), d.start(viaHTTP)
	ctx := testCtx(t)
	const n = 20
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sigterm-%02d", i)
		if _, err := a.client().Open(ctx, oneQuestion(ids[i], "Yes", "No")); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		waitPosted(t, ctx, d.fake, id)
	}
	// Answers from another surface: no click, so no response_url; every
	// update is a chat.update, and all but the first few wait for tokens.
	for _, id := range ids {
		if _, err := a.client().Answer(ctx, id, hostapi.AnswerBody{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"Yes"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	stopped := time.Now()
	a.stop()
	t.Logf("replica A exited %s after SIGTERM", time.Since(stopped).Round(time.Millisecond))
	live := func() []string {
		var out []string
		for _, id := range ids {
			for _, m := range d.fake.Messages() {
				if strings.Contains(string(m.Blocks), "ask/"+id+"/") && hasControls(m) {
					out = append(out, id)
				}
			}
		}
		return out
	}
	// B takes what A handed over at once, at the budget's pace (a token
	// every 1.2 s); the bound only ends a failing run, well before the
	// sweep could help.
	deadline := time.Now().Add(60 * time.Second)
	for len(live()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // the fake's state is polled; the bound is the assertion's, not a wait for an effect
	}
	if l := live(); len(l) > 0 {
		t.Fatalf("%d of %d answered questions still live %s after their replica got SIGTERM: %v\nA's logs:\n%s\nB's logs:\n%s",
			len(l), n, time.Since(stopped).Round(time.Millisecond), l, a.logs.String(), b.logs.String())
	}
	t.Logf("every answered question lost its buttons %s after SIGTERM", time.Since(stopped).Round(time.Millisecond))
}
