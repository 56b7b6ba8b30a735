// Package bench is `askslack bench`: it measures what an ask costs (asks/s,
// CPU, Redis commands and Slack calls per ask, open asks' memory, timed
// waits' takeover, and with --slack-limits a burst under Slack's rate
// limits) by running the askslack binary against a fast fake Slack, beside
// a null bot (`askslack bench null-bot`) doing the same HTTP legs with no
// logic.
package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/internal/loadbench"
)

const benchUsage = `usage: askslack bench [flags]

Measures what one ask costs: starts the askslack binary (--bin, default this
one) against a fast in-process fake Slack that clicks the first option of
every posted question, with a private redis-server (--redis-server) and with
the in-memory store, and a "null bot" doing the same HTTP legs with no logic;
runs closed-loop agents at each concurrency and each click timing
(--click-after: at once, or after a person's seconds), then holds --open
blocking asks open and measures what they cost right after the burst that
opened them and once the store has settled. Prints tables: throughput and
CPU, Redis per ask (with the commands by name), clicks at a fixed rate, open
asks, timed waits. Linux only (reads /proc). Loopback addresses only.

flags:
`

// benchFlags are the bench's settings.
type benchFlags struct {
	bin, nullBin, redisServer, logLevel string
	targets                             []string
	concurrency                         []int
	// clickAfter are the click timings of the closed-loop rows (0: at
	// once); rows whose click waits run delayedConcurrency agents.
	clickAfter                []time.Duration
	delayedConcurrency        []int
	warmup, duration, openSit time.Duration
	// afterBurst is how long at least the open-asks test measures from
	// the burst's end, in afterBurstWindow windows, and on until the store
	// has settled (0: not at all).
	afterBurst, afterBurstWindow time.Duration
	// settle: wait for the store's bookkeeping of the burst before the
	// quiet window (false: measure it right after --after-burst; for a
	// quick check, since the audit chainer's second look at each ask is
	// spread over minutes).
	settle                 bool
	open, clickRate, timed int
	openStores             []string
	maxAsks                int64
	verbose                bool
	cpuProfile             string
	limits                 limitsFlags

	// redisCluster is how many primaries the private Redis has as a
	// Cluster (0: one plain redis-server; bench_cluster.go).
	redisCluster int
	storeSchema  int // the bot's ASKSLACK_STORE_SCHEMA (0: its default)
}

const (
	benchSecret  = "bench-signing-secret"
	benchChannel = "C0BENCH"
)

