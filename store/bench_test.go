package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/storetest"
)

// BenchmarkAskLifecycle: see storetest.BenchLifecycle (the Redis figures are
// in store/redisstore).
func BenchmarkAskLifecycle(b *testing.B) { storetest.BenchLifecycle(b, store.NewMemory(0, nil)) }

// BenchmarkSettle: see storetest.BenchSettle (the Redis figure is in
// store/redisstore).
func BenchmarkSettle(b *testing.B) { storetest.BenchSettle(b, store.NewMemory(0, nil)) }

// BenchmarkMemoryRead measures what every reader of a settled ask pays
// per read of the embedded store: Get, as the waiter, the mirror, the Home
// tab and the host API each do, on an ask with a request of a few kB.
func BenchmarkMemoryRead(b *testing.B) {
	s := store.NewMemory(0, nil)
	ctx := context.Background()
	req := json.RawMessage(`{"callId":"c1","agent":{"id":"a"},"questions":[{"id":"q","question":"` + strings.Repeat("x", 4000) + `?","options":[{"label":"A"},{"label":"B"}]}]}`)
	if _, _, err := s.Create(ctx, &asktype.Ask{CallID: "c1", SessionID: "s", Request: req, Created: time.Now()}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Settle(ctx, "c1", json.RawMessage(`{"answers":[{"id":"q","selected":["A"]}],"respondent":{"userId":"U1","surface":"slack"}}`), time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(ctx, "c1"); err != nil {
			b.Fatal(err)
		}
	}
}
