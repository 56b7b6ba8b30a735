package blocks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

func TestNotice(t *testing.T) {
	a := waterfall.Agent{ID: "claude-code", SourceTaskID: "p · abc12345"}
	m := Notice(a, "Permission needed: Claude needs your <permission> to use Bash")
	checkMessage(t, "notice", m)
	b, _ := json.Marshal(m.Blocks)
	raw := string(b)
	for _, want := range []string{"claude-code", "p · abc12345", `\u0026lt;permission\u0026gt;`, `"notice/who"`} {
		if !strings.Contains(raw, want) {
			t.Fatalf("notice lacks %q: %s", want, raw)
		}
	}
	if strings.Contains(raw, `"actions"`) || strings.Contains(raw, `"button"`) {
		t.Fatalf("a notice has controls: %s", raw)
	}
	checkMessage(t, "long notice", Notice(waterfall.Agent{ID: strings.Repeat("a", 500)}, strings.Repeat("x<", 20000)))
}