// Run is `askslack bench` (and its hidden `bench null-bot` child).
func Run(args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "null-bot" {
		return benchNullBot(args[1:])
	}
	f, err := parseBenchFlags(args)
	if err != nil || f == nil {
		return err // nil, nil: -h printed the usage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if f.cpuProfile != "" {
		stopProfile, err := profileCPU(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	b := &benchRun{f: *f, out: stdout, log: io.Discard}
	if f.verbose {
		b.log = os.Stderr
	}
	return b.run(ctx)
}

// profileCPU profiles this process into path until the returned func runs:
// the load generator and the fake Slack share the machine with the bot, so
// what they cost per ask moves the ×null ratio too.
func profileCPU(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// parseBenchFlags reads and checks the flags; the binaries default to this
// executable. It returns nil, nil when -h asked for the usage.
func parseBenchFlags(args []string) (*benchFlags, error) {
	var f benchFlags
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), benchUsage); fs.PrintDefaults() }
	fs.StringVar(&f.bin, "bin", "", "askslack binary to measure (default: this executable)")
	fs.StringVar(&f.nullBin, "null-bin", "", "binary that serves the null bot with `bench null-bot` (default: this executable)")
	fs.StringVar(&f.redisServer, "redis-server", "redis-server", "redis-server to start on a private port (\"\" skips the Redis runs)")
	fs.IntVar(&f.storeSchema, "store-schema", 0, "the bot's ASKSLACK_STORE_SCHEMA (1 or 2; 0: the bot's default)")
	fs.IntVar(&f.redisCluster, "redis-cluster", 0, "run the Redis target on a private Redis Cluster of this many primaries (no replicas) started from --redis-server, and print each node's share per ask (0: one plain redis-server; at most 16)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "the bot's ASKSLACK_LOG_LEVEL; its logs go to a file in a temp dir")
	targets := fs.String("targets", "redis,memory,null", "what to load: redis (askslack + Redis), memory (askslack, embedded store), null (null bot)")
	conc := fs.String("concurrency", "32,128", "comma-separated agent counts, each a closed loop, for the rows clicked at once (--click-after 0)")
	clickAfter := fs.String("click-after", "0,2s", "comma-separated click timings: how long after a question's post the fake clicks it (0: at once; 2s: a person's seconds); every closed-loop row runs once per timing")
	delayed := fs.String("delayed-concurrency", "256", "comma-separated agent counts for the rows whose click waits (--click-after above 0): N agents clicked after d make about N/d asks/s")
	fs.DurationVar(&f.warmup, "warmup", time.Second, "load before each measured window (not counted; rows whose click waits add the delay)")
	fs.DurationVar(&f.duration, "duration", 8*time.Second, "measured window per row (at most 2m)")
	fs.DurationVar(&f.afterBurst, "after-burst", 45*time.Second, "open asks (Redis): measure from the end of the burst that opened them in --after-burst-window windows for at least this long, and on until the store's bookkeeping of the burst is done (0 skips it; at most 3m)")
	fs.DurationVar(&f.afterBurstWindow, "after-burst-window", 5*time.Second, "open asks: the window of --after-burst")
	fs.BoolVar(&f.settle, "settle", true, "open asks (Redis): wait until the store's bookkeeping of the burst is done before the quiet window (false: a quick check; \"settled s\" then shows -)")
	fs.IntVar(&f.open, "open", 10000, "blocking asks held open for the idle-cost test (0 skips it; at most 20000)")
	fs.DurationVar(&f.openSit, "open-sit", 10*time.Second, "how long the open asks sit while Redis ops, CPU are counted (at most 2m)")
	openStores := fs.String("open-stores", "redis,memory", "stores for the open-asks test")
	fs.Int64Var(&f.maxAsks, "max-asks", 1_000_000, "bound on asks per window and concurrency")
	fs.IntVar(&f.timed, "timed", 10000, "timed waits opened on two replicas for the claims test (Redis only; 0 skips it; at most 20000)")
	fs.IntVar(&f.clickRate, "click-rate", 500, "clicks per second of the open-loop row (asks started at that rate, each clicked at once; 0 skips it)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the bench process's own CPU profile (load generator, fake Slack) to this file")
	fs.BoolVar(&f.verbose, "v", false, "progress on stderr, and the bot's pprof URL while it runs")
	fs.BoolVar(&f.limits.on, "slack-limits", false, "run only the Slack rate-limits burst: two replicas on one Redis, the fake enforcing Slack's limits (see README)")
	fs.BoolVar(&f.limits.pacing, "limits-pacing", true, "--slack-limits: the bots' ASKSLACK_SLACK_PACING (false: every call at once, as before pacing)")
	fs.IntVar(&f.limits.agents, "limits-agents", 200, "--slack-limits: agents, one ask each")
	fs.IntVar(&f.limits.sessions, "limits-sessions", 20, "--slack-limits: sessions the agents are spread over (half into one channel, half each into its DM)")
	fs.Float64Var(&f.limits.scale, "limits-scale", 20, "--slack-limits: how many times faster than Slack the fake keeps time")
	fs.BoolVar(&f.limits.skew, "limits-skew", false, "--slack-limits: one busy session asks two thirds of the questions at once through one replica, the other sessions the rest half a second later through the other, all into one channel: are turns fair across replicas?")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, &cli.ExitError{Code: 2, Err: err}
	}
	f.targets = splitList(*targets)
	f.openStores = splitList(*openStores)
	if err := f.limits.check(); err != nil {
		return nil, &cli.ExitError{Code: 2, Err: err}
	}
	if err := f.check(*conc, *clickAfter, *delayed); err != nil {
		return nil, &cli.ExitError{Code: 2, Err: err}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if f.bin == "" {
		f.bin = self
	}
	if f.nullBin == "" {
		f.nullBin = self
	}
	return &f, nil
}

// check validates the flags' ranges and reads the lists.
func (f *benchFlags) check(conc, clickAfter, delayed string) error {
	var err error
	if f.concurrency, err = agentCounts("--concurrency", conc); err != nil {
		return err
	}
	if f.delayedConcurrency, err = agentCounts("--delayed-concurrency", delayed); err != nil {
		return err
	}
	if f.clickAfter, err = clickTimings(clickAfter); err != nil {
		return err
	}
	switch {
	case f.afterBurst < 0 || f.afterBurst > 3*time.Minute:
		return errors.New("--after-burst must be in [0, 3m]")
	case f.afterBurstWindow < 100*time.Millisecond || (f.afterBurst > 0 && f.afterBurstWindow > f.afterBurst):
		return errors.New("--after-burst-window must be at least 100ms and at most --after-burst")
	case f.duration <= 0 || f.duration > 2*time.Minute:
		return errors.New("--duration must be in (0, 2m]")
	case f.warmup < 0 || f.warmup > time.Minute:
		return errors.New("--warmup must be in [0, 1m]")
	case f.open < 0 || f.open > 20000:
		return errors.New("--open must be in [0, 20000]")
	case f.timed < 0 || f.timed > 20000:
		return errors.New("--timed must be in [0, 20000]")
	case f.openSit <= 0 || f.openSit > 2*time.Minute:
		return errors.New("--open-sit must be in (0, 2m]")
	}
	if err := f.checkCluster(); err != nil {
		return err
	}
	for _, t := range f.targets {
		if t != "redis" && t != "memory" && t != "null" {
			return fmt.Errorf("--targets: unknown %q", t)
		}
	}
	return nil
}

// agentCounts reads a comma-separated list of agent counts (1 to 4096).
func agentCounts(flag, list string) ([]int, error) {
	var out []int
	for _, c := range splitList(list) {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("%s: %q is not a number of agents between 1 and 4096", flag, c)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no agent count", flag)
	}
	return out, nil
}

// clickTimings reads --click-after: durations from 0 (a click at once) to
// a minute, "0" needing no unit, each once.
func clickTimings(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, c := range splitList(list) {
		d, err := time.ParseDuration(c)
		if err != nil || d < 0 || d > time.Minute {
			return nil, fmt.Errorf("--click-after: %q is not a duration between 0 and 1m (e.g. 0,2s)", c)
		}
		if slices.Contains(out, d) {
			return nil, fmt.Errorf("--click-after: %s twice", c)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, errors.New("--click-after: no click timing (0 clicks at once)")
	}
	return out, nil
}

// rowPlan is one closed-loop row to run on each target.
type rowPlan struct {
	click  time.Duration
	agents int
}

// plan lists the closed-loop rows in the order they run: every click
// timing, each with its agent counts (--concurrency when the click is at
// once, --delayed-concurrency when it waits).
func (f *benchFlags) plan() []rowPlan {
	var out []rowPlan
	for _, d := range f.clickAfter {
		counts := f.concurrency
		if d > 0 {
			counts = f.delayedConcurrency
		}
		for _, n := range counts {
			out = append(out, rowPlan{click: d, agents: n})
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// benchNullBot is the hidden `bench null-bot` child: the null bot in its
// own process, so its CPU is read from /proc like the bot's.
func benchNullBot(args []string) error {
	fs := flag.NewFlagSet("bench null-bot", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	slackURL := fs.String("slack-url", "", "Slack Web API base URL")
	secret := fs.String("signing-secret", benchSecret, "signing secret of interactions")
	channel := fs.String("channel", benchChannel, "channel to post to")
	if err := fs.Parse(args); err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return loadbench.ServeNullBot(ctx, *addr, loadbench.NullBotOptions{SlackURL: *slackURL, SigningSecret: *secret, Channel: *channel})
}

// benchRun is one `askslack bench`.
type benchRun struct {
	f     benchFlags
	out   io.Writer
	log   io.Writer
	dir   string
	redis *loadbench.Redis
	rows  []loadRow
	rated []loadRow // the open-loop rows at --click-rate
	timed *timedRow // the timed-waits test
	// limitsRes is the --slack-limits run (bench_limits.go).
	limitsRes *limitsResult
	open      []openRow
	notes     []string

	// cluster replaces redis under --redis-cluster (bench_cluster.go).
	cluster *benchCluster
}

// loadRow is one target at one concurrency and click timing.
type loadRow struct {
	target string
	agents int
	click  time.Duration // how long the fake waited before each click
	res    loadbench.LoadResult
	cpu    time.Duration
	// benchCPU and redisCPU are what the load generator with the fake
	// Slack (this process) and redis-server spent in the window: on a
	// shared machine they take CPU from the bot, so they bound ×null.
	benchCPU, redisCPU time.Duration
	redis              *loadbench.RedisStats
	slack              loadbench.SlackCounters
	ack, ackAns        loadbench.Samples
	// stale of clicked: answered asks whose message still shows controls
	// once the bot's updates have landed (askslack rows only).
	stale, clicked int

	// nodes is each cluster node's share of redis (--redis-cluster).
	nodes []loadbench.NodeStats
}

func (r loadRow) rate() float64 {
	return float64(r.res.Answered) / r.res.Window.Seconds()
}

// openRow is the open-asks test on one store.
type openRow struct {
	store             string
	n                 int
	rssIdle, rssOpen  int64
	gIdle, gOpen      int
	sit               time.Duration
	settle            time.Duration // from the burst's end to the store's bookkeeping done
	windows           []burstWindow // from the burst's end (bench_burst.go)
	cpu               time.Duration
	redis             *loadbench.RedisStats
	slackCallsWhileIn int64
}

// child is a process the bench started.
type child struct {
	name string
	cmd  *exec.Cmd
	addr string
	logs string
	done chan struct{}
}

func (b *benchRun) progress(format string, args ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", args...)
}

func (b *benchRun) run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "askslack-bench")
	if err != nil {
		return err
	}
	b.dir = dir
	defer os.RemoveAll(dir)
	start := time.Now()

	if b.f.limits.on {
		return b.runLimits(ctx, start)
	}
	needRedis := slices.Contains(b.f.targets, "redis") || (b.f.open > 0 && slices.Contains(b.f.openStores, "redis"))
	if b.f.redisCluster > 0 {
		if err := b.startCluster(ctx); err != nil {
			return err
		}
		if b.cluster != nil {
			defer b.cluster.Stop()
		}
	} else if needRedis && b.f.redisServer != "" {
		if _, err := exec.LookPath(b.f.redisServer); err != nil {
			b.notes = append(b.notes, fmt.Sprintf("Redis runs skipped: %s not found", b.f.redisServer))
		} else if b.redis, err = loadbench.StartRedis(ctx, b.f.redisServer); err != nil {
			return err
		} else {
			defer b.redis.Stop()
			b.progress("redis-server on %s", b.redis.Addr)
		}
	}
	for _, t := range b.f.targets {
		if t == "redis" && !b.haveRedis() {
			continue
		}
		if err := b.loadTarget(ctx, t); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	if b.f.open > 0 {
		for _, st := range b.f.openStores {
			if st == "redis" && b.redis == nil {
				continue
			}
			if st != "redis" && st != "memory" {
				return fmt.Errorf("--open-stores: unknown %q", st)
			}
			if err := b.openAsks(ctx, st); err != nil {
				return fmt.Errorf("open asks (%s): %w", st, err)
			}
		}
	}
	if b.f.timed > 0 && b.redis != nil {
		if err := b.timedWaits(ctx); err != nil {
			return err
		}
	}
	b.notes = append(b.notes, fmt.Sprintf("bench took %s", time.Since(start).Round(time.Second)))
	b.print()
	return nil
}

// startBot runs the askslack binary against the fake with store st.
func (b *benchRun) startBot(ctx context.Context, st string, fake *loadbench.Slack) (*child, error) {
	return b.startBotWith(ctx, st, fake, true)
}

// startBotWith starts the bot on store st (flushing the private Redis
// first when flush), with extra environment variables.
func (b *benchRun) startBotWith(ctx context.Context, st string, fake *loadbench.Slack, flush bool, extra ...string) (*child, error) {
	addr, err := loadbench.FreeAddr()
	if err != nil {
		return nil, err
	}
	env := append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"SLACK_BOT_TOKEN=xoxb-bench", "SLACK_SIGNING_SECRET=" + benchSecret,
		"SLACK_API_URL=" + fake.URL(), "ASKSLACK_ADDR=" + addr, "ASKSLACK_CHANNEL=" + benchChannel,
		"ASKSLACK_LOG_LEVEL=" + b.f.logLevel, "ASKSLACK_PPROF=true",
		// The fast fake enforces no limits but under --slack-limits, which
		// turns pacing back on in extra.
		"ASKSLACK_SLACK_PACING=false",
	}, extra...)
	if st == "redis" {
		if flush {
			if err := b.flushRedis(ctx); err != nil {
				return nil, err
			}
		}
		env = append(env, "REDIS_URL="+b.redisURL())
		if b.f.storeSchema != 0 {
			env = append(env, "ASKSLACK_STORE_SCHEMA="+strconv.Itoa(b.f.storeSchema))
		}
	}
	c, err := b.startChild(ctx, "askslack-"+st, addr, "/readyz", exec.Command(b.f.bin), env)
	if err != nil {
		return nil, err
	}
	fake.SetInteractionURL("http://" + addr + "/slack/interactions")
	b.progress("askslack (%s) on %s, pprof at http://%s/debug/pprof/", st, addr, addr)
	return c, nil
}

func (b *benchRun) startNullBot(ctx context.Context, fake *loadbench.Slack) (*child, error) {
	addr, err := loadbench.FreeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.f.nullBin, "bench", "null-bot", "--addr", addr, "--slack-url", fake.URL(),
		"--signing-secret", benchSecret, "--channel", benchChannel)
	c, err := b.startChild(ctx, "null-bot", addr, "/healthz", cmd, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")})
	if err != nil {
		return nil, err
	}
	fake.SetInteractionURL("http://" + addr + "/slack/interactions")
	b.progress("null bot on %s", addr)
	return c, nil
}

func (b *benchRun) startChild(ctx context.Context, name, addr, ready string, cmd *exec.Cmd, env []string) (*child, error) {
	c := &child{name: name, cmd: cmd, addr: addr, logs: filepath.Join(b.dir, name+".log"), done: make(chan struct{})}
	lf, err := os.Create(c.logs)
	if err != nil {
		return nil, err
	}
	cmd.Env, cmd.Stdout, cmd.Stderr = env, lf, lf
	loadbench.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); lf.Close(); close(c.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c, nil
			}
		}
		select {
		case <-c.done:
			return nil, fmt.Errorf("%s exited at start:\n%s", name, tail(c.logs))
		case <-ctx.Done():
			c.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling a child for readiness; nothing to wait on
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("%s not ready within 30s:\n%s", name, tail(c.logs))
		}
	}
}

