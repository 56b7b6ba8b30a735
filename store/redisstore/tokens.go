package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The personal agent tokens' keys share the {tokens} hash tag, so each
// script below touches one Cluster slot: tokens is a hash of token id →
// JSON (what was connected, the secret's hash among it), byHash a hash of
// secret hash → id, owners a hash of id → owner, live a sorted set of the
// live ids scored by when they expire (ms; a revoke takes the id out),
// purge a sorted set of every kept id scored by when it is dropped (ms:
// store.TokenKeep after it expires), used and addr hashes of id → last
// use (ms) and its address, revoked a hash of id → "<ms>|<by>".
func (k keys) tokens() string        { return k.prefix + ":{tokens}" }
func (k keys) tokensByHash() string  { return k.prefix + ":{tokens}:byhash" }
func (k keys) tokensOwners() string  { return k.prefix + ":{tokens}:owners" }
func (k keys) tokensLive() string    { return k.prefix + ":{tokens}:live" }
func (k keys) tokensPurge() string   { return k.prefix + ":{tokens}:purge" }
func (k keys) tokensUsed() string    { return k.prefix + ":{tokens}:used" }
func (k keys) tokensAddr() string    { return k.prefix + ":{tokens}:addr" }
func (k keys) tokensRevoked() string { return k.prefix + ":{tokens}:revoked" }

func (r *Store) tokenKeys() []string {
	return []string{r.k.tokens(), r.k.tokensByHash(), r.k.tokensOwners(), r.k.tokensLive(), r.k.tokensPurge(),
		r.k.tokensUsed(), r.k.tokensAddr(), r.k.tokensRevoked()}
}

// luaRow starts every tokens script (KEYS as tokenKeys, ARGV[1] now ms):
// it defines now and row(id), a token's four reply fields: JSON, last
// use, its address, revoked (nil for a token not kept, or kept past its
// purge time and not yet dropped).
const luaRow = `
local now = tonumber(ARGV[1])
local function row(id)
  local purge = redis.call('ZSCORE', KEYS[5], id)
  if not purge or tonumber(purge) <= now then return nil end
  local raw = redis.call('HGET', KEYS[1], id)
  if not raw then return nil end
  return {raw, redis.call('HGET', KEYS[6], id) or '0', redis.call('HGET', KEYS[7], id) or '', redis.call('HGET', KEYS[8], id) or ''}
end
`

// luaTokens is luaRow and a prune: it drops the tokens kept past their
// time (a bounded batch per call, so no call pays for a long backlog) and
// takes the expired ones out of live. Every script but the hot path's
// (useTokenScript: each request) starts with it.
const luaTokens = luaRow + `
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', 0, 100)) do
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then
    local h = cjson.decode(raw)['hash']
    if h then redis.call('HDEL', KEYS[2], h) end
  end
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZREM', KEYS[4], id)
  redis.call('ZREM', KEYS[5], id)
  redis.call('HDEL', KEYS[6], id)
  redis.call('HDEL', KEYS[7], id)
  redis.call('HDEL', KEYS[8], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
`

// addTokenScript stores a new token.
// KEYS: tokenKeys. ARGV[1] now ms, ARGV[2] id, ARGV[3] hash, ARGV[4]
// owner, ARGV[5] JSON, ARGV[6] expires ms, ARGV[7] purge ms, ARGV[8]
// MaxOwnerTokens, ARGV[9] MaxTokens. Returns 0 stored, 1 the id or hash
// is kept, 2 too many tokens.
var addTokenScript = redis.NewScript(luaTokens + `
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 or redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1 then return 1 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[9]) then return 2 end
local mine = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  if redis.call('HGET', KEYS[3], id) == ARGV[4] then mine = mine + 1 end
end
if mine >= tonumber(ARGV[8]) then return 2 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[5])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[6], ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[2])
return 0
`)

// AddToken implements store.Tokens.
func (r *Store) AddToken(ctx context.Context, t asktype.AgentToken, now time.Time) error {
	t.Created, t.Expires = store.FromMillis(store.Millis(t.Created)), store.FromMillis(store.Millis(t.Expires))
	t.LastUsed, t.LastAddr, t.Revoked, t.RevokedBy = time.Time{}, "", time.Time{}, ""
	if t.Kinds == nil {
		t.Kinds = []string{}
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return err
	}
	code, err := addTokenScript.Run(ctx, r.rdb, r.tokenKeys(), now.UnixMilli(), t.ID, t.Hash, t.Owner, raw,
		store.Millis(t.Expires), store.Millis(t.Expires.Add(store.TokenKeep)), store.MaxOwnerTokens, store.MaxTokens).Int()
	switch {
	case err != nil:
		return err
	case code == 1:
		return store.ErrTokenExists
	case code == 2:
		return store.ErrTooManyTokens
	}
	return nil
}

