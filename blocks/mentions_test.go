package blocks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/blockcheck"
	"github.com/askslack/askslack/waterfall"
)

// The mention line leads a question's text and its blocks (desktop
// notifications read the blocks first), inside the attribution line so the
// block count stays; the agent's text stays escaped; a message at Slack's
// caps stays within them.
func TestWithMentions(t *testing.T) {
	const pings = "<@U0ALICE> <!subteam^S0ONCALL> "
	small := Question(view(request(waterfall.Question{ID: "q", Question: "Ping <!channel>?", Options: opts("Yes", "No")})))
	m := WithMentions(small, pings)
	if !strings.HasPrefix(m.Text, strings.TrimSpace(pings)+" ") || !strings.HasSuffix(m.Text, small.Text) {
		t.Fatalf("text %q", m.Text)
	}
	c, ok := m.Blocks[0].(*slack.ContextBlock)
	if !ok || len(m.Blocks) != len(small.Blocks) {
		t.Fatalf("the mention line should join the attribution line: %d blocks, first %T", len(m.Blocks), m.Blocks[0])
	}
	if tb, ok := c.ContextElements.Elements[0].(*slack.TextBlockObject); !ok || tb.Text != strings.TrimSpace(pings) {
		t.Fatalf("first element %+v", c.ContextElements.Elements[0])
	}
	if orig := small.Blocks[0].(*slack.ContextBlock); len(orig.ContextElements.Elements) != 1 {
		t.Fatal("the rendered message was changed in place")
	}
	raw, _ := json.Marshal(m.Blocks)
	if strings.Contains(string(raw), "<!channel>") {
		t.Fatal("the agent's text is no longer escaped")
	}
	checkMessage(t, "small", m)
	if same := WithMentions(small, "  "); same.Text != small.Text || len(same.Blocks) != len(small.Blocks) {
		t.Fatal("no mentions changed the message")
	}
	for _, req := range []*waterfall.Request{worst(1, 30, "é&<", false, true), worst(4, 30, "é&<", true, false), worst(12, 30, "é&<", false, false)} {
		// Slack's caps; the fallback text's own length is the renderer's.
		m := WithMentions(Question(view(req)), strings.Repeat("<@U0ALICE> ", 6))
		b, _ := json.Marshal(m.Blocks)
		if err := blockcheck.Message(m.Text, b); err != nil {
			t.Fatalf("worst case with mentions: %v", err)
		}
	}
}
