package main

import (
	"bytes"
	"os"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// manifestScopes are the bot scopes an install from deploy's Socket Mode
// manifest has (deploy_test keeps both manifests' scopes the same).
func manifestScopes(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.OAuth.Scopes.Bot
}

// A question asked in a group DM whose chat.postMessage answer was lost
// is found again there (conversations.history needs mpim:history), not
// posted a second time, with an install that has exactly the manifest's
// scopes.
func TestE2EGroupDMQuestionFoundAfterALostPost(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.fake.SetScopes(manifestScopes(t)...)
	mpim := d.fake.OpenGroupDM(alice.ID, bob.ID)
	b := d.start(viaHTTP)
	d.fake.DropNext("chat.postMessage", 1)
	id := "mpim-" + safe(t)
	req := oneQuestion(id, "Yes", "No")
	req.Channel = mpim
	a := b.askAsync(ctx, req)
	b.waitLog(ctx, `"question posted","callId":"`+id+`"`)
	var posted []slackfake.Message
	for _, m := range d.fake.Messages() {
		if bytes.Contains(m.Blocks, []byte("ask/"+id+"/")) {
			posted = append(posted, m)
		}
	}
	if len(posted) != 1 || posted[0].Channel != mpim {
		for _, c := range d.fake.Calls("conversations.history") {
			t.Logf("conversations.history → %s", c.Response)
		}
		t.Fatalf("the question is in %d messages; want one in the group DM %s", len(posted), mpim)
	}
	click(t, ctx, d.fake, posted[0], "Yes")
	if r, err := a.wait(t); err != nil || r.Answers[0].Selected[0] != "Yes" {
		t.Fatalf("answer: %+v %v", r, err)
	}
}

// An ask naming a channel the bot was never invited to is refused with
// Slack's reason (the README says to invite it, or to add
// chat:write.public for public channels).
func TestE2EAskInAChannelWithoutTheBot(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.fake.SetScopes(manifestScopes(t)...)
	d.fake.RemoveBot("C0ELSEWHERE")
	b := d.start(viaHTTP)
	req := oneQuestion("elsewhere-"+safe(t), "Yes", "No")
	req.Channel = "C0ELSEWHERE"
	_, err := b.client().Ask(ctx, req)
	if waterfall.CodeOf(err) != waterfall.CodeNoProvider {
		t.Fatalf("ask in a channel without the bot: %v; want NO_PROVIDER", err)
	}
	b.waitLog(ctx, "not_in_channel")
	if len(d.fake.Messages()) != 0 {
		t.Fatalf("posted somewhere: %+v", d.fake.Messages())
	}
}
