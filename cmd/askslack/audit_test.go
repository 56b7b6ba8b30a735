package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/slackfake"
)

// auditDeployment is a deployment with an agent (alice's laptop) and an
// operator (ops).
func auditDeployment(t *testing.T, needRedis bool) *deployment {
	t.Helper()
	d := newDeployment(t, needRedis)
	d.env["ASKSLACK_API_TOKENS"] = "alice-laptop:" + aliceLaptop
	d.env["ASKSLACK_ADMIN_TOKENS"] = "ops:" + opsToken
	return d
}

// runCLI runs the askslack binary with args and returns its stdout, stderr
// and exit status.
func runCLI(t *testing.T, ctx context.Context, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, binPath, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("askslack %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), 0
}

// trail is `askslack audit` through b, as an operator, parsed.
func trail(t *testing.T, ctx context.Context, b *bot, args ...string) []asktype.AuditEntry {
	t.Helper()
	out, errs, code := runCLI(t, ctx, append([]string{"audit", "--url", "http://" + b.addr, "--token", opsToken}, args...)...)
	if code != 0 {
		t.Fatalf("askslack audit: exit %d: %s", code, errs)
	}
	var es []asktype.AuditEntry
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e asktype.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("a line of askslack audit: %v: %s", err, sc.Text())
		}
		es = append(es, e)
	}
	return es
}

// verify is `askslack audit verify` through b: its output and exit status.
func verify(t *testing.T, ctx context.Context, b *bot) (string, int) {
	t.Helper()
	out, errs, code := runCLI(t, ctx, "audit", "verify", "--url", "http://"+b.addr, "--token", opsToken)
	return out + errs, code
}

// has reports whether es holds an entry of callID's event.
func has(es []asktype.AuditEntry, callID, event string) *asktype.AuditEntry {
	for i := range es {
		if es[i].CallID == callID && es[i].Event == event {
			return &es[i]
		}
	}
	return nil
}

// Issue 21 item 5: every step of an ask is in the audit trail, an agent
// cannot read it, `askslack audit` prints it and `askslack audit verify`
// passes on an untouched chain. Item 6: the answer is timed, and
// /askslack stats summarises it.
func TestE2EAuditTrail(t *testing.T) {
	t.Parallel()
	d := auditDeployment(t, false)
	b := d.start(viaHTTP)
	ctx := testCtx(t)

	askAsyncAs(t, b, aliceLaptop, planQuestion("audit-1"))
	m := waitPosted(t, ctx, d.fake, "audit-1")
	if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitMessage(t, ctx, d.fake, m.Channel, m.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })
	waitMetric(t, ctx, b, `askslack_time_to_answer_seconds_count{kind="plan"} 1`)

	code, body := api(t, b, "GET", "/v1/audit", aliceLaptop, "")
	wantCode(t, "an agent reading the audit trail", code, body, 403, "FORBIDDEN")

	es := trail(t, ctx, b)
	for _, ev := range []string{asktype.EventAsked, asktype.EventPosted, asktype.EventAnswered} {
		if has(es, "audit-1", ev) == nil {
			t.Errorf("no %s entry for audit-1 in %+v", ev, es)
		}
	}
	if a := has(es, "audit-1", asktype.EventAnswered); a != nil && (a.Respondent == nil || a.Respondent.UserID != alice.ID || a.Caller != "alice-laptop" ||
		a.Agent == nil || a.Agent.ID != "agent-1") {
		t.Errorf("answered entry %+v: want alice, for alice-laptop's agent-1", a)
	}
	if r := has(es, "", asktype.EventRefused); r == nil || r.Caller != "alice-laptop" || !strings.Contains(r.Detail, "GET /v1/audit") {
		t.Errorf("the agent's refused read is not in the trail: %+v", es)
	}
	if got := trail(t, ctx, b, "--call-id", "audit-1", "--since", "1h"); len(got) != 3 {
		t.Errorf("--call-id audit-1 --since 1h: %d entries", len(got))
	}
	csvOut, _, code := runCLI(t, ctx, "audit", "--format", "csv", "--url", "http://"+b.addr, "--token", opsToken)
	if code != 0 || !strings.HasPrefix(csvOut, "seq,at,callId,event,caller,agentId,sessionId,userId,userName,surface,detail,prev,hash\n1,") {
		t.Errorf("--format csv: exit %d:\n%s", code, csvOut)
	}
	if out, code := verify(t, ctx, b); code != 0 || !strings.Contains(out, "audit trail ok: ") {
		t.Fatalf("verify an untouched chain: exit %d: %s", code, out)
	}
	if _, errs, code := runCLI(t, ctx, "audit", "verify", "--url", "http://"+b.addr, "--token", aliceLaptop); code != 2 || !strings.Contains(errs, "FORBIDDEN") {
		t.Errorf("verify with an agent's token: exit %d: %s", code, errs)
	}

	slash(t, ctx, d, viaHTTP, alice, "stats")
	if reply := waitEphemeralBlocks(t, ctx, d.fake, alice.ID, "1 asked: 1 answered in the window, 0 late, 0 never"); !strings.Contains(reply, "<@"+alice.ID+">") {
		t.Errorf("/askslack stats does not name who answered: %s", reply)
	}
}

