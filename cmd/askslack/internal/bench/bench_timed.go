package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/askslack/askslack/internal/loadbench"
)

// benchLease is ASKSLACK_CLAIM_LEASE in the timed-waits test: short, so a
// takeover is measured in seconds.
const benchLease = 5 * time.Second

// timedRow is the timed-waits test: --timed waits opened on two replicas
// sharing the private Redis, one of which is then killed.
type timedRow struct {
	n                        int
	opening, claim, takeover time.Duration
	takeovers                string
}

// timedWaits opens the waits (asynchronous asks: nothing holds them but
// the claims), measures how long until every one is claimed, SIGKILLs one
// replica and measures how long until the other holds them all.
func (b *benchRun) timedWaits(ctx context.Context) error {
	fake, err := loadbench.NewSlack(loadbench.SlackOptions{SigningSecret: benchSecret})
	if err != nil {
		return err
	}
	defer fake.Close()
	lease := "ASKSLACK_CLAIM_LEASE=" + benchLease.String()
	one, err := b.startBotWith(ctx, "redis", fake, true, lease)
	if err != nil {
		return err
	}
	defer one.kill()
	two, err := b.startBotWith(ctx, "redis", fake, false, lease)
	if err != nil {
		return err
	}
	defer two.kill()
	row := timedRow{n: b.f.timed}
	b.progress("timed waits: opening %d on two replicas", row.n)
	begin := time.Now()
	if err := loadbench.OpenTimed(ctx, []string{"http://" + one.addr, "http://" + two.addr}, "t", row.n, 10*time.Minute); err != nil {
		return err
	}
	opened := time.Now()
	row.opening = opened.Sub(begin)
	claimed, err := b.redis.ClaimsAfter(ctx, "askslack", row.n, opened, opened.Add(3*benchLease+30*time.Second))
	if err != nil {
		return fmt.Errorf("timed waits: claiming: %w", err)
	}
	row.claim = claimed.Sub(opened)
	b.progress("timed waits: all claimed after %s; killing one replica", row.claim)
	one.kill()
	killed := time.Now()
	// The dead replica's leases end by killed+lease at the latest: once
	// every lease ends after that, the survivor holds every wait.
	taken, err := b.redis.ClaimsAfter(ctx, "askslack", row.n, killed.Add(benchLease), killed.Add(4*benchLease+30*time.Second))
	if err != nil {
		return fmt.Errorf("timed waits: takeover: %w", err)
	}
	row.takeover = taken.Sub(killed)
	row.takeovers = scrapeMetric(ctx, two.addr, "askslack_claims_taken_over_total")
	b.timed = &row
	return nil
}

// scrapeMetric reads one unlabelled metric from a bot's /metrics ("?" if
// it cannot).
func scrapeMetric(ctx context.Context, addr, name string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return "?"
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return v
		}
	}
	return "?"
}

// printTimed prints the timed-waits test.
func (b *benchRun) printTimed() {
	r := b.timed
	if r == nil {
		return
	}
	fmt.Fprintf(b.out, "\ntimed waits (Redis, two replicas, ASKSLACK_CLAIM_LEASE=%s)\n\n", benchLease)
	fmt.Fprintf(b.out, "  waits %d, opened in %.1fs; all claimed %.1fs after the last was opened;\n", r.n, r.opening.Seconds(), r.claim.Seconds())
	fmt.Fprintf(b.out, "  one replica SIGKILLed: all held by the other %.1fs later; takeovers it counted: %s\n", r.takeover.Seconds(), r.takeovers)
}
