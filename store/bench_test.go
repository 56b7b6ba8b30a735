package store_test

import (
	"testing"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/storetest"
)

// BenchmarkAskLifecycle: see storetest.BenchLifecycle (the Redis figures are
// in store/redisstore).
func BenchmarkAskLifecycle(b *testing.B) { storetest.BenchLifecycle(b, store.NewMemory(0, nil)) }

// BenchmarkSettle: see storetest.BenchSettle (the Redis figure is in
// store/redisstore).
func BenchmarkSettle(b *testing.B) { storetest.BenchSettle(b, store.NewMemory(0, nil)) }
