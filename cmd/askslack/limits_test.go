package main

// Server limits, shutdown and start-up through the real binary.

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/store/redisstore"
)

// stall opens a connection that sends the headers of a POST and half its
// body, then nothing. It returns once the handler is reading the body: the
// server's "100 Continue" says so.
func stall(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, "POST /v1/asks HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\nContent-Length: 200\r\nExpect: 100-continue\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	cont := make([]byte, len("HTTP/1.1 100 Continue\r\n\r\n"))
	if _, err := io.ReadFull(c, cont); err != nil || string(cont) != "HTTP/1.1 100 Continue\r\n\r\n" {
		t.Fatalf("no 100 Continue: %q %v", cont, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	if _, err := io.WriteString(c, "{\"callId\":\"half"); err != nil {
		t.Fatal(err)
	}
	return c
}

// A request whose body stalls is cut within ASKSLACK_READ_TIMEOUT; a
// blocking ask that waits longer than that is not.
func TestE2EStalledBodyIsCut(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_READ_TIMEOUT"] = "1s"
	b := d.start(viaHTTP)
	c := stall(t, b.addr)
	// The bound is the test's patience, far beyond the 1s limit.
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a request with half a body was still open after 20s; ASKSLACK_READ_TIMEOUT=1s must cut it")
	}
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("stalled body answered %d; want 400 or a closed connection", resp.StatusCode)
		}
	}
	// A blocking ask outlives the read timeout: its window (2.5s) closes and
	// it returns pending instead of being cut after 1s.
	req := timedQuestion("outlives-read-timeout", 2500*time.Millisecond, "A", "B")
	res, err := b.client().Ask(ctx, req)
	if err != nil || !res.Pending {
		t.Fatalf("blocking ask longer than the read timeout: %+v %v", res, err)
	}
	if strings.Contains(b.logs.String(), `"callId":"outlives-read-timeout"`) && strings.Contains(b.logs.String(), "detached") {
		t.Fatalf("the blocking ask was cut:\n%s", b.logs.String())
	}
}

// SIGTERM with a stalled connection open: the HTTP side gets its grace, the
// stalled connection is closed, and releasing claims still has time of its
// own (the claim is free for another replica at once).
func TestE2EShutdownWithStalledConnection(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_READ_TIMEOUT"] = "5m"
	d.env["ASKSLACK_SHUTDOWN_GRACE"] = "1s"
	b := d.start(viaHTTP)
	req := timedQuestion("shutdown-claim", time.Hour, "A", "B")
	req.Agent.SessionID = "sess-shutdown"
	a := b.askAsync(ctx, req)
	waitPosted(t, ctx, d.fake, req.CallID)
	waitMetric(t, ctx, b, "askslack_claims_held 1")
	stall(t, b.addr)
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the bot did not stop within 30s of SIGTERM with a stalled connection:\n%s", b.logs.String())
	}
	<-a.done
	logs := b.logs.String()
	for _, want := range []string{"closing them", "released timed-wait claims", `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the shutdown logs lack %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "releasing a claim failed") || strings.Contains(logs, "dropped") {
		t.Errorf("shutdown ran out of time:\n%s", logs)
	}
	if d.redisURL != "" {
		r, err := redisstore.New(redisFor(t, d), redisstore.Options{Prefix: d.prefix})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Acquire(ctx, req.CallID, store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: "another-replica", TTL: time.Second, Now: time.Now()}}); err != nil {
			t.Fatalf("the claim was not released at shutdown: %v", err)
		}
	}
}

// A bot token Slack refuses stops the bot at start with a sentence naming
// the variable and what to do.
func TestE2ERefusedBotTokenExits(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	cmd := exec.Command(binPath)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"SLACK_BOT_TOKEN=xoxb-wrong", "SLACK_API_URL=" + strings.TrimSuffix(d.fake.APIURL(), "/"),
		"SLACK_SIGNING_SECRET=" + testSecret, "ASKSLACK_ADDR=" + freeAddr(t), "ASKSLACK_CHANNEL=" + testChannel}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Fatalf("exit: %v; want a non-zero exit\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("a bot whose token Slack refuses kept running:\n%s", out.String())
	}
	for _, want := range []string{"SLACK_BOT_TOKEN", "invalid_auth", "OAuth & Permissions"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the exit message lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "askslack is running") {
		t.Errorf("the bot claimed to be running:\n%s", out.String())
	}
}

// An unreachable Slack does not keep the bot from serving; every failed
// check is a WARN with its cause, and the recovery is logged.
func TestE2EUnreachableSlackIsLoggedUntilItRecovers(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.fake.DropNext("auth.test", 2)
	b := d.start(viaHTTP)
	b.waitLog(ctx, "Slack is reachable again")
	logs := b.logs.String()
	if n := strings.Count(logs, `"level":"WARN"`) - strings.Count(logs, "REDIS_URL is not set") - strings.Count(logs, "DEVELOPMENT MODE"); n < 2 {
		t.Errorf("%d WARN lines for 2 failed checks:\n%s", n, logs)
	}
	if !strings.Contains(logs, "cannot reach Slack") || !strings.Contains(logs, `"err":`) {
		t.Errorf("no WARN with the cause:\n%s", logs)
	}
}

// A failing Socket Mode connection is a WARN with its cause on every retry,
// and its recovery is logged.
func TestE2ESocketModeFailuresAreLogged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.fake.FailNext("apps.connections.open", 2, "internal_error", 0)
	b := d.start(viaSocket)
	b.waitLog(ctx, "Slack Socket Mode connected again")
	if n := strings.Count(b.logs.String(), "Slack Socket Mode connection failed; retrying"); n < 2 {
		t.Fatalf("%d WARN lines for 2 failed connections:\n%s", n, b.logs.String())
	}
}
