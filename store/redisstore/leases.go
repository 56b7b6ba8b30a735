package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The Leases, Waits and Graces roles (store/leases.go): named leases on an
// ask, the live timed waits every replica shares and claims, and the
// re-attach graces any replica ends.

// claimWaitScript takes or renews the wait lease of an open timed ask.
// KEYS[1] ask, KEYS[2] its wait lease. ARGV[1] holder, ARGV[2] now ms,
// ARGV[3] ttl ms. Returns {code, holder, previous holder, deadline ms,
// created ms}: code 0 held by ARGV[1] now (previous: another holder whose
// lease had lapsed, or ""), 6 another holder's lease runs, 1 not an open
// timed wait. The lease is the one acquireScript keeps.
var claimWaitScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'state', 'deadline', 'created')
if f[1] ~= 'open' or not f[2] or f[2] == '' or f[2] == '0' then return {1, '', '', '0', '0'} end
local prev = ''
local cur = redis.call('GET', KEYS[2])
if cur then
  local sep = string.find(cur, '|', 1, true)
  local h = string.sub(cur, 1, sep - 1)
  if h ~= ARGV[1] then
    if tonumber(ARGV[2]) < tonumber(string.sub(cur, sep + 1)) then return {6, h, '', f[2], f[3]} end
    prev = h
  end
end
local untilMs = tonumber(ARGV[2]) + tonumber(ARGV[3])
redis.call('SET', KEYS[2], ARGV[1] .. '|' .. untilMs, 'PX', tonumber(ARGV[3]) + 86400000)
return {0, ARGV[1], prev, f[2], f[3]}
`)

// ClaimWaits implements store.Store: one pipeline of claim scripts (each
// in its ask's slot), then one that files the claimed waits' lease ends in
// the claims index, so Unclaimed skips them until they lapse.
func (r *Store) ClaimWaits(ctx context.Context, ids []string, h store.Hold) ([]store.WaitClaim, error) {
	holder, ttl, now := h.Holder, h.TTL, h.Now
	if err := checkHolder(holder); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	ctx, err := begin(ctx)
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.Cmd, len(ids))
	err = r.withScripts(ctx, func(_ context.Context, p redis.Pipeliner, run scriptRunner) {
		for i, id := range ids {
			cmds[i] = run(p, claimWaitScript, []string{r.k.ask(id), r.k.lease(id, store.LeaseWait)},
				holder, ms(now), ttl.Milliseconds())
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.WaitClaim, len(ids))
	var held []redis.Z
	for i, c := range cmds {
		if out[i], err = waitClaim(ids[i], c); err != nil {
			return nil, err
		}
		if out[i].Held {
			held = append(held, redis.Z{Score: float64(now.Add(ttl).UnixMilli()), Member: ids[i]})
		}
	}
	if len(held) > 0 {
		// XX: only waits still indexed as open are tracked.
		if err := r.rdb.ZAddXX(ctx, r.k.claims(), held...).Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// waitClaim decodes one claimWaitScript result.
func waitClaim(id string, c *redis.Cmd) (store.WaitClaim, error) {
	v, err := c.Slice()
	if err != nil {
		return store.WaitClaim{}, err
	}
	if len(v) != 5 {
		return store.WaitClaim{}, fmt.Errorf("store: bad claim result %v", v)
	}
	code, _ := v[0].(int64)
	str := func(j int) string { s, _ := v[j].(string); return s }
	deadline, _ := strconv.ParseInt(str(3), 10, 64)
	created, _ := strconv.ParseInt(str(4), 10, 64)
	return store.WaitClaim{
		CallID: id, Open: code != codeNotFound, Held: code == codeOK, Holder: str(1), Prev: str(2),
		Deadline: fromMs(deadline), Created: fromMs(created),
	}, nil
}

// Due implements store.Store. Entries for asks that are not open timed waits (as
// their record says) are pruned.
func (r *Store) Due(ctx context.Context, until time.Time, limit int) ([]string, error) {
	ids, err := r.rdb.ZRangeByScore(ctx, r.k.deadlines(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(until.UnixMilli(), 10), Count: int64(limit),
	}).Result()
	if err != nil || len(ids) == 0 {
		return ids, err
	}
	return r.openTimed(ctx, ids)
}

// openTimed keeps the ids whose ask is open and timed, and drops the others
// from the timed indexes.
func (r *Store) openTimed(ctx context.Context, ids []string) ([]string, error) {
	cmds := make([]*redis.SliceCmd, len(ids))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, r.k.ask(id), "state", "deadline")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := ids[:0:0]
	for i, c := range cmds {
		v := c.Val()
		state, _ := v[0].(string)
		deadline, _ := v[1].(string)
		if state == string(asktype.Open) && deadline != "" && deadline != "0" {
			out = append(out, ids[i])
		} else {
			r.unindex(ctx, ids[i], state)
		}
	}
	return out, nil
}

// acquireScript takes or renews a lease stored as "holder|untilMs".
// KEYS[1] lease key. ARGV[1] holder, ARGV[2] now ms, ARGV[3] ttl ms.
// Returns {0, holder} when held by ARGV[1] now, {6, holder} when another
// holder's lease has not ended. The key itself lives a day past the lease so
// abandoned leases are collected; "now" comes from the caller's clock.
var acquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local sep = string.find(cur, '|', 1, true)
  local holder = string.sub(cur, 1, sep - 1)
  local untilMs = tonumber(string.sub(cur, sep + 1))
  if holder ~= ARGV[1] and tonumber(ARGV[2]) < untilMs then return {6, holder} end
end
local untilMs = tonumber(ARGV[2]) + tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. untilMs, 'PX', tonumber(ARGV[3]) + 86400000)
return {0, ARGV[1]}
`)

