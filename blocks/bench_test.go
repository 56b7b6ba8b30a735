package blocks

import (
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// benchViews are the shapes Render sees most: one question with two
// buttons (the bench's ask), four questions with descriptions, a long plan.
func benchViews() map[string]waterfall.View {
	one := &waterfall.Request{CallID: "call-1", Agent: waterfall.Agent{ID: "agent"}, Questions: []waterfall.Question{
		{ID: "q1", Header: "Deploy", Question: "Deploy build 1234 to production now?", Options: []waterfall.Option{
			{Label: "Yes", Description: "ship it"}, {Label: "No", Description: "hold"}}},
	}}
	four := &waterfall.Request{CallID: "call-4", Agent: waterfall.Agent{ID: "agent", Principal: "alice@example.com"}}
	for i, h := range []string{"Database", "Cache", "Queue", "Region"} {
		four.Questions = append(four.Questions, waterfall.Question{ID: h, Header: h, Question: "Which " + h + "? " + words(200),
			Options: numbered(4, true), MultiSelect: i%2 == 1})
	}
	plan := &waterfall.Request{CallID: "call-p", Agent: waterfall.Agent{ID: "agent"}, Questions: []waterfall.Question{
		{ID: "plan", Question: "Approve this plan?", Detail: planMarkdown(6000), Options: opts("Approve", "Revise"),
			Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"}},
	}}
	return map[string]waterfall.View{
		"one":  {CallID: one.CallID, Request: one, Phase: waterfall.PhaseOpen},
		"four": {CallID: four.CallID, Request: four, Phase: waterfall.PhaseOpen},
		"plan": {CallID: plan.CallID, Request: plan, Phase: waterfall.PhaseOpen},
		"answered": {CallID: one.CallID, Request: one, Phase: waterfall.PhaseSettled, Settlement: &waterfall.Settlement{
			Answer:     waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q1", Selected: []string{"Yes"}}}},
			Respondent: waterfall.Respondent{UserID: "U0ALICE", UserName: "alice", At: testNow, Surface: waterfall.SurfaceSlack},
		}},
	}
}

// BenchmarkRender renders a question message, as the bot does for every
// post and update:
//
//	go test -run '^$' -bench Render -benchmem ./blocks/
func BenchmarkRender(b *testing.B) {
	for name, v := range benchViews() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Render(v)
			}
		})
	}
}

// BenchmarkBlockText counts the characters of a rendered message, which
// every layout attempt of Render does at least once.
func BenchmarkBlockText(b *testing.B) {
	for name, v := range benchViews() {
		bs := Render(v).Blocks
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				blockText(bs)
			}
		})
	}
}
