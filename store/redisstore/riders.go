package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Best-effort writes that ride this store's next pipeline (PutLater):
// answer memory's write after an answer used to be a round trip of its
// own; it now goes with whatever this replica sends next (the message's
// render mark, the next ask), or on its own after riderWait.

// riderWait bounds how long a write waits for a pipeline to ride.
const riderWait = 20 * time.Millisecond

type rider struct {
	value string
	ttl   time.Duration
}

// riders holds the writes waiting (key → value), guarded by mu.
type riders struct {
	mu      sync.Mutex
	waiting map[string]rider
	timer   *time.Timer
}

// PutLater implements store.LaterNotes: Put, sent with this store's next
// pipeline (at most riderWait from now). Remember reads it here meanwhile;
// a Put or Forget of the key replaces it. A write that fails is logged,
// as answer memory's writes were.
func (r *Store) PutLater(key, value string, ttl time.Duration, _ time.Time) {
	r.riders.mu.Lock()
	defer r.riders.mu.Unlock()
	if r.riders.waiting == nil {
		r.riders.waiting = map[string]rider{}
	}
	r.riders.waiting[key] = rider{value, ttl}
	if r.riders.timer == nil {
		r.riders.timer = time.AfterFunc(riderWait, func() { r.flushRiders(context.Background()) })
	}
}

// waitingRider is the value PutLater holds for key, if any.
func (r *Store) waitingRider(key string) (string, bool) {
	r.riders.mu.Lock()
	defer r.riders.mu.Unlock()
	v, ok := r.riders.waiting[key]
	return v.value, ok
}

// dropRider forgets a waiting write of key (a Put or Forget of it now wins).
func (r *Store) dropRider(key string) {
	r.riders.mu.Lock()
	defer r.riders.mu.Unlock()
	delete(r.riders.waiting, key)
}

// takeRiders hands the waiting writes to a pipeline about to be sent.
func (r *Store) takeRiders() map[string]rider {
	r.riders.mu.Lock()
	defer r.riders.mu.Unlock()
	w := r.riders.waiting
	if len(w) == 0 {
		return nil
	}
	r.riders.waiting = nil
	if r.riders.timer != nil {
		r.riders.timer.Stop()
		r.riders.timer = nil
	}
	return w
}

// queueRiders adds the writes taken to pipeline p.
func (r *Store) queueRiders(ctx context.Context, p redis.Pipeliner, w map[string]rider) []*redis.StatusCmd {
	cmds := make([]*redis.StatusCmd, 0, len(w))
	for k, v := range w {
		cmds = append(cmds, p.Set(ctx, r.k.kept(k), v.value, v.ttl))
	}
	return cmds
}

// ridersDone logs the writes that failed.
func (r *Store) ridersDone(cmds []*redis.StatusCmd) {
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			r.log.Warn("store: a best-effort write failed (answer memory)", "err", err)
			return
		}
	}
}

// flushRiders sends what waits in a round trip of its own.
func (r *Store) flushRiders(ctx context.Context) {
	w := r.takeRiders()
	if w == nil {
		return
	}
	var cmds []*redis.StatusCmd
	_, _ = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmds = r.queueRiders(ctx, p, w)
		return nil
	})
	r.ridersDone(cmds)
}