// stop sends SIGTERM, then SIGKILL after 3 s.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// kill ends the process at once (the open-asks test has nothing to drain).
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

// tail returns the end of a log file, for error messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// askslackCallID and askslackPick read askslack's action ids for the fake.
func askslackCallID(actionID, blockID, value string) string {
	a, err := blocks.Decode(blockID, actionID, value)
	if err != nil {
		return ""
	}
	return a.CallID
}

func askslackPick(actionID string) bool {
	a, err := blocks.Decode("ask/x/0", actionID, "")
	return err == nil && a.Kind == blocks.KindPick
}

func (b *benchRun) loadTarget(ctx context.Context, target string) error {
	opts := loadbench.SlackOptions{SigningSecret: benchSecret, Click: true, CallID: askslackCallID, Clickable: askslackPick}
	if target == "null" {
		opts.CallID, opts.Clickable = loadbench.NullCallID, nil
	}
	fake, err := loadbench.NewSlack(opts)
	if err != nil {
		return err
	}
	defer fake.Close()
	var c *child
	if target == "null" {
		c, err = b.startNullBot(ctx, fake)
	} else {
		c, err = b.startBot(ctx, target, fake)
	}
	if err != nil {
		return err
	}
	defer c.stop()
	for _, p := range b.f.plan() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fake.SetClickDelay(p.click)
		row, err := b.loadRow(ctx, target, p, c, fake)
		if err != nil {
			return err
		}
		b.progress("%s: %d agents, click %s: %.0f asks/s, %d errors", target, p.agents, clickLabel(p.click), row.rate(), row.res.Errors)
		b.rows = append(b.rows, row)
	}
	fake.SetClickDelay(0)
	if b.f.clickRate > 0 && target != "null" && ctx.Err() == nil {
		b.rated = append(b.rated, b.rateRow(ctx, target, c, fake))
	}
	return nil
}

