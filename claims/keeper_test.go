package claims_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/claims"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/waterfall"
)

type expirer struct {
	st    store.Store
	clock *clock.Fake
	won   atomic.Int32
}

func (e *expirer) Expire(ctx context.Context, id string) (*waterfall.Record, error) {
	a, err := e.st.Expire(ctx, id, e.clock.Now())
	if err == nil {
		e.won.Add(1)
	}
	if a == nil {
		return nil, err
	}
	r, derr := waterfall.Decode(a)
	if derr != nil {
		return nil, derr
	}
	return r, err
}

type ticks struct {
	mu  sync.Mutex
	ids []string
}

func (t *ticks) Tick(a *waterfall.Record) {
	t.mu.Lock()
	t.ids = append(t.ids, a.CallID)
	t.mu.Unlock()
}
func (t *ticks) n() int { t.mu.Lock(); defer t.mu.Unlock(); return len(t.ids) }

type counts struct{ claimed, takeovers, held atomic.Int32 }

func (c *counts) Held(n int) { c.held.Store(int32(n)) }
func (c *counts) Claimed(takeover bool) {
	c.claimed.Add(1)
	if takeover {
		c.takeovers.Add(1)
	}
}
func (c *counts) StoreError(string) {}

var t0 = time.UnixMilli(1_800_000_000_000)

const lease = 10 * time.Second

