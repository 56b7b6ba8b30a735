package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// BenchSettle measures the click's store work alone on s: settling an open
// ask. The asks are created before the timer starts.
func BenchSettle(b *testing.B, s store.Store) {
	ctx := context.Background()
	req := json.RawMessage(`{"callId":"x","agent":{"id":"a"},"questions":[{"id":"q","question":"?","options":[{"label":"A"}]}]}`)
	answer := json.RawMessage(`{"answers":[{"id":"q","selected":["A"]}],"respondent":{"userId":"U1","surface":"slack"}}`)
	now := time.Now()
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("settle-%d", i)
		// Sessions of 500: a session holds at most store.MaxSessionAsks active asks.
		if _, _, err := s.Create(ctx, &asktype.Ask{CallID: ids[i], SessionID: fmt.Sprint("s", i/500), Request: req, Created: now, Deadline: now.Add(time.Minute)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Settle(ctx, ids[i], answer, now); err != nil {
			b.Fatal(err)
		}
	}
}
