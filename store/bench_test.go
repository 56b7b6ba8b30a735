package store_test

import (
	"testing"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/storetest"
)

// BenchmarkAskLifecycle: see storetest.BenchLifecycle (the Redis figures are
// in store/redisstore).
func BenchmarkAskLifecycle(b *testing.B) { storetest.BenchLifecycle(b, store.NewMemory(0, nil)) }
