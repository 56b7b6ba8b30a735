package blocks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/blockcheck"
	"github.com/askslack/askslack/waterfall"
)

func planReview(detail string) *waterfall.Request {
	return request(planQ(detail, "Approve", "Revise"))
}

// markdownBlocks are the markdown blocks of bs.
func markdownBlocks(bs []slack.Block) []*slack.MarkdownBlock {
	var out []*slack.MarkdownBlock
	for _, b := range bs {
		if m, ok := b.(*slack.MarkdownBlock); ok {
			out = append(out, m)
		}
	}
	return out
}

// hasMarkdownBlock reports a markdown block anywhere in raw JSON.
func hasMarkdownBlock(t *testing.T, v any) bool {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), `"type":"markdown"`)
}

// balanced reports whether every fence opened in s is closed.
func balanced(s string) bool {
	var f fenceState
	for _, l := range strings.Split(s, "\n") {
		f, _ = f.after(l)
	}
	return f.marker == ""
}

// keptPrefix checks that text, the markdown block of a cut plan, is whole
// lines of the plan made safe (its line ends included), plus the closing
// fence when the cut fell in a code block.
func keptPrefix(t *testing.T, detail, text string) {
	t.Helper()
	whole, more := markdownPlan(detail, 1<<30)
	if more {
		t.Fatal("the whole plan is cut")
	}
	kept := text
	if !strings.HasPrefix(whole, kept+"\n") {
		i := strings.LastIndexByte(kept, '\n')
		var f fenceState
		for _, l := range strings.Split(kept[:max(i, 0)], "\n") {
			f, _ = f.after(l)
		}
		if i < 0 || f.marker == "" || kept[i+1:] != f.indent+f.marker {
			t.Fatalf("the plan is not cut at the end of a line, nor closes a fence there: …%q", text[max(0, len(text)-200):])
		}
		kept = kept[:i]
		if !strings.HasPrefix(whole, kept+"\n") {
			t.Fatalf("what is kept is not the plan's first lines: …%q", kept[max(0, len(kept)-200):])
		}
	}
}

