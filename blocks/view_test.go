package blocks

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
)

// ViewOf shows a stored ask the way the golden views are built by hand: the
// same message for the same phase and answer.
func TestViewOf(t *testing.T) {
	t.Parallel()
	req := request(waterfall.Question{ID: "q1", Question: "Deploy to production now?", Options: opts("Yes", "No")})
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	s := sampleAnswer(req)
	settled, _ := json.Marshal(s)
	reply, _ := json.Marshal(waterfall.SteeredMessage{ID: waterfall.MessageID(req.CallID), CallID: req.CallID,
		Answers: s.Answers, Respondent: s.Respondent})
	for _, tt := range []struct {
		name string
		mod  func(a *asktype.Ask)
		want waterfall.View
	}{
		{"open", func(a *asktype.Ask) {}, waterfall.View{Phase: waterfall.PhaseOpen, Deadline: testDeadline}},
		{"continued", func(a *asktype.Ask) { a.State = asktype.Continued }, waterfall.View{Phase: waterfall.PhaseContinued, Deadline: testDeadline}},
		{"queued", func(a *asktype.Ask) { a.State, a.Reply, a.ReplyAt = asktype.Continued, reply, testNow },
			waterfall.View{Phase: waterfall.PhaseQueued, Deadline: testDeadline, Settlement: s}},
		{"settled", func(a *asktype.Ask) { a.State, a.Settlement = asktype.Settled, settled },
			waterfall.View{Phase: waterfall.PhaseSettled, Deadline: testDeadline, Settlement: s}},
		{"delivered", func(a *asktype.Ask) {
			a.State, a.Reply, a.ReplyAt, a.Settlement = asktype.Settled, reply, testNow, reply
		},
			waterfall.View{Phase: waterfall.PhaseDelivered, Deadline: testDeadline, Settlement: s}},
		{"withdrawn", func(a *asktype.Ask) { a.State, a.AbortReason = asktype.Aborted, asktype.Withdrawn },
			waterfall.View{Phase: waterfall.PhaseAborted, Deadline: testDeadline}},
		{"abandoned", func(a *asktype.Ask) { a.State, a.AbortReason = asktype.Aborted, asktype.Abandoned },
			waterfall.View{Phase: waterfall.PhaseAborted, Deadline: testDeadline, Abandoned: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &asktype.Ask{CallID: req.CallID, Request: raw, State: asktype.Open, Deadline: testDeadline}
			tt.mod(a)
			r, err := waterfall.Decode(a)
			if err != nil {
				t.Fatal(err)
			}
			got := waterfall.ViewOf(r, testNow)
			want := tt.want
			want.CallID, want.Request, want.Now = req.CallID, req, testNow
			if got.Phase != want.Phase || got.Abandoned != want.Abandoned || !got.Deadline.Equal(want.Deadline) ||
				got.Request != r.Request || got.CallID != want.CallID || !got.Now.Equal(testNow) {
				t.Fatalf("view = %+v, want %+v", got, want)
			}
			if !sameJSON(t, Render(got), Render(want)) {
				t.Fatalf("the view of the record renders otherwise than the view built by hand")
			}
		})
	}
}

// Renderers read the request and never write to it: it is shared by every
// reader of the ask (waterfall.Decode caches it).
func TestRenderLeavesTheRequestAlone(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases() {
		if c.v.Request == nil {
			continue
		}
		before, err := json.Marshal(c.v.Request)
		if err != nil {
			t.Fatal(err)
		}
		v := c.v
		v.Picked = make([]waterfall.Picked, len(v.Request.Questions))
		for qi, q := range v.Request.Questions {
			if len(q.Options) > 0 {
				v.Picked[qi] = waterfall.Picked{Selected: []string{q.Options[len(q.Options)-1].Label}, Text: "typed", Touched: true}
			}
		}
		m := Render(v)
		Modals(v, m, testMeta)
		for qi := range v.Request.Questions {
			DetailModal(v, qi)
			OtherModal(v, qi, testMeta)
			if v.Request.Questions[qi].PlanReview() {
				DeclineModal(v, qi, testMeta)
			}
			for oi := range v.Request.Questions[qi].Options {
				PreviewModal(v, qi, oi)
			}
		}
		if s := v.Settlement; s != nil {
			AnswerText(v.Request, s)
		}
		after, _ := json.Marshal(c.v.Request)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: rendering changed the request:\n%s\n%s", c.name, before, after)
		}
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}
