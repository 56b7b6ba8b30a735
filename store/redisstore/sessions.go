package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
)

// The Sessions role (store/sessions.go): a session's asks and its queued
// replies, and the session indexes the transitions file.

// index files an active ask, as its record says, under its session and,
// when it is an open timed ask, as a wait to expire and to claim. Every
// write is add-if-missing, so re-indexing is harmless. It returns the
// session's active count after (nil without a session).
func (r *Store) index(ctx context.Context, p redis.Pipeliner, run scriptRunner, a *asktype.Ask) *redis.Cmd {
	var active *redis.Cmd
	if a.SessionID != "" {
		ttl := r.retention.Milliseconds()
		if !a.Deadline.IsZero() {
			ttl += max(0, a.Deadline.Sub(a.Created).Milliseconds())
		}
		inActive := "0"
		if a.State.Active() {
			inActive = "1"
		}
		active = run(p, sessionIndexScript, []string{r.k.session(a.SessionID), r.k.active(a.SessionID)},
			a.Seq, a.CallID, inActive, ttl, sessionTTLSlack.Milliseconds())
	}
	if a.State == asktype.Open && !a.Deadline.IsZero() {
		p.ZAddNX(ctx, r.k.deadlines(), redis.Z{Score: float64(a.Deadline.UnixMilli()), Member: a.CallID})
		p.ZAddNX(ctx, r.k.claims(), redis.Z{Score: 0, Member: a.CallID})
	}
	return active
}

// sessionTTLSlack is how much longer than an ask needs sessionIndexScript
// makes a session's indexes live when it extends them: a busy session's
// asks then extend them once in that while, not each.
const sessionTTLSlack = time.Hour

// sessionIndexScript files an ask in its session's index and, when active,
// its active index (add-if-missing), makes both live at least ARGV[4] ms
// (when shorter, ARGV[4] + ARGV[5]; never shortening them), and returns the
// active count.
// KEYS[1] the session's index, KEYS[2] its active index (one slot: the
// session's hash tag). ARGV[1] seq (the score), ARGV[2] call id, ARGV[3]
// "1" to file it active, ARGV[4] TTL ms, ARGV[5] slack ms.
var sessionIndexScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])
if ARGV[3] == '1' then redis.call('ZADD', KEYS[2], 'NX', ARGV[1], ARGV[2]) end
local want = tonumber(ARGV[4])
for _, k in ipairs(KEYS) do
  local ttl = redis.call('PTTL', k)
  if ttl ~= -2 and ttl < want then redis.call('PEXPIRE', k, want + tonumber(ARGV[5])) end
end
return redis.call('ZCARD', KEYS[2])
`)

// extendTTL makes KEYS[1] live at least ARGV[1] ms from now (never
// shortens it). Sent with EVAL, not EVALSHA, because it runs in pipelines.
const extendTTL = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
if ttl < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`

// pruneActive drops entries of the session's active index whose ask ended,
// expired or belongs to another session, and returns how many remain.
func (r *Store) pruneActive(ctx context.Context, sessionID string) (int64, error) {
	key := r.k.active(sessionID)
	ids, err := r.rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return 0, err
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, r.k.ask(id), "state", "sid")
		}
		return nil
	}); err != nil {
		return 0, err
	}
	var gone []any
	for i, c := range cmds {
		v := c.Val()
		state, _ := v[0].(string)
		sid, _ := v[1].(string)
		if !asktype.State(state).Active() || sid != sessionID {
			gone = append(gone, ids[i])
		}
	}
	if len(gone) > 0 {
		if err := r.rdb.ZRem(ctx, key, gone...).Err(); err != nil {
			return 0, err
		}
	}
	return int64(len(ids) - len(gone)), nil
}

// Session implements store.Store. Entries whose ask has expired, or whose record
// names another session, are pruned.
func (r *Store) Session(ctx context.Context, sessionID string) ([]*asktype.Ask, error) {
	skey := r.k.session(sessionID)
	ids, err := r.rdb.ZRange(ctx, skey, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	return r.sessionAsks(ctx, skey, sessionID, ids, func(*asktype.Ask) bool { return true })
}

// Replies implements store.Store. It reads the session's reply index and the asks
// it names, pruning entries whose ask no longer has a queued reply.
func (r *Store) Replies(ctx context.Context, sessionID string) ([]*asktype.Ask, error) {
	key := r.k.replies(sessionID)
	ids, err := r.rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	return r.sessionAsks(ctx, key, sessionID, ids, func(a *asktype.Ask) bool {
		return a.State == asktype.Continued && len(a.Reply) > 0
	})
}

// readAll reads the records of the asks ids name, in one round trip (an
// empty map for an ask that is gone).
func (r *Store) readAll(ctx context.Context, ids []string) ([]map[string]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, r.k.ask(id))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(cmds))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// sessionAsks reads the asks an index of sessionID names (in index order),
// keeps those whose record says they belong to the session and pass keep,
// and prunes the rest from the index.
func (r *Store) sessionAsks(ctx context.Context, index, sessionID string, ids []string, keep func(*asktype.Ask) bool) ([]*asktype.Ask, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	recs, err := r.readAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*asktype.Ask, 0, len(ids))
	var gone []any
	for i, m := range recs {
		if len(m) == 0 || m["sid"] != sessionID {
			gone = append(gone, ids[i])
			continue
		}
		a, err := fromMap(ids[i], m)
		if err != nil {
			return nil, err
		}
		if !keep(a) {
			gone = append(gone, ids[i])
			continue
		}
		out = append(out, a)
	}
	if len(gone) > 0 {
		r.rdb.ZRem(ctx, index, gone...)
	}
	return out, nil
}
