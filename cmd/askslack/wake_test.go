package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
)

// Issue 20, narrowed as it was reported: blocking asks on two replicas, each
// clicked by 1-3 people at the same instant on different replicas (a load
// balancer's pick), so a losing click on the waiter's replica races the
// winning one on the other. Every agent gets its answer within a few
// seconds of the click. Before the Hub's fix, about 1 in 20 hung here.
func TestE2ESimultaneousClicksOnTwoReplicasReachEveryAgent(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, true)
	addrs := []string{freeAddr(t), freeAddr(t)}
	bots := []*bot{d.startAt(viaHTTP, addrs[0]), d.startAt(viaHTTP, addrs[1])}
	ctx := testCtx(t)
	const asks = 40
	users := []slackfake.User{alice, bob, carol}
	var hung []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range asks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("burst-%02d", i)
			req := oneQuestion(id, "Yes", "No")
			actx, cancel := context.WithCancel(ctx)
			defer cancel()
			waiting := askWith(actx, bots[i%2].client(), req)
			m := waitPosted(t, ctx, d.fake, id)
			// 1-3 people at once, each through the replica the balancer picks:
			// always one on each replica when there are two or more.
			n := 1 + i%3
			var clicks sync.WaitGroup
			for k := range n {
				clicks.Add(1)
				go func() {
					defer clicks.Done()
					to := "http://" + addrs[(i+k+1)%2] + "/slack/interactions"
					_, _ = d.fake.ClickButton(ctx, users[k], m.Channel, m.TS, "Yes", slackfake.Delivery{Transport: slackfake.TransportHTTP, To: to})
				}()
			}
			clicks.Wait()
			clicked := time.Now()
			select {
			case <-waiting.done:
			case <-time.After(chaosDelivery):
				mu.Lock()
				hung = append(hung, fmt.Sprintf("%s (%d clicks, waiting on replica %d): no answer %s after the clicks", id, n, i%2, chaosDelivery))
				mu.Unlock()
				return
			}
			if waiting.err != nil || waiting.res.Pending || waiting.res.Answers[0].Selected[0] != "Yes" {
				t.Errorf("%s: the agent got %+v, %v (%s after the clicks)", id, waiting.res, waiting.err, time.Since(clicked))
			}
		}()
	}
	wg.Wait()
	if len(hung) > 0 {
		t.Fatalf("%d of %d agents never got the answer they were given:\n%v", len(hung), asks, hung)
	}
}
