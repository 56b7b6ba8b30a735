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

// BenchVote is BenchSettle through the settlement seam: the default
// policy's decision (no votes seen, settle) applied with Votes.Vote. It
// should cost what BenchSettle costs: one round trip in Redis.
func BenchVote(b *testing.B, s store.Store) {
	ctx := context.Background()
	req := json.RawMessage(`{"callId":"x","agent":{"id":"a"},"questions":[{"id":"q","question":"?","options":[{"label":"A"}]}]}`)
	answer := json.RawMessage(`{"answers":[{"id":"q","selected":["A"]}],"respondent":{"userId":"U1","surface":"slack"}}`)
	now := time.Now()
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("vote-%d", i)
		if _, _, err := s.Create(ctx, &asktype.Ask{CallID: ids[i], SessionID: fmt.Sprint("s", i/500), Request: req, Created: now, Deadline: now.Add(time.Minute)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := store.VoteParams{Voter: "slack:U1", Vote: answer, At: now, State: asktype.Open, Settle: true, Settlement: answer}
		if _, err := s.Vote(ctx, ids[i], p); err != nil {
			b.Fatal(err)
		}
	}
}
