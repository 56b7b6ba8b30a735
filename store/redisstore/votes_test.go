package redisstore_test

import (
	"testing"

	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/store/storetest"
)

// TestVotes runs the settlement seam's conformance topics against Redis;
// the concurrent voters vote through two stores on one prefix, as two
// replicas do.
func TestVotes(t *testing.T) {
	testredis.URL(t)
	storetest.ExerciseVotes(t, func(t *testing.T) store.Store { return newStore(t) },
		func(t *testing.T) (store.Store, store.Store) {
			rdb, prefix := testredis.Client(t)
			return startStore(t, rdb, redisstore.Options{Prefix: prefix}), startStore(t, rdb, redisstore.Options{Prefix: prefix})
		})
}

// BenchmarkVote: see storetest.BenchVote (compare BenchmarkSettle).
func BenchmarkVote(b *testing.B) { storetest.BenchVote(b, newStore(b)) }
