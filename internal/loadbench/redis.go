package loadbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a private redis-server child on a loopback port, without
// persistence, for one bench run.
type Redis struct {
	Addr string
	cmd  *exec.Cmd
	rdb  *redis.Client
	done chan struct{}
}

// StartRedis runs bin (redis-server) on a free loopback port and waits
// until it answers PING.
func StartRedis(ctx context.Context, bin string) (*Redis, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{})}
	r.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--maxclients", "20000")
	r.cmd.Dir = os.TempDir()
	DieWithParent(r.cmd)
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	r.rdb = redis.NewClient(&redis.Options{Addr: r.Addr, PoolSize: 2})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := r.rdb.Ping(ctx).Err(); err == nil {
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("%s exited at start", bin)
		case <-ctx.Done():
			r.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling a child for readiness; nothing to wait on
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("%s did not answer within 10s", bin)
		}
	}
}

// URL is the REDIS_URL for the bot.
func (r *Redis) URL() string { return "redis://" + r.Addr + "/0" }

// Pid is the server's process id.
func (r *Redis) Pid() int { return r.cmd.Process.Pid }

// Flush empties the database between runs.
func (r *Redis) Flush(ctx context.Context) error { return r.rdb.FlushAll(ctx).Err() }

// Card is the number of members of the sorted set key.
func (r *Redis) Card(ctx context.Context, key string) (int64, error) {
	return r.rdb.ZCard(ctx, key).Result()
}

// Stop kills the server and waits for it.
func (r *Redis) Stop() {
	r.rdb.Close()
	_ = r.cmd.Process.Kill()
	<-r.done
}

// RedisStats are cumulative server counters from INFO.
type RedisStats struct {
	Commands int64            // total_commands_processed
	Reads    int64            // total_reads_processed: read events on client sockets
	Calls    map[string]int64 // per command, from INFO commandstats
	CPU      time.Duration    // used_cpu_user + used_cpu_sys
}

// Stats reads INFO stats, commandstats and cpu: one command, one read.
func (r *Redis) Stats(ctx context.Context) (RedisStats, error) {
	s := RedisStats{Calls: map[string]int64{}}
	info, err := r.rdb.Info(ctx, "stats", "commandstats", "cpu").Result()
	if err != nil {
		return s, err
	}
	var cpu float64
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case k == "total_commands_processed":
			s.Commands, _ = strconv.ParseInt(v, 10, 64)
		case k == "total_reads_processed":
			s.Reads, _ = strconv.ParseInt(v, 10, 64)
		case k == "used_cpu_user" || k == "used_cpu_sys":
			f, _ := strconv.ParseFloat(v, 64)
			cpu += f
		case strings.HasPrefix(k, "cmdstat_"):
			// cmdstat_evalsha:calls=7,usec=…,…
			for _, kv := range strings.Split(v, ",") {
				if n, ok := strings.CutPrefix(kv, "calls="); ok {
					s.Calls[strings.TrimPrefix(k, "cmdstat_")], _ = strconv.ParseInt(n, 10, 64)
				}
			}
		}
	}
	s.CPU = time.Duration(cpu * float64(time.Second))
	return s, nil
}

// Sub returns s - o; the INFO call that read s is not subtracted (one
// command and one read, negligible next to a window's traffic).
func (s RedisStats) Sub(o RedisStats) RedisStats {
	d := RedisStats{Commands: s.Commands - o.Commands, Reads: s.Reads - o.Reads, CPU: s.CPU - o.CPU, Calls: map[string]int64{}}
	for k, v := range s.Calls {
		if n := v - o.Calls[k]; n != 0 {
			d.Calls[k] = n
		}
	}
	return d
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeAddr returns a loopback host:port that was free a moment ago.
func FreeAddr() (string, error) {
	p, err := freePort()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", p), nil
}