// rateRow starts asks at --click-rate for one window, each clicked at once,
// and measures the click acks under that known load.
func (b *benchRun) rateRow(ctx context.Context, target string, c *child, fake *loadbench.Slack) loadRow {
	row := loadRow{target: target, agents: b.f.clickRate}
	b.progress("%s: %d clicks/s for %s", target, b.f.clickRate, b.f.duration)
	fake.ForgetMessages()
	row.res = loadbench.RunRate(ctx, loadbench.LoadOptions{
		URL: "http://" + c.addr, RunID: fmt.Sprintf("%sr", target[:1]), Warmup: b.f.warmup, Duration: b.f.duration,
		Drain: 15 * time.Second, Slack: fake,
		Window: func(begin bool) {
			if begin {
				fake.TakeLatencies()
				return
			}
			row.ack, row.ackAns = fake.TakeLatencies()
		},
	}, b.f.clickRate)
	row.stale, row.clicked = staleButtons(ctx, fake)
	return row
}

// loadRow runs p.agents agents against the bot c, the fake clicking each
// question p.click after its post, and measures one window: the bot's CPU,
// Redis and Slack counters are read as the window opens and closes. When
// the click waits, the agents' first asks are spread over one delay and
// the warmup is longer by it, so the window sees a steady stream rather
// than waves.
func (b *benchRun) loadRow(ctx context.Context, target string, p rowPlan, c *child, fake *loadbench.Slack) (loadRow, error) {
	n := p.agents
	row := loadRow{target: target, agents: n, click: p.click}
	var (
		p0   loadbench.Proc
		o0   others
		r0   redisSnap
		s0   loadbench.SlackCounters
		werr error
	)
	b.progress("%s: %d agents, click %s, for %s", target, n, clickLabel(p.click), b.f.duration)
	fake.ForgetMessages()
	runID := fmt.Sprintf("%s%d", target[:1], n) // unique per row: the store is not flushed between a target's rows
	if p.click > 0 {
		runID += fmt.Sprintf("d%d", p.click.Milliseconds())
	}
	res := loadbench.Run(ctx, loadbench.LoadOptions{
		URL: "http://" + c.addr, RunID: runID, Agents: n, Warmup: b.f.warmup + p.click, Duration: b.f.duration,
		Stagger: p.click, MaxAsks: b.f.maxAsks, Drain: 15*time.Second + p.click, Slack: fake,
		Window: func(begin bool) {
			p, err := loadbench.ReadProc(c.cmd.Process.Pid)
			werr = errors.Join(werr, err)
			o, err := b.readOthers(target == "redis")
			werr = errors.Join(werr, err)
			var rs redisSnap
			if target == "redis" {
				rs, err = b.readRedis(ctx)
				werr = errors.Join(werr, err)
			}
			sc := fake.Counters()
			if begin {
				p0, o0, r0, s0 = p, o, rs, sc
				fake.TakeLatencies() // forget the warmup's
				return
			}
			row.cpu = p.CPU - p0.CPU
			row.benchCPU, row.redisCPU = o.bench-o0.bench, o.redis-o0.redis
			if target == "redis" {
				d, nodes := rs.sub(r0)
				row.redis, row.nodes = &d, nodes
			}
			row.slack = sc.Sub(s0)
			b.progress("%s: %d agents: Slack calls %+v", target, row.agents, row.slack)
			row.ack, row.ackAns = fake.TakeLatencies()
		},
	})
	if werr != nil {
		return row, werr
	}
	row.res = res
	if target != "null" {
		row.stale, row.clicked = staleButtons(ctx, fake)
	}
	if res.Answered == 0 {
		return row, fmt.Errorf("no ask answered with %d agents, click %s (%d errors, last: %v); bot log:\n%s", n, clickLabel(p.click), res.Errors, res.LastErr, tail(c.logs))
	}
	return row, nil
}

