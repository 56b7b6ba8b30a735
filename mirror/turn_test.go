package mirror

import (
	"sync/atomic"
	"testing"
	"time"
)

// A reminder waits for its channel's turn at the front of the queue: the
// next token goes to it, ahead of questions that waited longer in the
// lane (its own question has waited longer still), and the questions go
// on after it. One taken out (Forgo) never runs.
func TestATurnGoesAheadOfTheQuestionsWaiting(t *testing.T) {
	p := setupPaced(t)
	for i, id := range []string{"q-0", "q-1", "q-2", "q-3"} {
		p.create(t, id, "s1", time.Time{})
		p.m.Kick(id)
		p.queued(t, i+1)
	}
	p.clk.Advance(0) // the burst: two posts, and the budget is spent
	p.postedSet(t, "q-0", "q-1")

	var reminded, forgone atomic.Int32
	if !p.m.Turn("C1", "remind:q-0", "s1", func() { reminded.Add(1) }) ||
		!p.m.Turn("C1", "remind:q-1", "s2", func() { forgone.Add(1) }) {
		t.Fatal("the lane refused a turn")
	}
	p.m.Forgo("C1", "remind:q-1")
	if reminded.Load() != 0 {
		t.Fatal("the reminder ran with the budget spent")
	}
	p.clk.Advance(time.Second) // one token
	if reminded.Load() != 1 {
		t.Fatal("the next token did not go to the reminder")
	}
	if n, _ := p.m.QueueDepth(); n != 2 {
		t.Fatalf("%d waiting; want the two questions still waiting", n)
	}
	p.clk.Advance(time.Second)
	p.postedSet(t, "q-0", "q-1", "q-2")
	p.clk.Advance(time.Second)
	p.postedSet(t, "q-0", "q-1", "q-2", "q-3")
	if reminded.Load() != 1 || forgone.Load() != 0 {
		t.Fatalf("reminder ran %d times, the forgone one %d; want 1 and 0", reminded.Load(), forgone.Load())
	}
}