// useTokenScript finds a token by its secret's hash and records its use;
// it prunes nothing (the other scripts do), so a request pays for reads
// and, once a minute, two writes.
// KEYS: tokenKeys. ARGV[1] now ms, ARGV[2] hash, ARGV[3] address,
// ARGV[4] store.TouchEvery ms. Returns the token's row, or nil.
var useTokenScript = redis.NewScript(luaRow + `
local id = redis.call('HGET', KEYS[2], ARGV[2])
if not id then return false end
local found = row(id)
if not found then return false end
local exp = redis.call('ZSCORE', KEYS[4], id)
if exp and tonumber(exp) > now then
  local used = tonumber(redis.call('HGET', KEYS[6], id) or '0')
  if now - used >= tonumber(ARGV[4]) or (redis.call('HGET', KEYS[7], id) or '') ~= ARGV[3] then
    redis.call('HSET', KEYS[6], id, now)
    redis.call('HSET', KEYS[7], id, ARGV[3])
    found[2], found[3] = tostring(now), ARGV[3]
  end
end
return found
`)

// UseToken implements store.Tokens: one round trip, which every request
// presenting a personal token pays.
func (r *Store) UseToken(ctx context.Context, hash, addr string, now time.Time) (asktype.AgentToken, error) {
	v, err := useTokenScript.Run(ctx, r.rdb, r.tokenKeys(), now.UnixMilli(), hash, addr, store.TouchEvery.Milliseconds()).StringSlice()
	return oneToken(v, err)
}

// tokenScript reads one token by id. KEYS: tokenKeys. ARGV[1] now ms,
// ARGV[2] id. Returns its row, or nil.
var tokenScript = redis.NewScript(luaTokens + `
return row(ARGV[2]) or false
`)

// Token implements store.Tokens.
func (r *Store) Token(ctx context.Context, id string) (asktype.AgentToken, error) {
	v, err := tokenScript.Run(ctx, r.rdb, r.tokenKeys(), r.clock.Now().UnixMilli(), id).StringSlice()
	return oneToken(v, err)
}

// liveTokensScript lists live tokens. KEYS: tokenKeys. ARGV[1] now ms,
// ARGV[2] owner ("" every owner). Returns their rows, one after another.
var liveTokensScript = redis.NewScript(luaTokens + `
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. now, '+inf')) do
  if ARGV[2] == '' or redis.call('HGET', KEYS[3], id) == ARGV[2] then
    local x = row(id)
    if x then for _, f in ipairs(x) do table.insert(out, f) end end
  end
end
return out
`)

// LiveTokens implements store.Tokens.
func (r *Store) LiveTokens(ctx context.Context, owner string, now time.Time) ([]asktype.AgentToken, error) {
	v, err := liveTokensScript.Run(ctx, r.rdb, r.tokenKeys(), now.UnixMilli(), owner).StringSlice()
	if err != nil {
		return nil, err
	}
	out := make([]asktype.AgentToken, 0, len(v)/4)
	for i := 0; i+3 < len(v); i += 4 {
		t, err := decodeToken(v[i : i+4])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	store.SortTokens(out)
	return out, nil
}

// revokeTokenScript ends a live token. KEYS: tokenKeys. ARGV[1] now ms,
// ARGV[2] id, ARGV[3] by. Returns its row, revoked, or nil when it is not
// live.
var revokeTokenScript = redis.NewScript(luaTokens + `
local exp = redis.call('ZSCORE', KEYS[4], ARGV[2])
if not exp or tonumber(exp) <= now then return false end
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('HSET', KEYS[8], ARGV[2], now .. '|' .. ARGV[3])
return row(ARGV[2]) or false
`)

// RevokeToken implements store.Tokens.
func (r *Store) RevokeToken(ctx context.Context, id, by string, now time.Time) (asktype.AgentToken, error) {
	v, err := revokeTokenScript.Run(ctx, r.rdb, r.tokenKeys(), now.UnixMilli(), id, by).StringSlice()
	return oneToken(v, err)
}

func oneToken(v []string, err error) (asktype.AgentToken, error) {
	if errors.Is(err, redis.Nil) {
		return asktype.AgentToken{}, store.ErrNotFound
	}
	if err != nil {
		return asktype.AgentToken{}, err
	}
	return decodeToken(v)
}

// decodeToken reads a token from its row: JSON, last use (ms), its
// address, "<revoked ms>|<by>" ("" while live).
func decodeToken(v []string) (asktype.AgentToken, error) {
	var t asktype.AgentToken
	if len(v) != 4 {
		return t, errors.New("redisstore: malformed token reply")
	}
	if err := json.Unmarshal([]byte(v[0]), &t); err != nil {
		return t, err
	}
	// As every store keeps times: Unix milliseconds, read back in local time.
	t.Created, t.Expires = store.FromMillis(store.Millis(t.Created)), store.FromMillis(store.Millis(t.Expires))
	used, _ := strconv.ParseInt(v[1], 10, 64)
	t.LastUsed, t.LastAddr = store.FromMillis(used), v[2]
	if at, by, ok := strings.Cut(v[3], "|"); ok {
		ms, _ := strconv.ParseInt(at, 10, 64)
		t.Revoked, t.RevokedBy = store.FromMillis(ms), by
	}
	if len(t.Kinds) == 0 {
		t.Kinds = nil
	}
	return t, nil
}
