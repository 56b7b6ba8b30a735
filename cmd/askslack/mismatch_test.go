package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A click whose block names another ask than the message it is in (the
// message's metadata names its own ask) is refused and changes nothing:
// the live question is not replaced by "expired" because the named ask is
// gone, and an ask that exists is not answered from another's message.
func TestE2EClickNamingAnotherAsk(t *testing.T) {
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
			live, other := "live-"+id, "other-"+id
			liveAsk := b.askAsync(ctx, oneQuestion(live, "Yes", "No"))
			otherAsk := b.askAsync(ctx, oneQuestion(other, "Yes", "No"))
			msg := waitPosted(t, ctx, d.fake, live)
			waitPosted(t, ctx, d.fake, other)
			b.waitLog(ctx, `"question posted","callId":"`+live+`"`)
			b.waitLog(ctx, `"question posted","callId":"`+other+`"`)

			for _, named := range []string{"gone-" + id, other} {
				forged := msg
				forged.Blocks = bytes.ReplaceAll(msg.Blocks, []byte("ask/"+live+"/"), []byte("ask/"+named+"/"))
				if _, err := d.fake.ClickButtonIn(ctx, forged, alice, "Yes", delivery(tr)); err != nil {
					t.Fatal(err)
				}
			}
			// Until both clicks are refused, or one of them did harm.
			harmed := func() bool {
				m, _ := d.fake.Message(msg.Channel, msg.TS)
				select {
				case <-otherAsk.done:
					return true
				default:
				}
				return m.Updated != 0
			}
			short, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			for strings.Count(b.logs.String(), `"messageCallId":"`+live+`"`) < 2 && !harmed() && short.Err() == nil {
				time.Sleep(20 * time.Millisecond) // the child's logs: no signal to wait on
			}
			if m, _ := d.fake.Message(msg.Channel, msg.TS); !hasControls(m) || m.Updated != 0 {
				t.Fatalf("the live question was changed by a click naming another ask: updated %d times, blocks %s", m.Updated, m.Blocks)
			}
			waitMetric(t, ctx, b, `askslack_interactions_total{result="invalid",type="block_actions"} 2`)
			for _, a := range []*asked{liveAsk, otherAsk} {
				select {
				case <-a.done:
					t.Fatalf("an ask was answered by a click naming another ask: %+v %v", a.res, a.err)
				default:
				}
			}
		})
	}
}
