package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
)

// With ASKSLACK_RULE_ADMINS, only admins (users or group members) grant
// and revoke; answering stays with whoever may answer.
func TestE2ERuleAdmins(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	d.env["ASKSLACK_API_TOKENS"] = "ci:" + ciToken
	d.env["ASKSLACK_ADMIN_TOKENS"] = "ops:" + opsToken
	d.env["ASKSLACK_ALLOWED_USERS"] = alice.ID + "," + bob.ID
	d.env["ASKSLACK_RULE_ADMINS"] = "S0ONCALL" // bob's group
	b := d.start(viaHTTP)
	ctx := testCtx(t)

	askAsyncAs(t, b, ciToken, permissionAsk("adm-1", "make lint"))
	m := waitPosted(t, ctx, d.fake, "adm-1")
	// alice may answer, but is no rule admin: no form, and nothing answered.
	if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Allow rule…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "Only rule admins")
	if len(d.fake.OpenViews(alice.ID)) != 0 {
		t.Fatal("alice got the rule form")
	}
	if _, body := api(t, b, "GET", "/v1/asks/adm-1", ciToken, ""); !strings.Contains(body, `"state":"open"`) {
		t.Fatalf("a refused grant changed the ask: %s", body)
	}
	// bob, in S0ONCALL, grants; the form says he grants as an admin.
	if _, err := d.fake.ClickButton(ctx, bob, m.Channel, m.TS, "Allow rule…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	v := waitView(t, ctx, d.fake, bob.ID, blocks.CallbackAllowRule)
	if strings.Contains(string(v.JSON), "only asks you could answer") {
		t.Fatalf("an admin's form says the non-admin limit: %s", v.JSON)
	}
	if _, err := d.fake.SubmitView(ctx, bob, v.ID, nil, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	code, body := api(t, b, "POST", "/v1/asks", ciToken, mustJSON(permissionAsk("adm-2", "make lint --fix")))
	if code != 200 || !strings.Contains(body, `"surface":"rule"`) || !strings.Contains(body, "rule 1 by bob") {
		t.Fatalf("adm-2: %d %s", code, body)
	}
	// alice may not revoke it from her Home tab; bob may.
	if _, err := d.fake.SendEvent(ctx, d.fake.HomeOpened(alice), "", delivery(viaHTTP)); err != nil {
		t.Fatal(err)
	}
	home := waitHome(t, ctx, d.fake, alice.ID, "listed the rule", func(v string) bool { return strings.Contains(v, "Bash(make lint *)") })
	if strings.Contains(home, "Revoke") {
		t.Fatalf("alice's Home offers Revoke: %s", home)
	}
	if _, err := d.fake.SendEvent(ctx, d.fake.HomeOpened(bob), "", delivery(viaHTTP)); err != nil {
		t.Fatal(err)
	}
	waitHome(t, ctx, d.fake, bob.ID, "offered Revoke", func(v string) bool { return strings.Contains(v, "Revoke") })
	if _, err := d.fake.ClickHome(ctx, bob, blocks.RevokeBlockID(1), "Revoke", delivery(viaHTTP)); err != nil {
		t.Fatal(err)
	}
	waitHome(t, ctx, d.fake, bob.ID, "said it is revoked", func(v string) bool { return strings.Contains(v, "Rule 1 is revoked") })
	askAsyncAs(t, b, ciToken, permissionAsk("adm-3", "make lint"))
	waitPosted(t, ctx, d.fake, "adm-3")
}

func TestE2EBadRuleConfigExits(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	for _, c := range []struct{ variable, value, want string }{
		{"ASKSLACK_RULE_ADMINS", "alice", "not a Slack user id"},
		{"ASKSLACK_RULE_NOTICES", "loud", `must be "thread"`},
	} {
		t.Run(c.variable, func(t *testing.T) {
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "SLACK_BOT_TOKEN=xoxb-test",
				"SLACK_API_URL=" + strings.TrimSuffix(d.fake.APIURL(), "/"), "SLACK_SIGNING_SECRET=" + testSecret,
				"ASKSLACK_ADDR=" + freeAddr(t), "ASKSLACK_CHANNEL=" + testChannel, c.variable + "=" + c.value}
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(cctx, binPath)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), c.variable) || !strings.Contains(string(out), c.want) {
				t.Fatalf("exit %v; want 1 naming %s and saying %q:\n%s", err, c.variable, c.want, out)
			}
		})
	}
}
