package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// BenchLifecycle measures one ask's store work end to end on s: create,
// record the message, settle (the click), mark rendered.
func BenchLifecycle(b *testing.B, s store.Store) {
	ctx := context.Background()
	req := json.RawMessage(`{"callId":"x","agent":{"id":"a"},"questions":[{"id":"q","question":"?","options":[{"label":"A"}]}]}`)
	answer := json.RawMessage(`{"answers":[{"id":"q","selected":["A"]}],"respondent":{"userId":"U1","surface":"slack"}}`)
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("c%d", n.Add(1))
			now := time.Now()
			if _, _, err := s.Create(ctx, &asktype.Ask{CallID: id, SessionID: "s", Request: req, Created: now, Deadline: now.Add(time.Minute)}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.SetMessage(ctx, id, asktype.MessageRef{Conversation: "C1", ID: "1.1"}); err != nil {
				b.Fatal(err)
			}
			a, err := s.Settle(ctx, id, answer, now)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.MarkRendered(ctx, id, a.Version); err != nil {
				b.Fatal(err)
			}
		}
	})
}
