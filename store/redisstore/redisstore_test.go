package redisstore_test

import (
	"context"
	"testing"

	"github.com/askslack/askslack/internal/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/store/storetest"
)

func newStore(t testing.TB) store.Store {
	rdb, prefix := testredis.Client(t)
	s, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TestConformance runs the store suite against Redis (REDIS_URL).
func TestConformance(t *testing.T) {
	testredis.URL(t)
	storetest.Exercise(t, func(t *testing.T) store.Store { return newStore(t) })
}

// BenchmarkAskLifecycle: see storetest.BenchLifecycle.
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go test -run '^$' -bench . ./store/redisstore/
func BenchmarkAskLifecycle(b *testing.B) { storetest.BenchLifecycle(b, newStore(b)) }
