package redisstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/store"
)

// timer is a named schedule: a sorted set of call ids scored by when they
// fire (ms).
func (k keys) timer(name string) string { return k.prefix + ":timer:" + name }

// kept is a value Remember stored.
func (k keys) kept(key string) string { return k.prefix + ":kept:{" + key + "}" }

// Arm implements store.Timers.
func (r *Store) Arm(ctx context.Context, timer, callID string, at time.Time) error {
	return r.rdb.ZAddNX(ctx, r.k.timer(timer), redis.Z{Score: float64(at.UnixMilli()), Member: callID}).Err()
}

// Fired implements store.Timers.
func (r *Store) Fired(ctx context.Context, timer string, now time.Time, limit int) ([]store.Timer, error) {
	zs, err := r.rdb.ZRangeByScoreWithScores(ctx, r.k.timer(timer), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, err
	}
	out := make([]store.Timer, 0, len(zs))
	for _, z := range zs {
		id, _ := z.Member.(string)
		out = append(out, store.Timer{CallID: id, At: time.UnixMilli(int64(z.Score))})
	}
	return out, nil
}

// moveScript moves a timer entry only from where the caller saw it.
// KEYS[1] timer. ARGV[1] call id, ARGV[2] from ms, ARGV[3] to ms (0 removes).
var moveScript = redis.NewScript(`
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s or tonumber(s) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '0' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
`)

// Move implements store.Timers.
func (r *Store) Move(ctx context.Context, timer, callID string, from, to time.Time) (bool, error) {
	n, err := moveScript.Run(ctx, r.rdb, []string{r.k.timer(timer)}, callID, from.UnixMilli(), store.Millis(to)).Int()
	return n == 1, err
}

// rememberScript stores a value unless one is there, and returns what is.
// KEYS[1] the key. ARGV[1] value ("" only reads), ARGV[2] ttl ms.
var rememberScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
if ARGV[1] == '' then return '' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`)

// Remember implements store.Reach.
func (r *Store) Remember(ctx context.Context, key, value string, ttl time.Duration, _ time.Time) (string, error) {
	if v, ok := r.waitingRider(key); ok && value == "" {
		return v, nil // written here a moment ago, on its way (PutLater)
	}
	if value == "" {
		// Only a read (answer memory looks before every ask): a GET, not
		// a script.
		v, err := r.rdb.Get(ctx, r.k.kept(key)).Result()
		if errors.Is(err, redis.Nil) {
			return "", nil
		}
		return v, err
	}
	return rememberScript.Run(ctx, r.rdb, []string{r.k.kept(key)}, value, ttl.Milliseconds()).Text()
}

// Forget implements store.Notes: GETDEL, one round trip, atomic.
func (r *Store) Forget(ctx context.Context, key string, _ time.Time) (string, error) {
	r.dropRider(key)
	v, err := r.rdb.GetDel(ctx, r.k.kept(key)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return v, err
}

// Put implements store.Reach: a plain SET, the last writer wins.
func (r *Store) Put(ctx context.Context, key, value string, ttl time.Duration, _ time.Time) error {
	r.dropRider(key)
	return r.rdb.Set(ctx, r.k.kept(key), value, ttl).Err()
}
