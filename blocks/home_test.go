package blocks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/blockcheck"
	"github.com/askslack/askslack/waterfall"
)

func items(n int, req func(i int) *waterfall.Request) []Item {
	var out []Item
	for i := range n {
		r := req(i)
		r.CallID = fmt.Sprintf("%s-%d", r.CallID, i)
		v := view(r)
		v.Deadline = testNow.Add(time.Hour)
		out = append(out, Item{View: v, Asked: testNow.Add(-time.Minute), Link: "https://x.slack.com/archives/C1/p1700000000000100"})
	}
	return out
}

// Every Home tab and listing, from none to many worst-case questions,
// passes Slack's limits, and the Home tab keeps each question's controls.
func TestHomeAndListLimits(t *testing.T) {
	small := func(int) *waterfall.Request {
		return request(waterfall.Question{ID: "q", Question: "Deploy <!channel> now?", Options: opts("Yes", "No")})
	}
	huge := func(int) *waterfall.Request { return worst(4, 30, "é&<", false, false) }
	for _, tc := range []struct {
		name  string
		items []Item
	}{{"none", nil}, {"one", items(1, small)}, {"many", items(25, small)}, {"worst", items(12, huge)}} {
		home := Home(tc.items, false)
		raw, _ := json.Marshal(home)
		if err := blockcheck.Home(raw); err != nil {
			t.Fatalf("%s: home: %v", tc.name, err)
		}
		// A notice about a click fits every tab, at its top.
		noticed, _ := json.Marshal(WithHomeNotice(home, strings.Repeat("Already answered by someone. ", 200)))
		if err := blockcheck.Home(noticed); err != nil {
			t.Fatalf("%s: home with a notice: %v", tc.name, err)
		}
		if i := strings.Index(string(noticed), `"home/notice"`); i < 0 || strings.Contains(string(noticed[:i]), `"ask/`) {
			t.Fatalf("%s: the notice is not at the top", tc.name)
		}
		if strings.Contains(string(raw), "<!channel>") {
			t.Fatalf("%s: agent text not escaped", tc.name)
		}
		if len(tc.items) > 0 && !strings.Contains(string(raw), "ask/"+tc.items[0].View.CallID+"/") {
			t.Fatalf("%s: the newest question's controls are missing", tc.name)
		}
		if len(tc.items) == 0 && !strings.Contains(string(raw), "How to connect an agent") {
			t.Fatalf("%s: no connect help", tc.name)
		}
		checkMessage(t, tc.name+" list", List(tc.items, false))
		for _, it := range tc.items {
			checkMessage(t, tc.name+" status", Status(it))
		}
	}
}
