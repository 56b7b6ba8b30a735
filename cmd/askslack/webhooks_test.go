package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/kit/clientrun"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/webhook"
)

const hookSecret = "e2e-webhook-secret-0123456789abcdef"

// hookDelivery is one request the receiver got, and what Verify said.
type hookDelivery struct {
	header http.Header
	raw    []byte
	body   webhook.Body
	err    error
}

// hookReceiver is a webhook endpoint as a team would write one: it
// verifies every request with webhook.Verify (against its own clock,
// which a test can move) and answers 204, or 401 when it does not verify,
// or 503 to the first fail requests that verify.
type hookReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	skew time.Duration
	fail int
	got  []hookDelivery
}

func newHookReceiver(t *testing.T) *hookReceiver { return newHookReceiverFor(t, hookSecret) }

func newHookReceiverFor(t *testing.T, secret string) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		now := time.Now().Add(h.skew)
		h.mu.Unlock()
		d := hookDelivery{header: r.Header.Clone(), raw: raw, err: webhook.Verify(secret, r.Header, raw, now, 0)}
		_ = json.Unmarshal(raw, &d.body)
		h.mu.Lock()
		h.got = append(h.got, d)
		fail := d.err == nil && h.fail > 0
		if fail {
			h.fail--
		}
		h.mu.Unlock()
		switch {
		case d.err != nil:
			http.Error(w, d.err.Error(), http.StatusUnauthorized)
		case fail:
			http.Error(w, "try again", http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// verified are the deliveries that verified, in arrival order.
func (h *hookReceiver) verified() []hookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookDelivery
	for _, d := range h.got {
		if d.err == nil {
			out = append(out, d)
		}
	}
	return out
}

// waitFor waits for a verified delivery of typ about callID.
func (h *hookReceiver) waitFor(t *testing.T, ctx context.Context, typ, callID string) hookDelivery {
	t.Helper()
	for {
		for _, d := range h.verified() {
			if d.body.Type == typ && d.body.CallID == callID {
				return d
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no signed %s of %s reached the receiver; it got %d requests", typ, callID, len(h.verified()))
		case <-time.After(50 * time.Millisecond): // polling a receiver another process posts to
		}
	}
}

// replay sends a recorded delivery to the receiver again, with header
// changed by edit, and returns its status.
func (h *hookReceiver) replay(t *testing.T, d hookDelivery, edit func(http.Header)) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/hook", bytes.NewReader(d.raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = d.header.Clone()
	edit(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// ASKSLACK_WEBHOOKS through the real binary: a question asked through the
// host API and answered by a signed click in the fake Slack reaches the
// receiver as ask.created and ask.answered, signed, with the ask's
// fields; a replay of one (the same body with its old timestamp, or a
// fresh timestamp under the old signature) does not verify; `askslack
// webhooks` shows the endpoint; an agent's or answer surface's token is
// refused the operators' routes.
func TestE2EWebhooksSignedDeliveries(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	rcv := newHookReceiver(t)
	d := auditDeployment(t, false)
	d.env["ASKSLACK_ANSWER_TOKENS"] = "console:" + consoleTok
	d.env["ASKSLACK_WEBHOOKS"] = "audit=" + rcv.srv.URL + "/hook"
	d.env["ASKSLACK_WEBHOOK_SECRET"] = hookSecret
	b := d.start(viaHTTP)
	if strings.Contains(b.logs.String(), hookSecret) {
		t.Fatal("the bot logged the webhook secret")
	}

	askAsyncAs(t, b, aliceLaptop, oneQuestion("hook-1", "Yes", "No"))
	msg := waitPosted(t, ctx, d.fake, "hook-1")
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	created := rcv.waitFor(t, ctx, "ask.created", "hook-1")
	answered := rcv.waitFor(t, ctx, "ask.answered", "hook-1")
	c, a := created.body, answered.body
	if c.Caller != "alice-laptop" || c.Agent == nil || c.Agent.ID != "agent-1" || c.Agent.SessionID != "sess-1" || c.Ask == nil ||
		c.Ask.Kind != "question" || c.Ask.Questions[0].Question != "Deploy to production now?" || strings.Join(c.Ask.Questions[0].Options, ",") != "Yes,No" {
		t.Errorf("ask.created: %s", created.raw)
	}
	if a.Respondent == nil || a.Respondent.UserID != alice.ID || a.Respondent.Surface != "slack" || a.Late || a.Ask == nil ||
		len(a.Ask.Answers) != 1 || strings.Join(a.Ask.Answers[0].Selected, ",") != "Yes" || a.Seq <= c.Seq || a.CreatedAt.Before(c.CreatedAt) {
		t.Errorf("ask.answered: %s", answered.raw)
	}
	for _, x := range []hookDelivery{created, answered} {
		// Both header sets: the Standard Webhooks one, and the deprecated
		// one beside it, which verifies alone too.
		legacy := x.header.Clone()
		legacy.Del(webhook.HeaderStdSignature)
		if x.header.Get(webhook.HeaderStdID) != x.body.ID || x.header.Get(webhook.HeaderID) != x.body.ID || !strings.HasPrefix(x.body.ID, "wh_") ||
			x.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(x.header.Get(webhook.HeaderStdSignature), "v1,") ||
			!strings.HasPrefix(x.header.Get(webhook.HeaderSignature), "v1=") || x.header.Get(webhook.HeaderTimestamp) != x.header.Get(webhook.HeaderStdTimestamp) {
			t.Errorf("%s headers %v", x.body.Type, x.header)
		}
		if err := webhook.Verify(hookSecret, legacy, x.raw, time.Now(), 0); err != nil {
			t.Errorf("%s: the deprecated headers alone do not verify: %v", x.body.Type, err)
		}
	}
	if seen := rcv.verified(); len(seen) != 2 {
		t.Errorf("%d signed deliveries; want ask.created and ask.answered once each", len(seen))
	}
	waitMetric(t, ctx, b, `askslack_webhook_deliveries_total{endpoint="audit",outcome="ok"} 2`)
	waitMetric(t, ctx, b, `askslack_webhook_deliveries_total{endpoint="audit",outcome="failed"} 0`)
	waitMetric(t, ctx, b, `askslack_webhook_dead_letters_total{endpoint="audit"} 0`)
	waitMetric(t, ctx, b, `askslack_webhook_lag_seconds{endpoint="audit"} 0`)

	// Replays: the recorded request six minutes later, and a fresh
	// timestamp under the recorded signature.
	rcv.mu.Lock()
	rcv.skew = 6 * time.Minute
	rcv.mu.Unlock()
	if code := rcv.replay(t, answered, func(http.Header) {}); code != http.StatusUnauthorized {
		t.Errorf("a replay six minutes later: %d; want 401", code)
	}
	rcv.mu.Lock()
	rcv.skew = 0
	last := rcv.got[len(rcv.got)-1].err
	rcv.mu.Unlock()
	if !errors.Is(last, webhook.ErrTimestamp) {
		t.Errorf("the replay was refused for %v; want ErrTimestamp", last)
	}
	fresh := func(h http.Header) { // a second later than signed: still within the tolerance
		ts, _ := strconv.ParseInt(h.Get(webhook.HeaderStdTimestamp), 10, 64)
		h.Set(webhook.HeaderStdTimestamp, strconv.FormatInt(ts+1, 10))
	}
	if code := rcv.replay(t, answered, fresh); code != http.StatusUnauthorized {
		t.Errorf("a replay under a new timestamp: %d; want 401", code)
	}

	// The operators' view, through the binary.
	var out string
	for {
		var errs string
		var code int
		out, errs, code = runCLI(t, ctx, "webhooks", "--json", "--url", "http://"+b.addr, "--token", opsToken)
		if code != 0 {
			t.Fatalf("askslack webhooks: exit %d: %s", code, errs)
		}
		var page hostapi.WebhooksPage
		if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Endpoints) != 1 {
			t.Fatalf("askslack webhooks --json: %v\n%s", err, out)
		}
		e := page.Endpoints[0]
		if e.Name == "audit" && e.Started && e.Cursor >= a.Seq && e.LastSuccess != nil && e.DeadLetters == 0 && e.LastError == "" &&
			e.URL == rcv.srv.URL+"/…" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("askslack webhooks never showed the endpoint caught up:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond) // the cursor is stored a moment after the delivery
	}
	out, errs, code := runCLI(t, ctx, "webhooks", "--url", "http://"+b.addr, "--token", opsToken)
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "audit") || !strings.Contains(out, rcv.srv.URL) {
		t.Errorf("askslack webhooks: exit %d: %s%s", code, out, errs)
	}
	if out, _, code := runCLI(t, ctx, "webhooks", "dead", "audit", "--url", "http://"+b.addr, "--token", opsToken); code != 0 || !strings.Contains(out, "no dead letters") {
		t.Errorf("askslack webhooks dead audit: exit %d: %s", code, out)
	}

	// Agents and answer surfaces are refused, and the refusal is audited.
	for _, tok := range []string{aliceLaptop, consoleTok} {
		code, body := api(t, b, "GET", "/v1/webhooks", tok, "")
		wantCode(t, "listing webhooks with "+tok[:5], code, body, http.StatusForbidden, "FORBIDDEN")
		code, body = api(t, b, "POST", "/v1/webhooks/audit/redeliver", tok, `{"all":true}`)
		wantCode(t, "redelivering with "+tok[:5], code, body, http.StatusForbidden, "FORBIDDEN")
	}
	if _, errs, code := runCLI(t, ctx, "webhooks", "--url", "http://"+b.addr, "--token", aliceLaptop); code != 2 || !strings.Contains(errs, "FORBIDDEN") {
		t.Errorf("askslack webhooks with an agent's token: exit %d: %s", code, errs)
	}
	if r := has(trail(t, ctx, b), "", "refused"); r == nil || !strings.Contains(r.Detail, "/v1/webhooks") {
		t.Errorf("the refused call is not in the audit trail")
	}
	if n := len(rcv.verified()); n != 2 {
		t.Errorf("%d signed deliveries at the end; refused calls and posts send nothing", n)
	}
	if strings.Contains(b.logs.String(), hookSecret) {
		t.Error("the bot logged the webhook secret")
	}
}

// Two replicas on one Redis: one of them holds the endpoint's lease, and
// each event reaches the receiver once, whichever replica made it.
func TestE2EWebhooksOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	rcv := newHookReceiver(t)
	d := auditDeployment(t, true)
	d.env["ASKSLACK_WEBHOOKS"] = "audit=" + rcv.srv.URL + "/hook"
	d.env["ASKSLACK_WEBHOOK_SECRET"] = hookSecret
	d.env["ASKSLACK_WEBHOOK_EVENTS"] = "ask.created,ask.answered"
	b1 := d.start(viaHTTP)
	b2 := d.start(viaHTTP) // the clicks go to b2
	for i, b := range []*bot{b1, b2} {
		id := "hook-r" + strconv.Itoa(i)
		askAsyncAs(t, b, aliceLaptop, oneQuestion(id, "Yes", "No"))
		m := waitPosted(t, ctx, d.fake, id)
		if _, err := d.fake.ClickButton(ctx, bob, m.Channel, m.TS, "No", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		rcv.waitFor(t, ctx, "ask.answered", id)
	}
	time.Sleep(2 * time.Second) // both replicas poll twice more: nothing is sent again
	ids := map[string]int{}
	for _, x := range rcv.verified() {
		ids[x.body.Type+" "+x.body.CallID]++
	}
	if len(ids) != 4 {
		t.Errorf("deliveries %v; want ask.created and ask.answered of both asks", ids)
	}
	for k, n := range ids {
		if n != 1 {
			t.Errorf("%s delivered %d times across two replicas; want once", k, n)
		}
	}
}

// standardWebhooks is the reference verifier the deliveries are checked
// with: the Standard Webhooks library of another language, from npm.
const standardWebhooks = "standardwebhooks@1.1.1"

// installStandardWebhooks installs standardWebhooks into a folder of the
// test's and returns it; without node or npm, or offline, the test is
// skipped (failed under CI=true).
func installStandardWebhooks(t *testing.T, ctx context.Context) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			clientrun.Unavailable(t, tool+" not on PATH: the Standard Webhooks reference verifier (npm "+standardWebhooks+") cannot run")
		}
	}
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, standardWebhooks)
	if out, err := cmd.CombinedOutput(); err != nil {
		clientrun.Unavailable(t, fmt.Sprintf("npm install %s failed (offline?): %v\n%s", standardWebhooks, err, out))
	}
	return dir
}

