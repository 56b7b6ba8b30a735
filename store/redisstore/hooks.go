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

// What following the trail and keeping capped lists (store.AuditTail,
// store.Lists) take in Redis. A position in the trail is the stream id of
// its entry in the chain (keys.chain), the same as Audit's cursor: ids only
// grow (the append script never writes one below the last), so "after this
// id" is "after this entry", whatever was trimmed since.

// list is one capped list (store.Lists): a Redis list in its own slot.
func (k keys) list(key string) string { return k.prefix + ":list:{" + key + "}" }

// AuditFrom implements store.AuditTail.
func (r *Store) AuditFrom(ctx context.Context, pos string, limit int) ([]store.TrailEntry, error) {
	start := "-"
	if pos != "" {
		if !streamID.MatchString(pos) {
			return nil, store.ErrBadCursor
		}
		start = "(" + pos
	}
	limit = store.PageSize(asktype.AuditQuery{Limit: limit})
	msgs, err := r.rdb.XRangeN(ctx, r.k.chain(), start, "+", int64(limit)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]store.TrailEntry, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, store.TrailEntry{AuditEntry: streamEntry(m), Pos: m.ID})
	}
	return out, nil
}

// streamEntry decodes one entry of the chain; one that cannot be read is
// returned as such (its hash cannot match), so nothing goes missing
// silently.
func streamEntry(m redis.XMessage) asktype.AuditEntry {
	raw, _ := m.Values["e"].(string)
	var e asktype.AuditEntry
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return asktype.AuditEntry{Event: "unreadable", Detail: truncate(raw, 500)}
	}
	return e
}

// AuditEnd implements store.AuditTail: it chains what is waiting first
// (as a first page of Audit does), then reads the newest entry. With the
// stream trimmed empty, the position is "" (whatever comes next) and the
// seq the chain's head.
func (r *Store) AuditEnd(ctx context.Context) (string, int64, error) {
	if _, err := r.drain(ctx, true); err != nil {
		if ctx.Err() != nil {
			return "", 0, ctx.Err()
		}
		r.log.Warn("store: chaining audit events before reading the trail's end failed; reading what is chained", "err", err)
	}
	msgs, err := r.rdb.XRevRangeN(ctx, r.k.chain(), "+", "-", 1).Result()
	if err != nil {
		return "", 0, err
	}
	if len(msgs) > 0 {
		return msgs[0].ID, streamEntry(msgs[0]).Seq, nil
	}
	s, err := r.rdb.HGet(ctx, r.k.chainHead(), "seq").Result()
	if errors.Is(err, redis.Nil) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	seq, _ := strconv.ParseInt(s, 10, 64)
	return "", seq, nil
}

// ListPush implements store.Lists: append, trim and expire in one
// transaction.
func (r *Store) ListPush(ctx context.Context, key, value string, max int, ttl time.Duration, _ time.Time) error {
	k := r.k.list(key)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, k, value)
		if max > 0 {
			p.LTrim(ctx, k, int64(-max), -1)
		}
		p.PExpire(ctx, k, ttl)
		return nil
	})
	return err
}

// ListRange implements store.Lists.
func (r *Store) ListRange(ctx context.Context, key string, limit int, _ time.Time) ([]string, error) {
	return r.rdb.LRange(ctx, r.k.list(key), 0, int64(limit)-1).Result()
}

// ListRemove implements store.Lists: LREM of the first match, atomic.
func (r *Store) ListRemove(ctx context.Context, key, value string, _ time.Time) (bool, error) {
	n, err := r.rdb.LRem(ctx, r.k.list(key), 1, value).Result()
	return n > 0, err
}
