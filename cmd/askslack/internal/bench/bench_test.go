package bench

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/internal/loadbench"
)

// TestBenchFlags rejects unbounded or unknown settings before starting
// anything.
func TestBenchFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--duration", "1h"}, {"--open", "1000000"}, {"--concurrency", "0"}, {"--targets", "postgres"}, {"--open-sit", "0s"},
		{"--click-after", "2"}, {"--click-after", "-1s"}, {"--click-after", "2m"}, {"--click-after", "0,0s"}, {"--click-after", ","},
		{"--delayed-concurrency", "0"}, {"--after-burst", "1h"}, {"--after-burst-window", "10ms"},
		{"--after-burst", "5s", "--after-burst-window", "10s"},
	} {
		var out bytes.Buffer
		err := Run(args, &out)
		if err == nil || cli.ExitCode(err) != 2 {
			t.Errorf("bench %v: err %v, want a usage error", args, err)
		}
	}
}

// --click-after is a list of click timings, 0 at once; each closed-loop
// row runs once per timing, with --delayed-concurrency agents when the
// click waits.
func TestClickAfterFlag(t *testing.T) {
	f, err := parseBenchFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.clickAfter, []time.Duration{0, 2 * time.Second}) {
		t.Errorf("default --click-after %v, want [0 2s]", f.clickAfter)
	}
	if f.afterBurst != 45*time.Second || f.afterBurstWindow != 5*time.Second {
		t.Errorf("default --after-burst %s in %s windows", f.afterBurst, f.afterBurstWindow)
	}
	f, err = parseBenchFlags([]string{"--click-after", "0, 500ms,2s", "--concurrency", "8,32", "--delayed-concurrency", "128"})
	if err != nil {
		t.Fatal(err)
	}
	want := []rowPlan{{0, 8}, {0, 32}, {500 * time.Millisecond, 128}, {2 * time.Second, 128}}
	if got := f.plan(); !slices.Equal(got, want) {
		t.Errorf("plan %v, want %v", got, want)
	}
	// The quick check of docs/bench.md still parses: only instant rows
	// when asked.
	f, err = parseBenchFlags([]string{"--targets", "redis", "--concurrency", "32", "--duration", "5s", "--open", "0",
		"--timed", "0", "--click-rate", "0", "--click-after", "0"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.plan(); !slices.Equal(got, []rowPlan{{0, 32}}) {
		t.Errorf("plan %v", got)
	}
}

func TestWorstWindows(t *testing.T) {
	if i, j := worstWindows(nil); i != -1 || j != -1 {
		t.Errorf("no windows: %d %d", i, j)
	}
	ws := []burstWindow{{ops: 900, cores: 0.5}, {ops: 20, cores: 0.9}, {ops: 3000, cores: 0.1}, {ops: 3000, cores: 0.9}}
	if i, j := worstWindows(ws); i != 2 || j != 1 {
		t.Errorf("worst ops window %d, cores %d; want 2, 1", i, j)
	}
}

func TestBreakdownLines(t *testing.T) {
	d := loadbench.ParseInfo("cmdstat_evalsha:calls=10200,usec=1\ncmdstat_zadd:calls=14100,usec=1\n" +
		"cmdstat_hset:calls=12000,usec=1\ncmdstat_ping:calls=1,usec=1\ncmdstat_get:calls=2,usec=1\n")
	got := breakdownLines(d, 1000, 32, "  ")
	want := "  zadd 14.10  hset 12.00\n  evalsha 10.20  (2 rarer: 0.003)\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(breakdownLines(loadbench.RedisStats{}, 10, 80, ""), "rarer") {
		t.Error("rare commands reported in an empty breakdown")
	}
}
