package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBenchPrintsTable runs `askslack bench` for a blink (2 agents, a
// fraction of a second per row, 10 open asks) against the binary under
// test and checks that every table and row is printed. It asserts no
// timings: the figures of so short a run mean nothing.
func TestBenchPrintsTable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several processes")
	}
	targets, stores := "memory,null", "memory"
	if _, err := exec.LookPath("redis-server"); err == nil {
		targets, stores = "redis,memory,null", "redis,memory"
	}
	var out bytes.Buffer
	err := runBench(&out, "--bin", binPath, "--null-bin", binPath, "--targets", targets, "--click-after", "0",
		"--concurrency", "2", "--warmup", "100ms", "--duration", "300ms", "--open", "10", "--open-sit", "200ms", "--open-stores", stores,
		"--after-burst", "1s", "--after-burst-window", "500ms", "--settle=false")
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, st := range strings.Split(stores, ",") {
		if !hasRow(got, st, "10") {
			t.Errorf("no open-asks row for %s:\n%s", st, got)
		}
	}
	for _, want := range []string{"asks/s", "×null", "new slack conns/ask", "open blocking asks", "RSS/ask kB", "goroutines/ask"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, tg := range strings.Split(targets, ",") {
		if !hasRow(got, tg, "0", "2") { // target, click, agents
			t.Errorf("no %s row with 2 agents:\n%s", tg, got)
		}
	}
}

// runBench runs the bench subcommand of the binary under test with its
// table written to out.
func runBench(out *bytes.Buffer, args ...string) error {
	var errb bytes.Buffer
	cmd := exec.Command(binPath, append([]string{"bench"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, errb.String())
	}
	return nil
}

// hasRow reports whether a table line starts with the given fields.
func hasRow(table string, fields ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && slices.Equal(f[:len(fields)], fields) {
			return true
		}
	}
	return false
}
