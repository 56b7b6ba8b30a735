package bench

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/internal/loadbench"
)

// --redis-cluster is off by default, bounded, and needs a redis-server to
// start; --slack-limits keeps its one server.
func TestRedisClusterFlag(t *testing.T) {
	f, err := parseBenchFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.redisCluster != 0 {
		t.Errorf("default --redis-cluster %d", f.redisCluster)
	}
	f, err = parseBenchFlags([]string{"--targets", "redis", "--redis-cluster", "3", "--concurrency", "32", "--click-after", "0,2s",
		"--duration", "8s", "--open", "0", "--timed", "0", "--click-rate", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if f.redisCluster != 3 {
		t.Errorf("--redis-cluster 3 read as %d", f.redisCluster)
	}
	for _, args := range [][]string{
		{"--redis-cluster", "-1"}, {"--redis-cluster", "17"}, {"--redis-cluster", "x"},
		{"--redis-cluster", "3", "--redis-server", ""}, {"--redis-cluster", "3", "--slack-limits"},
	} {
		if _, err := parseBenchFlags(args); err == nil || cli.ExitCode(err) != 2 {
			t.Errorf("bench %v: err %v, want a usage error", args, err)
		}
	}
}

func nodeStats(cmds, reads, evalsha, publish, busIn int64, cpu time.Duration) loadbench.NodeStats {
	s := loadbench.SumStats(loadbench.RedisStats{Commands: cmds, Reads: reads, CPU: cpu,
		Calls: map[string]int64{"evalsha": evalsha, "publish": publish, "zadd": cmds - evalsha - publish}})
	return loadbench.NodeStats{RedisStats: s, BusPublishIn: busIn, ProcCPU: cpu}
}

// The per-node table: one line per node and row, what each holds, the
// hottest node over the mean, and each node's commands by name.
func TestClusterTable(t *testing.T) {
	rows := []loadRow{
		{target: "redis", agents: 32, click: 0, res: loadbench.LoadResult{Answered: 1000, Window: 8 * time.Second},
			nodes: []loadbench.NodeStats{
				nodeStats(33000, 6400, 2600, 2000, 4000, 400*time.Millisecond),
				nodeStats(15000, 2500, 2200, 2000, 4000, 200*time.Millisecond),
				nodeStats(18000, 3700, 2200, 2000, 4000, 300*time.Millisecond),
			}},
		{target: "memory", agents: 32, res: loadbench.LoadResult{Answered: 1000, Window: 8 * time.Second}}, // no nodes: not shown
	}
	l := clusterLayout{ports: []string{"7001", "7002", "7003"}, slots: loadbench.SlotRanges(3), holds: []string{"{audit},stale", "events", ""}}
	var out bytes.Buffer
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	clusterTable(&out, w, l, rows)
	got := out.String()
	for _, want := range []string{
		"click  agents  node  port        slots          holds  cmds/ask  reads/ask  scripts/ask  publish/ask  bus publish in/ask  redis CPU s/1k asks (INFO)  (/proc)",
		"    0      32     1  7001       0–5460  {audit},stale     33.00       6.40         2.60         2.00                4.00                        0.40     0.40",
		"    0      32     2  7002   5461–10921         events     15.00       2.50         2.20         2.00                4.00                        0.20     0.20",
		"    0      32     3  7003  10922–16383              -     18.00       3.70         2.20         2.00                4.00                        0.30     0.30",
		"  click 0, 32 agents: hottest/mean commands 1.50 (node 1: {audit},stale), redis CPU (INFO) 1.33 (node 1: {audit},stale)",
		"    node 1 (7001, {audit},stale):\n      zadd 28.40  evalsha 2.60  publish 2.00\n",
		"    node 3 (7003):\n      zadd 13.80  evalsha 2.20  publish 2.00\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Count(got, "\n      0      32 ") != 3 {
		t.Errorf("want 3 node lines:\n%s", got)
	}
	out.Reset()
	clusterTable(&out, w, l, rows[1:])
	if out.Len() != 0 {
		t.Errorf("a table without cluster rows:\n%s", out.String())
	}
}

func TestHottest(t *testing.T) {
	if got := hottest([]float64{0, 0}, nil); got != "-" {
		t.Errorf("all zero: %s", got)
	}
	if got := hottest([]float64{1, 3, 2}, []string{"", "", "{audit}"}); got != "1.50 (node 2)" {
		t.Errorf("got %s", got)
	}
	if got := hottest([]float64{1, 1, 4}, []string{"", "", "{audit}"}); got != "2.00 (node 3: {audit})" {
		t.Errorf("got %s", got)
	}
}
