package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/store"
)

// installs is a hash of installation key (team or enterprise id) → the
// sealed installation; one key, so every method is one command.
func (k keys) installs() string { return k.prefix + ":{installs}" }

// PutInstall implements store.Installs.
func (r *Store) PutInstall(ctx context.Context, key string, sealed []byte) error {
	return r.rdb.HSet(ctx, r.k.installs(), key, sealed).Err()
}

// Install implements store.Installs.
func (r *Store) Install(ctx context.Context, key string) ([]byte, error) {
	b, err := r.rdb.HGet(ctx, r.k.installs(), key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, store.ErrNotFound
	}
	return b, err
}

// DropInstall implements store.Installs: HDEL answers 1 to exactly one of
// racing callers.
func (r *Store) DropInstall(ctx context.Context, key string) (bool, error) {
	n, err := r.rdb.HDel(ctx, r.k.installs(), key).Result()
	return n == 1, err
}

// Installs implements store.Installs.
func (r *Store) Installs(ctx context.Context) (map[string][]byte, error) {
	m, err := r.rdb.HGetAll(ctx, r.k.installs()).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out, nil
}
