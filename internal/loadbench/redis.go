package loadbench

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
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

	mu  sync.Mutex
	own map[string]int64 // commands this client sent, by name (see RedisStats.Sub)
}

// StartRedis runs bin (redis-server) on a free loopback port and waits
// until it answers PING.
func StartRedis(ctx context.Context, bin string) (*Redis, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startRedisOn(ctx, bin, port, os.TempDir())
}

// startRedisOn runs bin on port in dir, with extra arguments, and waits
// until it answers PING.
func startRedisOn(ctx context.Context, bin string, port int, dir string, extra ...string) (*Redis, error) {
	r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{})}
	r.cmd = exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--maxclients", "20000"}, extra...)...)
	r.cmd.Dir = dir
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
func (r *Redis) Flush(ctx context.Context) error {
	r.sent("flushall")
	return r.rdb.FlushAll(ctx).Err()
}

// Card is the number of members of the sorted set key.
func (r *Redis) Card(ctx context.Context, key string) (int64, error) {
	r.sent("zcard")
	return r.rdb.ZCard(ctx, key).Result()
}

// Stop kills the server and waits for it.
func (r *Redis) Stop() {
	r.rdb.Close()
	_ = r.cmd.Process.Kill()
	<-r.done
}

// RedisStats are cumulative server counters from INFO. Commands run by a
// script (redis.call inside EVALSHA) count in Commands and in Calls as
// well as the script's own call: INFO does not tell them apart.
type RedisStats struct {
	Commands int64            // total_commands_processed
	Reads    int64            // total_reads_processed: read events on client sockets
	Calls    map[string]int64 // per command, from INFO commandstats
	Usec     map[string]int64 // per command, microseconds spent in it (a script's include its commands')
	CPU      time.Duration    // used_cpu_user + used_cpu_sys of the server process
	// own is what this Redis's own client had sent, by command, before
	// the INFO that read these stats: Sub takes it out, so a window's
	// figures are the bot's alone.
	own map[string]int64
}

// scriptCommands are the commands that run a script or a function.
var scriptCommands = []string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}

// Scripts is the calls of EVAL, EVALSHA, FCALL and their _RO forms.
func (s RedisStats) Scripts() int64 {
	var n int64
	for _, c := range scriptCommands {
		n += s.Calls[c]
	}
	return n
}

// ScriptTime is the time Redis spent running them, the commands they
// called included.
func (s RedisStats) ScriptTime() time.Duration {
	var n int64
	for _, c := range scriptCommands {
		n += s.Usec[c]
	}
	return time.Duration(n) * time.Microsecond
}

// CommandShare is one command's calls in a window.
type CommandShare struct {
	Name  string
	Calls int64
}

// Breakdown lists the commands of s by calls, most first (names break
// ties), without those called less than min times.
func (s RedisStats) Breakdown(min int64) []CommandShare {
	var out []CommandShare
	for k, v := range s.Calls {
		if v >= min && v > 0 {
			out = append(out, CommandShare{k, v})
		}
	}
	slices.SortFunc(out, func(a, b CommandShare) int {
		if a.Calls != b.Calls {
			return cmp.Compare(b.Calls, a.Calls)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Stats reads INFO stats, commandstats and cpu: one command, one read,
// which the next Stats' Sub takes out with the bench's other commands.
func (r *Redis) Stats(ctx context.Context) (RedisStats, error) {
	own := r.sent("info")
	info, err := r.rdb.Info(ctx, "stats", "commandstats", "cpu").Result()
	if err != nil {
		return RedisStats{}, err
	}
	s := ParseInfo(info)
	s.own = own
	return s, nil
}

// ParseInfo reads the counters of an INFO reply (sections stats,
// commandstats, cpu); what it does not know it skips.
func ParseInfo(info string) RedisStats {
	s := RedisStats{Calls: map[string]int64{}, Usec: map[string]int64{}}
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
			// cmdstat_evalsha:calls=7,usec=123,usec_per_call=17.57,rejected_calls=0,failed_calls=0
			name := strings.TrimPrefix(k, "cmdstat_")
			for _, kv := range strings.Split(v, ",") {
				f, n, _ := strings.Cut(kv, "=")
				switch f {
				case "calls":
					s.Calls[name], _ = strconv.ParseInt(n, 10, 64)
				case "usec":
					s.Usec[name], _ = strconv.ParseInt(n, 10, 64)
				}
			}
		}
	}
	s.CPU = time.Duration(cpu * float64(time.Second))
	return s
}

// Sub returns s - o, without the commands the bench itself sent in
// between (the INFO that read o, and any Card): each is one command and
// one read event. The INFO that read s is not in s (Redis counts a command
// once it has run).
func (s RedisStats) Sub(o RedisStats) RedisStats {
	d := RedisStats{Commands: s.Commands - o.Commands, Reads: s.Reads - o.Reads, CPU: s.CPU - o.CPU,
		Calls: map[string]int64{}, Usec: map[string]int64{}}
	for k, v := range s.Calls {
		if n := v - o.Calls[k]; n != 0 {
			d.Calls[k] = n
		}
	}
	for k, v := range s.Usec {
		if n := v - o.Usec[k]; n != 0 {
			d.Usec[k] = n
		}
	}
	for k, v := range s.own {
		n := v - o.own[k]
		if n <= 0 {
			continue
		}
		d.Commands -= n
		d.Reads -= n
		if d.Calls[k] -= n; d.Calls[k] <= 0 {
			delete(d.Calls, k)
		}
	}
	d.Commands, d.Reads = max(d.Commands, 0), max(d.Reads, 0)
	return d
}

// sent notes one more command name sent by the bench's client and returns
// the counts before it.
func (r *Redis) sent(name string) map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	before := maps.Clone(r.own)
	if r.own == nil {
		r.own = map[string]int64{}
	}
	r.own[name]++
	return before
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