// TestRenderPlanMarkdownBlock: a plan of 40 KB is one markdown block in
// its message, within Slack's 12,000 characters and the message's text
// cap, cut at the end of a line with its fences balanced, the "continues"
// note and "View full plan" kept. Before, the same plan was mrkdwn
// sections (as the Home tab still shows it).
func TestRenderPlanMarkdownBlock(t *testing.T) {
	t.Parallel()
	detail := planMarkdown(40 << 10)
	req := planReview(detail)
	v := view(req)
	m := Render(v)
	checkMessage(t, "plan", m)
	mds := markdownBlocks(m.Blocks)
	if len(mds) != 1 {
		t.Fatalf("%d markdown blocks, want 1", len(mds))
	}
	text := mds[0].Text
	n := utf8.RuneCountInString(text)
	if n > blockcheck.MaxMarkdownBlockTotalLen || blockText(m.Blocks) > maxBlockText-planHeadroom {
		t.Fatalf("a plan of %d characters in a message of %d", n, blockText(m.Blocks))
	}
	if n < 8000 {
		t.Errorf("the plan got only %d characters of the message", n)
	}
	if !balanced(text) {
		t.Fatalf("fences left open: …%q", text[len(text)-200:])
	}
	keptPrefix(t, detail, text)
	for _, b := range m.Blocks {
		if s, ok := b.(*slack.SectionBlock); ok && strings.Contains(s.Text.Text, "Step 1") {
			t.Fatal("the plan is in a section too")
		}
	}
	raw, _ := json.Marshal(m.Blocks)
	for _, want := range []string{"The plan continues beyond what a message can show.", `"text":"View full plan"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the cut plan's message lacks %s", want)
		}
	}
	before := question(v, false)
	t.Logf("a plan of %d characters: before %d blocks (%d sections), %d characters of block text; after %d blocks, %d characters (%d in the markdown block)",
		utf8.RuneCountInString(detail), len(before.Blocks), countSections(before.Blocks), blockText(before.Blocks), len(m.Blocks), blockText(m.Blocks), n)

	// Every level of the ladder fits, the plan in a markdown block.
	for i, lv := range levels {
		bs, _ := singleLayout(v, lv, true)
		b, _ := json.Marshal(bs)
		if err := blockcheck.Message(m.Text, b); err != nil || !fitsMessage(bs) {
			t.Errorf("level %d: %v", i, err)
		}
		if got := markdownBlocks(bs); len(got) != 1 || !balanced(got[0].Text) {
			t.Errorf("level %d: %d markdown blocks", i, len(got))
		}
	}
}

func countSections(bs []slack.Block) int {
	n := 0
	for _, b := range bs {
		if _, ok := b.(*slack.SectionBlock); ok {
			n++
		}
	}
	return n
}

// TestRenderPlanMarkdownAsWritten: a plan with a table, a fenced block and
// the rest of what agents write is in the markdown block exactly as
// written, so Slack renders it.
func TestRenderPlanMarkdownAsWritten(t *testing.T) {
	t.Parallel()
	plan := "# Migrate billing\n\n1. Add **`billing_v2`** next to _billing_\n2. Backfill — see [the runbook](https://example.com/runbook)\n\n" +
		"| step | owner | risk |\n|:---|:---:|---:|\n| backfill | alice | low |\n| switch reads | bob | high |\n\n" +
		"```sql\nALTER TABLE billing ADD COLUMN migrated_at timestamptz;\nSELECT a < b, c > d FROM t;\n```\n\n> Roll back with `DROP TABLE billing_v2`.\n\n- [ ] tell #ops\n~~~\n~~~"
	m := Render(view(planReview(plan)))
	checkMessage(t, "plan", m)
	mds := markdownBlocks(m.Blocks)
	if len(mds) != 1 || mds[0].Text != plan {
		t.Fatalf("markdown blocks %+v, want the plan as written", mds)
	}
	if mds[0].BlockID != "" {
		t.Errorf("a markdown block with block_id %q (Slack keeps none)", mds[0].BlockID)
	}
	raw, _ := json.Marshal(m.Blocks)
	if strings.Contains(string(raw), "View full plan") || strings.Contains(string(raw), "continues") {
		t.Error("a whole plan says it is cut")
	}
}

// TestRenderPlanMrkdwnElsewhere: where a markdown block is not allowed —
// the full-plan modal and its pages, the decline modal, the Home tab — and
// for a question that is not a plan review, the detail stays mrkdwn.
func TestRenderPlanMrkdwnElsewhere(t *testing.T) {
	t.Parallel()
	req := planReview(planMarkdown(40 << 10))
	v := view(req)
	m := Render(v)
	modals := Modals(v, m, testMeta)
	if _, ok := modals["detail-0"]; !ok {
		t.Fatalf("no full-plan modal: %v", keys(modals))
	}
	modals["decline"] = DeclineModal(v, 0, testMeta)
	for p := 1; p < maxPages; p++ {
		modals[fmt.Sprintf("page-%d", p)] = DetailPage(v, 0, p)
	}
	for name, mv := range modals {
		checkView(t, name, mv)
		if hasMarkdownBlock(t, mv) {
			t.Errorf("%s has a markdown block", name)
		}
	}
	detail, _ := json.Marshal(modals["detail-0"])
	if !strings.Contains(string(detail), `*Step 1: change the 1th module*`) {
		t.Error("the full-plan modal does not show the plan in mrkdwn")
	}

	home := Home([]Item{{View: v, Asked: testNow}}, false)
	raw, err := json.Marshal(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := blockcheck.Home(raw); err != nil {
		t.Fatal(err)
	}
	if hasMarkdownBlock(t, home) {
		t.Error("the Home tab has a markdown block")
	}
	if !strings.Contains(string(raw), `*Step 1: change the 1th module*`) {
		t.Error("the Home tab does not show the plan in mrkdwn")
	}

	plain := request(waterfall.Question{ID: "q", Question: "Which?", Detail: planMarkdown(4000), Options: opts("A", "B")})
	if pm := Render(view(plain)); hasMarkdownBlock(t, pm.Blocks) {
		t.Error("a question that is no plan review has a markdown block")
	}
}

// TestRenderPlanHostile: a plan that tries to ping, forge links, inflate
// with escapes or be one enormous line stays within every limit, and
// none of Slack's tokens is left to be read in the markdown block.
func TestRenderPlanHostile(t *testing.T) {
	t.Parallel()
	nasty := "<!channel> <@U123> <https://x|y> & <#C1> <!subteam^S1> `<!here>` <mailto:a@b.c|me>"
	plans := map[string]string{
		"tokens":       strings.Repeat(nasty+"\n", 200),
		"tokens-code":  "```\n" + strings.Repeat(nasty+"\n", 200) + "```",
		"12001":        strings.Repeat("<&>", 4000) + "x!",
		"12001-lines":  strings.Repeat(strings.Repeat("<", 99)+"\n", 120) + "x",
		"13000-line":   strings.Repeat("<!channel>&", 13000/11) + "<@U1",
		"fence-13000":  "```go\n" + strings.Repeat("x", 13000) + "\n```",
		"open-fence":   "```\n" + strings.Repeat("code line\n", 3000),
		"list-fence":   "- step\n  ```sh\n" + strings.Repeat("  echo <@U1>\n", 2000) + "  ```\n",
		"emoji":        strings.Repeat("🎉👍🏽 ", 5000),
		"control":      strings.Repeat("a\x00\x1b\u202e\r\n", 5000),
		"long-fences":  strings.Repeat("````\n```\n````\n", 2000),
		"tilde-fences": strings.Repeat("~~~\n<@U1>\n", 3000),
	}
	token := regexp.MustCompile(`<[!@#]|<[A-Za-z][A-Za-z0-9+.-]*:`)
	for name, plan := range plans {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := planReview(plan)
			if err := waterfall.Validate(req); err != nil {
				t.Fatalf("invalid: %v", err)
			}
			checkAll(t, req)
			m := Render(view(req))
			mds := markdownBlocks(m.Blocks)
			if len(mds) != 1 {
				t.Fatalf("%d markdown blocks", len(mds))
			}
			text := mds[0].Text
			if utf8.RuneCountInString(text) > blockcheck.MaxMarkdownBlockTotalLen || blockText(m.Blocks) > blockcheck.MaxMessageBlockTextLen {
				t.Fatalf("%d characters of markdown, %d of block text", utf8.RuneCountInString(text), blockText(m.Blocks))
			}
			if loc := token.FindStringIndex(text); loc != nil {
				t.Fatalf("a Slack token is left: %q", text[loc[0]:min(len(text), loc[1]+20)])
			}
			if !balanced(text) {
				t.Fatalf("fences left open: …%q", text[max(0, len(text)-100):])
			}
			if !utf8.ValidString(text) || strings.ContainsAny(text, "\x00\x1b\r\u202e") {
				t.Fatal("control characters in the markdown block")
			}
			// With the mentions a post adds, the message still fits.
			mm := WithMentions(m, strings.Repeat("<@U0ALICE> ", 6))
			b, _ := json.Marshal(mm.Blocks)
			if err := blockcheck.Message(mm.Text, b); err != nil {
				t.Fatal(err)
			}
			c, ok := mm.Blocks[0].(*slack.ContextBlock)
			if !ok || len(mm.Blocks) != len(m.Blocks) {
				t.Fatalf("the mention line is not in the attribution line: %T", mm.Blocks[0])
			}
			if tb, ok := c.ContextElements.Elements[0].(*slack.TextBlockObject); !ok || !strings.HasPrefix(tb.Text, "<@U0ALICE>") {
				t.Error("the mentions did not fit the blocks of a plan review")
			}
		})
	}
}

