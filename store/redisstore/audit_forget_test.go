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

// A replica writing schema 2 files behind messages in the {stale} index;
// a replica of schema 1 (this release's default) lists them from there,
// and moves them into its own; and the other way.
func TestRedisStaleIndexOfEitherSchemaIsSwept(t *testing.T) {
	r2, rdb := newTestRedis(t, Options{Schema: 2})
	r1, _ := newStoreOn(t, rdb, r2.k.prefix, Options{})
	ctx := context.Background()
	if r1.k.stale() == r2.k.stale() {
		t.Fatalf("both schemas write %s", r1.k.stale())
	}
	for _, c := range []struct {
		id            string
		writer, sweep *Store
	}{{"by2", r2, r1}, {"by1", r1, r2}} {
		if _, _, err := c.writer.Create(ctx, rask(c.id, "s1", 0)); err != nil {
			t.Fatal(err)
		}
		if n, _ := rdb.ZCard(ctx, c.writer.k.stale()).Result(); n != 1 {
			t.Fatalf("%s: %s holds %d; want the new ask", c.id, c.writer.k.stale(), n)
		}
		got, err := c.sweep.Stale(ctx, time.Now().Add(time.Hour), 10)
		if err != nil || len(got) != 1 || got[0] != c.id {
			t.Fatalf("%s: the other schema's sweep = %v, %v; want it listed", c.id, got, err)
		}
		if n, _ := rdb.ZCard(ctx, c.writer.k.stale()).Result(); n != 0 {
			t.Fatalf("%s: still in %s after the sweep moved it", c.id, c.writer.k.stale())
		}
		if _, err := rdb.ZScore(ctx, c.sweep.k.stale(), c.id).Result(); err != nil {
			t.Fatalf("%s: not in the sweeper's index %s: %v", c.id, c.sweep.k.stale(), err)
		}
		if _, err := c.sweep.MarkRendered(ctx, c.id, 1); err != nil {
			t.Fatal(err)
		}
	}
}
