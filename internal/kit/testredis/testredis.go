// Package testredis gives tests a Redis client and a key prefix of their own,
// so tests run in parallel against one server without touching each other,
// and gives a test that changes what is server-wide (scripts, the whole
// data set, configuration) a server of its own (StartServer, Private).
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// URL returns REDIS_URL, or skips the test when it is unset.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("REDIS_URL")
	if u == "" {
		t.Skip("REDIS_URL not set; skipping the Redis-backed variant")
	}
	return u
}

// Client connects to REDIS_URL (skipping when unset) and returns the client
// and a fresh key prefix; keys under the prefix are deleted when t ends.
func Client(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	opt, err := redis.ParseURL(URL(t))
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	rdb := redis.NewClient(opt)
	prefix := Prefix(t)
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		_ = rdb.Close()
	})
	return rdb, prefix
}

// Prefix returns a key prefix unique to this test run.
func Prefix(t testing.TB) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := strings.NewReplacer("/", ".", " ", "_", "{", "", "}", "").Replace(t.Name())
	return "test:" + name + ":" + hex.EncodeToString(b)
}
