package blocks

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/blockcheck"
)

func TestAgentBlocks(t *testing.T) {
	at := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	items := []AgentItem{
		{ID: "at_k3x9q2m4p7w8z5a1", Name: "alice-laptop", Kinds: []string{"claude", "codex"}, ConnectAddr: "192.0.2.10", LastAddr: "203.0.113.77",
			Created: at.Add(-48 * time.Hour), LastUsed: at.Add(-time.Minute), Expires: at.Add(88 * 24 * time.Hour)},
		{ID: "at_b2", Name: "ci-box <!channel>", ConnectAddr: "192.0.2.11", Created: at, Expires: at.Add(90 * 24 * time.Hour)},
	}
	home := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: AgentBlocks(items, 5)}}
	none := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: AgentBlocks(nil, 5)}}
	for name, v := range map[string]slack.HomeTabViewRequest{"agents": home, "no-agents": none} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := blockcheck.Home(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	first, second := AgentLine(items[0]), AgentLine(items[1])
	for _, want := range []string{"*alice-laptop* (claude, codex) · last used <!date^", "from `203.0.113.77`", "connected <!date^", "from `192.0.2.10`"} {
		if !strings.Contains(first, want) {
			t.Fatalf("%q lacks %q", first, want)
		}
	}
	if !strings.HasPrefix(second, "*ci-box &lt;!channel&gt;* · never used") || strings.Contains(second, "<!channel>") {
		t.Fatalf("a name is mrkdwn that pings: %q", second)
	}
	many := make([]AgentItem, 8)
	for i := range many {
		many[i] = AgentItem{ID: fmt.Sprint("at_", i), Name: fmt.Sprint("box-", i), Created: at, Expires: at}
	}
	if bs := AgentBlocks(many, 5); len(bs) != 7 {
		t.Fatalf("8 agents, at most 5: %d blocks, want head + 5 + more", len(bs))
	}
	golden(t, filepath.Join("testdata", "golden", "agents"), map[string]any{"agents": home, "no-agents": none})
	if id, ok := ParseAgentBlockID(AgentBlockID("at_b2")); !ok || id != "at_b2" {
		t.Fatal("agent block id does not round-trip")
	}
	for _, bad := range []string{"agent/", "rule/1", "agent/a/b", "ask/c/0"} {
		if _, ok := ParseAgentBlockID(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}
