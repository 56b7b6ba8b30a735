package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/askslack/askslack/internal/loadbench"
)

// --redis-cluster N: the Redis target runs on a private Redis Cluster of
// N primaries instead of one redis-server, the bot given
// REDIS_URL=redis+cluster://…, and after the main tables each node's
// share of the work per answered ask is printed: where the commands of an
// ask land decides which shard is hot, and so how far adding primaries
// raises the ceiling (docs/bench.md, "A shard's ceiling").

// maxClusterNodes bounds --redis-cluster: each node is a process on the
// machine that runs the bot.
const maxClusterNodes = 16

// notableKeys are the keys (and the pub/sub channel) whose slot the
// per-node table names, under the bot's default ASKSLACK_REDIS_PREFIX:
// the audit chain's {audit} slot (every chain key shares it), the change
// hints' channel (Cluster hashes a channel name like a key: a SUBSCRIBE
// lands on its slot's node, a PUBLISH reaches every node), and the
// un-tagged cross-ask indexes written on every ask.
var notableKeys = []struct{ label, key string }{
	{"{audit}", "askslack:{audit}:chain"},
	{"events", "askslack:events"},
	{"stale", "askslack:stale"},
	{"{stale}", "askslack:{stale}"}, // ASKSLACK_STORE_SCHEMA=2
	{"open", "askslack:state:open"},
}

// benchCluster is the private Cluster and what each node holds.
type benchCluster struct {
	*loadbench.Cluster
	// holds names, per node, the notable keys it serves ("{audit},stale").
	holds []string
}

func (f *benchFlags) checkCluster() error {
	switch {
	case f.redisCluster < 0 || f.redisCluster > maxClusterNodes:
		return fmt.Errorf("--redis-cluster must be in [0, %d]", maxClusterNodes)
	case f.redisCluster > 0 && f.redisServer == "":
		return errors.New("--redis-cluster needs --redis-server")
	case f.redisCluster > 0 && f.limits.on:
		return errors.New("--redis-cluster does not apply to --slack-limits (its two replicas share one redis-server)")
	}
	return nil
}

// startCluster starts the Cluster of --redis-cluster primaries, when the
// Redis target runs, and finds the nodes serving the notable keys. The
// open-asks and timed-waits tests read keys of the single server (the
// chainer's to-do list, the claims index), so under --redis-cluster they
// leave Redis out, with a note.
func (b *benchRun) startCluster(ctx context.Context) error {
	if b.f.open > 0 && slices.Contains(b.f.openStores, "redis") {
		b.notes = append(b.notes, "open asks on Redis not measured under --redis-cluster")
	}
	if b.f.timed > 0 {
		b.notes = append(b.notes, "timed waits not measured under --redis-cluster")
	}
	if !slices.Contains(b.f.targets, "redis") {
		return nil
	}
	n := b.f.redisCluster
	if _, err := exec.LookPath(b.f.redisServer); err != nil {
		return fmt.Errorf("--redis-cluster: %w", err)
	}
	c, err := loadbench.StartCluster(ctx, b.f.redisServer, n)
	if err != nil {
		return fmt.Errorf("--redis-cluster %d: %w", n, err)
	}
	bc := &benchCluster{Cluster: c, holds: make([]string, n)}
	for _, k := range notableKeys {
		slot, err := c.KeySlot(ctx, k.key)
		if err != nil {
			c.Stop()
			return fmt.Errorf("--redis-cluster: CLUSTER KEYSLOT %s: %w", k.key, err)
		}
		if i := c.NodeOf(slot); i >= 0 {
			bc.holds[i] = joinHold(bc.holds[i], k.label)
		}
	}
	b.cluster = bc
	b.progress("redis cluster: %s", c.URL())
	return nil
}

func joinHold(held, label string) string {
	if held == "" {
		return label
	}
	return held + "," + label
}

// haveRedis reports whether the Redis target can run: a plain
// redis-server or a Cluster was started.
func (b *benchRun) haveRedis() bool { return b.redis != nil || b.cluster != nil }

func (b *benchRun) flushRedis(ctx context.Context) error {
	if b.cluster != nil {
		return b.cluster.Flush(ctx)
	}
	return b.redis.Flush(ctx)
}

func (b *benchRun) redisURL() string {
	if b.cluster != nil {
		return b.cluster.URL()
	}
	return b.redis.URL()
}

// redisProcCPU is the CPU the private Redis has used so far (/proc): every
// node's under --redis-cluster.
func (b *benchRun) redisProcCPU() (time.Duration, error) {
	if b.cluster == nil {
		p, err := loadbench.ReadProc(b.redis.Pid())
		return p.CPU, err
	}
	var t time.Duration
	for _, node := range b.cluster.Nodes {
		p, err := loadbench.ReadProc(node.Pid())
		if err != nil {
			return 0, err
		}
		t += p.CPU
	}
	return t, nil
}

// redisSnap is the private Redis's counters at one moment: the server's,
// or each cluster node's.
type redisSnap struct {
	one   loadbench.RedisStats
	nodes []loadbench.NodeStats
}

