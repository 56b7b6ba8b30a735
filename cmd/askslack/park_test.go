package main

import (
	"context"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// A blocking ask still waiting after a quarter second is parked (its connection
// taken over from net/http): it still gets its answer, a caller that hangs
// up still gets the re-attach grace, and a drain still answers 503.
func TestE2EParkedBlockingAsks(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)

	// Answered while parked.
	a := b.askAsync(ctx, oneQuestion("park-answer", "Yes", "No"))
	m := waitPosted(t, ctx, d.fake, "park-answer")
	b.waitLog(ctx, `"blocking ask parked","callId":"park-answer"`)
	click(t, ctx, d.fake, m, "Yes")
	if res, err := a.wait(t); err != nil || res.Answers[0].Selected[0] != "Yes" {
		t.Fatalf("parked ask: %+v %v", res, err)
	}

	// The caller hangs up while parked: detached, not withdrawn; the same
	// request re-attaches and gets the answer.
	dctx, hangUp := context.WithCancel(ctx)
	req := oneQuestion("park-drop", "Yes", "No")
	dropped := b.askAsync(dctx, req)
	m = waitPosted(t, ctx, d.fake, "park-drop")
	b.waitLog(ctx, `"blocking ask parked","callId":"park-drop"`)
	hangUp()
	<-dropped.done
	waitMetric(t, ctx, b, `askslack_asks_total{outcome="detached"} 1`)
	again := b.askAsync(ctx, req)
	click(t, ctx, d.fake, m, "No")
	if res, err := again.wait(t); err != nil || res.Answers[0].Selected[0] != "No" {
		t.Fatalf("re-attached after a parked hang-up: %+v %v", res, err)
	}

	// SIGTERM: the parked ask is answered 503, to re-attach elsewhere.
	// A client that does not keep re-attaching: the bot is gone after the 503.
	once := &hostapi.Client{BaseURL: "http://" + b.addr, Reattach: time.Nanosecond}
	drained := askWith(ctx, once, oneQuestion("park-drain", "Yes", "No"))
	waitPosted(t, ctx, d.fake, "park-drain")
	b.waitLog(ctx, `"blocking ask parked","callId":"park-drain"`)
	b.stop()
	if _, err := drained.wait(t); waterfall.CodeOf(err) != waterfall.CodeUnavailable {
		t.Fatalf("a parked ask on a draining replica got %v; want UNAVAILABLE", err)
	}
}
