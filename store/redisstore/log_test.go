package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// configHook answers CONFIG GET maxmemory-policy as a server configured
// with policy would (or fails, as when CONFIG is disabled).
type configHook struct {
	policy string
	err    error
}

func (configHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (configHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h configHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "config" {
			return next(ctx, cmd)
		}
		if h.err != nil {
			cmd.SetErr(h.err)
			return h.err
		}
		cmd.(*redis.MapStringStringCmd).SetVal(map[string]string{"maxmemory-policy": h.policy})
		return nil
	}
}

func TestStartWarnsWhenRedisMayEvict(t *testing.T) {
	for name, tc := range map[string]struct {
		hook configHook
		warn bool
	}{
		"allkeys-lru": {configHook{policy: "allkeys-lru"}, true},
		"noeviction":  {configHook{policy: "noeviction"}, false},
		"disabled":    {configHook{err: errors.New("ERR unknown command 'CONFIG'")}, false},
	} {
		t.Run(name, func(t *testing.T) {
			var buf logBuf
			r, rdb := newTestRedis(t, Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
			rdb.AddHook(tc.hook)
			if err := r.Start(context.Background()); err != nil {
				t.Fatalf("Start: %v (an unreadable policy must not stop start-up)", err)
			}
			t.Cleanup(func() { _ = r.Stop(context.Background()) })
			out := buf.String()
			if got := strings.Contains(out, `"level":"WARN"`) && strings.Contains(out, "noeviction"); got != tc.warn {
				t.Fatalf("warned %v, want %v; log:\n%s", got, tc.warn, out)
			}
			if name == "disabled" && !strings.Contains(out, "could not read Redis maxmemory-policy") {
				t.Fatalf("an unreadable policy is not mentioned; log:\n%s", out)
			}
		})
	}
}

func TestRedisLogLinesAreJSON(t *testing.T) {
	var buf logBuf
	redisLogger{slog.New(slog.NewJSONHandler(&buf, nil))}.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %v\n", 5, errors.New("refused"))
	var line map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &line); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	if line["level"] != "WARN" || line["msg"] != "connection pool: failed to dial after 5 attempts: refused" || line["component"] != "go-redis" {
		t.Fatalf("line = %v", line)
	}
}
