package blocks

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

func TestRenderTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"trailing space here", 9, "trailing…"},
		{"🎉🎉🎉🎉", 3, "🎉🎉…"},
		{"abc", 1, "…"},
		{"abc", 0, "…"},
		{"", 5, ""},
	}
	for _, tt := range tests {
		if got := Truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestRenderFolded(t *testing.T) {
	long := strings.Repeat("word ", 50_000)
	tests := []struct {
		in      string
		n       int
		want    string
		wantCut bool
	}{
		{"a\n\tb   c", 10, "a b c", false},
		{"  spaced  ", 10, "spaced", false},
		{"ctl\x00\x07chars\u202ebidi", 20, "ctlcharsbidi", false},
		{"one two three", 7, "one tw…", true},
		{long, 12, "word word w…", true},
		{"x" + strings.Repeat(" ", 10_000) + "y", 5, "x…", true}, // beyond what is read: still marked
	}
	for _, tt := range tests {
		got, cut := folded(tt.in, tt.n)
		if got != tt.want || cut != tt.wantCut {
			t.Errorf("folded(%.20q, %d) = %q, %v; want %q, %v", tt.in, tt.n, got, cut, tt.want, tt.wantCut)
		}
	}
}

func TestRenderEscapeAndStrong(t *testing.T) {
	tests := []struct {
		name, in, want string
		f              func(string) string
	}{
		{"escape mentions", "<!channel> & <@U1|bob>", "&lt;!channel&gt; &amp; &lt;@U1|bob&gt;", Escape},
		{"strong plain", "Deploy now?", "*Deploy now?*", strong},
		{"strong star", "Use *this* one", "*Use ∗this∗ one*", strong},
		{"strong code", "Rename `foo` to `bar`?", "*Rename* `foo` *to* `bar`?", strong},
		{"strong unpaired tick", "it`s fine", "*itˋs fine*", strong},
		{"strong lines", "line one\nline two", "*line one*\n*line two*", strong},
		{"strong mention", "ping <!here>", "*ping &lt;!here&gt;*", strong},
		{"strong punctuation only", "???", "???", strong},
		{"code escapes", "a`b<c>", "`aˋb&lt;c&gt;`", code},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRenderMarkdownToMrkdwn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# Title", "*Title*"},
		{"## Step **1** done", "*Step 1 done*"},
		{"**bold** and *it* and ~~gone~~", "*bold* and _it_ and ~gone~"},
		{"__bold__", "*bold*"},
		{"- a\n* b\n+ c", "• a\n• b\n• c"},
		{"- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"> quoted <b>", "> quoted &lt;b&gt;"},
		{"---", "──────────"},
		{"see [docs](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&amp;c=2|docs> (example.com)"},
		{"[x|y](https://e.com/p|q)", "<https://e.com/p%7Cq|x¦y> (e.com)"},
		{"no [link](javascript:alert(1))", "no [link](javascript:alert(1))"},
		{"<!channel> @here", "&lt;!channel&gt; @here"},
		{"<https://evil|trust me>", "&lt;https://evil|trust me&gt;"},
		{"```go\nx := a < b && *p\n```", "```\nx := a &lt; b &amp;&amp; *p\n```"},
		{"use `a*b*c` here", "use `a*b*c` here"},
		{"line\r\nbreaks", "line\nbreaks"},
	}
	for _, tt := range tests {
		if got := MarkdownToMrkdwn(tt.in); got != tt.want {
			t.Errorf("MarkdownToMrkdwn(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestRenderChunk(t *testing.T) {
	para := strings.Repeat("abcdefghi ", 30) // 300 characters
	code := "```\n" + strings.Repeat("code line &amp; more\n", 40) + "```"
	tests := []struct {
		name        string
		in          string
		size, total int
		pieces      int
		more        bool
	}{
		{"fits", "short", 100, 1000, 1, false},
		{"paragraphs", para + "\n\n" + para + "\n\n" + para, 400, unlimited, 3, false},
		{"budget", para + "\n\n" + para + "\n\n" + para, 400, 700, 3, true}, // the third piece fills the budget
		{"code block", code, 300, unlimited, 4, false},
		{"too small", para, 30, 30, 0, true},
	}
	for _, tt := range tests {
		got, more := chunk(tt.in, tt.size, tt.total)
		if len(got) != tt.pieces || more != tt.more {
			t.Errorf("%s: %d pieces, more=%v; want %d, %v", tt.name, len(got), more, tt.pieces, tt.more)
		}
		used := 0
		for _, p := range got {
			used += runes(p)
			if runes(p) > tt.size {
				t.Errorf("%s: piece of %d > %d", tt.name, runes(p), tt.size)
			}
			if strings.Count(p, fence)%2 != 0 {
				t.Errorf("%s: unbalanced code fence in %q", tt.name, p)
			}
			if i := strings.LastIndexByte(p, '&'); i >= 0 && !strings.Contains(p[i:], ";") {
				t.Errorf("%s: entity cut at the end of %q", tt.name, p[max(0, len(p)-20):])
			}
		}
		if used > tt.total {
			t.Errorf("%s: %d characters, budget %d", tt.name, used, tt.total)
		}
	}
	// A link is never split between two pieces.
	link := strings.Repeat("x", 50) + " <https://example.com/" + strings.Repeat("p", 30) + "|the label here> tail"
	got, _ := chunk(link, 80, unlimited)
	for _, p := range got {
		if strings.Count(p, "<") != strings.Count(p, ">") {
			t.Errorf("link split: %q", p)
		}
	}
}

func TestRenderIDs(t *testing.T) {
	call := strings.Repeat("A", waterfall.MaxIDLen)
	tests := []struct {
		name             string
		block, action, v string
		want             Action
		wantErr, wantFgn bool
	}{
		{name: "pick", block: blockID("c1", 0), action: actionID(KindPick, 3), v: "3",
			want: Action{Kind: KindPick, CallID: "c1", Question: 0, Option: 3}},
		{name: "select in batch", block: blockID("c1", 2), action: actionID(KindSelect, -1),
			want: Action{Kind: KindSelect, CallID: "c1", Question: 2, Option: -1}},
		{name: "submit", block: blockID(call, -1) + "/submit", action: actionID(KindSubmit, -1), v: "submit",
			want: Action{Kind: KindSubmit, CallID: call, Question: -1, Option: -1}},
		{name: "preview button", block: blockID("c1", 0) + "/preview", action: actionID(KindPreview, 4), v: "4",
			want: Action{Kind: KindPreview, CallID: "c1", Question: 0, Option: 4}},
		{name: "preview menu", block: blockID("c1", 1), action: actionID(KindPreview, -1), v: "7",
			want: Action{Kind: KindPreview, CallID: "c1", Question: 1, Option: 7}},
		{name: "page", block: blockID("c1", 0) + "/page", action: actionID(KindPage, 2), v: "2",
			want: Action{Kind: KindPage, CallID: "c1", Question: 0, Option: -1, Page: 2}},
		{name: "page without number", block: blockID("c1", 0), action: "askslack.page", wantErr: true},
		{name: "pick without option", block: blockID("c1", 0), action: "askslack.pick", wantErr: true},
		{name: "negative option", block: blockID("c1", 0), action: "askslack.pick.-1", wantErr: true},
		{name: "bad preview value", block: blockID("c1", 0), action: actionID(KindPreview, -1), v: "x", wantErr: true},
		{name: "bad question", block: "ask/c1/x", action: actionID(KindOther, -1), wantErr: true},
		{name: "bad call", block: "ask/c 1/0", action: actionID(KindOther, -1), wantErr: true},
		{name: "foreign action", block: blockID("c1", 0), action: "other.app", wantFgn: true},
		{name: "unknown kind", block: blockID("c1", 0), action: "askslack.nope", wantFgn: true},
		{name: "foreign block", block: "b1", action: actionID(KindOther, -1), wantFgn: true},
	}
	for _, tt := range tests {
		got, err := Decode(tt.block, tt.action, tt.v)
		switch {
		case tt.wantFgn:
			if err == nil || !errorsIs(err, ErrForeign) {
				t.Errorf("%s: err %v, want ErrForeign", tt.name, err)
			}
		case tt.wantErr:
			if err == nil || errorsIs(err, ErrForeign) {
				t.Errorf("%s: err %v, want a decoding error", tt.name, err)
			}
		case err != nil || got != tt.want:
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	if n := len(ChoiceBlockID(call, waterfall.MaxQuestions-1)); n > 255 {
		t.Errorf("block id of %d characters", n)
	}
	act := &slack.BlockAction{BlockID: blockID("c1", 0), ActionID: actionID(KindPreview, -1), SelectedOption: slack.OptionBlockObject{Value: "5"}}
	if a, err := DecodeAction(act); err != nil || a.Option != 5 {
		t.Errorf("DecodeAction(preview menu) = %+v, %v", a, err)
	}
}

func errorsIs(err, target error) bool {
	for e := err; e != nil; {
		if e == target {
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func TestRenderResolve(t *testing.T) {
	req := request(waterfall.Question{ID: "q", Question: "?", Options: opts("a", "b")})
	tests := []struct {
		a       Action
		wantErr bool
	}{
		{Action{Kind: KindPick, Question: 0, Option: 1}, false},
		{Action{Kind: KindPick, Question: 0, Option: 2}, true},
		{Action{Kind: KindOther, Question: 1, Option: -1}, true},
		{Action{Kind: KindSubmit, Question: -1, Option: -1}, false},
		{Action{Kind: KindPage, Question: 0, Option: -1, Page: 9}, false},
	}
	for _, tt := range tests {
		if _, err := Resolve(tt.a, req); (err != nil) != tt.wantErr {
			t.Errorf("Resolve(%+v) err %v, wantErr %v", tt.a, err, tt.wantErr)
		}
	}
}

func TestRenderMeta(t *testing.T) {
	m := Meta{CallID: strings.Repeat("c", 128), Question: 3, Channel: "C1", TS: "1.2"}
	got, err := DecodeMeta(m.Encode())
	if err != nil || got != m {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	huge := Meta{CallID: "c", Channel: strings.Repeat("C", 4000)}
	if s := huge.Encode(); len(s) > maxMetadata {
		t.Fatalf("private_metadata of %d characters", len(s))
	}
	if _, err := DecodeMeta(`{"q":1}`); err == nil {
		t.Fatal("metadata without a call decoded")
	}
}

func TestRenderRemaining(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "under a minute"},
		{90 * time.Second, "about a minute"},
		{10 * time.Minute, "about 10 minutes"},
		{90 * time.Minute, "about an hour"},
		{5 * time.Hour, "about 5 hours"},
	}
	for _, tt := range tests {
		if got := Remaining(tt.d); got != tt.want {
			t.Errorf("Remaining(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestRenderJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"\u003c!channel\u003e \u0026"`, `"<!channel> &"`},
		{`"\\u003c"`, `"\\u003c"`}, // an escaped backslash, then text
		{`"\\\u003c"`, `"\\<"`},
		{`"\n\u00e9"`, `"\n\u00e9"`},
	}
	for _, tt := range tests {
		got := string(unescapeHTML([]byte(tt.in)))
		if got != tt.want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", tt.in, got, tt.want)
		}
		var a, b string
		if json.Unmarshal([]byte(tt.in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || a != b {
			t.Errorf("unescapeHTML(%s) changed the string: %q vs %q", tt.in, a, b)
		}
	}
}

// TestRenderLayout pins the layout decisions: which control a question
// gets, by its options.
func TestRenderLayout(t *testing.T) {
	long := opts("short", strings.Repeat("long label ", 4))
	tests := []struct {
		name string
		q    waterfall.Question
		want slack.MessageElementType
	}{
		{"2 short options: buttons", waterfall.Question{Options: opts("Yes", "No")}, slack.METButton},
		{"5 short options: buttons", waterfall.Question{Options: numbered(5, false)}, slack.METButton},
		{"a long label: radios", waterfall.Question{Options: long}, slack.METRadioButtons},
		{"6 options: radios", waterfall.Question{Options: numbered(6, false)}, slack.METRadioButtons},
		{"10 options: radios", waterfall.Question{Options: numbered(10, false)}, slack.METRadioButtons},
		{"11 options: menu", waterfall.Question{Options: numbered(11, false)}, slack.MessageElementType(slack.OptTypeStatic)},
		{"multi 10: checkboxes", waterfall.Question{MultiSelect: true, Options: numbered(10, false)}, slack.METCheckboxGroups},
		{"multi 11: multi menu", waterfall.Question{MultiSelect: true, Options: numbered(11, false)}, slack.MessageElementType(slack.MultiOptTypeStatic)},
		{"no options: answer button", waterfall.Question{}, slack.METButton},
	}
	for _, tt := range tests {
		tt.q.ID, tt.q.Question = "q", "Which?"
		req := request(tt.q)
		if err := waterfall.Validate(req); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		m := Render(view(req))
		got := controlTypes(view(req), m)
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("%s: controls %v, want %s first", tt.name, got, tt.want)
		}
		if tt.q.MultiSelect && !hasAction(m, actionID(KindSubmit, -1)) {
			t.Errorf("%s: multi-select without Submit", tt.name)
		}
		if !hasAction(m, actionID(KindOther, -1)) {
			t.Errorf("%s: no Other…/Answer… button", tt.name)
		}
	}
}

func hasAction(m Message, id string) bool {
	for _, e := range Elements(m.Blocks) {
		if e.ActionID == id {
			return true
		}
	}
	return false
}

// TestRenderPlanReview: the approve option is the primary button and comes
// first, every other option declines, and there is a feedback button.
func TestRenderPlanReview(t *testing.T) {
	q := planQ("Do the thing.", "Ship it", "Not yet", "Never")
	q.Intent.Approve = "Not yet"
	req := request(q)
	m := Render(view(req))
	var first *slack.ButtonBlockElement
	decline := false
	for _, b := range m.Blocks {
		ab, ok := b.(*slack.ActionBlock)
		if !ok || ab.BlockID != blockID(req.CallID, 0) {
			continue
		}
		first = ab.Elements.ElementSet[0].(*slack.ButtonBlockElement)
		for _, el := range ab.Elements.ElementSet {
			if b, ok := el.(*slack.ButtonBlockElement); ok && b.ActionID == actionID(KindDecline, -1) {
				decline = b.Style == slack.StyleDanger
			}
			if b, ok := el.(*slack.ButtonBlockElement); ok && b != first && b.Style == slack.StylePrimary {
				t.Errorf("a second primary button: %q", b.Text.Text)
			}
		}
	}
	if first == nil || first.Text.Text != "Not yet" || first.Style != slack.StylePrimary || first.Value != "1" {
		t.Fatalf("first control %+v, want the approve option as primary", first)
	}
	if !decline {
		t.Error("no Decline with feedback… button")
	}
	if !strings.Contains(m.Text, "review a plan") {
		t.Errorf("text %q", m.Text)
	}
}

// TestRenderFallbackText: the notification text names the agent and the
// question, stays short in characters and bytes, and cannot ping.
func TestRenderFallbackText(t *testing.T) {
	q := waterfall.Question{ID: "q", Question: "<!channel> " + strings.Repeat("漢字", 5000), Options: numbered(30, false)}
	req := request(q)
	req.Agent.ID = "<!here> bot"
	for p := waterfall.PhaseOpen; p <= waterfall.PhaseExpired; p++ {
		v := view(req)
		v.Phase, v.Settlement = p, sampleAnswer(req)
		m := Render(v)
		if strings.Contains(m.Text, "<!") {
			t.Errorf("%s: text can ping: %.80q", p, m.Text)
		}
		if len(m.Text) > maxFallbackBytes || utf8.RuneCountInString(m.Text) > maxFallbackText || m.Text == "" {
			t.Errorf("%s: text of %d bytes", p, len(m.Text))
		}
	}
}

// TestRenderTimingSaysWhatHappensNext: the deadline line says what the
// window's end brings — late answers still reach the agent, or (an agent
// hook) it asks in its terminal and this question is withdrawn.
func TestRenderTimingSaysWhatHappensNext(t *testing.T) {
	for _, c := range []struct {
		onTimeout string
		phase     waterfall.Phase
		want, not string
	}{
		{"", waterfall.PhaseOpen, "after that, answers still reach it as a new message", "terminal"},
		{"", waterfall.PhaseContinued, "Answers are still delivered to it as a new message", "terminal"},
		{waterfall.OnTimeoutTerminal, waterfall.PhaseOpen, "then asks in its terminal instead and withdraws this question", "new message"},
		{waterfall.OnTimeoutTerminal, waterfall.PhaseContinued, "asked in its terminal instead", "new message"},
	} {
		req := request(waterfall.Question{ID: "q1", Question: "Deploy?", Options: opts("Yes", "No")})
		req.OnTimeout = c.onTimeout
		v := view(req)
		v.Phase, v.Deadline = c.phase, testDeadline
		b, _ := BuilderJSON(Render(v).Blocks)
		if !strings.Contains(string(b), c.want) || strings.Contains(string(b), c.not) {
			t.Errorf("onTimeout %q, %s: want %q and no %q in %s", c.onTimeout, c.phase, c.want, c.not, b)
		}
	}
}

// TestRenderStates: after the fact no controls remain, and the text says
// what happened.
func TestRenderStates(t *testing.T) {
	req := request(waterfall.Question{ID: "q1", Question: "Deploy?", Options: opts("Yes", "No")})
	s := sampleAnswer(req)
	tests := []struct {
		phase waterfall.Phase
		want  string // in the blocks
	}{
		{waterfall.PhaseSettled, "Answered by <@U0ALICE> <!date^"},
		{waterfall.PhaseQueued, "Sent to the agent as a new message"},
		{waterfall.PhaseDelivered, "The agent has received it"},
		{waterfall.PhaseAborted, "withdrew"},
		{waterfall.PhaseExpired, "no longer open"},
		{waterfall.PhaseContinued, "Answers are still delivered"},
	}
	for _, tt := range tests {
		v := view(req)
		v.Phase, v.Settlement, v.Deadline = tt.phase, s, testDeadline
		m := Render(v)
		b, _ := BuilderJSON(m.Blocks)
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: blocks lack %q: %s", tt.phase, tt.want, b)
		}
		answerable := tt.phase == waterfall.PhaseContinued
		if got := len(Elements(m.Blocks)) > 0; got != answerable {
			t.Errorf("%s: controls present %v, want %v", tt.phase, got, answerable)
		}
	}
}
