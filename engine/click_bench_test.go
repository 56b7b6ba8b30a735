package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// BenchmarkClickSettles is the engine's part of a click, as the Slack
// dispatcher runs it: read the ask the click names (Current), then answer
// it with that record — decide, vote, settle, the observers told — on the
// memory store, so what is left is decoding and deciding:
//
//	go test -run '^$' -bench ClickSettles -benchmem ./engine/
func BenchmarkClickSettles(b *testing.B) {
	st := store.NewMemory(time.Hour, nil)
	claim := waterfall.AnswererFunc(func(context.Context, *waterfall.Request, waterfall.Next) (waterfall.Settlement, error) {
		return waterfall.Settlement{}, waterfall.ErrClaimed
	})
	h := engine.NewHost(st, claim, engine.HostOptions{})
	ctx := context.Background()
	ans := waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"SQLite"}}}}
	ids := make([]string, 0, 512) // under the session cap (store.MaxSessionAsks)
	next, batch := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		if next == len(ids) {
			b.StopTimer()
			ids, next = ids[:0], 0
			batch++
			for i := range cap(ids) {
				req := dbQuestion("click-" + strconv.Itoa(batch) + "-" + strconv.Itoa(i))
				if _, err := h.Open(ctx, req); err != nil {
					b.Fatal(err)
				}
				ids = append(ids, req.CallID)
			}
			b.StartTimer()
		}
		id := ids[next]
		next++
		r, err := h.Current(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.AnswerRecord(ctx, r, ans, aliceInSlack); err != nil {
			b.Fatal(err)
		}
	}
}
