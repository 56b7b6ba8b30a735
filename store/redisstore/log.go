package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// LogRedisTo routes go-redis's own log lines (reconnects, pool trouble),
// which it otherwise prints to stderr as plain text among our JSON lines,
// to log at WARN. go-redis has one logger per process: call it once at
// start-up, before opening a client.
func LogTo(log *slog.Logger) { redis.SetLogger(redisLogger{log}) }

// redisLogger adapts slog to go-redis's Printf-style logger.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	l.log.WarnContext(ctx, strings.TrimPrefix(msg, "redis: "), "component", "go-redis")
}

// checkEviction warns loudly unless Redis is configured never to evict
// keys: under memory pressure any other policy may silently drop open asks,
// their leases and the indexes that find them. CONFIG is often disabled or
// renamed on managed Redis; then the policy cannot be read, which is
// logged, not fatal.
func (r *Store) checkEviction(ctx context.Context) {
	m, err := r.rdb.ConfigGet(ctx, "maxmemory-policy").Result()
	policy, ok := m["maxmemory-policy"]
	switch {
	case err != nil || !ok:
		r.log.Info("could not read Redis maxmemory-policy (CONFIG disabled or renamed?); make sure it is noeviction, or Redis may evict open questions", "err", err)
	case policy != "noeviction":
		r.log.Warn("Redis maxmemory-policy is "+policy+", not noeviction: when Redis runs out of memory it may evict open questions, their claims and indexes, and answers get lost; set maxmemory-policy noeviction (and size maxmemory for the retention)",
			"maxmemoryPolicy", policy)
	}
}
