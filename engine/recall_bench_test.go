package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/waterfall"
)

// BenchmarkOpenAndAnswer is one question asked and answered, with answer
// memory off and on, over each store: what remembering costs an ask (one
// read when it is stored, one write when it is answered, per question).
func BenchmarkOpenAndAnswer(b *testing.B) {
	stores := map[string]func(b *testing.B) engine.Store{
		"memory": func(*testing.B) engine.Store { return store.NewMemory(time.Hour, nil) },
		"redis": func(b *testing.B) engine.Store {
			rdb, prefix := testredis.Client(b)
			s, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Stop(context.Background()) })
			return s
		},
	}
	for _, name := range []string{"memory", "redis"} {
		for _, on := range []bool{false, true} {
			b.Run(name+"/memory="+strconv.FormatBool(on), func(b *testing.B) {
				st := stores[name](b)
				claim := waterfall.AnswererFunc(func(context.Context, *waterfall.Request, waterfall.Next) (waterfall.Settlement, error) {
					return waterfall.Settlement{}, waterfall.ErrClaimed // as Slack does: the answer comes through Answer
				})
				h := engine.NewHost(st, claim, engine.HostOptions{})
				if on {
					h.UseMemory(engine.MemoryOptions{Notes: st.(store.Notes), For: time.Hour})
				}
				ctx := context.Background()
				ans := waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"SQLite"}}}}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					req := dbQuestion("bench-" + strconv.Itoa(i))
					if _, err := h.Open(ctx, req); err != nil {
						b.Fatal(err)
					}
					if _, err := h.Answer(ctx, req.CallID, ans, aliceInSlack); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
