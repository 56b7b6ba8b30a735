package main

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// A harness whose blocking request drops (a proxy's idle timeout, a
// restart) sends the same request again and gets the answer: the question
// was not withdrawn.
func TestE2EDroppedAskReattaches(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	req := oneQuestion("drop-reattach", "Yes", "No")
	first, drop := context.WithCancel(ctx)
	a := b.askAsync(first, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	waitRecorded(t, ctx, b, req.CallID)
	drop()
	if _, err := a.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("dropped ask: %v", err)
	}
	b.waitLog(ctx, "waiting for a re-attach")
	again := b.askAsync(ctx, req)
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	res, err := again.wait(t)
	if err != nil || res.Pending || res.Answers[0].Selected[0] != "Yes" {
		t.Fatalf("re-attached ask: %+v %v; want the answer", res, err)
	}
	if n := len(d.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d messages posted; want 1", n)
	}
}

// Nobody re-attaches: after ASKSLACK_REATTACH_GRACE the question is
// withdrawn as abandoned.
func TestE2EAbandonedAskIsWithdrawnAfterTheGrace(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_REATTACH_GRACE"] = "1s"
	b := d.start(viaHTTP)
	req := oneQuestion("drop-abandon", "Yes", "No")
	first, drop := context.WithCancel(ctx)
	a := b.askAsync(first, req)
	waitPosted(t, ctx, d.fake, req.CallID)
	st := waitRecorded(t, ctx, b, req.CallID)
	if st.State != "open" {
		t.Fatalf("status: %+v", st)
	}
	var err error
	drop()
	<-a.done
	for st.State == "open" {
		if st, err = b.client().WaitChange(ctx, req.CallID, st.Version, 20*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if st.State != "aborted" {
		t.Fatalf("after the grace the ask is %s; want aborted", st.State)
	}
	_, err = b.client().Ask(ctx, req)
	if waterfall.CodeOf(err) != waterfall.CodeAskAborted || !strings.Contains(err.Error(), "did not re-attach") {
		t.Fatalf("re-attach after the grace: %v", err)
	}
}

// `askslack ask --wait` sends a session (a timed ask needs one) and exits 2
// when the window closes.
func TestE2EAskWaitSendsASession(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)
	cmd := exec.CommandContext(ctx, binPath, "ask", "--url", "http://"+b.addr, "--call-id", "cli-wait",
		"--question", "Deploy now?", "--option", "Yes", "--option", "No", "--wait", "1s")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("askslack ask --wait 1s: %v; want exit 2 (pending)\n%s", err, out)
	}
	if !strings.Contains(string(out), "late answers go to session") {
		t.Fatalf("no session named:\n%s", out)
	}
}

// waitRecorded waits until the bot has recorded the question's message (a
// drop before that is the message mirror's business, not this test's). The
// API does not say where an ask is shown; the mirror logs it once recorded.
func waitRecorded(t *testing.T, ctx context.Context, b *bot, callID string) hostapi.Status {
	t.Helper()
	b.waitLog(ctx, `"msg":"question posted","callId":"`+callID+`"`)
	st, err := b.client().Get(ctx, callID, 0)
	if err != nil {
		t.Fatalf("waiting for %s's message to be recorded: %v", callID, err)
	}
	return st
}