// others is the CPU used so far by this process and, when asked, by the
// private redis-server.
type others struct{ bench, redis time.Duration }

func (b *benchRun) readOthers(withRedis bool) (others, error) {
	self, err := loadbench.ReadProc(os.Getpid())
	if err != nil || !withRedis {
		return others{bench: self.CPU}, err
	}
	rs, err := b.redisProcCPU()
	return others{bench: self.CPU, redis: rs}, err
}

// staleButtons waits, up to 10 s, for the bot's message updates to land
// (until no answered ask's message shows controls, or the count has not
// moved for a second) and returns the count and the answered asks clicked.
func staleButtons(ctx context.Context, fake *loadbench.Slack) (stale, clicked int) {
	deadline := time.Now().Add(10 * time.Second)
	last, still := -1, time.Now()
	for {
		stale, clicked = fake.StaleButtons()
		if stale != last {
			last, still = stale, time.Now()
		}
		if stale == 0 || time.Since(still) > time.Second || time.Now().After(deadline) || ctx.Err() != nil {
			return stale, clicked
		}
		time.Sleep(100 * time.Millisecond) // measuring equipment: poll the fake's record
	}
}

// goroutines reads the bot's goroutine count from /debug/pprof.
func goroutines(ctx context.Context, addr string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/goroutine?debug=1", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("goroutine profile: %w", err)
	}
	// "goroutine profile: total 1234"
	f := strings.Fields(line)
	if len(f) == 0 {
		return 0, errors.New("goroutine profile: empty")
	}
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return 0, fmt.Errorf("goroutine profile: %q", line)
	}
	return n, nil
}