// Acquire implements store.Store.
func (r *Store) Acquire(ctx context.Context, callID string, c store.Claim) (string, error) {
	name, holder, ttl, now := c.Name, c.Holder, c.TTL, c.Now
	if err := checkHolder(holder); err != nil {
		return "", err
	}
	res, err := acquireScript.Run(ctx, r.rdb, []string{r.k.lease(callID, name)}, holder, ms(now), ttl.Milliseconds()).Slice()
	if err != nil {
		return "", err
	}
	cur, _ := res[1].(string)
	if res[0] == int64(codeHeld) {
		return cur, store.ErrHeld
	}
	if name == store.LeaseWait {
		// XX: only asks still indexed as open timed waits are tracked.
		err = r.rdb.ZAddXX(ctx, r.k.claims(), redis.Z{Score: float64(now.Add(ttl).UnixMilli()), Member: callID}).Err()
	}
	return cur, err
}

// releaseScript deletes a lease if ARGV[1] holds it.
// KEYS[1] lease key. ARGV[1] holder. Returns 1 when released.
var releaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and string.sub(cur, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)

// Release implements store.Store. A released wait is offered for takeover at once.
func (r *Store) Release(ctx context.Context, callID, name, holder string) error {
	n, err := releaseScript.Run(ctx, r.rdb, []string{r.k.lease(callID, name)}, holder).Int()
	if err != nil || n == 0 || name != store.LeaseWait {
		return err
	}
	// XX: only a wait still indexed as open is offered; letting go of an
	// ended wait wakes nobody.
	ch, err := r.rdb.ZAddArgs(ctx, r.k.claims(), redis.ZAddArgs{XX: true, Ch: true, Members: []redis.Z{{Score: 0, Member: callID}}}).Result()
	if err != nil || ch == 0 {
		return err
	}
	return r.rdb.Publish(ctx, r.k.events(), store.ReleasedTopic).Err()
}

// Unclaimed implements store.Store. Entries for asks no longer open are pruned.
func (r *Store) Unclaimed(ctx context.Context, now time.Time, limit int) ([]string, error) {
	ids, err := r.rdb.ZRangeByScore(ctx, r.k.claims(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(limit),
	}).Result()
	if err != nil || len(ids) == 0 {
		return ids, err
	}
	return r.openTimed(ctx, ids)
}

// NextLapse implements store.Store: the lowest lease end in the claims
// index after after (0 is "nobody holds it"; ended asks leave the index).
func (r *Store) NextLapse(ctx context.Context, after time.Time) (time.Time, error) {
	zs, err := r.rdb.ZRangeByScoreWithScores(ctx, r.k.claims(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(after.UnixMilli(), 10), Max: "+inf", Count: 1,
	}).Result()
	if err != nil || len(zs) == 0 {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(zs[0].Score)), nil
}

// StartGrace implements store.Store.
func (r *Store) StartGrace(ctx context.Context, callID string, until time.Time) error {
	return r.rdb.ZAdd(ctx, r.k.detached(), redis.Z{Score: float64(until.UnixMilli()), Member: callID}).Err()
}

// EndedGraces implements store.Store.
func (r *Store) EndedGraces(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return r.rdb.ZRangeByScore(ctx, r.k.detached(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(limit),
	}).Result()
}

// EndGrace implements store.Store.
func (r *Store) EndGrace(ctx context.Context, callID string) error {
	return r.rdb.ZRem(ctx, r.k.detached(), callID).Err()
}
