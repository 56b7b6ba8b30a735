package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/store"
)

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
