package bench

import (
	"bytes"
	"testing"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
)

// TestBenchFlags rejects unbounded or unknown settings before starting
// anything.
func TestBenchFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--duration", "1h"}, {"--open", "1000000"}, {"--concurrency", "0"}, {"--targets", "postgres"}, {"--open-sit", "0s"},
	} {
		var out bytes.Buffer
		err := Run(args, &out)
		if err == nil || cli.ExitCode(err) != 2 {
			t.Errorf("bench %v: err %v, want a usage error", args, err)
		}
	}
}
