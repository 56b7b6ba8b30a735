package redisstore

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A chained ask whose filing's event was in its outbox leaves the pending
// index in the same pass (no second look later); one whose filing has no
// event yet (its script not landed, as in Cluster, or an older release's
// event without the stamp) cools and is looked at again.
func TestRedisChainerForgetsAnAskWhoseFilingLanded(t *testing.T) {
	r, rdb := newTestRedis(t, Options{})
	ctx := context.Background()
	if _, _, err := r.Create(ctx, rask("landed", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Settle(ctx, "landed", json.RawMessage(`{"answers":{}}`), rt0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.drain(ctx, true); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.ZCard(ctx, r.k.auditPending()).Result(); err != nil || n != 0 {
		t.Fatalf("pending after the pass: %d, %v; want the chained ask forgotten", n, err)
	}
	if n, err := rdb.HLen(ctx, r.k.auditMarks()).Result(); err != nil || n != 0 {
		t.Fatalf("marks after the pass: %d, %v; want none", n, err)
	}
	if n, err := rdb.XLen(ctx, r.k.chain()).Result(); err != nil || n != 2 {
		t.Fatalf("chain: %d entries, %v; want asked and answered", n, err)
	}

	// A filing whose script has not landed: the outbox holds an event of
	// another filing (here: one without a stamp, as fc987cc writes).
	ob := r.k.outbox("late")
	if err := rdb.RPush(ctx, ob, `1:1|{"at":"1","ev":"asked","c":"","a":"","as":"","w":"","d":""}`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, r.k.auditPending(), redis.Z{Score: float64(r.clock.Now().UnixMilli()) + 0.25, Member: "late"}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.drain(ctx, true); err != nil {
		t.Fatal(err)
	}
	s, err := rdb.ZScore(ctx, r.k.auditPending(), "late").Result()
	if err != nil {
		t.Fatalf("the unstamped ask left the pending index: %v; want it cooling for a second look", err)
	}
	if f := strconv.FormatFloat(s, 'f', -1, 64); !strings.HasSuffix(f, ".5") {
		t.Fatalf("the unstamped ask's score %s; want a cooling x.5", f)
	}
	if n, _ := rdb.XLen(ctx, r.k.chain()).Result(); n != 3 {
		t.Fatalf("chain: %d entries; want the unstamped event chained too", n)
	}
}