func stores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return store.NewMemory(0, nil) },
		"redis": func(t *testing.T) store.Store {
			rdb, prefix := testredis.Client(t)
			s, err := redisstore.New(rdb, redisstore.Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

type replica struct {
	k     *claims.Keeper
	ticks *ticks
	m     *counts
}

func newReplica(st store.Store, ex *expirer, c *clock.Fake, name string) replica {
	r := replica{ticks: &ticks{}, m: &counts{}}
	r.k = claims.New(st, ex, claims.Options{Holder: name, Lease: lease, Clock: c, Countdown: r.ticks, Metrics: r.m})
	return r
}

func create(t *testing.T, st store.Store, id string, wait time.Duration, at time.Time) {
	t.Helper()
	_, created, err := st.Create(context.Background(), &asktype.Ask{CallID: id, Request: json.RawMessage(`{}`), Created: at, Deadline: at.Add(wait)})
	if err != nil || !created {
		t.Fatal(err)
	}
}

func TestKeeper(t *testing.T) {
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if name == "redis" {
				testredis.URL(t)
			}
			t.Run("OneHolderThenTakeoverAfterALease", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				ex := &expirer{st: st, clock: c}
				a, b := newReplica(st, ex, c, "a"), newReplica(st, ex, c, "b")
				create(t, st, "w1", 12*time.Minute, t0)
				a.k.Step(ctx)
				b.k.Step(ctx)
				if len(a.k.Held()) != 1 || len(b.k.Held()) != 0 {
					t.Fatalf("held: a=%v b=%v; want a only", a.k.Held(), b.k.Held())
				}
				// a keeps renewing: b never gets it.
				for range 5 {
					c.Advance(lease / 3)
					a.k.Step(ctx)
					b.k.Step(ctx)
				}
				if len(b.k.Held()) != 0 {
					t.Fatal("b took a claim a kept renewing")
				}
				// a dies (stops stepping, releases nothing): b takes over within one lease.
				c.Advance(lease / 3)
				b.k.Step(ctx)
				if len(b.k.Held()) != 0 {
					t.Fatal("b took over before the lease ran out")
				}
				c.Advance(lease)
				b.k.Step(ctx)
				if len(b.k.Held()) != 1 || b.m.takeovers.Load() != 1 {
					t.Fatalf("b held %v, takeovers %d; want a takeover", b.k.Held(), b.m.takeovers.Load())
				}
				// a comes back: it notices it lost the claim.
				a.k.Step(ctx)
				if len(a.k.Held()) != 0 {
					t.Fatal("a still thinks it holds the claim")
				}
			})
			t.Run("CountdownMilestonesThenExpiryOnce", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				ex := &expirer{st: st, clock: c}
				a, b := newReplica(st, ex, c, "a"), newReplica(st, ex, c, "b")
				create(t, st, "w1", 12*time.Minute, t0)
				a.k.Step(ctx)
				// Step through the whole wait every 20s; both replicas run.
				for c.Now().Before(t0.Add(13 * time.Minute)) {
					c.Advance(20 * time.Second)
					a.k.Step(ctx)
					b.k.Step(ctx)
				}
				// 12 min wait: milestones 10, 5, 2 and 1 minute → 4 ticks, all by the holder.
				if a.ticks.n() != 4 || b.ticks.n() != 0 {
					t.Fatalf("ticks a=%d b=%d; want 4 and 0", a.ticks.n(), b.ticks.n())
				}
				if ex.won.Load() != 1 {
					t.Fatalf("expired %d times", ex.won.Load())
				}
				got, _ := st.Get(ctx, "w1")
				if got.State != asktype.Continued {
					t.Fatalf("state %s", got.State)
				}
				if len(a.k.Held()) != 0 {
					t.Fatal("an ended wait is still held")
				}
			})
			t.Run("ManyWaitsClaimedAndTakenOverInOneStep", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				ex := &expirer{st: st, clock: c}
				a, b := newReplica(st, ex, c, "a"), newReplica(st, ex, c, "b")
				const n = 1234 // more than two batches of the default 500
				for i := range n {
					create(t, st, fmt.Sprintf("m%d", i), time.Hour, t0)
				}
				a.k.Step(ctx)
				if got := len(a.k.Held()); got != n || a.m.takeovers.Load() != 0 {
					t.Fatalf("a holds %d of %d after one step (takeovers %d)", got, n, a.m.takeovers.Load())
				}
				c.Advance(lease / 3)
				a.k.Step(ctx) // renewed in batches
				c.Advance(lease / 3)
				b.k.Step(ctx)
				if len(b.k.Held()) != 0 {
					t.Fatal("b took waits a renewed")
				}
				c.Advance(lease) // a died: its renewals stopped
				b.k.Step(ctx)
				if got := len(b.k.Held()); got != n || b.m.takeovers.Load() != n {
					t.Fatalf("b holds %d, takeovers %d after a's lease lapsed; want all %d", got, b.m.takeovers.Load(), n)
				}
			})
			t.Run("SurvivorWakesWhenADeadReplicasClaimsLapse", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				ex := &expirer{st: st, clock: c}
				a, b := newReplica(st, ex, c, "a"), newReplica(st, ex, c, "b")
				create(t, st, "w1", time.Hour, t0)
				a.k.Step(ctx) // a claims at t0 until t0+lease, then dies
				c.Advance(lease / 10)
				b.k.Step(ctx)
				// b's next round is when a's claim runs out, not a ticker
				// period later: the takeover is within one lease of a's
				// last renewal.
				if got, want := b.k.NextWake(), lease-lease/10+time.Millisecond; got != want {
					t.Fatalf("b wakes in %s; want %s (when a's claim lapses)", got, want)
				}
				c.Advance(b.k.NextWake())
				b.k.Step(ctx)
				if len(b.k.Held()) != 1 || b.m.takeovers.Load() != 1 {
					t.Fatalf("b held %v, takeovers %d at the lapse", b.k.Held(), b.m.takeovers.Load())
				}
			})
			t.Run("StopReleasesForImmediateTakeover", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				ex := &expirer{st: st, clock: c}
				a, b := newReplica(st, ex, c, "a"), newReplica(st, ex, c, "b")
				create(t, st, "w1", time.Hour, t0)
				create(t, st, "w2", time.Hour, t0)
				a.k.Step(ctx)
				if err := a.k.Stop(ctx); err != nil {
					t.Fatal(err)
				}
				if err := a.k.Stop(ctx); err != nil { // twice is fine
					t.Fatal(err)
				}
				b.k.Step(ctx) // same instant: no lease had to lapse
				if len(b.k.Held()) != 2 {
					t.Fatalf("b holds %v after a released", b.k.Held())
				}
				if n := b.m.takeovers.Load(); n != 0 {
					t.Fatalf("%d takeovers counted for waits released to b", n)
				}
			})
			t.Run("WaitsEndedElsewhereAreDroppedAndReleased", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				cs := &countingStore{Store: st}
				ex := &expirer{st: st, clock: c}
				r := replica{ticks: &ticks{}, m: &counts{}}
				r.k = claims.New(cs, ex, claims.Options{Holder: "a", Lease: lease, Clock: c, Countdown: r.ticks, Metrics: r.m})
				for _, id := range []string{"settled", "withdrawn", "open"} {
					create(t, st, id, 12*time.Minute, t0)
				}
				create(t, st, "expiredByHost", time.Minute, t0)
				create(t, st, "lateAnswer", time.Minute, t0)
				r.k.Step(ctx)
				if len(r.k.Held()) != 5 || r.m.held.Load() != 5 {
					t.Fatalf("held %v (gauge %d); want all five", r.k.Held(), r.m.held.Load())
				}
				// Each wait ends on another replica, in its last minute or at
				// its deadline: answered, withdrawn, answered late, expired by
				// the Host that waited on it.
				c.Advance(time.Minute)
				if _, err := st.Settle(ctx, "settled", json.RawMessage(`{}`), c.Now()); err != nil {
					t.Fatal(err)
				}
				if _, err := st.Abort(ctx, "withdrawn", c.Now(), asktype.Withdrawn); err != nil {
					t.Fatal(err)
				}
				if _, err := st.Expire(ctx, "expiredByHost", c.Now()); err != nil {
					t.Fatal(err)
				}
				if _, err := st.Settle(ctx, "lateAnswer", json.RawMessage(`{}`), c.Now()); !errors.Is(err, store.ErrContinued) {
					t.Fatal(err)
				}
				c.Advance(lease / 3)
				r.k.Step(ctx)
				if fmt.Sprint(r.k.Held()) != "[open]" || r.m.held.Load() != 1 {
					t.Fatalf("held %v (gauge %d); want only the open wait", r.k.Held(), r.m.held.Load())
				}
				for _, id := range []string{"settled", "withdrawn", "lateAnswer", "expiredByHost"} {
					if h, err := st.Acquire(ctx, id, store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "other", TTL: lease, Now: c.Now()}}); err != nil {
						t.Fatalf("%s: claim not released (held by %s): %v", id, h, err)
					}
				}
				if _, err := st.Settle(ctx, "open", json.RawMessage(`{}`), c.Now()); err != nil {
					t.Fatal(err)
				}
				// Long past every deadline: nothing held, nothing renewed, and
				// the keeper sleeps a whole lease between rounds.
				c.Advance(time.Hour)
				r.k.Step(ctx)
				if len(r.k.Held()) != 0 || r.m.held.Load() != 0 {
					t.Fatalf("held %v (gauge %d) after every wait ended", r.k.Held(), r.m.held.Load())
				}
				if d := r.k.NextWake(); d != lease {
					t.Fatalf("NextWake = %v with nothing held; want one lease", d)
				}
				before := cs.calls.Load()
				for range 20 {
					c.Advance(lease / 3)
					r.k.Step(ctx)
				}
				if n := cs.calls.Load() - before; n > 2*20 {
					t.Fatalf("%d store calls in 20 idle rounds; want at most 2 a round (unclaimed, due)", n)
				}
			})
			t.Run("NeverWakesInThePast", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				r := replica{ticks: &ticks{}, m: &counts{}}
				// An expirer that keeps failing (store down for expiry): the
				// wait stays held past its deadline.
				r.k = claims.New(st, failingExpirer{}, claims.Options{Holder: "a", Lease: lease, Clock: c, Countdown: r.ticks, Metrics: r.m})
				create(t, st, "w1", time.Minute, t0)
				create(t, st, "w2", time.Hour, t0)
				r.k.Step(ctx)
				if d := r.k.NextWake(); d != lease {
					t.Fatalf("NextWake = %v; want one lease (the nearest deadline is a minute away)", d)
				}
				c.Advance(time.Minute - time.Second)
				if d := r.k.NextWake(); d != time.Second {
					t.Fatalf("NextWake = %v a second before the deadline", d)
				}
				c.Advance(time.Second)
				r.k.Step(ctx)
				c.Advance(time.Millisecond)
				if d := r.k.NextWake(); d != lease {
					t.Fatalf("NextWake = %v past an unexpirable deadline; want one lease, not a busy loop", d)
				}
			})
			t.Run("UnheldWaitStillExpiresOnTime", func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				st, c := newStore(t), clock.NewFake(t0)
				ex := &expirer{st: st, clock: c}
				b := newReplica(st, ex, c, "b")
				create(t, st, "w1", time.Minute, t0)
				// Someone else holds it and never renews; b only sweeps.
				if _, err := st.Acquire(ctx, "w1", store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "ghost", TTL: time.Hour, Now: t0}}); err != nil {
					t.Fatal(err)
				}
				c.Advance(time.Minute)
				b.k.Step(ctx)
				if got, _ := st.Get(ctx, "w1"); got.State != asktype.Continued {
					t.Fatalf("state %s at the deadline", got.State)
				}
			})
		})
	}
}

