package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/store"
)

// beforeSettle runs fn once, before the first pipeline that carries the
// settle script goes out (the transition is in flight: Begin was called).
type beforeSettle struct {
	armed atomic.Bool
	fn    func()
}

func (h *beforeSettle) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *beforeSettle) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *beforeSettle) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			name := strings.ToLower(c.Name())
			if (name == "evalsha" || name == "eval") && strings.Contains(c.String(), settleScript.Hash()) && h.armed.CompareAndSwap(true, false) {
				h.fn()
				break
			}
		}
		return next(ctx, cmds)
	}
}

// Issue 20, exactly as the chaos run saw it: an agent waits on replica B;
// the winning click settles the ask on replica A while a losing click's
// settle is in flight on B. A's announcement reaches B during the losing
// transition and is held back; the losing reply (already settled, A's
// version) reaches only Record; the waiter on B must still be woken.
func TestRedisTwoReplicasWakeTheWaiterWhenTheLocalClickLoses(t *testing.T) {
	t.Parallel()
	url := testredis.URL(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdbA, prefix := testredis.Client(t)
	rdbB := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdbB.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	replica := func(rdb redis.UniversalClient) *Store {
		r, err := New(rdb, Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Stop(context.Background()) })
		return r
	}
	a, b := replica(rdbA), replica(rdbB)

	if _, _, err := a.Create(ctx, rask("c1", "s1", 0)); err != nil {
		t.Fatal(err)
	}
	changes, stop := b.Changes("c1") // the agent's waiter on B
	defer stop()
	seen, err := b.Current(ctx, "c1")
	if err != nil || seen.State != asktype.Open {
		t.Fatalf("waiter's read = %+v, %v", seen, err)
	}

	hook := &beforeSettle{fn: func() {
		if _, err := a.Settle(ctx, "c1", json.RawMessage(`{"answers":{"q":"A"}}`), rt0); err != nil {
			t.Errorf("winning settle on A: %v", err)
		}
		// Hold B's losing settle until B's feed has brought A's change in.
		for ctx.Err() == nil {
			if _, current := b.hub.Latest("c1"); !current {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}}
	hook.armed.Store(true)
	rdbB.AddHook(hook)
	drain(changes) // wakes from the reads above, if any

	_, err = b.Settle(ctx, "c1", json.RawMessage(`{"answers":{"q":"B"}}`), rt0)
	if !errors.Is(err, store.ErrSettled) {
		t.Fatalf("losing settle on B: %v, want ErrSettled", err)
	}
	select {
	case <-changes:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter on B was never woken for A's answer")
	}
	got, err := b.Current(ctx, "c1")
	if err != nil || got.State != asktype.Settled || !strings.Contains(string(got.Settlement), `"A"`) {
		t.Fatalf("after the wake: %+v, %v", got, err)
	}
}

func drain(ch <-chan struct{}) {
	select {
	case <-ch:
	default:
	}
}
