package main

import (
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
)

// updatesOf counts the chat.update calls that targeted the message at ts.
func updatesOf(f *slackfake.Server, ts string) int {
	n := 0
	for _, c := range f.Calls("chat.update") {
		if c.Params["ts"] == ts {
			n++
		}
	}
	return n
}

// okReplies counts the response_url posts that replaced a message.
func okReplies(f *slackfake.Server) int {
	n := 0
	for _, c := range f.Calls("response_url") {
		if c.OK() && strings.Contains(string(c.Body), `"replace_original":true`) {
			n++
		}
	}
	return n
}

// The change a click makes reaches its message through the click's
// response_url (replace_original), not chat.update: Slack rates chat.update
// Tier 3 for the whole workspace, a response_url only against itself. When
// the response_url fails, the message is still brought up to date, by
// chat.update.
func TestE2EClickUpdatesThroughResponseURL(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	b := d.start(viaHTTP)

	msg := askAndTap(t, ctx, d, b, "reply-url")
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	if n := okReplies(d.fake); n != 1 {
		t.Fatalf("%d response_url replacements; want the click's one", n)
	}
	if n := updatesOf(d.fake, msg.TS); n != 0 {
		t.Fatalf("%d chat.update calls for a message its click's response_url updated", n)
	}

	// The response_url fails: chat.update takes over (the mirror's retry).
	d.fake.FailNext("response_url", 1, "internal_error", 0)
	msg = askAndTap(t, ctx, d, b, "reply-url-fails")
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked by chat.update", func(m slackfake.Message) bool { return !hasControls(m) })
	if n := updatesOf(d.fake, msg.TS); n != 1 {
		t.Fatalf("%d chat.update calls after the response_url failed; want 1", n)
	}
}

// Each vote of a quorum ask comes with its own response_url: the vote line
// and the settled message both go through them.
func TestE2EQuorumVotesUpdateThroughResponseURLs(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d := newDeployment(t, false)
	d.env["ASKSLACK_QUORUM"] = "plan=2"
	b := d.start(viaHTTP)
	req := planRequest("reply-url-quorum")
	a := b.askAsync(ctx, req)
	msg := waitPosted(t, ctx, d.fake, req.CallID)
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "showing the first vote", func(m slackfake.Message) bool {
		return hasControls(m) && strings.Contains(string(m.Blocks), "1 of 2")
	})
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "Approve", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.wait(t); err != nil {
		t.Fatal(err)
	}
	waitMessage(t, ctx, d.fake, msg.Channel, msg.TS, "locked", func(m slackfake.Message) bool { return !hasControls(m) })
	if n, u := okReplies(d.fake), updatesOf(d.fake, msg.TS); n != 2 || u != 0 {
		t.Fatalf("%d response_url replacements and %d chat.updates; want 2 and 0", n, u)
	}
}
