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

var (
	testNow      = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	testDeadline = testNow.Add(10 * time.Minute)
	testMeta     = Meta{Channel: "C0123CHAN", TS: "1796119200.000100"}
)

// opts makes options labelled by the given labels.
func opts(labels ...string) []waterfall.Option {
	out := make([]waterfall.Option, len(labels))
	for i, l := range labels {
		out[i] = waterfall.Option{Label: l}
	}
	return out
}

// numbered makes n options "Option 1" … with a description each.
func numbered(n int, desc bool) []waterfall.Option {
	out := make([]waterfall.Option, n)
	for i := range out {
		out[i].Label = fmt.Sprintf("Option %d", i+1)
		if desc {
			out[i].Description = fmt.Sprintf("What choosing option %d means, in a sentence or so.", i+1)
		}
	}
	return out
}

const lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. "

// words is n characters of prose.
func words(n int) string {
	return strings.Repeat(lorem, n/len(lorem)+1)[:n]
}

// planMarkdown is a Markdown plan of about n characters: headings, lists,
// links and code blocks, as an agent writes one.
func planMarkdown(n int) string {
	var b strings.Builder
	for step := 1; b.Len() < n; step++ {
		fmt.Fprintf(&b, "## Step %d: change the **%d**th module\n\n", step, step)
		fmt.Fprintf(&b, "- Edit `pkg/mod%d/file.go` and keep *behaviour* the same\n", step)
		fmt.Fprintf(&b, "- [ ] Run the tests; see [the guide](https://example.com/guide/%d)\n", step)
		fmt.Fprintf(&b, "```go\nfunc Step%d() error { return nil } // <not a tag> & co\n```\n\n", step)
		b.WriteString(words(300) + "\n\n")
	}
	return b.String()[:n]
}

func request(qs ...waterfall.Question) *waterfall.Request {
	return &waterfall.Request{CallID: "toolu_01ABC", Agent: waterfall.Agent{ID: "claude-code", SessionID: "sess-1"}, Questions: qs}
}

func view(req *waterfall.Request) waterfall.View {
	return waterfall.View{CallID: req.CallID, Request: req, Phase: waterfall.PhaseOpen, Now: testNow}
}

// checkMessage fails t unless m is within Slack's limits.
func checkMessage(t testing.TB, name string, m Message) {
	t.Helper()
	b, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatalf("%s: marshal: %v", name, err)
	}
	if err := blockcheck.Message(m.Text, b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if m.Text == "" {
		t.Fatalf("%s: no fallback text", name)
	}
	if len(m.Text) > maxFallbackBytes || runes(m.Text) > maxFallbackText {
		t.Fatalf("%s: fallback text of %d bytes", name, len(m.Text))
	}
}

