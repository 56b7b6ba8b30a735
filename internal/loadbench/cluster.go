package loadbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClusterSlots is the number of hash slots of a Redis Cluster.
const ClusterSlots = 16384

// Cluster is a private Redis Cluster for one bench run: N redis-server
// children on loopback ports, each a primary serving one range of slots,
// no replicas, no persistence. Each node is a Redis whose client talks to
// that node alone (INFO, FLUSHALL and CLUSTER commands are per node).
type Cluster struct {
	Nodes []*Redis
	// Slots is the range of slots each node serves, first and last.
	Slots [][2]int
	dir   string // the nodes' cluster config files
}

// SlotRanges splits the 16384 slots into n ranges as even as they go,
// in order: node i serves SlotRanges(n)[i].
func SlotRanges(n int) [][2]int {
	if n < 1 {
		return nil
	}
	out := make([][2]int, n)
	for i := range n {
		out[i] = [2]int{i * ClusterSlots / n, (i+1)*ClusterSlots/n - 1}
	}
	return out
}

// StartCluster runs n redis-server (bin) in cluster mode on free loopback
// ports, gives each one range of slots (SlotRanges), introduces them to
// one another and waits until every node says cluster_state:ok with all n
// known. On failure it stops what it started.
func StartCluster(ctx context.Context, bin string, n int) (c *Cluster, err error) {
	if n < 1 {
		return nil, errors.New("a cluster needs at least one node")
	}
	dir, err := os.MkdirTemp("", "askslack-bench-cluster")
	if err != nil {
		return nil, err
	}
	c = &Cluster{Slots: SlotRanges(n), dir: dir}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	ports, err := clusterPorts(n)
	if err != nil {
		return c, err
	}
	for _, p := range ports {
		node, err := startRedisOn(ctx, bin, p, dir, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", p)))
		if err != nil {
			return c, err
		}
		c.Nodes = append(c.Nodes, node)
	}
	for i, node := range c.Nodes {
		if err := addSlots(ctx, node, c.Slots[i]); err != nil {
			return c, fmt.Errorf("node %s: %w", node.Addr, err)
		}
	}
	for _, node := range c.Nodes[1:] {
		host, port, _ := net.SplitHostPort(node.Addr)
		if err := c.Nodes[0].rdb.ClusterMeet(ctx, host, port).Err(); err != nil {
			return c, fmt.Errorf("CLUSTER MEET %s: %w", node.Addr, err)
		}
	}
	return c, c.waitOK(ctx, 30*time.Second)
}

// clusterPorts finds n distinct free loopback ports P whose cluster bus
// port (P+10000, Redis's default) is free as well, so any redis-server
// version since Cluster came takes them without a --cluster-port.
func clusterPorts(n int) ([]int, error) {
	taken := map[int]bool{}
	var out []int
	for tries := 0; len(out) < n; tries++ {
		if tries > 200*n {
			return nil, errors.New("no free pair of loopback ports P, P+10000 for a cluster node")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p+10000 > 65535 || taken[p] || taken[p+10000] {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+10000))
		l.Close()
		if err != nil {
			continue
		}
		bus.Close()
		taken[p], taken[p+10000] = true, true
		out = append(out, p)
	}
	return out, nil
}

// addSlots gives node the slots r (CLUSTER ADDSLOTSRANGE, Redis 7; ADDSLOTS
// before it).
func addSlots(ctx context.Context, node *Redis, r [2]int) error {
	err := node.rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", r[0], r[1]).Err()
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unknown") {
		return err
	}
	return node.rdb.ClusterAddSlotsRange(ctx, r[0], r[1]).Err() // ADDSLOTS r[0] … r[1]
}

// waitOK polls CLUSTER INFO on every node until each says
// cluster_state:ok with every slot assigned and every node known.
func (c *Cluster) waitOK(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		last := ""
		for _, node := range c.Nodes {
			info, err := node.rdb.ClusterInfo(ctx).Result()
			if err != nil {
				last = fmt.Sprintf("%s: %v", node.Addr, err)
				break
			}
			f := clusterInfoFields(info)
			if f["cluster_state"] != "ok" || f["cluster_slots_assigned"] != strconv.Itoa(ClusterSlots) ||
				f["cluster_known_nodes"] != strconv.Itoa(len(c.Nodes)) {
				last = fmt.Sprintf("%s: cluster_state:%s, slots assigned %s, nodes known %s", node.Addr,
					f["cluster_state"], f["cluster_slots_assigned"], f["cluster_known_nodes"])
				break
			}
		}
		if last == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok within %s: %s", within, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling the nodes' gossip; nothing to wait on
		}
	}
}

