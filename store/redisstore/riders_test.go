package redisstore

import (
	"context"
	"testing"
	"time"
)

// A write PutLater holds is read on its replica at once, rides the next
// pipeline (here a Create's) to Redis, where another replica reads it; a
// Forget in between wins over it.
func TestRedisPutLaterRidesTheNextPipeline(t *testing.T) {
	r, rdb := newTestRedis(t, Options{})
	other, _ := newStoreOn(t, rdb, r.k.prefix, Options{})
	ctx := context.Background()
	r.PutLater("k1", "v1", time.Hour, time.Now())
	if v, err := r.Remember(ctx, "k1", "", 0, time.Now()); err != nil || v != "v1" {
		t.Fatalf("the same replica reads %q, %v; want v1", v, err)
	}
	if _, _, err := r.Create(ctx, rask("c1", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	if v, err := other.Remember(ctx, "k1", "", 0, time.Now()); err != nil || v != "v1" {
		t.Fatalf("another replica after the next pipeline reads %q, %v; want v1", v, err)
	}
	if ttl := rdb.PTTL(ctx, r.k.kept("k1")).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("ttl %v; want the hour asked", ttl)
	}

	r.PutLater("k2", "v2", time.Hour, time.Now())
	if _, err := r.Forget(ctx, "k2", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Create(ctx, rask("c2", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	if v, _ := other.Remember(ctx, "k2", "", 0, time.Now()); v != "" {
		t.Fatalf("a forgotten write landed: %q", v)
	}
}