// checkView fails t unless m is within Slack's limits.
func checkView(t testing.TB, name string, m slack.ModalViewRequest) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("%s: marshal: %v", name, err)
	}
	if err := blockcheck.View(b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// checkIDs decodes every interactive element of blocks and checks that it
// refers to the right ask, a question of it and, for option-bearing
// elements, options whose shown text is that option's label.
func checkIDs(t testing.TB, name string, v waterfall.View, bs []slack.Block) {
	t.Helper()
	req := v.Request
	for _, b := range bs {
		if id := blockIDOf(b); id != "" && len(id) > 255 {
			t.Fatalf("%s: block id of %d characters", name, len(id))
		}
	}
	for _, e := range Elements(bs) {
		if len(e.ActionID) > 255 {
			t.Fatalf("%s: action id of %d characters", name, len(e.ActionID))
		}
		if e.ActionID == InputText || e.ActionID == InputChoices {
			qi := inputQuestion(t, name, v, e)
			for _, val := range e.Values {
				oi, err := ParseOptionValue(val)
				if err != nil || oi >= len(req.Questions[qi].Options) {
					t.Fatalf("%s: input %s: option value %q of question %d: %v", name, e.BlockID, val, qi, err)
				}
			}
			continue
		}
		for _, val := range e.Values {
			a, err := Decode(e.BlockID, e.ActionID, val)
			if err != nil {
				t.Fatalf("%s: Decode(%q, %q, %q): %v", name, e.BlockID, e.ActionID, val, err)
			}
			if a.CallID != v.CallID {
				t.Fatalf("%s: decoded call %q, want %q", name, a.CallID, v.CallID)
			}
			q, err := Resolve(a, req)
			if err != nil {
				t.Fatalf("%s: Resolve(%+v): %v", name, a, err)
			}
			switch a.Kind {
			case KindPick, KindPreview:
				if q == nil || a.Option < 0 {
					t.Fatalf("%s: %s without question or option: %+v", name, a.Kind, a)
				}
				if oi, err := ParseOptionValue(val); err != nil || oi != a.Option {
					t.Fatalf("%s: %s value %q, option %d", name, e.ActionID, val, a.Option)
				}
			case KindSelect, KindCheck:
				if q == nil || a.Question < 0 {
					t.Fatalf("%s: %s without question: %+v", name, a.Kind, a)
				}
				if e.BlockID != blockID(v.CallID, a.Question) {
					t.Fatalf("%s: %s in block %q, want %q", name, a.Kind, e.BlockID, blockID(v.CallID, a.Question))
				}
				oi, err := ParseOptionValue(val)
				if err != nil || oi >= len(q.Options) {
					t.Fatalf("%s: %s option value %q: %v", name, a.Kind, val, err)
				}
			case KindPage:
				if a.Page < 0 {
					t.Fatalf("%s: page %d", name, a.Page)
				}
			}
		}
	}
	checkOptionTexts(t, name, req, bs)
}

// inputQuestion finds the question of a modal input block.
func inputQuestion(t testing.TB, name string, v waterfall.View, e Element) int {
	t.Helper()
	for qi := range v.Request.Questions {
		if (e.ActionID == InputText && e.BlockID == TextBlockID(v.CallID, qi)) ||
			(e.ActionID == InputChoices && e.BlockID == ChoiceBlockID(v.CallID, qi)) {
			return qi
		}
	}
	t.Fatalf("%s: input %s/%s names no question", name, e.BlockID, e.ActionID)
	return 0
}

// checkOptionTexts checks that every option object and pick button shows
// its option's label (cut with "…" at most), so a value never points at
// another option than the one a person read.
func checkOptionTexts(t testing.TB, name string, req *waterfall.Request, bs []slack.Block) {
	t.Helper()
	for _, b := range bs {
		var bid string
		var els []slack.BlockElement
		switch b := b.(type) {
		case *slack.ActionBlock:
			bid, els = b.BlockID, b.Elements.ElementSet
		case *slack.InputBlock:
			bid, els = b.BlockID, []slack.BlockElement{b.Element}
		default:
			continue
		}
		qi := questionOf(bid)
		if qi < 0 || qi >= len(req.Questions) {
			continue
		}
		q := &req.Questions[qi]
		for _, el := range els {
			var options []*slack.OptionBlockObject
			switch x := el.(type) {
			case *slack.ButtonBlockElement:
				if k, _, _ := strings.Cut(strings.TrimPrefix(x.ActionID, actionPrefix), "."); Kind(k) == KindPick {
					oi, _ := ParseOptionValue(x.Value)
					shows(t, name, q.Options[oi].Label, x.Text.Text)
				}
			case *slack.SelectBlockElement:
				options = x.Options
			case *slack.MultiSelectBlockElement:
				options = x.Options
			case *slack.CheckboxGroupsBlockElement:
				options = x.Options
			case *slack.RadioButtonsBlockElement:
				options = x.Options
			}
			for _, o := range options {
				oi, err := ParseOptionValue(o.Value)
				if err != nil || oi >= len(q.Options) {
					t.Fatalf("%s: option value %q", name, o.Value)
				}
				shows(t, name, q.Options[oi].Label, o.Text.Text)
			}
		}
	}
}

// shows checks that text is label, or a prefix of it ending in "…".
func shows(t testing.TB, name, label, text string) {
	t.Helper()
	want := oneLine(label)
	if text == want || text == "…" {
		return
	}
	if p, ok := strings.CutSuffix(text, "…"); ok && strings.HasPrefix(want, p) {
		return
	}
	t.Fatalf("%s: option shows %q for label %q", name, text, label)
}

func questionOf(blockIDStr string) int {
	a, err := Decode(blockIDStr, actionID(KindSubmit, -1), "")
	if err != nil {
		return -1
	}
	return a.Question
}

func blockIDOf(b slack.Block) string {
	raw, _ := json.Marshal(b)
	var m struct {
		BlockID string `json:"block_id"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.BlockID
}

// checkAll renders every phase of req and every modal each message opens,
// checking limits and ids; it returns the open message and its modals.
func checkAll(t testing.TB, req *waterfall.Request) {
	t.Helper()
	settle := sampleAnswer(req)
	opened := map[string]bool{}
	for p := waterfall.PhaseOpen; p <= waterfall.PhaseExpired; p++ {
		v := waterfall.View{CallID: req.CallID, Request: req, Phase: p, Now: testNow, Deadline: testDeadline}
		if p >= waterfall.PhaseQueued && p <= waterfall.PhaseSettled {
			v.Settlement = settle
		}
		name := p.String()
		m := Render(v)
		checkMessage(t, name, m)
		checkIDs(t, name, v, m.Blocks)
		if p == waterfall.PhaseOpen || p == waterfall.PhaseContinued {
			if len(Elements(m.Blocks)) == 0 {
				t.Fatalf("%s: an answerable message without controls", name)
			}
		} else if els := Elements(m.Blocks); len(els) > 0 {
			t.Fatalf("%s: controls left in a settled message: %+v", name, els)
		}
		if p != waterfall.PhaseOpen {
			continue // a continued message opens the same modals
		}
		for mn, mv := range modalsWhere(v, m, testMeta, sampled) {
			opened[mn] = true
			checkView(t, name+"/"+mn, mv)
			checkIDs(t, name+"/"+mn, v, mv.Blocks.BlockSet)
		}
	}
	// Modals the dispatcher may open for any question, reachable or not.
	v := view(req)
	for qi := range req.Questions {
		ms := []slack.ModalViewRequest{DeclineModal(v, qi, testMeta), PreviewModal(v, qi, -1)}
		if qi == 0 {
			ms = append(ms, DetailPage(v, qi, maxPages))
		}
		// A batch has one "Other…" modal, whichever question opens it.
		if qi == 0 && !opened["other"] && !opened["other-0"] {
			ms = append(ms, OtherModal(v, qi, testMeta))
		}
		for _, m := range ms {
			checkView(t, fmt.Sprintf("modal/%d", qi), m)
			checkIDs(t, fmt.Sprintf("modal/%d", qi), v, m.Blocks.BlockSet)
		}
	}
}

// sampled keeps the checks of huge requests affordable: every kind of
// modal, but detail and preview modals only for the first two questions,
// first three options and first three pages (the others are the same code;
// TestRenderGolden checks every modal of its cases).
func sampled(name string) bool {
	var q, o, p int
	switch {
	case strings.HasPrefix(name, "detail-"):
		fmt.Sscanf(name, "detail-%d-page-%d", &q, &p)
	case strings.HasPrefix(name, "preview-"):
		fmt.Sscanf(name, "preview-%d-%d", &q, &o)
	}
	return q < 2 && o < 3 && p < 3
}

// sampleAnswer answers every question: all options of a multi-select plus
// text, the last option of a single-select, text where there are none.
func sampleAnswer(req *waterfall.Request) *waterfall.Settlement {
	s := &waterfall.Settlement{Respondent: waterfall.Respondent{UserID: "U0ALICE", UserName: "alice", At: testNow, Surface: waterfall.SurfaceSlack}}
	for _, q := range req.Questions {
		it := waterfall.AnswerItem{ID: q.ID, Selected: []string{}}
		switch {
		case q.MultiSelect:
			for _, o := range q.Options {
				it.Selected = append(it.Selected, o.Label)
			}
			it.Custom = q.Question
		case len(q.Options) > 0:
			it.Selected = []string{q.Options[len(q.Options)-1].Label}
		default:
			it.Custom = q.Question
		}
		s.Answers = append(s.Answers, it)
	}
	return s
}