func (b *benchRun) readRedis(ctx context.Context) (redisSnap, error) {
	if b.cluster != nil {
		nodes, err := b.cluster.Stats(ctx)
		return redisSnap{nodes: nodes}, err
	}
	s, err := b.redis.Stats(ctx)
	return redisSnap{one: s}, err
}

// sub is s - o: the server's delta, or the sum of the nodes' deltas and
// each node's.
func (s redisSnap) sub(o redisSnap) (loadbench.RedisStats, []loadbench.NodeStats) {
	if s.nodes == nil {
		return s.one.Sub(o.one), nil
	}
	d := make([]loadbench.NodeStats, len(s.nodes))
	sum := make([]loadbench.RedisStats, len(s.nodes))
	for i := range s.nodes {
		d[i] = s.nodes[i].Sub(o.nodes[i])
		sum[i] = d[i].RedisStats
	}
	return loadbench.SumStats(sum...), d
}

func (b *benchRun) printCluster(w *tabwriter.Writer, rows []loadRow) {
	if b.cluster == nil {
		return
	}
	ports := make([]string, len(b.cluster.Nodes))
	for i, node := range b.cluster.Nodes {
		_, ports[i], _ = net.SplitHostPort(node.Addr)
	}
	clusterTable(b.out, w, clusterLayout{ports: ports, slots: b.cluster.Slots, holds: b.cluster.holds}, rows)
}

// clusterLayout is what the per-node table says of each node.
type clusterLayout struct {
	ports []string
	slots [][2]int
	holds []string
}

// clusterTable prints, for each Redis row run on the Cluster, each node's
// share per answered ask, how much the hottest node does over the mean,
// and each node's commands by name. w wraps out.
func clusterTable(out io.Writer, w *tabwriter.Writer, l clusterLayout, rows []loadRow) {
	var cl []loadRow
	for _, r := range rows {
		if len(r.nodes) > 0 && r.res.Answered > 0 {
			cl = append(cl, r)
		}
	}
	if len(cl) == 0 {
		return
	}
	fmt.Fprintf(out, "\nRedis Cluster: each node per answered ask (its own INFO deltas; bus publish in: PUBLISHes other nodes forwarded to it, CLUSTER INFO)\n\n")
	fmt.Fprintln(w, "click\tagents\tnode\tport\tslots\tholds\tcmds/ask\treads/ask\tscripts/ask\tpublish/ask\tbus publish in/ask\tredis CPU s/1k asks (INFO)\t(/proc)\t")
	for _, r := range cl {
		a := r.res.Answered
		for i, d := range r.nodes {
			holds := "-"
			if i < len(l.holds) && l.holds[i] != "" {
				holds = l.holds[i]
			}
			fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d–%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t\n",
				clickLabel(r.click), r.agents, i+1, l.ports[i], l.slots[i][0], l.slots[i][1], holds,
				perAsk(d.Commands, a), perAsk(d.Reads, a), perAsk(d.Scripts(), a), perAsk(d.Calls["publish"], a),
				perAsk(d.BusPublishIn, a), d.CPU.Seconds()*1000/float64(a), d.ProcCPU.Seconds()*1000/float64(a))
		}
	}
	w.Flush()
	fmt.Fprintln(out)
	for _, r := range cl {
		cmds := make([]float64, len(r.nodes))
		cpu := make([]float64, len(r.nodes))
		for i, d := range r.nodes {
			cmds[i], cpu[i] = float64(d.Commands), d.CPU.Seconds()
		}
		fmt.Fprintf(out, "  click %s, %d agents: hottest/mean commands %s, redis CPU (INFO) %s\n",
			clickLabel(r.click), r.agents, hottest(cmds, l.holds), hottest(cpu, l.holds))
	}
	fmt.Fprintf(out, "\nRedis Cluster: each node's commands per answered ask, by name\n\n")
	for _, r := range cl {
		fmt.Fprintf(out, "  click %s, %d agents:\n", clickLabel(r.click), r.agents)
		for i, d := range r.nodes {
			holds := ""
			if i < len(l.holds) && l.holds[i] != "" {
				holds = ", " + l.holds[i]
			}
			fmt.Fprintf(out, "    node %d (%s%s):\n", i+1, l.ports[i], holds)
			fmt.Fprint(out, breakdownLines(d.RedisStats, r.res.Answered, 100, "      "))
		}
	}
}

// hottest is "1.62 (node 3: {audit})": the largest of xs over their mean,
// and which node that is with what it holds ("-" when all are 0).
func hottest(xs []float64, holds []string) string {
	var sum float64
	top := 0
	for i, x := range xs {
		sum += x
		if x > xs[top] {
			top = i
		}
	}
	if len(xs) == 0 || sum <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.2f (node %d", xs[top]/(sum/float64(len(xs))), top+1)
	if top < len(holds) && holds[top] != "" {
		s += ": " + holds[top]
	}
	return s + ")"
}
