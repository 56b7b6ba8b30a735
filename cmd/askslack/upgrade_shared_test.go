package main

// State both releases share during an upgrade (issue 44, item 2): quorum
// votes, standing rules and the audit chain, written through one release
// and read or continued through the other.

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// verifyWith is `askslack audit verify` of the binary bin (today's or the
// previous release's) through b: its output and exit status.
func verifyWith(t *testing.T, m *mixed, bin string, b *bot) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(m.ctx, bin, "audit", "verify", "--url", "http://"+b.addr, "--token", opsToken)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatalf("%s audit verify: %v", bin, err)
	}
	return string(out), 0
}

// chained waits until the audit trail read through b holds every
// (callID, event) of want: the chainer appends after the fact.
func chained(t *testing.T, m *mixed, b *bot, want ...[2]string) []asktype.AuditEntry {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		es := trail(t, m.ctx, b)
		missing := ""
		for _, w := range want {
			if has(es, w[0], w[1]) == nil {
				missing = w[0] + " " + w[1]
				break
			}
		}
		if missing == "" {
			return es
		}
		select {
		case <-m.ctx.Done():
			t.Fatalf("the trail through %s lacks %s: %d entries", b.addr, missing, len(es))
		case <-tick.C:
		}
	}
}

// openAs is m.open with the ci caller's token.
func (m *mixed) openAs(b *bot, req *waterfall.Request) {
	m.t.Helper()
	c := agent(b)
	c.Token = ciToken
	m.asks[req.CallID] = askWith(m.ctx, c, req)
	m.msgs[req.CallID] = waitPosted(m.t, m.ctx, m.d.fake, req.CallID)
}

