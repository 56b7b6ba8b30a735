package service

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/clock"
)

// A REDIS_URL carries the Redis password: no error about it may print it.
func TestRedisURLErrorsNeverPrintThePassword(t *testing.T) {
	const secret = "s3cr3tPW"
	for _, raw := range []string{
		"redis://:" + secret + "@host:notaport/0",
		"redis://user:" + secret + "@host:6379/notadb",
		"redis://user:" + secret + "%zz@host:6379/0",
		"http://user:" + secret + "@host:6379/0",
		"redis+cluster://user:" + secret + "@host1:6379?addr=host2:6379&bogus=1",
		"redis://user:" + secret + "@host:26379?master_name=m&dial_timeout=soon",
		"redis://host:26379?master_name=m&sentinel_password=" + secret + "&bogus=1",
		"redis://user:" + secret + "@host:6379/0\x7f",
		"redis://user:" + secret + "\"\x01@host:notaport/0",
	} {
		c := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisURL: raw, RedisPrefix: "askslack", Addr: ":8080",
			Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, LogLevel: "info"}
		err := c.Check()
		if err == nil {
			t.Errorf("%q: no error", raw)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("config error prints the password: %v", err)
		}
		if !strings.Contains(err.Error(), "REDIS_URL") {
			t.Errorf("config error does not name REDIS_URL: %v", err)
		}
	}
}

func TestOpenStoreErrorsNeverPrintThePassword(t *testing.T) {
	const secret = "s3cr3tPW"
	var logs syncBuf
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	cfg := &Config{RedisURL: "redis://user:" + secret + "@127.0.0.1:1/0", RedisPrefix: "askslack", Retention: 168 * time.Hour}
	_, err := openStore(context.Background(), cfg, log, clock.Real)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("openStore error = %v; want an error without the password", err)
	}
	// go-redis's own complaint about the failed dial came through slog.
	if out := logs.String(); !strings.Contains(out, `"component":"go-redis"`) || strings.Contains(out, secret) {
		t.Fatalf("log = %s; want go-redis lines as JSON, without the password", out)
	}
	cfg.RedisURL = "redis://user:" + secret + "@host:notaport/0"
	if _, err := openStore(context.Background(), cfg, log, clock.Real); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("openStore error = %v; want an error without the password", err)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