// clusterInfoFields reads CLUSTER INFO's "key:value" lines.
func clusterInfoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

// URL is the bot's REDIS_URL: redis+cluster://first?addr=second&addr=…
// (askslack's service config reads it with go-redis's ParseClusterURL).
func (c *Cluster) URL() string {
	u := "redis+cluster://" + c.Nodes[0].Addr
	for i, node := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + node.Addr
	}
	return u
}

// Flush empties every node.
func (c *Cluster) Flush(ctx context.Context) error {
	for _, node := range c.Nodes {
		if err := node.Flush(ctx); err != nil {
			return fmt.Errorf("%s: %w", node.Addr, err)
		}
	}
	return nil
}

// Stop kills every node and removes their config files.
func (c *Cluster) Stop() {
	for _, node := range c.Nodes {
		node.Stop()
	}
	c.Nodes = nil
	os.RemoveAll(c.dir)
}

// KeySlot asks the first node which slot key hashes to (CLUSTER KEYSLOT).
func (c *Cluster) KeySlot(ctx context.Context, key string) (int, error) {
	node := c.Nodes[0]
	node.sent("cluster|keyslot")
	n, err := node.rdb.ClusterKeySlot(ctx, key).Result()
	return int(n), err
}

// NodeOf is the index of the node serving slot (-1 if none).
func (c *Cluster) NodeOf(slot int) int {
	for i, r := range c.Slots {
		if slot >= r[0] && slot <= r[1] {
			return i
		}
	}
	return -1
}

// NodeStats are one cluster node's cumulative counters: its INFO (as
// Redis.Stats reads it), what reached it over the cluster bus, and its
// process's CPU from /proc.
type NodeStats struct {
	RedisStats
	// BusPublishIn is CLUSTER INFO's cluster_stats_messages_publish_received:
	// PUBLISHes another node forwarded to this one over the cluster bus (a
	// PUBLISH reaches every node, whichever it was sent to). They run no
	// command here, so they show in CPU and not in Commands.
	BusPublishIn int64
	// BusIn is cluster_stats_messages_received: every cluster bus message
	// (pings and pongs included).
	BusIn   int64
	ProcCPU time.Duration
}

// Sub returns s - o (RedisStats.Sub for the INFO part).
func (s NodeStats) Sub(o NodeStats) NodeStats {
	return NodeStats{RedisStats: s.RedisStats.Sub(o.RedisStats), BusPublishIn: s.BusPublishIn - o.BusPublishIn,
		BusIn: s.BusIn - o.BusIn, ProcCPU: s.ProcCPU - o.ProcCPU}
}

// Stats reads every node's counters: CLUSTER INFO, then INFO (Redis.Stats,
// which takes both out of the next window's figures), then /proc.
func (c *Cluster) Stats(ctx context.Context) ([]NodeStats, error) {
	out := make([]NodeStats, len(c.Nodes))
	for i, node := range c.Nodes {
		node.sent("cluster|info")
		info, err := node.rdb.ClusterInfo(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", node.Addr, err)
		}
		f := clusterInfoFields(info)
		out[i].BusPublishIn, _ = strconv.ParseInt(f["cluster_stats_messages_publish_received"], 10, 64)
		out[i].BusIn, _ = strconv.ParseInt(f["cluster_stats_messages_received"], 10, 64)
		if out[i].RedisStats, err = node.Stats(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", node.Addr, err)
		}
		p, err := ReadProc(node.Pid())
		if err != nil {
			return nil, err
		}
		out[i].ProcCPU = p.CPU
	}
	return out, nil
}

// SumStats adds up stats, e.g. every node's deltas over one window (what
// Sub returns): the cluster's work as one figure.
func SumStats(ss ...RedisStats) RedisStats {
	t := RedisStats{Calls: map[string]int64{}, Usec: map[string]int64{}}
	for _, s := range ss {
		t.Commands += s.Commands
		t.Reads += s.Reads
		t.CPU += s.CPU
		for k, v := range s.Calls {
			t.Calls[k] += v
		}
		for k, v := range s.Usec {
			t.Usec[k] += v
		}
		// Snapshots add up too: Sub takes the sum of what the bench sent
		// out of the sum of the counters.
		for k, v := range s.own {
			if t.own == nil {
				t.own = map[string]int64{}
			}
			t.own[k] += v
		}
	}
	return t
}
