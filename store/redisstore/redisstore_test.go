package redisstore_test

import (
	"context"
	"testing"
	"time"

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
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
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

// Start and Stop: Stop is safe twice and before Start; a second Start is an
// error; Start after Stop does nothing; a hint published after Start wakes
// a subscriber.
func TestServiceShape(t *testing.T) {
	testredis.URL(t)
	ctx := context.Background()
	rdb, prefix := testredis.Client(t)
	idle, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix + "idle"})
	if err != nil {
		t.Fatal(err)
	}
	if err := idle.Stop(ctx); err != nil {
		t.Fatal("Stop before Start:", err)
	}
	if err := idle.Start(ctx); err != nil {
		t.Fatal("Start after Stop:", err)
	}
	if err := idle.Stop(ctx); err != nil {
		t.Fatal("second Stop:", err)
	}

	s, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("a second Start succeeded")
	}
	changes, stop := s.Changes("c1")
	defer stop()
	if _, _, err := s.Create(ctx, &store.Ask{CallID: "c1", Request: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abort(ctx, "c1", time.Now(), store.Withdrawn); err != nil {
		t.Fatal(err)
	}
	<-changes // through Redis pub/sub
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal("second Stop:", err)
	}
}