// approve has user approve callID's plan through b.
func (m *mixed) approve(b *bot, user slackfake.User, callID string) {
	m.t.Helper()
	m.via(b)
	msg := m.msgs[callID]
	if resp, err := m.d.fake.ClickButton(m.ctx, user, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil || resp.Status != 200 {
		m.t.Fatalf("%s approves %s via %s: %+v %v", user.Name, callID, b.addr, resp, err)
	}
}

// grantRule has alice grant "Allow rule…" with match on callID through b.
func (m *mixed) grantRule(b *bot, callID, match string) {
	m.t.Helper()
	m.via(b)
	m.press(callID, "Allow rule…")
	v := waitView(m.t, m.ctx, m.d.fake, alice.ID, blocks.CallbackAllowRule)
	m.submit(v, map[string][]string{blocks.RuleMatchBlock: {match}, blocks.RuleUntilBlock: {"1 hour"}})
}

// Quorum votes split across the releases (one vote through each, both
// ways, and a repeated vote through the other counted once), a standing
// rule granted on one release and applied by the other (both ways), and
// the audit chain both releases appended to, verified by either release's
// `askslack audit verify` before and after the old replica is replaced.
func TestUpgradeQuorumRulesAndAuditAcrossVersions(t *testing.T) {
	t.Parallel()
	m := newMixed(t)
	m.d.env["ASKSLACK_QUORUM"] = "plan=2"
	m.d.env["ASKSLACK_API_TOKENS"] = "ci:" + ciToken
	m.d.env["ASKSLACK_ADMIN_TOKENS"] = "ops:" + opsToken
	m.d.env["ASKSLACK_ALLOWED_USERS"] = alice.ID + "," + bob.ID
	old, cur := m.start(true), m.start(false)

	// Quorum: the first vote on one release, a repeat on the other, the
	// deciding vote on the other.
	// Each voter first once, so each ephemeral waited for is a new one.
	for _, c := range []struct {
		id            string
		host, next    *bot
		first, second slackfake.User
	}{{"mixq-old", old, cur, alice, bob}, {"mixq-new", cur, old, bob, alice}} {
		m.openAs(c.host, planRequest(c.id))
		m.approve(c.host, c.first, c.id)
		waitEphemeral(t, m.ctx, m.d.fake, c.first.ID, "1 of 2")
		m.approve(c.next, c.first, c.id)
		waitEphemeral(t, m.ctx, m.d.fake, c.first.ID, "You already approved this")
		stillWaiting(t, m.asks[c.id], c.id+": one person's vote through both releases")
		if st, err := c.next.client().Get(m.ctx, c.id, 0); err == nil && st.State != "open" {
			t.Fatalf("%s after one approver voted twice: %+v", c.id, st)
		}
		m.approve(c.next, c.second, c.id)
		res, err := m.asks[c.id].wait(t)
		if want := c.first.ID + "," + c.second.ID; err != nil || mustJSON(res.Answers) != `[{"id":"plan","selected":["Approve"]}]` || approverIDs(res.Approvers) != want {
			t.Fatalf("%s: the agent got %+v %v; want Approve by %s", c.id, res, err, want)
		}
		m.ended(c.id)
	}

	// Standing rules: granted on one release, applied by the other.
	for _, c := range []struct {
		first, next, match, cmd, cmd2 string
		grant, apply                  *bot
	}{
		{"mixr-old", "mixr-old-2", "npm test *", "npm test -- --watch=false", "npm test", old, cur},
		{"mixr-new", "mixr-new-2", "go test *", "go test ./...", "go test ./store", cur, old},
	} {
		m.openAs(c.grant, permissionAsk(c.first, c.cmd))
		m.grantRule(c.grant, c.first, c.match)
		if res, err := m.asks[c.first].wait(t); err != nil || mustJSON(res.Answers) != `[{"id":"permission","selected":["Allow"]}]` {
			t.Fatalf("%s after the rule form: %+v %v", c.first, res, err)
		}
		m.ended(c.first)
		code, body := askBlocking(t, c.apply, permissionAsk(c.next, c.cmd2))
		if code != 200 || !strings.Contains(body, `"selected":["Allow"]`) || !strings.Contains(body, `"surface":"rule"`) {
			t.Fatalf("%s through %s, under the rule %s granted: %d %s", c.next, c.apply.addr, c.grant.addr, code, body)
		}
		notPosted(t, m.d.fake, c.next)
	}

	// The audit chain both releases wrote, verified by each.
	want := [][2]string{}
	for _, id := range []string{"mixq-old", "mixq-new", "mixr-old", "mixr-new", "mixr-old-2", "mixr-new-2"} {
		want = append(want, [2]string{id, asktype.EventAnswered})
	}
	fromOld, fromCur := chained(t, m, old, want...), chained(t, m, cur, want...)
	if len(fromOld) != len(fromCur) || fromOld[len(fromOld)-1].Hash != fromCur[len(fromCur)-1].Hash {
		t.Fatalf("the releases read two chains: %d entries through the old, %d through today's", len(fromOld), len(fromCur))
	}
	for _, v := range []struct {
		bin string
		b   *bot
	}{{binPath, cur}, {binPath, old}, {m.old, cur}, {m.old, old}} {
		if out, code := verifyWith(t, m, v.bin, v.b); code != 0 || !strings.Contains(out, "entries, seq 1 to ") {
			t.Fatalf("%s audit verify through %s: exit %d: %s", v.bin, v.b.addr, code, out)
		}
	}

	// The switch: the old replica replaced by today's; the chain goes on
	// and still verifies from its first entry.
	old = m.replace(old, false)
	m.openAs(old, oneQuestion("mixa-after", "Yes", "No"))
	m.click(cur, "mixa-after", "Yes")
	m.answered("mixa-after", "Yes")
	chained(t, m, old, append(want, [2]string{"mixa-after", asktype.EventAnswered})...)
	if out, code := verifyWith(t, m, binPath, old); code != 0 || !strings.Contains(out, "entries, seq 1 to ") {
		t.Fatalf("audit verify after the switch: exit %d: %s", code, out)
	}
	m.check()
}