func (b *benchRun) openAsks(ctx context.Context, st string) error {
	fake, err := loadbench.NewSlack(loadbench.SlackOptions{SigningSecret: benchSecret})
	if err != nil {
		return err
	}
	defer fake.Close()
	c, err := b.startBot(ctx, st, fake)
	if err != nil {
		return err
	}
	defer c.kill()
	row := openRow{store: st, n: b.f.open, sit: b.f.openSit}
	p, err := loadbench.ReadProc(c.cmd.Process.Pid)
	if err != nil {
		return err
	}
	row.rssIdle = p.RSS
	if row.gIdle, err = goroutines(ctx, c.addr); err != nil {
		return err
	}
	b.progress("open asks (%s): opening %d", st, b.f.open)
	cancel, err := loadbench.OpenAsks(ctx, "http://"+c.addr, "o"+st[:1], b.f.open, fake)
	if err != nil {
		return fmt.Errorf("%w; bot log:\n%s", err, tail(c.logs))
	}
	defer cancel()
	if st == "redis" {
		// From the burst's end: what it costs right after, then until the
		// store's deferred bookkeeping of it is done (bench_burst.go).
		if err := b.afterBurst(ctx, c, fake, time.Now(), &row); err != nil {
			return err
		}
	} else {
		time.Sleep(time.Second) // let the posting settle (message ts recorded) before the quiet window
	}
	p0, err := loadbench.ReadProc(c.cmd.Process.Pid)
	if err != nil {
		return err
	}
	var r0 loadbench.RedisStats
	if st == "redis" {
		if r0, err = b.redis.Stats(ctx); err != nil {
			return err
		}
	}
	if err := b.sit(ctx, st, c, fake, p0, r0, &row); err != nil {
		return err
	}
	b.open = append(b.open, row)
	return nil
}

