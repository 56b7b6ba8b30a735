package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/kit/testredis"
)

// BenchmarkUseToken is what every host API request presenting a personal
// agent token pays: one script that finds the token by its hash and
// records its use, among 1,000 kept tokens.
func BenchmarkUseToken(b *testing.B) {
	testredis.URL(b)
	s := newStore(b)
	ctx := context.Background()
	now := time.Now()
	for i := range 1000 {
		t := asktype.AgentToken{ID: fmt.Sprint("at_", i), Name: "laptop", Owner: fmt.Sprint("U", i%50), Hash: fmt.Sprint("hash-", i),
			Created: now, Expires: now.Add(90 * 24 * time.Hour)}
		if err := s.AddToken(ctx, t, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.UseToken(ctx, fmt.Sprint("hash-", i%1000), "192.0.2.1", now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPing is a bare round trip to the same Redis, to read
// BenchmarkUseToken against.
func BenchmarkPing(b *testing.B) {
	testredis.URL(b)
	s := newStore(b)
	ctx := context.Background()
	for b.Loop() {
		if err := s.Ping(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
