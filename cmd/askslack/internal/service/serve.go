package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/heapfloor"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
)

// backend is a store with its lifecycle (redisstore.Store's change feed).
type backend interface {
	store.Store
	service
}

// memoryBackend is the embedded store: nothing to start or stop.
type memoryBackend struct{ *store.Memory }

func (memoryBackend) Start(context.Context) error { return nil }
func (memoryBackend) Stop(context.Context) error  { return nil }

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// NewLogger is the bot's logger: JSON on stderr at level (ASKSLACK_LOG_LEVEL).
func NewLogger(level string) *slog.Logger {
	l, _ := parseLevel(level)
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// Serve runs the bot until SIGTERM/SIGINT, then drains.
func Serve(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q; the bot is configured through the environment (see README)", args)
	}
	cfg, err := LoadConfig()
	if err != nil {
		return err
	}
	log := NewLogger(cfg.LogLevel)
	_, gogcSet := os.LookupEnv("GOGC")
	defer heapfloor.Start(heapFloor, gogcSet)()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	a, err := NewApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// heapFloor is how far the heap may grow past the live heap before a
// collection (see internal/heapfloor): on a small heap it saves the bot a
// tenth of its CPU; beyond it, GC runs as with GOGC=100.
const heapFloor = 32 << 20

// openStore opens the store REDIS_URL names (checking that Redis answers),
// else the embedded one. Its change feed starts with the app.
func openStore(ctx context.Context, cfg *Config, log *slog.Logger, c clock.Clock) (backend, error) {
	if cfg.RedisURL == "" {
		log.Warn("REDIS_URL is not set: using the embedded in-memory store; run a single replica, and open questions are lost on restart")
		return memoryBackend{store.NewMemory(cfg.Retention, c, store.WithAudit(cfg.AuditRetention, 0))}, nil
	}
	opts, err := redisOptions(cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	redisstore.LogTo(log) // go-redis logs JSON through slog, not plain text to stderr
	rdb := redis.NewUniversalClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		return nil, fmt.Errorf("REDIS_URL: cannot reach Redis at %s: %w", strings.Join(opts.Addrs, ","), err)
	}
	r, err := redisstore.New(rdb, redisstore.Options{Prefix: cfg.RedisPrefix, Schema: cfg.StoreSchema, Retention: cfg.Retention, AuditRetention: cfg.AuditRetention, Logger: log, Clock: c})
	if err != nil {
		return nil, err
	}
	// A store a newer, incompatible release wrote must not be misread
	// (docs/upgrading.md): refuse to start, naming that release.
	if err := r.CheckSchema(pctx, Release()); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	log.Info("using Redis", "addrs", opts.Addrs, "prefix", cfg.RedisPrefix, "release", Release(), "schema", cfg.StoreSchema)
	return r, nil
}

// Release names this build: the commit it was built from (with "+dirty"
// when the tree had changes), from the build info go build embeds, or
// "devel" without it. It goes into the store's schema marker.
func Release() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return rev + dirty
}

func holderID() string {
	h, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", h, os.Getpid(), hex.EncodeToString(b))
}