// auditPending is the bot's audit chainer's to-do list (its key under the
// default ASKSLACK_REDIS_PREFIX): every transition files its ask there, and
// the chainer looks at an ask again half a minute after chaining it before
// forgetting it.
const auditPending = "askslack:{audit}:pending"

// sit lets the open asks sit for the window and records what they cost
// meanwhile (from p0 and r0, read as it began).
func (b *benchRun) sit(ctx context.Context, st string, c *child, fake *loadbench.Slack, p0 loadbench.Proc, r0 loadbench.RedisStats, row *openRow) error {
	s0 := fake.Counters()
	b.progress("open asks (%s): sitting %s", st, b.f.openSit)
	select {
	case <-time.After(b.f.openSit):
	case <-ctx.Done():
		return ctx.Err()
	}
	p1, err := loadbench.ReadProc(c.cmd.Process.Pid)
	if err != nil {
		return err
	}
	if st == "redis" {
		r1, err := b.redis.Stats(ctx)
		if err != nil {
			return err
		}
		d := r1.Sub(r0)
		row.redis = &d
	}
	sc := fake.Counters().Sub(s0)
	row.slackCallsWhileIn = sc.Calls()
	row.cpu = p1.CPU - p0.CPU
	row.rssOpen = p1.RSS
	row.gOpen, err = goroutines(ctx, c.addr)
	return err
}
