package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/store/storetest"
)

func newStore(t testing.TB) store.Store {
	rdb, prefix := testredis.Client(t)
	return startStore(t, rdb, redisstore.Options{Prefix: prefix})
}

// startStore is a started store on rdb with opts; it stops with t.
func startStore(t testing.TB, rdb redis.UniversalClient, opts redisstore.Options) *redisstore.Store {
	s, err := redisstore.New(rdb, opts)
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
	storetest.ExerciseRulesShared(t, func(t *testing.T) (store.Store, store.Store) {
		rdb, prefix := testredis.Client(t)
		return startStore(t, rdb, redisstore.Options{Prefix: prefix}), startStore(t, rdb, redisstore.Options{Prefix: prefix})
	})
	storetest.ExerciseTokensShared(t, func(t *testing.T) (store.Store, store.Store) {
		rdb, prefix := testredis.Client(t)
		return startStore(t, rdb, redisstore.Options{Prefix: prefix}), startStore(t, rdb, redisstore.Options{Prefix: prefix})
	})
	storetest.ExerciseAuditShared(t, storetest.AuditHarness{
		Shared: func(t *testing.T) (store.Store, store.Store) {
			rdb, prefix := testredis.Client(t)
			return startStore(t, rdb, redisstore.Options{Prefix: prefix}), startStore(t, rdb, redisstore.Options{Prefix: prefix})
		},
		Crashing: func(t *testing.T, step string) (store.Store, store.Store) {
			rdb, prefix := testredis.Client(t)
			var crashed atomic.Bool
			// Not started: its chainer runs only when it reads, and dies
			// once after step, holding the lease as a dead replica would.
			crashing, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix, ChainLease: 300 * time.Millisecond,
				AuditFault: func(s string) error {
					if s == step && crashed.CompareAndSwap(false, true) {
						return errors.New("killed after " + s)
					}
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			return crashing, startStore(t, rdb, redisstore.Options{Prefix: prefix, ChainLease: 300 * time.Millisecond})
		},
		NoScript: func(t *testing.T) (store.Store, func()) {
			rdb, prefix := testredis.Private(t)
			s := startStore(t, rdb, redisstore.Options{Prefix: prefix})
			return s, func() {
				if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
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
	if _, _, err := s.Create(ctx, &asktype.Ask{CallID: "c1", Request: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Abort(ctx, "c1", time.Now(), asktype.Withdrawn); err != nil {
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
