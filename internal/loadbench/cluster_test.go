package loadbench

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The slots are split as evenly as they go, in order, every one served.
func TestSlotRanges(t *testing.T) {
	if got := SlotRanges(3); !slices.Equal(got, [][2]int{{0, 5460}, {5461, 10921}, {10922, 16383}}) {
		t.Errorf("3 nodes: %v", got)
	}
	if got := SlotRanges(1); !slices.Equal(got, [][2]int{{0, 16383}}) {
		t.Errorf("1 node: %v", got)
	}
	if SlotRanges(0) != nil {
		t.Error("0 nodes have slots")
	}
	for n := 1; n <= 16; n++ {
		next, small, big := 0, ClusterSlots, 0
		for _, r := range SlotRanges(n) {
			if r[0] != next || r[1] < r[0] {
				t.Fatalf("%d nodes: range %v after slot %d", n, r, next-1)
			}
			size := r[1] - r[0] + 1
			small, big = min(small, size), max(big, size)
			next = r[1] + 1
		}
		if next != ClusterSlots || big-small > 1 {
			t.Errorf("%d nodes: slots up to %d, sizes %d–%d", n, next-1, small, big)
		}
	}
}

// The URL names every node, in the form askslack's REDIS_URL reads
// (redis+cluster, the first node's address, then addr=… for the others).
func TestClusterURL(t *testing.T) {
	c := &Cluster{Nodes: []*Redis{{Addr: "127.0.0.1:7001"}, {Addr: "127.0.0.1:7002"}, {Addr: "127.0.0.1:7003"}}}
	u := c.URL()
	if u != "redis+cluster://127.0.0.1:7001?addr=127.0.0.1:7002&addr=127.0.0.1:7003" {
		t.Errorf("URL %s", u)
	}
	o, err := redis.ParseClusterURL(strings.Replace(u, "redis+cluster", "redis", 1)) // as the service config does
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Addrs, []string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}) {
		t.Errorf("addrs %v", o.Addrs)
	}
	if u := (&Cluster{Nodes: c.Nodes[:1]}).URL(); u != "redis+cluster://127.0.0.1:7001" {
		t.Errorf("one node: %s", u)
	}
}

func TestNodeOf(t *testing.T) {
	c := &Cluster{Slots: SlotRanges(3)}
	for slot, want := range map[int]int{0: 0, 1463: 0, 5460: 0, 5461: 1, 10921: 1, 10922: 2, 16383: 2, 16384: -1} {
		if got := c.NodeOf(slot); got != want {
			t.Errorf("slot %d: node %d, want %d", slot, got, want)
		}
	}
}

// Nodes' deltas add up to the cluster's; the bench's own commands are
// taken out of each node's (RedisStats.Sub).
func TestNodeStatsSubAndSum(t *testing.T) {
	a0 := NodeStats{RedisStats: ParseInfo("total_commands_processed:100\ntotal_reads_processed:50\nused_cpu_user:1.0\ncmdstat_zadd:calls=10,usec=5\n"),
		BusPublishIn: 7, BusIn: 100, ProcCPU: time.Second}
	a1 := NodeStats{RedisStats: ParseInfo("total_commands_processed:162\ntotal_reads_processed:71\nused_cpu_user:1.5\ncmdstat_zadd:calls=40,usec=25\ncmdstat_info:calls=1,usec=1\ncmdstat_cluster|info:calls=1,usec=1\n"),
		BusPublishIn: 27, BusIn: 130, ProcCPU: 2 * time.Second}
	a1.own = map[string]int64{"info": 1, "cluster|info": 1}
	d := a1.Sub(a0)
	if d.Commands != 60 || d.Reads != 19 || d.Calls["zadd"] != 30 || d.Calls["info"] != 0 || d.Calls["cluster|info"] != 0 ||
		d.BusPublishIn != 20 || d.BusIn != 30 || d.ProcCPU != time.Second || d.CPU != 500*time.Millisecond {
		t.Errorf("delta %+v", d)
	}
	b := RedisStats{Commands: 5, Reads: 2, CPU: time.Millisecond, Calls: map[string]int64{"zadd": 1, "xadd": 3}, Usec: map[string]int64{"xadd": 9}}
	s := SumStats(d.RedisStats, b)
	if s.Commands != 65 || s.Reads != 21 || s.Calls["zadd"] != 31 || s.Calls["xadd"] != 3 || s.Usec["xadd"] != 9 || s.Usec["zadd"] != 20 ||
		s.CPU != 501*time.Millisecond {
		t.Errorf("sum %+v", s)
	}
}

// With redis-server on PATH: three primaries come up as one cluster, every
// node ok, each serving its range, a cluster client reaching keys on all
// of them; Stop leaves no process nor file behind.
func TestStartCluster(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := StartCluster(ctx, bin, 3)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	if len(c.Nodes) != 3 {
		t.Fatalf("%d nodes", len(c.Nodes))
	}
	for _, node := range c.Nodes {
		info, err := node.rdb.ClusterInfo(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if f := clusterInfoFields(info); f["cluster_state"] != "ok" || f["cluster_known_nodes"] != "3" || f["cluster_size"] != "3" {
			t.Errorf("%s: %v", node.Addr, f)
		}
	}
	slot, err := c.KeySlot(ctx, "askslack:{audit}:chain")
	if err != nil || slot != 1463 || c.NodeOf(slot) != 0 {
		t.Errorf("{audit}: slot %d (%v), node %d", slot, err, c.NodeOf(slot))
	}
	o, err := redis.ParseClusterURL(strings.Replace(c.URL(), "redis+cluster", "redis", 1))
	if err != nil {
		t.Fatal(err)
	}
	cc := redis.NewClusterClient(o)
	defer cc.Close()
	for _, k := range []string{"{a}", "{b}", "{c}", "{d}", "{e}"} { // slots 15495, 3300, 7365, 11298, 15363
		if err := cc.Set(ctx, k, "x", 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	before, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"{a}", "{b}", "{c}"} {
		if err := cc.Get(ctx, k).Err(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var gets int64
	for i := range after {
		d := after[i].Sub(before[i])
		if d.Calls["get"] != 1 {
			t.Errorf("node %d: %d GETs, want 1 (one key on each)", i+1, d.Calls["get"])
		}
		gets += d.Commands
	}
	if gets != 3 {
		t.Errorf("%d commands over the nodes, want the 3 GETs", gets)
	}
	pids := []int{}
	for _, node := range c.Nodes {
		pids = append(pids, node.Pid())
	}
	dir := c.dir
	c.Stop()
	stopped = true
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("config dir %s left: %v", dir, err)
	}
	for _, pid := range pids {
		if _, err := ReadProc(pid); err == nil {
			t.Errorf("node pid %d still running", pid)
		}
	}
}
