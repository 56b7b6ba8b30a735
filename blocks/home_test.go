package blocks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

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

// The Home tab's line on the person's own answers sits under its header
// and keeps the worst case within Slack's limits.
func TestHomeStats(t *testing.T) {
	g := waterfall.Group{Key: "U1", Name: "alice", Surface: waterfall.SurfaceSlack,
		Tally: waterfall.Tally{InWindow: 5, Late: 1, P50: 2 * time.Minute, P90: 45 * time.Minute}}
	top := HomeStats(g, true, "7 days")
	huge := func(int) *waterfall.Request { return worst(4, 30, "é&<", false, false) }
	for _, its := range [][]Item{nil, items(12, huge)} {
		home := Home(its, false, top)
		raw, _ := json.Marshal(home)
		if err := blockcheck.Home(raw); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(home.Blocks.BlockSet[1].(*slack.ContextBlock).ContextElements.Elements[0].(*slack.TextBlockObject).Text),
			"6 answered (5 in the window, 1 late) · time to answer p50 2m, p90 45m") {
			t.Fatalf("the stats line: %s", raw)
		}
	}
	raw, _ := json.Marshal(HomeStats(waterfall.Group{}, false, "7 days"))
	if !strings.Contains(string(raw), "none yet") {
		t.Fatalf("no answers: %s", raw)
	}
}

func TestStatsMessage(t *testing.T) {
	s := waterfall.Stats{Tally: waterfall.Tally{Asked: 3, InWindow: 1, Late: 1, Never: 1, P50: time.Minute, P90: 3 * time.Hour, Waited: 26 * time.Hour}}
	for i := range 40 {
		s.Agents = append(s.Agents, waterfall.Group{Key: fmt.Sprint("agent-<!here>-", i), Name: fmt.Sprint("agent-<!here>-", i, strings.Repeat("x", 150)), Tally: s.Tally})
		s.People = append(s.People, waterfall.Group{Key: fmt.Sprint("U", i), Name: "p", Surface: waterfall.SurfaceSlack, Tally: s.Tally})
	}
	s.People = append(s.People, waterfall.Group{Key: "api:console", Name: "console", Surface: waterfall.SurfaceAPI, Tally: s.Tally})
	m := Stats(s, "7d")
	checkMessage(t, "stats", m)
	var raw strings.Builder
	for _, b := range m.Blocks {
		raw.WriteString(b.(*slack.SectionBlock).Text.Text)
	}
	for _, want := range []string{"3 asked: 1 answered in the window, 1 late, 1 never", "p50 1m, p90 3h", "waited 1d 2h", "<@U0>", "… and 26 more"} {
		if !strings.Contains(raw.String(), want) {
			t.Errorf("missing %q: %s", want, raw.String())
		}
	}
	if strings.Contains(raw.String(), "<!here>") {
		t.Error("agent ids are not escaped")
	}
	checkMessage(t, "no stats", Stats(waterfall.Stats{}, "7d"))
	rules := Stats(waterfall.Stats{Tally: waterfall.Tally{Asked: 2, InWindow: 2, ByRule: 2}}, "7d")
	if text := rules.Blocks[0].(*slack.SectionBlock).Text.Text; !strings.Contains(text, "2 answered in the window (2 by standing rules)") || !strings.Contains(text, "no answers by people") {
		t.Errorf("rule answers: %s", text)
	}
	for d, want := range map[time.Duration]string{44 * time.Second: "44s", 90 * time.Second: "2m", 200 * time.Minute: "3h 20m", 2 * time.Hour: "2h", 52 * time.Hour: "2d 4h", 48 * time.Hour: "2d"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %s, want %s", d, got, want)
		}
	}
}
