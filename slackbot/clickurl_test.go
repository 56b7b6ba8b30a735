package slackbot

import (
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
)

func TestClickURLsOncePerURLAndExpire(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	c := NewClickURLs(nil, func() time.Time { return now })
	c.offer("C1", "1.1", "https://hooks.slack.com/actions/a")
	if !c.has("C1", "1.1") || c.has("C1", "1.2") || c.has("C2", "1.1") {
		t.Fatal("a URL is kept for its message only")
	}
	if u, ok := c.take("C1", "1.1"); !ok || u != "https://hooks.slack.com/actions/a" {
		t.Fatalf("take: %q %v", u, ok)
	}
	if _, ok := c.take("C1", "1.1"); ok {
		t.Fatal("a URL was used twice")
	}
	c.offer("C1", "1.1", "https://hooks.slack.com/actions/b")
	now = now.Add(clickURLTTL)
	if c.has("C1", "1.1") {
		t.Fatal("an expired URL is still offered")
	}
	if _, ok := c.take("C1", "1.1"); ok {
		t.Fatal("an expired URL was taken")
	}
	c.offer("", "1.1", "u")
	c.offer("C1", "1.1", "")
	var none *ClickURLs
	none.offer("C1", "1.1", "u")
	if len(c.m) != 0 || none.has("C1", "1.1") {
		t.Fatal("an empty offer, or a nil book, keeps something")
	}
}

func TestClickURLsBounded(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	c := NewClickURLs(nil, func() time.Time { return now })
	for i := range maxClickURLs {
		c.offer("C1", slackTS(now.Add(time.Duration(i)*time.Microsecond)), "u")
	}
	c.offer("C1", "new", "u")
	if c.has("C1", "new") {
		t.Fatal("the book grew past its bound")
	}
	now = now.Add(clickURLTTL) // all expired: the next offer sweeps them
	c.offer("C1", "new", "u")
	if !c.has("C1", "new") || len(c.m) != 1 {
		t.Fatalf("expired entries kept: %d", len(c.m))
	}
}

// Only a click on the question's message itself offers its URL: not one
// on the Home tab (Slack sends none) or one whose container names another
// message; and an ask with copies is updated by chat.update, all together.
func TestClickURLOfferedForTheMessageOnly(t *testing.T) {
	t.Parallel()
	book := NewClickURLs(nil, nil)
	b := &Bot{clickURLs: book}
	click := func(container, ch, ts string) *click {
		ic := &slack.InteractionCallback{ResponseURL: "https://hooks.slack.com/actions/x"}
		ic.Container.Type, ic.Container.ChannelID, ic.Container.MessageTs = container, ch, ts
		return &click{ic: ic, channel: "C1", ts: "1.1"}
	}
	b.offerClickURL(click("view", "", ""))
	b.offerClickURL(click("message", "C1", "9.9"))
	if book.has("C1", "1.1") {
		t.Fatal("a URL kept from a click elsewhere")
	}
	b.offerClickURL(click("message", "C1", "1.1"))
	s := &Surface{clickURLs: book}
	ref := asktype.MessageRef{Conversation: "C1", ID: "1.1"}
	if !s.Unmetered(ref) {
		t.Fatal("the click's URL is not used")
	}
	ref.Copies = []asktype.MessageRef{{Conversation: "D1", ID: "2.2"}}
	if s.Unmetered(ref) {
		t.Fatal("an ask with copies would update only the clicked one")
	}
}