// countingStore counts the keeper's store calls.
type countingStore struct {
	store.Store
	calls atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, id string) (*asktype.Ask, error) {
	s.calls.Add(1)
	return s.Store.Get(ctx, id)
}

func (s *countingStore) Acquire(ctx context.Context, id string, c store.Claim) (string, error) {
	s.calls.Add(1)
	return s.Store.Acquire(ctx, id, c)
}

func (s *countingStore) ClaimWaits(ctx context.Context, ids []string, h store.Hold) ([]store.WaitClaim, error) {
	s.calls.Add(1)
	return s.Store.ClaimWaits(ctx, ids, h)
}

func (s *countingStore) Release(ctx context.Context, id, name, holder string) error {
	s.calls.Add(1)
	return s.Store.Release(ctx, id, name, holder)
}

func (s *countingStore) Unclaimed(ctx context.Context, now time.Time, limit int) ([]string, error) {
	s.calls.Add(1)
	return s.Store.Unclaimed(ctx, now, limit)
}

func (s *countingStore) Due(ctx context.Context, until time.Time, limit int) ([]string, error) {
	s.calls.Add(1)
	return s.Store.Due(ctx, until, limit)
}

type failingExpirer struct{}

func (failingExpirer) Expire(context.Context, string) (*waterfall.Record, error) {
	return nil, errors.New("store unavailable")
}

