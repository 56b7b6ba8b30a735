package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The standing rules' keys share the {rules} hash tag, so each script
// below touches one Cluster slot: rules is a hash of rule id → JSON (what
// was granted), rulesUntil a sorted set of live rule ids scored by when
// they end (ms; +inf until revoked), rulesUses and rulesUsed hashes of id
// → use count and last use (ms), ruleSeq the id counter.
func (k keys) rules() string      { return k.prefix + ":{rules}" }
func (k keys) rulesUntil() string { return k.prefix + ":{rules}:until" }
func (k keys) rulesUses() string  { return k.prefix + ":{rules}:uses" }
func (k keys) rulesUsed() string  { return k.prefix + ":{rules}:used" }
func (k keys) ruleSeq() string    { return k.prefix + ":{rules}:seq" }

// recentAsks is a list of the latest permission asks' JSON, newest first.
func (k keys) recentAsks() string { return k.prefix + ":{rules}:recent" }

func (r *Store) ruleKeys() []string {
	return []string{r.k.rules(), r.k.rulesUntil(), r.k.rulesUses(), r.k.rulesUsed(), r.k.ruleSeq()}
}

// luaPruneRules drops the rules whose time ran out by ARGV[1] (ms), from
// every key; each rules script starts with it, so a rule ends on its own
// at its time whichever call comes first.
const luaPruneRules = `
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
for _, id in ipairs(gone) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('HDEL', KEYS[4], id)
  redis.call('ZREM', KEYS[2], id)
end
`

// addRuleScript stores a new rule.
// KEYS: rules, until, uses, used, seq. ARGV[1] now ms, ARGV[2] the rule's
// JSON without its id, ARGV[3] until ms (0: until revoked), ARGV[4]
// MaxRules. Returns the new id, or 0 when MaxRules are live.
var addRuleScript = redis.NewScript(luaPruneRules + `
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
local id = redis.call('INCR', KEYS[5])
redis.call('HSET', KEYS[1], id, ARGV[2])
local score = '+inf'
if ARGV[3] ~= '0' then score = ARGV[3] end
redis.call('ZADD', KEYS[2], score, id)
return id
`)

// AddRule implements store.Rules.
func (r *Store) AddRule(ctx context.Context, x asktype.Rule, now time.Time) (asktype.Rule, error) {
	x.ID, x.Uses, x.LastUsed = 0, 0, time.Time{}
	x.Granted, x.Until = store.FromMillis(store.Millis(x.Granted)), store.FromMillis(store.Millis(x.Until))
	raw, err := json.Marshal(x)
	if err != nil {
		return asktype.Rule{}, err
	}
	id, err := addRuleScript.Run(ctx, r.rdb, r.ruleKeys(), now.UnixMilli(), raw, store.Millis(x.Until), store.MaxRules).Int64()
	if err != nil {
		return asktype.Rule{}, err
	}
	if id == 0 {
		return asktype.Rule{}, store.ErrTooManyRules
	}
	x.ID = id
	return x, nil
}

// liveRulesScript returns every live rule as id, JSON, uses, last use.
// KEYS: rules, until, uses, used. ARGV[1] now ms.
var liveRulesScript = redis.NewScript(luaPruneRules + `
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then
    table.insert(out, id)
    table.insert(out, raw)
    table.insert(out, redis.call('HGET', KEYS[3], id) or '0')
    table.insert(out, redis.call('HGET', KEYS[4], id) or '0')
  end
end
return out
`)

