package redisstore_test

import (
	"testing"

	"github.com/askslack/askslack/store/storetest"
)

// BenchmarkSettle: see storetest.BenchSettle.
func BenchmarkSettle(b *testing.B) { storetest.BenchSettle(b, newStore(b)) }
