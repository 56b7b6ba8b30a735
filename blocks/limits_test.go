package blocks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// worst builds the largest request waterfall.Validate accepts with text
// made of unit: every question, header, detail, label, description and
// preview at its maximum length.
func worst(nq, no int, unit string, multi, plan bool) *waterfall.Request {
	memo := map[int]string{}
	fill := func(n int) string {
		if s, ok := memo[n]; ok {
			return s
		}
		s, _ := head(strings.Repeat(unit, n/len([]rune(unit))+1), n)
		memo[n] = s
		return s
	}
	req := &waterfall.Request{CallID: strings.Repeat("c", waterfall.MaxIDLen),
		Agent: waterfall.Agent{ID: fill(5000), Principal: fill(5000), SourceTaskID: fill(5000)}}
	for qi := range nq {
		q := waterfall.Question{ID: fmt.Sprintf("%0128d", qi), Question: fill(waterfall.MaxTextLen), Header: fill(waterfall.MaxTextLen),
			Detail: fill(waterfall.MaxTextLen), MultiSelect: multi && !plan}
		for oi := range no {
			l := fill(waterfall.MaxLabelLen - 5)
			q.Options = append(q.Options, waterfall.Option{Label: fmt.Sprintf("%s%05d", l, oi), Description: fill(waterfall.MaxTextLen), Preview: fill(waterfall.MaxTextLen)})
		}
		if plan && no > 0 {
			q.Intent = &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: q.Options[no-1].Label}
		}
		req.Questions = append(req.Questions, q)
	}
	return req
}

// TestRenderLimits renders the largest and nastiest valid requests in every
// phase and modal and checks them against Slack's limits and the id
// contract. The fuzz target explores around these; these pin the extremes.
func TestRenderLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("large renders")
	}
	// "<&>" grows most when escaped (mrkdwn, then JSON); emoji are four
	// bytes each; the markup characters try to break the formatting.
	units := map[string]string{
		"escapes": "<&>",
		"emoji":   "🎉👍🏽",
		"markup":  "*_~`>|\n",
	}
	type shape struct {
		nq, no      int
		multi, plan bool
	}
	shapes := []shape{
		{1, 0, false, false}, {1, 5, false, false}, {1, 10, false, false}, {1, 100, false, false},
		{1, 10, true, false}, {1, 100, true, false}, {1, 2, false, true}, {1, 100, false, true},
		{4, 25, false, false}, {20, 100, false, false}, {20, 100, true, false}, {20, 3, false, true},
	}
	for name, unit := range units {
		for _, s := range shapes {
			// The largest shapes take seconds each; the race detector
			// (irrelevant to pure functions) makes that minutes.
			if (name != "escapes" && s.nq*s.no > 100) || (raceEnabled && (name != "escapes" || s.nq*s.no > 25)) {
				continue
			}
			t.Run(fmt.Sprintf("%s/%dq%do/multi=%v/plan=%v", name, s.nq, s.no, s.multi, s.plan), func(t *testing.T) {
				t.Parallel()
				req := worst(s.nq, s.no, unit, s.multi, s.plan)
				if err := waterfall.Validate(req); err != nil {
					t.Fatalf("invalid: %v", err)
				}
				checkAll(t, req)
				checkState(t, req)
			})
		}
	}
}