// LiveRules implements store.Rules.
func (r *Store) LiveRules(ctx context.Context, now time.Time) ([]asktype.Rule, error) {
	v, err := liveRulesScript.Run(ctx, r.rdb, r.ruleKeys()[:4], now.UnixMilli()).StringSlice()
	if err != nil {
		return nil, err
	}
	out := make([]asktype.Rule, 0, len(v)/4)
	for i := 0; i+3 < len(v); i += 4 {
		x, err := decodeRule(v[i : i+4])
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	// ZRANGE orders ids by when they end; the contract is oldest first.
	sortRules(out)
	return out, nil
}

// takeRuleScript revokes (ARGV[2] "revoke") or uses ("use") a live rule.
// KEYS: rules, until, uses, used. ARGV[1] now ms, ARGV[2] what, ARGV[3]
// id. Returns id, JSON, uses, last use — as it was before a revoke, after
// a use — or nil when the rule is not live.
var takeRuleScript = redis.NewScript(luaPruneRules + `
local raw = redis.call('HGET', KEYS[1], ARGV[3])
if not raw then return false end
if ARGV[2] == 'use' then
  redis.call('HINCRBY', KEYS[3], ARGV[3], 1)
  redis.call('HSET', KEYS[4], ARGV[3], ARGV[1])
end
local out = {ARGV[3], raw, redis.call('HGET', KEYS[3], ARGV[3]) or '0', redis.call('HGET', KEYS[4], ARGV[3]) or '0'}
if ARGV[2] == 'revoke' then
  redis.call('HDEL', KEYS[1], ARGV[3])
  redis.call('HDEL', KEYS[3], ARGV[3])
  redis.call('HDEL', KEYS[4], ARGV[3])
  redis.call('ZREM', KEYS[2], ARGV[3])
end
return out
`)

func (r *Store) takeRule(ctx context.Context, what string, id int64, now time.Time) (asktype.Rule, error) {
	v, err := takeRuleScript.Run(ctx, r.rdb, r.ruleKeys()[:4], now.UnixMilli(), what, id).StringSlice()
	if errors.Is(err, redis.Nil) {
		return asktype.Rule{}, store.ErrNotFound
	}
	if err != nil {
		return asktype.Rule{}, err
	}
	return decodeRule(v)
}

// RevokeRule implements store.Rules.
func (r *Store) RevokeRule(ctx context.Context, id int64, now time.Time) (asktype.Rule, error) {
	return r.takeRule(ctx, "revoke", id, now)
}

// UseRule implements store.Rules.
func (r *Store) UseRule(ctx context.Context, id int64, now time.Time) (asktype.Rule, error) {
	return r.takeRule(ctx, "use", id, now)
}

// decodeRule reads a rule from id, JSON, uses, last use (ms).
func decodeRule(v []string) (asktype.Rule, error) {
	var x asktype.Rule
	if len(v) != 4 {
		return x, errors.New("redisstore: malformed rule reply")
	}
	if err := json.Unmarshal([]byte(v[1]), &x); err != nil {
		return x, err
	}
	x.ID, _ = strconv.ParseInt(v[0], 10, 64)
	x.Uses, _ = strconv.ParseInt(v[2], 10, 64)
	used, _ := strconv.ParseInt(v[3], 10, 64)
	x.LastUsed = store.FromMillis(used)
	return x, nil
}

func sortRules(rs []asktype.Rule) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].ID < rs[j-1].ID; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// NoteAsk implements store.Rules: LPUSH and LTRIM in one MULTI, so the
// list never holds more than store.MaxRecentAsks.
func (r *Store) NoteAsk(ctx context.Context, a asktype.RecentAsk) error {
	a.At = store.FromMillis(store.Millis(a.At))
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	_, err = r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, r.k.recentAsks(), raw)
		p.LTrim(ctx, r.k.recentAsks(), 0, store.MaxRecentAsks-1)
		return nil
	})
	return err
}

// RecentAsks implements store.Rules.
func (r *Store) RecentAsks(ctx context.Context, limit int) ([]asktype.RecentAsk, error) {
	if limit <= 0 {
		return []asktype.RecentAsk{}, nil
	}
	vs, err := r.rdb.LRange(ctx, r.k.recentAsks(), 0, int64(limit-1)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]asktype.RecentAsk, 0, len(vs))
	for _, v := range vs {
		var a asktype.RecentAsk
		if json.Unmarshal([]byte(v), &a) == nil {
			out = append(out, a)
		}
	}
	return out, nil
}
