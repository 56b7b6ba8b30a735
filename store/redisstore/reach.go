package redisstore

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// once is a once-only marker (SET NX with a TTL), e.g. a Slack event id.
func (k keys) once(key string) string { return k.prefix + ":once:{" + key + "}" }

// visitors is a sorted set of the users who opened their Home tab, scored
// by when (ms).
func (k keys) visitors() string { return k.prefix + ":home:visitors" }

// Active implements store.Reach. It reads the newest limit entries of each
// state index (scored by seq), merges them, and keeps those whose record is
// still active; the indexes are hints written after the fact.
func (r *Store) Active(ctx context.Context, limit int) ([]*asktype.Ask, error) {
	if limit <= 0 {
		return nil, nil
	}
	var cmds []*redis.ZSliceCmd
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, s := range []asktype.State{asktype.Open, asktype.Continued} {
			cmds = append(cmds, p.ZRevRangeWithScores(ctx, r.k.byState(s), 0, int64(limit-1)))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var zs []redis.Z
	for _, c := range cmds {
		zs = append(zs, c.Val()...)
	}
	sort.Slice(zs, func(i, j int) bool { return zs[i].Score > zs[j].Score })
	ids := make([]string, 0, len(zs))
	seen := map[string]bool{}
	for _, z := range zs {
		id, _ := z.Member.(string)
		if !seen[id] && len(ids) < limit {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return r.activeAsks(ctx, ids)
}

// activeAsks reads the asks ids name, in order, keeping the active ones.
func (r *Store) activeAsks(ctx context.Context, ids []string) ([]*asktype.Ask, error) {
	recs, err := r.readAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*asktype.Ask, 0, len(ids))
	for i, m := range recs {
		if len(m) == 0 {
			continue // expired with retention; its stray index entry is only a hint
		}
		a, err := fromMap(ids[i], m)
		if err != nil {
			return nil, err
		}
		if a.State.Active() {
			out = append(out, a)
		}
	}
	return out, nil
}

// Once implements store.Reach.
func (r *Store) Once(ctx context.Context, key string, ttl time.Duration, _ time.Time) (bool, error) {
	return r.rdb.SetNX(ctx, r.k.once(key), "1", ttl).Result()
}

// Visit implements store.Reach. The set lives VisitTTL past the last visit.
func (r *Store) Visit(ctx context.Context, userID string, now time.Time) error {
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, r.k.visitors(), redis.Z{Score: float64(now.UnixMilli()), Member: userID})
		p.PExpire(ctx, r.k.visitors(), store.VisitTTL)
		return nil
	})
	return err
}

// Visitors implements store.Reach; it drops visits before since.
func (r *Store) Visitors(ctx context.Context, since time.Time, limit int) ([]string, error) {
	var res *redis.StringSliceCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, r.k.visitors(), "-inf", "("+strconv.FormatInt(since.UnixMilli(), 10))
		res = p.ZRevRangeByScore(ctx, r.k.visitors(), &redis.ZRangeBy{Max: "+inf", Min: strconv.FormatInt(since.UnixMilli(), 10), Count: int64(limit)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res.Val(), nil
}
