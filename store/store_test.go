package store_test

import (
	"context"
	"testing"

	"github.com/askslack/askslack/internal/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store {
		return store.NewMemory(0, nil)
	})
}

func TestRedis(t *testing.T) {
	testredis.URL(t)
	storetest.Exercise(t, func(t *testing.T) store.Store {
		rdb, prefix := testredis.Client(t)
		s, err := store.NewRedis(rdb, store.RedisOptions{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		return s
	})
}