// Two replicas on one Redis prefix write one chain; `askslack audit
// verify` passes on it, and fails, naming the link, after an entry is
// edited or deleted in Redis.
func TestE2EAuditVerifyCatchesTampering(t *testing.T) {
	t.Parallel()
	d := auditDeployment(t, true)
	a := d.start(viaHTTP)
	b := d.start(viaHTTP) // the fake sends clicks to b
	ctx := testCtx(t)

	askAsyncAs(t, a, aliceLaptop, oneQuestion("on-a", "Yes", "No"))
	askAsyncAs(t, b, aliceLaptop, oneQuestion("on-b", "Yes", "No"))
	for _, id := range []string{"on-a", "on-b"} {
		m := waitPosted(t, ctx, d.fake, id)
		if _, err := d.fake.ClickButton(ctx, bob, m.Channel, m.TS, "Yes", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		waitMessage(t, ctx, d.fake, m.Channel, m.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })
	}
	fromA, fromB := trail(t, ctx, a), trail(t, ctx, b)
	if len(fromA) != 6 || len(fromB) != 6 || fromA[5].Hash != fromB[5].Hash {
		t.Fatalf("replica a reads %d entries, b %d; want one chain of 6 (asked, posted, answered twice)", len(fromA), len(fromB))
	}
	for _, id := range []string{"on-a", "on-b"} {
		if has(fromA, id, asktype.EventAnswered) == nil {
			t.Errorf("%s: not answered in the chain", id)
		}
	}
	waitMetric(t, ctx, b, `askslack_time_to_answer_seconds_count{kind="question"} 2`)
	waitMetric(t, ctx, a, `askslack_time_to_answer_seconds_count{kind="question"} 0`)
	if out, code := verify(t, ctx, a); code != 0 || !strings.Contains(out, "6 entries, seq 1 to 6") {
		t.Fatalf("verify an untouched chain: exit %d: %s", code, out)
	}

	rdb := redisFor(t, d)
	key := d.prefix + ":{audit}:chain"
	orig, err := rdb.XRange(ctx, key, "-", "+").Result()
	if err != nil || len(orig) != 6 {
		t.Fatalf("the chain in Redis: %d entries, %v", len(orig), err)
	}
	// rewrite replaces the stream with msgs, in one transaction.
	rewrite := func(msgs []redis.XMessage) {
		t.Helper()
		if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, key)
			for _, m := range msgs {
				p.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: m.ID, Values: m.Values})
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	edited := make([]redis.XMessage, len(orig))
	copy(edited, orig)
	var e asktype.AuditEntry
	_ = json.Unmarshal([]byte(orig[2].Values["e"].(string)), &e)
	e.Respondent = &asktype.AuditRespondent{UserID: alice.ID, UserName: "alice", Surface: "slack"} // who approved, rewritten
	raw, _ := json.Marshal(&e)
	edited[2] = redis.XMessage{ID: orig[2].ID, Values: map[string]any{"e": string(raw)}}
	rewrite(edited)
	if out, code := verify(t, ctx, a); code != 1 || !strings.Contains(out, "BROKEN at seq 3: hash mismatch: the entry was edited") {
		t.Fatalf("verify after an edit: exit %d: %s", code, out)
	}
	rewrite(orig)
	if out, code := verify(t, ctx, b); code != 0 {
		t.Fatalf("verify after restoring: exit %d: %s", code, out)
	}
	if err := rdb.XDel(ctx, key, orig[3].ID).Err(); err != nil {
		t.Fatal(err)
	}
	if out, code := verify(t, ctx, b); code != 1 || !strings.Contains(out, "BROKEN at seq 5: seq gap after 3: seq 4 deleted") {
		t.Fatalf("verify after a deletion: exit %d: %s", code, out)
	}
}