// TestMarkdownPlan pins how a plan is made safe and cut.
func TestMarkdownPlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		n        int
		want     string
		more     bool
	}{
		{"as written", "# A\n\n- b *c* **d**\n\n> e\n\n| f | g |\n|---|---|\n| 1 | 2 |", 1000, "# A\n\n- b *c* **d**\n\n> e\n\n| f | g |\n|---|---|\n| 1 | 2 |", false},
		{"prose tokens", "ping <!channel> and <@U1>, see <https://x|y> & a<b", 1000, "ping &lt;!channel> and &lt;@U1>, see &lt;https://x|y> & a&lt;b", false},
		{"code span", "run `a <b> c` then ``x ` <@U1>`` and `<!here>` a < b `", 1000, "run `a <b> c` then ``x ` <\u200b@U1>`` and `<\u200b!here>` a &lt; b `", false},
		{"fenced code", "```go\nif a < b { f(\"<!channel>\") }\n```", 1000, "```go\nif a < b { f(\"<\u200b!channel>\") }\n```", false},
		{"blank lines trimmed", "\n\n# A\n\n\n", 1000, "# A", false},
		{"cut at a line", "line one\nline two\nline three", 17, "line one\nline two", true},
		{"cut in a fence closes it", "intro\n```\none\ntwo\nthree\n```\nafter", 22, "intro\n```\none\ntwo\n```", true},
		{"indented fence closes indented", "- a\n  ~~~~sh\n  one\n  two\n  ~~~~", 26, "- a\n  ~~~~sh\n  one\n  ~~~~", true},
		{"longer fence holds a shorter", "````\n```\nx\n```\n````", 1000, "````\n```\nx\n```\n````", false},
		{"unclosed fence is closed", "```\ncode", 1000, "```\ncode\n```", false},
		{"one long line", "word " + strings.Repeat("abcd ", 100), 30, "word abcd abcd abcd abcd…", true},
		{"long line after a short one", "# Plan\n" + strings.Repeat("x", 100), 50, "# Plan\n" + strings.Repeat("x", 42) + "…", true},
		{"no entity cut", strings.Repeat("<", 100), 10, "&lt;&lt;…", true},
		{"a long line after enough", strings.Repeat("ab\n", 10) + strings.Repeat("x", 100), 40, strings.TrimSuffix(strings.Repeat("ab\n", 10), "\n"), true},
		{"nothing fits", "```\nabc", 5, "", true},
		{"empty", "  \n\n", 100, "", false},
	}
	for _, tt := range tests {
		got, more := markdownPlan(tt.in, tt.n)
		if got != tt.want || more != tt.more {
			t.Errorf("%s: markdownPlan(%q, %d)\n got %q, %v\nwant %q, %v", tt.name, tt.in, tt.n, got, more, tt.want, tt.more)
		}
		if utf8.RuneCountInString(got) > tt.n {
			t.Errorf("%s: %d characters, more than %d", tt.name, utf8.RuneCountInString(got), tt.n)
		}
	}
}

func FuzzMarkdownPlan(f *testing.F) {
	f.Add("# A\n```\n<!channel>\n```\n`<@U1>` <https://x|y>", 20)
	f.Add("- a\n  ~~~\n  b\n", 9)
	f.Add(strings.Repeat("<&>", 100), 50)
	f.Fuzz(func(t *testing.T, md string, n int) {
		n = n % 20000
		got, _ := markdownPlan(md, n)
		if utf8.RuneCountInString(got) > max(n, 0) {
			t.Fatalf("%d characters for %d", utf8.RuneCountInString(got), n)
		}
		if !balanced(got) {
			t.Fatalf("fences left open: %q", got)
		}
		if !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8")
		}
		if regexp.MustCompile(`<[!@#]`).MatchString(got) {
			t.Fatalf("a Slack token in %q", got)
		}
	})
}
