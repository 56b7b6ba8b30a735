package main

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// SIGTERM while questions wait: the draining replica answers its blocking
// asks with 503 (re-attach), releases its claims so the other replica takes
// them at once, exits cleanly; nothing is lost and the other instance
// answers both questions.
func TestE2ESigtermDrainsToAnotherReplica(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, true)
	d.env["ASKSLACK_CLAIM_LEASE"] = "30s" // a takeover must not wait for the lease
	a := d.start(viaHTTP)
	untimed := oneQuestion("drain-untimed", "Yes", "No")
	timed := timedQuestion("drain-timed", 2*time.Minute, "Ship", "Hold")
	askU := a.askAsync(ctx, untimed)
	askT := a.askAsync(ctx, timed)
	msgU := waitPosted(t, ctx, d.fake, untimed.CallID)
	msgT := waitPosted(t, ctx, d.fake, timed.CallID)
	waitMetric(t, ctx, a, "askslack_claims_held 1")
	b := d.start(viaHTTP)

	stopped := time.Now()
	a.stop()
	if a.err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", a.err, a.logs.String())
	}
	for _, x := range []*asked{askU, askT} {
		if _, err := x.wait(t); waterfall.CodeOf(err) != waterfall.CodeUnavailable {
			t.Fatalf("a blocking ask on the draining replica got %v; want UNAVAILABLE (re-attach)", err)
		}
	}
	// The released claim is taken at b's next step, well inside one lease.
	waitMetric(t, ctx, b, "askslack_claims_held 1")
	took := time.Since(stopped)
	if took > 5*time.Second { // a third of the lease is when b would step anyway
		t.Fatalf("takeover took %s", took)
	}
	t.Logf("released claim taken over %s after SIGTERM (lease 30s)", took)
	askU, askT = b.askAsync(ctx, untimed), b.askAsync(ctx, timed)
	if _, err := d.fake.ClickButton(ctx, alice, msgU.Channel, msgU.TS, "No", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.fake.ClickButton(ctx, bob, msgT.Channel, msgT.TS, "Ship", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if res, err := askU.wait(t); err != nil || res.Answers[0].Selected[0] != "No" {
		t.Fatalf("untimed after drain: %+v %v", res, err)
	}
	if res, err := askT.wait(t); err != nil || res.Pending || res.Answers[0].Selected[0] != "Ship" {
		t.Fatalf("timed after drain: %+v %v", res, err)
	}
	if n := len(d.fake.Calls("chat.postMessage")); n != 2 {
		t.Fatalf("%d messages posted; re-attaching must not post again", n)
	}
}

// /metrics passes `promtool check metrics`, and /healthz, /readyz answer.
func TestE2EMetricsAndHealth(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaSocket)
	if err := d.fake.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Exercise the counters a little so labelled series exist.
	askAndTap(t, ctx, d, b, "metrics")
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + b.addr + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", path, err, resp)
		}
		resp.Body.Close()
	}
	waitMetric(t, ctx, b, `askslack_asks_total{outcome="answered"} 1`)
	resp, err := http.Get("http://" + b.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`askslack_questions{state="open"}`, `askslack_interactions_total{result="settled",type="block_actions"} 1`,
		`askslack_slack_api_calls_total{method="chat.postMessage",result="ok"}`, "askslack_socket_connected 1",
		"askslack_claims_held", `askslack_transitions_total{kind="settled"} 1`, "go_goroutines", "process_cpu_seconds_total",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus); .ci/run installs it")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
