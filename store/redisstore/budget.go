package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The Budget role (store/budget.go): token buckets every replica shares,
// and the turns between groups waiting on one.

// luaRefill brings a bucket's tokens up to now: with now, rate (tokens a
// minute) and burst set, it reads KEYS[1]'s tokens and at into locals of
// those names.
const luaRefill = `local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or burst)
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or now)
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 60000)
  at = now
end
`

// takeScript takes a token from a bucket refilled continuously.
// KEYS[1] budget hash. ARGV[1] now ms, ARGV[2] tokens per minute, ARGV[3] burst.
// Returns 1 when a token was taken, 0 when the budget is spent.
var takeScript = redis.NewScript(`
local now, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
` + luaRefill + `local took = 0
if tokens >= 1 then
  tokens = tokens - 1
  took = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at)
redis.call('PEXPIRE', KEYS[1], 3600000)
return took
`)

// drainScript empties a bucket until a moment: tokens 0, refilling from
// the later of then and where it stood. KEYS[1] budget hash. ARGV[1]
// until ms.
var drainScript = redis.NewScript(`
local till = tonumber(ARGV[1])
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or till)
redis.call('HSET', KEYS[1], 'tokens', '0', 'at', math.max(at, till))
redis.call('PEXPIRE', KEYS[1], 3600000)
return 1
`)

// takeTurnScript registers the caller's groups as waiting for a bucket and,
// when a token is free, gives it to the group whose turn it is: among the
// waiting groups of the most urgent class, the one served longest ago
// (never served first; ties by name).
// KEYS[1] budget hash, KEYS[2] waiting (group → until ms), KEYS[3] served
// (group → ms), KEYS[4] class (group → class). ARGV[1] now ms, ARGV[2]
// tokens per minute, ARGV[3] burst, ARGV[4] registration ms, ARGV[5] the
// number of groups that left, then those groups, then the caller's groups
// as name, class pairs.
// Returns {group, 1} when the caller's group took the token, {"", 1} when a
// token is free for another's, {"", 0} when none is.
var takeTurnScript = redis.NewScript(`
local now, rate, burst, wait = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local left = tonumber(ARGV[5])
for i = 6, 5 + left do
  redis.call('ZREM', KEYS[2], ARGV[i])
  redis.call('HDEL', KEYS[4], ARGV[i])
end
local mine = {}
for i = 6 + left, #ARGV, 2 do
  redis.call('ZADD', KEYS[2], now + wait, ARGV[i])
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  mine[ARGV[i]] = true
end
for _, g in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('HDEL', KEYS[4], g)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 3600000)
for _, k in ipairs({KEYS[2], KEYS[3], KEYS[4]}) do redis.call('PEXPIRE', k, 3600000) end
` + luaRefill + `redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at)
redis.call('PEXPIRE', KEYS[1], 3600000)
if tokens < 1 then return {'', 0} end
local due, dueClass, dueAt = nil, nil, nil
for _, g in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local c = tonumber(redis.call('HGET', KEYS[4], g) or '0')
  local s = tonumber(redis.call('ZSCORE', KEYS[3], g) or '0')
  if due == nil or c < dueClass or (c == dueClass and (s < dueAt or (s == dueAt and g < due))) then
    due, dueClass, dueAt = g, c, s
  end
end
if due == nil or not mine[due] then return {'', 1} end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - 1))
redis.call('ZADD', KEYS[3], now, due)
return {due, 1}
`)

// TakeTurn implements store.Store.
func (r *Store) TakeTurn(ctx context.Context, t store.Turn) (string, bool, error) {
	args := []any{t.Now.UnixMilli(), t.Bucket.PerMinute, t.Bucket.Burst, max(t.Wait.Milliseconds(), 1), len(t.Left)}
	for _, g := range t.Left {
		args = append(args, g)
	}
	for _, g := range t.Groups {
		args = append(args, g.Name, g.Class)
	}
	n := t.Bucket.Name
	res, err := takeTurnScript.Run(ctx, r.rdb, []string{r.k.budget(n), r.k.turnWaiting(n), r.k.turnServed(n), r.k.turnClass(n)}, args...).Slice()
	if err != nil {
		return "", false, err
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("store: bad take-turn result %v", res)
	}
	g, _ := res[0].(string)
	free, _ := res[1].(int64)
	return g, free == 1, nil
}

// Drain implements store.Store.
func (r *Store) Drain(ctx context.Context, b asktype.Bucket, until time.Time) error {
	return drainScript.Run(ctx, r.rdb, []string{r.k.budget(b.Name)}, until.UnixMilli()).Err()
}

// Take implements store.Store.
func (r *Store) Take(ctx context.Context, bk asktype.Bucket, now time.Time) (bool, error) {
	budget, perMinute, burst := bk.Name, bk.PerMinute, bk.Burst
	n, err := takeScript.Run(ctx, r.rdb, []string{r.k.budget(budget)}, now.UnixMilli(), perMinute, burst).Int()
	return n == 1, err
}
