package redisstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
)

// newTestRedis returns a store on REDIS_URL's server under a key prefix of
// the test's own (skipping without REDIS_URL), and runs the test in
// parallel with the others.
func newTestRedis(t *testing.T, opts Options) (*Store, redis.UniversalClient) {
	t.Helper()
	t.Parallel()
	rdb, prefix := testredis.Client(t)
	return newStoreOn(t, rdb, prefix, opts)
}

// newPrivateRedis is newTestRedis on a redis-server of the test's own, for
// a test that changes server-wide state (SCRIPT FLUSH, FLUSHALL, CONFIG
// SET, a restart) that would break the tests sharing REDIS_URL's server.
func newPrivateRedis(t *testing.T, opts Options) (*Store, redis.UniversalClient) {
	t.Helper()
	t.Parallel()
	rdb, prefix := testredis.Private(t)
	return newStoreOn(t, rdb, prefix, opts)
}

func newStoreOn(t *testing.T, rdb redis.UniversalClient, prefix string, opts Options) (*Store, redis.UniversalClient) {
	t.Helper()
	opts.Prefix = prefix
	r, err := New(rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r, rdb
}

var rt0 = time.UnixMilli(1_800_000_000_000)

func rask(id, sid string, wait time.Duration) *asktype.Ask {
	a := &asktype.Ask{CallID: id, SessionID: sid, Request: json.RawMessage(`{}`), Created: rt0}
	if wait > 0 {
		a.Deadline = rt0.Add(wait)
	}
	return a
}

// Index entries are hints: an entry the record contradicts (left by a crash,
// or by older code that indexed before creating) is never returned, and is
// pruned.
func TestRedisReadersFilterIndexesByTheRecord(t *testing.T) {
	r, rdb := newTestRedis(t, Options{})
	ctx := context.Background()
	if _, _, err := r.Create(ctx, rask("untimed", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	rdb.ZAdd(ctx, r.k.session("s2"), redis.Z{Score: 1, Member: "untimed"})
	rdb.ZAdd(ctx, r.k.replies("s2"), redis.Z{Score: 1, Member: "untimed"})
	rdb.ZAdd(ctx, r.k.deadlines(), redis.Z{Score: 1, Member: "untimed"}, redis.Z{Score: 1, Member: "gone"})
	rdb.ZAdd(ctx, r.k.claims(), redis.Z{Score: 0, Member: "untimed"})
	if got, err := r.Session(ctx, "s2"); err != nil || len(got) != 0 {
		t.Fatalf("Session(s2) = %d asks, %v; want none (the record says s1)", len(got), err)
	}
	if got, err := r.Replies(ctx, "s2"); err != nil || len(got) != 0 {
		t.Fatalf("Replies(s2) = %d asks, %v", len(got), err)
	}
	if due, err := r.Due(ctx, rt0.Add(time.Hour), 10); err != nil || len(due) != 0 {
		t.Fatalf("Due = %v, %v", due, err)
	}
	if free, err := r.Unclaimed(ctx, rt0.Add(time.Hour), 10); err != nil || len(free) != 0 {
		t.Fatalf("Unclaimed = %v, %v", free, err)
	}
	for _, k := range []string{r.k.session("s2"), r.k.replies("s2"), r.k.deadlines(), r.k.claims()} {
		if n := rdb.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("%s not pruned", k)
		}
	}
	if c, _ := r.Counts(ctx); c != (store.Counts{Open: 1}) {
		t.Fatalf("Counts = %+v", c)
	}
}

func TestRedisSessionKeysExpire(t *testing.T) {
	r, rdb := newTestRedis(t, Options{Retention: 2 * time.Hour})
	ctx := context.Background()
	if _, _, err := r.Create(ctx, rask("timed", "s1", time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Expire(ctx, "timed", rt0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.QueueReply(ctx, "timed", json.RawMessage(`{}`), rt0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	within := func(key string, lo, hi time.Duration) {
		t.Helper()
		ttl := rdb.PTTL(ctx, key).Val()
		if ttl < lo || ttl > hi {
			t.Fatalf("%s: TTL %v, want within [%v, %v]", key, ttl, lo, hi)
		}
	}
	// The session lives retention past its newest ask's wait, and at most
	// sessionTTLSlack more (a busy session extends it once in that while).
	within(r.k.session("s1"), 2*time.Hour+59*time.Minute, 3*time.Hour+sessionTTLSlack)
	within(r.k.active("s1"), 2*time.Hour+59*time.Minute, 3*time.Hour+sessionTTLSlack)
	within(r.k.replies("s1"), time.Hour+59*time.Minute, 2*time.Hour)
	// A later untimed ask never shortens it.
	if _, _, err := r.Create(ctx, rask("untimed", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	within(r.k.session("s1"), 2*time.Hour+59*time.Minute, 3*time.Hour+sessionTTLSlack)
	// The continued ask itself: until deadline + retention.
	want := time.Until(rt0.Add(3 * time.Hour))
	within(r.k.ask("timed"), want-time.Minute, want+time.Minute)
}

// A crash between the create script and the index pipeline leaves an ask no
// index names; the harness re-sending the call id repairs them.
func TestRedisReattachRepairsIndexesACrashLeftOut(t *testing.T) {
	r, rdb := newTestRedis(t, Options{})
	ctx := context.Background()
	a := rask("c1", "s1", time.Hour)
	if err := createScript.Run(ctx, rdb, []string{r.k.ask("c1"), r.k.lease("c1", leasePost), r.k.outbox("c1")},
		r.audited("c1", auditArgs{at: a.Created}, "{}", "s1", 7, ms(a.Created), ms(a.Deadline), "", 0, 0, "", "", "", "")...).Err(); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Session(ctx, "s1"); len(got) != 0 {
		t.Fatalf("setup: session already lists %d asks", len(got))
	}
	if _, created, err := r.Create(ctx, a); err != nil || created {
		t.Fatalf("re-Create: created %v, %v", created, err)
	}
	if got, _ := r.Session(ctx, "s1"); len(got) != 1 {
		t.Fatalf("Session after re-attach = %d asks, want the repaired one", len(got))
	}
	if due, _ := r.Due(ctx, rt0.Add(time.Hour), 10); len(due) != 1 {
		t.Fatalf("Due after re-attach = %v", due)
	}
	if free, _ := r.Unclaimed(ctx, rt0, 10); len(free) != 1 {
		t.Fatalf("Unclaimed after re-attach = %v", free)
	}
	if stale, _ := r.Stale(ctx, time.Now().Add(time.Minute), 10); len(stale) != 1 {
		t.Fatalf("Stale after re-attach = %v; the unposted ask must be found and posted", stale)
	}
}

// Re-attaching to an ask whose message is posted and up to date does not
// file it in the stale index (before, every re-attach did, and the mirror's
// sweep then read each such ask a minute later: a burst of 10,000 asks kept
// it reading for 25 minutes).
func TestRedisReattachLeavesAnUpToDateMessageOffTheStaleIndex(t *testing.T) {
	r, rdb := newTestRedis(t, Options{})
	ctx := context.Background()
	a := rask("c1", "s1", 0)
	a.Poster = asktype.PostLease{Holder: "me", Until: rt0.Add(time.Minute)}
	b, _, err := r.Create(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, b.Version); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.ZCard(ctx, r.k.stale()).Result(); n != 0 {
		t.Fatalf("setup: %d stale entries after the post", n)
	}
	if _, created, err := r.Create(ctx, rask("c1", "s1", 0)); err != nil || created {
		t.Fatalf("re-Create: created %v, %v", created, err)
	}
	if n, _ := rdb.ZCard(ctx, r.k.stale()).Result(); n != 0 {
		t.Fatalf("re-attaching to an up-to-date message filed %d stale entries; want none", n)
	}
}

// The index pipeline runs after each script, so an older snapshot's
// pipeline (an expire racing a late answer, on another replica) can land
// after a newer one: it must not drop the queued reply from the session's
// reply index (the chaos test found a late answer the agent never saw).
func TestRedisStaleNotifyKeepsAQueuedReplyIndexed(t *testing.T) {
	r, _ := newTestRedis(t, Options{})
	ctx := context.Background()
	if _, _, err := r.Create(ctx, rask("c1", "s1", time.Second)); err != nil {
		t.Fatal(err)
	}
	expired, err := r.Expire(ctx, "c1", rt0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.QueueReply(ctx, "c1", json.RawMessage(`{"r":1}`), rt0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	r.notify(ctx, expired) // the expire's pipeline, delayed past the reply's
	got, err := r.Replies(ctx, "s1")
	if err != nil || len(got) != 1 || got[0].CallID != "c1" {
		t.Fatalf("Replies = %v, %v; the queued reply was dropped from the index", got, err)
	}
}

// Current answers from the record this replica last saw, and a change made
// by another replica makes it read again as soon as the feed announces it.
func TestRedisCurrentSeesAnotherReplicasChange(t *testing.T) {
	r1, rdb := newTestRedis(t, Options{})
	r2, err := New(rdb, Options{Prefix: r1.k.prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, r := range []*Store{r1, r2} {
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Stop(ctx) })
	}
	ch, stop := r2.Changes("c1")
	defer stop()
	if _, _, err := r1.Create(ctx, rask("c1", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	<-ch
	if a, err := r2.Current(ctx, "c1"); err != nil || a.State != asktype.Open {
		t.Fatalf("Current after create = %+v, %v", a, err)
	}
	if _, err := r1.Settle(ctx, "c1", json.RawMessage(`{}`), rt0); err != nil {
		t.Fatal(err)
	}
	<-ch
	a, err := r2.Current(ctx, "c1")
	if err != nil || a.State != asktype.Settled {
		t.Fatalf("Current after another replica settled = %+v, %v", a, err)
	}
	if b, ok := r2.hub.Latest("c1"); !ok || b.Version != a.Version {
		t.Fatalf("the fresh read was not remembered: %+v %v", b, ok)
	}
}

// Redis forgets its scripts when it restarts (or SCRIPT FLUSH): the
// pipelines that send EVALSHA load them and run again. The script cache is
// the whole server's, so this test flushes a server of its own: on the
// shared one it made other tests' scripts meet NOSCRIPT.
func TestRedisPipelinedScriptsSurviveAScriptFlush(t *testing.T) {
	r, rdb := newPrivateRedis(t, Options{})
	ctx := context.Background()
	flush := func() {
		t.Helper()
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	if _, created, err := r.Create(ctx, rask("c1", "s1", time.Hour)); err != nil || !created {
		t.Fatalf("Create after a flush: created %v, %v", created, err)
	}
	// The server knows createScript (an older replica loaded it) but not
	// the script that files the ask: the ask is still created, once.
	flush()
	if err := createScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	if _, created, err := r.Create(ctx, rask("c0", "s0", 0)); err != nil || !created {
		t.Fatalf("Create with only createScript loaded: created %v, %v", created, err)
	}
	flush()
	if got, err := r.ClaimWaits(ctx, []string{"c1"}, store.Hold{Holder: "me", TTL: time.Minute, Now: rt0}); err != nil || !got[0].Held {
		t.Fatalf("ClaimWaits after a flush: %+v %v", got, err)
	}
	flush()
	if _, err := r.FinishPost(ctx, "c1", "me", asktype.MessageRef{Conversation: "C1", ID: "1.1"}, 1); err != nil {
		t.Fatalf("FinishPost after a flush: %v", err)
	}
	flush()
	a, err := r.Settle(ctx, "c1", json.RawMessage(`{}`), rt0)
	if err != nil || a.State != asktype.Settled {
		t.Fatalf("Settle after a flush: %+v %v", a, err)
	}
	flush()
	if up, err := r.MarkRendered(ctx, "c1", a.Version); err != nil || !up {
		t.Fatalf("MarkRendered after a flush: %v %v", up, err)
	}
}

// A transition's index pipeline that lands after a newer one's (an
// expire's, racing the withdrawal that ended the ask) must not file the ask
// again under its older state: the gauges would count an ended ask as
// continued (or open) for good. Nor may an older snapshot drop a newer
// entry.
func TestRedisLateSnapshotDoesNotRefileTheGauges(t *testing.T) {
	r, rdb := newTestRedis(t, Options{})
	ctx := context.Background()
	for _, id := range []string{"c1", "c2"} {
		if _, _, err := r.Create(ctx, rask(id, "s-"+id, time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	created, err := r.Get(ctx, "c2")
	if err != nil {
		t.Fatal(err)
	}
	expired, err := r.Expire(ctx, "c1", rt0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Abort(ctx, "c1", rt0.Add(2*time.Second), asktype.Withdrawn); err != nil {
		t.Fatal(err)
	}
	r.notify(ctx, expired) // the expire's pipeline, delayed past the withdrawal's
	if _, err := r.Expire(ctx, "c2", rt0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	r.notify(ctx, created) // an open snapshot of c2, delayed past its expire
	c, err := r.Counts(ctx)
	if err != nil || c.Open != 0 || c.Continued != 1 {
		t.Fatalf("Counts = %+v, %v; want c1 (withdrawn) nowhere and c2 continued", c, err)
	}
	if n, _ := rdb.ZScore(ctx, r.k.byState(asktype.Continued), "c2").Result(); n == 0 {
		t.Fatal("c2 was dropped from the continued set by an older snapshot")
	}
}

// The open set is filed by Create alone, without versions: a re-attach
// keeps the first create's place (its seq), and an answer removes it for
// good, whatever a late snapshot of the open ask files afterwards.
func TestRedisOpenSetFiledOnceByCreate(t *testing.T) {
	r, rdb := newTestRedis(t, Options{})
	ctx := context.Background()
	if _, _, err := r.Create(ctx, rask("o1", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	first := rdb.ZScore(ctx, r.k.byState(asktype.Open), "o1").Val()
	if _, created, err := r.Create(ctx, rask("o1", "s1", 0)); err != nil || created {
		t.Fatalf("re-attach: created %v, %v", created, err)
	}
	if again := rdb.ZScore(ctx, r.k.byState(asktype.Open), "o1").Val(); again != first {
		t.Fatalf("a re-attach moved the ask in the open set: seq %v, was %v", again, first)
	}
	open, err := r.Get(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Settle(ctx, "o1", json.RawMessage(`{"answers":[]}`), rt0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// A transition's notify carrying the open snapshot, landing late.
	r.notify(ctx, open)
	if n := rdb.ZCard(ctx, r.k.byState(asktype.Open)).Val(); n != 0 {
		t.Fatalf("open set holds %d after the answer", n)
	}
	if c, _ := r.Counts(ctx); c.Open != 0 {
		t.Fatalf("Counts = %+v", c)
	}
}