// stepSignal reports every round a keeper finishes (Held is its last call).
type stepSignal struct {
	counts
	steps chan int
}

func (s *stepSignal) Held(n int) { s.counts.Held(n); s.steps <- n }

// A started keeper steps at once, then on its own clock; Stop ends it and
// releases its claims. Start and Stop follow the service shape.
func TestKeeperService(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, c := store.NewMemory(0, nil), clock.NewFake(t0)
	ex := &expirer{st: st, clock: c}
	m := &stepSignal{steps: make(chan int, 64)}
	k := claims.New(st, ex, claims.Options{Holder: "a", Lease: lease, Clock: c, Metrics: m})
	create(t, st, "w1", time.Hour, t0)
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k.Start(ctx); err == nil {
		t.Fatal("a second Start succeeded")
	}
	if n := <-m.steps; n != 1 {
		t.Fatalf("first round holds %d waits; want 1", n)
	}
	create(t, st, "w2", time.Hour, t0)
	c.Advance(lease / 3) // the ticker: a second round claims w2
	if n := <-m.steps; n != 2 {
		t.Fatalf("second round holds %d waits; want 2", n)
	}
	if err := k.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k.Stop(ctx); err != nil {
		t.Fatal("second Stop:", err)
	}
	if len(k.Held()) != 0 {
		t.Fatalf("still holds %v after Stop", k.Held())
	}
	for _, id := range []string{"w1", "w2"} {
		if _, err := st.Acquire(ctx, id, store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "b", TTL: lease, Now: c.Now()}}); err != nil {
			t.Fatalf("%s not released: %v", id, err)
		}
	}
	if err := k.Start(ctx); err != nil {
		t.Fatal("Start after Stop:", err)
	}
	if len(k.Held()) != 0 {
		t.Fatal("Start after Stop ran")
	}

	idle := claims.New(st, ex, claims.Options{Holder: "c", Clock: c})
	if err := idle.Stop(ctx); err != nil {
		t.Fatal("Stop before Start:", err)
	}
}
