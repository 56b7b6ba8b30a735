package blocks

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// textMatchesJSON checks that blockText, which walks the slack-go values,
// agrees with blockTextJSON, its definition, on every message and modal a
// view renders to in every phase.
func textMatchesJSON(t *testing.T, v waterfall.View) {
	t.Helper()
	settled := &waterfall.Settlement{Respondent: waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack}}
	for p := waterfall.PhaseOpen; p <= waterfall.PhaseExpired; p++ {
		pv := v
		pv.Phase = p
		if pv.Settlement == nil {
			pv.Settlement = settled
		}
		m := Render(pv)
		sets := map[string][]slack.Block{"message": m.Blocks}
		if pv.Request != nil && p == waterfall.PhaseOpen {
			for name, mv := range Modals(pv, m, testMeta) {
				sets[name] = mv.Blocks.BlockSet
			}
		}
		for name, bs := range sets {
			if got, want := blockText(bs), blockTextJSON(bs); got != want {
				t.Errorf("%s %s: blockText %d, JSON round trip %d", p, name, got, want)
			}
		}
	}
}

func TestBlockTextMatchesJSON(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) { textMatchesJSON(t, c.v) })
	}
	for name, v := range benchViews() {
		t.Run("bench/"+name, func(t *testing.T) { textMatchesJSON(t, v) })
	}
}

// TestBlockTextUnknown falls back to the JSON count for blocks it does not
// walk, and counts typed nils as JSON null (nothing).
func TestBlockTextUnknown(t *testing.T) {
	img := slack.NewImageBlock("https://example.com/a.png", "alt", "img", slack.NewTextBlockObject(slack.PlainTextType, "title", false, false))
	var nilButton *slack.ButtonBlockElement
	bs := []slack.Block{
		img,
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "héllo", false, false), nil, nil),
		slack.NewActionBlock("a", nilButton),
	}
	if got, want := blockText(bs), blockTextJSON(bs); got != want || want != len("title")+len("hello") {
		t.Errorf("blockText %d, JSON %d, want %d", got, want, len("title")+len("hello"))
	}
}

func FuzzBlockText(f *testing.F) {
	for _, s := range seeds {
		f.Add(s.sp.bytes(), s.text)
	}
	f.Fuzz(func(t *testing.T, b []byte, text string) {
		req := fuzzRequest(b, text)
		if err := waterfall.Validate(req); err != nil {
			t.Skip()
		}
		textMatchesJSON(t, waterfall.View{CallID: req.CallID, Request: req, Deadline: testDeadline, Now: testNow})
	})
}
