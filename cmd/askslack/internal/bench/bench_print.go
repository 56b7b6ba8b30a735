package bench

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/askslack/askslack/internal/loadbench"
)

func perAsk(n, asks int64) string {
	if asks == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(n)/float64(asks))
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

// clickLabel names a click timing in the tables: "0" at once, else "2s".
func clickLabel(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// rowKey pairs a row with the null bot's row at the same load.
type rowKey struct {
	agents int
	click  time.Duration
}

// byTarget returns the closed-loop rows, redis first, then memory, then
// null, each target's in the order they ran.
func (b *benchRun) byTarget() []loadRow {
	var out []loadRow
	for _, t := range []string{"redis", "memory", "null"} {
		for _, r := range b.rows {
			if r.target == t {
				out = append(out, r)
			}
		}
	}
	return out
}

func (b *benchRun) print() {
	w := tabwriter.NewWriter(b.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(b.out, "askslack bench: closed loop, %s window per row after %s warmup (plus the click delay)\n\n", b.f.duration, b.f.warmup)
	fmt.Fprintln(w, "target\tclick\tagents\tasks/s\t×null\tCPU ×null\t×null ceiling\tCPU s/1k asks\tbench CPU\tredis CPU\tslack calls/ask\tnew slack conns/ask\tack→answer p50 ms\tp99 ms\tack p50 ms\tack p99 ms\task p50 ms\tp99 ms\terrors\tstale buttons\t")
	type nullRow struct{ rate, cpu, cpuAll float64 } // asks/s; bot CPU and bot + bench CPU per ask, s
	null := map[rowKey]nullRow{}
	for _, r := range b.rows {
		if a := r.res.Answered; r.target == "null" && a > 0 {
			null[rowKey{r.agents, r.click}] = nullRow{r.rate(), r.cpu.Seconds() / float64(a), (r.cpu + r.benchCPU).Seconds() / float64(a)}
		}
	}
	rows := b.byTarget()
	for _, r := range rows {
		a := r.res.Answered
		ratio, cpuRatio, ceiling := "-", "-", "-"
		if n, ok := null[rowKey{r.agents, r.click}]; ok {
			ratio = fmt.Sprintf("%.2f", r.rate()/n.rate)
			if n.cpu > 0 {
				cpuRatio = fmt.Sprintf("%.1f", r.cpu.Seconds()/float64(a)/n.cpu)
			}
			// The ceiling supposes a CPU-bound machine: a row whose
			// clicks wait is bound by them instead.
			if r.target != "null" && r.click == 0 {
				ceiling = fmt.Sprintf("%.2f", n.cpuAll*float64(a)/(r.benchCPU+r.redisCPU).Seconds())
			}
		}
		stale := "-"
		if r.target != "null" {
			stale = fmt.Sprintf("%d/%d", r.stale, r.clicked)
		}
		redisCPU := "-"
		if r.target == "redis" {
			redisCPU = fmt.Sprintf("%.2f", r.redisCPU.Seconds()*1000/float64(a))
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n",
			r.target, clickLabel(r.click), r.agents, r.rate(), ratio, cpuRatio, ceiling, r.cpu.Seconds()*1000/float64(a), r.benchCPU.Seconds()*1000/float64(a), redisCPU,
			perAsk(r.slack.Calls(), a), perAsk(r.slack.Conns, a),
			ms(r.ackAns.Percentile(50)), ms(r.ackAns.Percentile(99)), ms(r.ack.Percentile(50)), ms(r.ack.Percentile(99)),
			ms(r.res.Latency.Percentile(50)), ms(r.res.Latency.Percentile(99)), r.res.Errors, stale)
	}
	w.Flush()
	b.printRedis(w, rows)
	b.printCluster(w, rows)
	b.printRated(w)
	b.printOpen(w)
	b.printTimed()
	fmt.Fprint(b.out, benchLegend)
	for _, n := range b.notes {
		fmt.Fprintln(b.out, "note:", n)
	}
}

// printRedis prints what each Redis row cost the server per answered ask,
// then each row's commands by name.
func (b *benchRun) printRedis(w *tabwriter.Writer, rows []loadRow) {
	var redis []loadRow
	for _, r := range rows {
		if r.redis != nil && r.res.Answered > 0 {
			redis = append(redis, r)
		}
	}
	if len(redis) == 0 {
		return
	}
	fmt.Fprintf(b.out, "\nRedis per answered ask (server-wide INFO deltas over the window; commands run inside scripts count as well as the script)\n\n")
	fmt.Fprintln(w, "target\tclick\tagents\tasks/s\tredis cmds/ask\tredis reads/ask\tscripts/ask\tEVALSHA/ask\tHGETALL/ask\tlua µs/ask\tredis CPU s/1k asks (INFO)\t(/proc)\t")
	for _, r := range redis {
		a, d := r.res.Answered, r.redis
		fmt.Fprintf(w, "%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.2f\t%.2f\t\n",
			r.target, clickLabel(r.click), r.agents, r.rate(), perAsk(d.Commands, a), perAsk(d.Reads, a), perAsk(d.Scripts(), a),
			perAsk(d.Calls["evalsha"]+d.Calls["eval"], a), perAsk(d.Calls["hgetall"], a),
			float64(d.ScriptTime().Microseconds())/float64(a), d.CPU.Seconds()*1000/float64(a), r.redisCPU.Seconds()*1000/float64(a))
	}
	w.Flush()
	fmt.Fprintf(b.out, "\nRedis commands per answered ask, by name (INFO commandstats; those inside scripts included)\n\n")
	for _, r := range redis {
		fmt.Fprintf(b.out, "  %s, click %s, %d agents:\n", r.target, clickLabel(r.click), r.agents)
		fmt.Fprint(b.out, breakdownLines(*r.redis, r.res.Answered, 100, "    "))
	}
}

// breakdownLines formats d's commands per ask, most first ("evalsha
// 10.02  hset 12.00 …"), in lines of at most width characters after
// indent; commands under 0.005 a call per ask are summed at the end.
func breakdownLines(d loadbench.RedisStats, asks int64, width int, indent string) string {
	var (
		sb         strings.Builder
		line       string
		rare, rest int64
	)
	for _, c := range d.Breakdown(1) {
		per := float64(c.Calls) / float64(asks)
		if per < 0.005 {
			rare++
			rest += c.Calls
			continue
		}
		item := fmt.Sprintf("%s %.2f", c.Name, per)
		if line != "" && len(line)+2+len(item) > width {
			sb.WriteString(indent + line + "\n")
			line = ""
		}
		if line != "" {
			line += "  "
		}
		line += item
	}
	if rare > 0 {
		item := fmt.Sprintf("(%d rarer: %.3f)", rare, float64(rest)/float64(asks))
		if line != "" && len(line)+2+len(item) > width {
			sb.WriteString(indent + line + "\n")
			line = ""
		}
		if line != "" {
			line += "  "
		}
		line += item
	}
	if line != "" {
		sb.WriteString(indent + line + "\n")
	}
	return sb.String()
}

// printRated prints the open-loop rows: click acks at a known rate.
func (b *benchRun) printRated(w *tabwriter.Writer) {
	if len(b.rated) == 0 {
		return
	}
	fmt.Fprintf(b.out, "\nclicks at a fixed rate (open loop: asks started at --click-rate, each clicked at once), %s window\n\n", b.f.duration)
	fmt.Fprintln(w, "target\tclicks/s asked\tanswered asks/s\tack p50 ms\tack p99 ms\tack→answer p50 ms\tp99 ms\terrors\tstale buttons\t")
	for _, r := range b.rated {
		fmt.Fprintf(w, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\t%d/%d\t\n", r.target, r.agents, r.rate(),
			ms(r.ack.Percentile(50)), ms(r.ack.Percentile(99)), ms(r.ackAns.Percentile(50)), ms(r.ackAns.Percentile(99)),
			r.res.Errors, r.stale, r.clicked)
	}
	w.Flush()
}

// printOpen prints the open-asks test, and with -v each window after the
// burst.
func (b *benchRun) printOpen(w *tabwriter.Writer) {
	if len(b.open) == 0 {
		return
	}
	fmt.Fprintf(b.out, "\nopen blocking asks (unanswered): right after the burst that opened them (worst %s window from its end until settled, %s at least), and once settled, over %s\n\n",
		b.f.afterBurstWindow, b.f.afterBurst, b.f.openSit)
	fmt.Fprintln(w, "store\topen asks\tsettled s\tRSS MB\tRSS/ask kB\tgoroutines\tgoroutines/ask\tburst: worst redis ops/s\tat s\tworst bot cores\tat s\tsettled: redis ops/s\tredis reads/s\tbot cores\tslack calls/s\t")
	for _, o := range b.open {
		ops, reads, settle := "-", "-", "-"
		if o.redis != nil {
			ops = fmt.Sprintf("%.0f", float64(o.redis.Commands)/o.sit.Seconds())
			reads = fmt.Sprintf("%.0f", float64(o.redis.Reads)/o.sit.Seconds())
			if o.settle > 0 {
				settle = fmt.Sprintf("%.0f", o.settle.Seconds())
			}
		}
		wOps, wOpsAt, wCores, wCoresAt := "-", "-", "-", "-"
		if i, j := worstWindows(o.windows); i >= 0 {
			wOps, wOpsAt = fmt.Sprintf("%.0f", o.windows[i].ops), windowLabel(o.windows[i])
			wCores, wCoresAt = fmt.Sprintf("%.3f", o.windows[j].cores), windowLabel(o.windows[j])
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%.0f\t%.1f\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%.1f\t\n",
			o.store, o.n, settle, float64(o.rssOpen)/(1<<20), float64(o.rssOpen-o.rssIdle)/1024/float64(o.n),
			o.gOpen, float64(o.gOpen-o.gIdle)/float64(o.n), wOps, wOpsAt, wCores, wCoresAt, ops, reads,
			o.cpu.Seconds()/o.sit.Seconds(), float64(o.slackCallsWhileIn)/o.sit.Seconds())
	}
	w.Flush()
	if !b.f.verbose {
		return
	}
	for _, o := range b.open {
		if len(o.windows) == 0 {
			continue
		}
		fmt.Fprintf(b.out, "\nafter the burst (%s, %d asks), per window, seconds from the burst's end\n\n", o.store, o.n)
		fmt.Fprintln(w, "s\tredis ops/s\tredis reads/s\tbot cores\tredis cores\tslack calls/s\t")
		for _, x := range o.windows {
			fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.3f\t%.3f\t%.1f\t\n", windowLabel(x), x.ops, x.reads, x.cores, x.redisCores, x.slack)
		}
		w.Flush()
	}
}

// windowLabel is "30–35": a window's span in whole seconds from the
// burst's end.
func windowLabel(x burstWindow) string {
	return fmt.Sprintf("%.0f–%.0f", x.from.Seconds(), x.to.Seconds())
}

const benchLegend = `
asks/s: asks answered inside the window (POST /v1/asks → 200 with answers) per second; ×null: that over
  the null bot's at the same concurrency and click timing. click: how long after its post the fake clicked
  each question (0: at once; with a delay d, N agents are click-bound at about N/d asks/s, the null bot
  too, so ×null is about 1 and CPU ×null is the comparison). CPU: the bot process's utime+stime
  (/proc/<pid>/stat) over the window, per 1,000 answered asks (background work included); CPU ×null:
  that over the null bot's at the same concurrency and click timing; bench CPU and redis CPU: the same
  for this process (the agents and the fake Slack) and for redis-server, which share the cores with the
  bot. ×null ceiling (rows clicked at once): the ×null of a bot that cost no CPU at all, when the
  machine is CPU-bound: the null row's (bot + bench CPU) per ask over this row's (bench + redis CPU) per
  ask. slack calls: Web API calls the fake served; new slack conns: TCP connections it accepted
  (ConnState new). ack→answer: from the fake receiving the bot's ack of the click to the agent receiving
  the answer (0 when the answer arrives first); ack: the click's HTTP round trip; ask: the agent's whole
  POST (the click delay included). stale buttons: answered asks whose message still shows controls once
  the bot's updates have landed (up to 10 s after the window), of the answered asks the fake clicked.
Redis per ask: server-wide deltas over the window, divided by answered asks, the bench's own INFO taken
  out. redis cmds: INFO total_commands_processed, which counts every command a script runs as well as the
  EVALSHA that ran it (so do the commandstats below); redis reads: INFO total_reads_processed, the read
  events on client sockets, i.e. round trips (a pipeline or a script is one); scripts: EVAL + EVALSHA +
  FCALL calls (and their _RO forms); EVALSHA includes EVAL; lua µs: the usec INFO commandstats gives those
  script calls, the commands they run included; redis CPU (INFO): used_cpu_user + used_cpu_sys of INFO cpu
  (the server's getrusage, microseconds), beside the /proc figure (10 ms ticks).
clicks at a fixed rate: asks start at --click-rate whatever the answers' pace (open loop), so clicks
  arrive at that rate; ack and ack→answer as above, measured under that known load.
timed waits: --timed asynchronous timed asks (10-minute windows) opened on two replicas sharing the
  private Redis; "claimed": every wait's lease in the claims index ends after the moment measured from;
  after one replica is SIGKILLed, every lease must end after the dead one's last could (kill + lease).
open asks: RSS and goroutines per ask are (with asks − idle bot) / asks. burst (Redis): from the moment
  the fake has seen every question posted until settled (--after-burst at least), in --after-burst-window
  windows; the window with the most Redis commands a second and the one with the most bot CPU, with
  when they were (-v prints every window, with redis-server's CPU from INFO cpu). settled: redis ops/s,
  bot cores and slack calls/s are deltas while the asks sit, nothing answered, from when the store's
  bookkeeping of the burst is done ("settled s" after the burst's end: the audit chainer looks at each
  ask again, half a minute or more after chaining it). The bench's own Redis commands (INFO, polling
  the chainer's to-do list) are taken out of every Redis figure.
`