// verifyScript runs the library's own verify on each case with each
// secret ({format: "raw"} takes a plain secret as its bytes) and prints
// one line per pair: "ok <the payload's id>" or "refused <why>".
const verifyScript = `
const { Webhook } = require("standardwebhooks");
const { secrets, cases } = JSON.parse(require("fs").readFileSync(0, "utf8"));
for (const s of secrets) {
  const wh = s.raw ? new Webhook(s.secret, { format: "raw" }) : new Webhook(s.secret);
  for (const c of cases) {
    try {
      console.log("ok " + wh.verify(c.body, c.headers).id);
    } catch (e) {
      console.log("refused " + e.message);
    }
  }
}
`

// ASKSLACK_WEBHOOKS through the real binary, verified by the Standard
// Webhooks library for Node (new Webhook(secret).verify(body, headers)):
// it accepts every delivery, the first attempt and its retry (the same
// webhook-id and body, signed when sent), and refuses a tampered body and
// another event's id. With a whsec_ secret, and with a plain one, which the
// library takes in its whsec_ form (the prefix and the base64 of its
// bytes, docs/webhooks.md) or as raw bytes.
func TestE2EWebhooksStandardWebhooksVerifier(t *testing.T) {
	t.Parallel()
	dir := installStandardWebhooks(t, testCtx(t))
	if err := os.WriteFile(filepath.Join(dir, "verify.cjs"), []byte(verifyScript), 0o644); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	whsec := webhook.SecretPrefix + base64.StdEncoding.EncodeToString(key)
	type secret struct {
		Secret string `json:"secret"`
		Raw    bool   `json:"raw,omitempty"`
	}
	for name, c := range map[string]struct {
		env     string
		readers []secret
	}{
		"whsec": {whsec, []secret{{Secret: whsec}}},
		"plain": {hookSecret, []secret{{Secret: webhook.SecretPrefix + base64.StdEncoding.EncodeToString([]byte(hookSecret))}, {Secret: hookSecret, Raw: true}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t) // its own: parallel subtests start when the package's others let them
			rcv := newHookReceiverFor(t, c.env)
			rcv.mu.Lock()
			rcv.fail = 1 // the first attempt: retried with the same id
			rcv.mu.Unlock()
			d := auditDeployment(t, false)
			d.env["ASKSLACK_WEBHOOKS"] = "audit=" + rcv.srv.URL + "/hook"
			d.env["ASKSLACK_WEBHOOK_SECRET"] = c.env
			d.env["ASKSLACK_WEBHOOK_EVENTS"] = "ask.created"
			b := d.start(viaHTTP)
			askAsyncAs(t, b, aliceLaptop, oneQuestion("std-1", "Yes", "No"))
			rcv.waitFor(t, ctx, "ask.created", "std-1")
			got := rcv.verified()
			for ; len(got) < 2; got = rcv.verified() {
				if ctx.Err() != nil {
					t.Fatalf("%d signed deliveries; want the failed attempt and its retry", len(got))
				}
				time.Sleep(50 * time.Millisecond) // polling a receiver another process posts to
			}
			first, retry := got[0], got[1]
			if id := first.header.Get(webhook.HeaderStdID); id != first.body.ID || retry.header.Get(webhook.HeaderStdID) != id || string(retry.raw) != string(first.raw) {
				t.Fatalf("the retry: id %q, body %s; the first attempt: id %q, body %s; want the same id and body", retry.header.Get(webhook.HeaderStdID), retry.raw, id, first.raw)
			}
			type kase struct {
				Body    string            `json:"body"`
				Headers map[string]string `json:"headers"`
			}
			headers := func(h http.Header) map[string]string {
				out := map[string]string{}
				for k := range h {
					out[k] = h.Get(k)
				}
				return out
			}
			otherID := headers(first.header)
			otherID[webhook.HeaderStdID] = "wh_another"
			cases := []kase{
				{string(first.raw), headers(first.header)},
				{string(retry.raw), headers(retry.header)},
				{strings.Replace(string(first.raw), "std-1", "std-2", 1), headers(first.header)}, // tampered
				{string(first.raw), otherID},
			}
			in, _ := json.Marshal(map[string]any{"secrets": c.readers, "cases": cases})
			cmd := exec.CommandContext(ctx, "node", "verify.cjs")
			cmd.Dir, cmd.Stdin = dir, bytes.NewReader(in)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node verify.cjs: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(c.readers)*len(cases) {
				t.Fatalf("the verifier printed %q", out)
			}
			for i, l := range lines {
				want := "ok " + first.body.ID
				if i%len(cases) >= 2 {
					want = "refused No matching signature found"
				}
				if l != want {
					t.Errorf("secret %d, case %d: the Standard Webhooks verifier says %q; want %q", i/len(cases), i%len(cases), l, want)
				}
			}
		})
	}
}
