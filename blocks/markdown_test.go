package blocks

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askslack/askslack/internal/mdparse"
	"github.com/askslack/askslack/waterfall"
)

// TestMarkdownToMrkdwnCommonMark pins how MarkdownToMrkdwn reads what
// agents write: as CommonMark with GitHub's extensions, the reading the
// answer page shows (internal/mdparse). TestRenderMarkdownToMrkdwn holds
// the cases the line-by-line rewriting before it already got right.
func TestMarkdownToMrkdwnCommonMark(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		// Lists: nested ones indented, each level its own bullet.
		{"nested list", "- a\n  - b\n    - c\n- d", "• a\n    ◦ b\n        ▪ c\n• d"},
		{"ordered", "3. x\n4. y\n   - z\n\n1) w", "3. x\n4. y\n    ◦ z\n\n1) w"},
		{"item continues", "- a\n  b\n\n  more\n- c", "• a\n    b\n\n    more\n• c"},
		{"loose list", "- a\n\n- b", "• a\n\n• b"},
		{"task in ordered list", "1. [x] done\n2. [ ] todo", "1. ☑ done\n2. ☐ todo"},
		{"nested task", "- a\n  - [ ] b", "• a\n    ☐ b"},
		{"fence in a list", "- step\n  ```sh\n  echo <@U1>\n  ```\n  done", "• step\n```\necho &lt;@U1&gt;\n```\n    done"},
		// Emphasis as CommonMark delimits it.
		{"snake_case", "use snake_case_name and __init__", "use snake_case_name and *init*"},
		{"star in a word", "2*3*4 and foo**bar**baz", "2*3*4 and foo**bar**baz"},
		{"strong in emphasis", "*a **b** c* and ***d***", "_a *b* c_ and _*d*_"},
		{"strike", "~~a **b**~~ x~~y~~z", "~a *b*~ x~~y~~z"},
		{"star in bold", "**a*b**", "*a∗b*"},
		{"style over lines", "*a\nb* and **c  \nd**", "_a_\n_b_ and *c*\n*d*"},
		{"not emphasis", "a * b * c and ** d **", "a * b * c and ** d **"},
		// Blocks.
		{"setext heading", "Title\n=====\ntext", "*Title*\ntext"},
		{"heading levels", "###### six ######\n# *it* and `c`", "*six*\n*_it_ and `c`*"},
		{"empty heading", "#\n\nx", "x"},
		{"quote", "> a **b**\n>\n> > nested\n> - item", "> a *b*\n> \n> nested\n> • item"},
		{"code in a quote", "> ```\n> <x>\n> ```\n> after", "```\n&lt;x&gt;\n```\n> after"},
		{"indented code", "    x := a < b\n\nafter", "```\nx := a &lt; b\n```\n\nafter"},
		{"fence in code", "````md\n```\ncode\n```\n````", "```\nˋˋˋ\ncode\nˋˋˋ\n```"},
		{"unclosed fence", "```\ncode", "```\ncode\n```"},
		{"rules", "***\n___\n- - -", "──────────\n──────────\n──────────"},
		{"blank lines", "a\n\n\n\nb\n", "a\n\nb"},
		{"hard breaks", "a  \nb\\\nc", "a\nb\nc"},
		{"html block", "<div>\n<@U1> **x**\n</div>\n\n<!-- note -->", "&lt;div&gt;\n&lt;@U1&gt; **x**\n&lt;/div&gt;\n\n&lt;!-- note --&gt;"},
		{"inline html", "a <b>bold</b> <br/>", "a &lt;b&gt;bold&lt;/b&gt; &lt;br/&gt;"},
		// Tables: a line per row, cells apart, the header bold.
		{"table", "| step | owner |\n|:---|---:|\n| [run](https://e.com/r) | `a\\|b` |\n| x |", "*step* | *owner*\n<https://e.com/r|run> (e.com) | `a|b`\nx | "},
		// Code.
		{"code span", "``a`b`` and ` <!here> `", "`aˋb` and `&lt;!here&gt;`"},
		{"literal backticks", "``` a and \\`x\\`", "ˋˋˋ a and ˋxˋ"},
		// Links.
		{"image", "![chart](https://e.com/c.png \"title\")", "<https://e.com/c.png|chart> (e.com)"},
		{"image in a link", "[![CI](https://b.io/x.svg)](https://ci.io)", "<https://ci.io|CI> (ci.io)"},
		{"styled label", "[**the** `guide`](https://e.com)", "<https://e.com|*the* `guide`> (e.com)"},
		{"empty label", "[](https://e.com/x)", "<https://e.com/x|https://e.com/x> (e.com)"},
		{"reference link", "[a]: https://x.com/a%20b\n\nsee [a] and [b][a]", "see <https://x.com/a%20b|a> (x.com) and <https://x.com/a%20b|b> (x.com)"},
		{"mailto", "[me](mailto:a@b.co?subject=hi)", "<mailto:a@b.co?subject=hi|me> (a@b.co)"},
		{"relative link", "[rel](/path) ![i](img.png)", "[rel](/path) ![i](img.png)"},
		{"bare links", "see https://x.com/a. or www.b.com, a@b.co", "see <https://x.com/a|https://x.com/a>. or <http://www.b.com|www.b.com>, <mailto:a@b.co|a@b.co>"},
		{"autolink", "<https://x.com/a?b=1&c=2> <ftp://f.io>", "<https://x.com/a?b=1&amp;c=2|https://x.com/a?b=1&amp;c=2> ftp://f.io"},
		{"link destination", "[x](<https://e.com/a b> 't') [y](https://e.com/\\_z&amp;)", "<https://e.com/a%20b|x> (e.com) <https://e.com/_z&amp;|y> (e.com)"},
		// Text as it reads.
		{"escapes and entities", "\\<b\\> &lt;!channel&gt; &copy; &#x41; \\&amp;", "&lt;b&gt; &lt;!channel&gt; © A &amp;amp;"},
		{"references to what clean drops", "a&#x202e;b&#0;c&#10;d", "ab\uFFFDc d"},
		{"link definitions only", "[a]: https://x.com\n", ""},
		{"empty", " \n\n ", ""},
	}
	for _, tt := range tests {
		got := MarkdownToMrkdwn(tt.in)
		if got != tt.want {
			t.Errorf("%s: MarkdownToMrkdwn(%q)\n got %q\nwant %q", tt.name, tt.in, got, tt.want)
		}
		if p := mrkdwnProblem(got); p != "" {
			t.Errorf("%s: %s in %q", tt.name, p, got)
		}
	}
}

// TestMarkdownToMrkdwnHostile: what tries to ping, forge a link or break
// out of a code block or a label stays text.
func TestMarkdownToMrkdwnHostile(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"<!channel> <@U123> <https://x|y> & <#C1> <!subteam^S1> `<!here>` <mailto:a@b.c|me>",
		"[<!here>](https://e.com/<@U1>) [a|b](https://e.com/|<!channel>) [x](https://e.com\\|y)",
		"[`a|b`](https://e.com) [*a|b*](https://e.com) [a\nb](https://e.com)",
		"&lt;!channel&gt; &#60;@U1&#62; &#x3c;https://x|y&#x3e;",
		"| <!here> | <@U1> |\n|---|---|\n| `<#C1>` | [x](https://e.com/<) |",
		"```\n<!channel>\n```\n`` ` ``` `` ```",
		"> <!here>\n> ```\n> <@U1>\n\n- <#C1>\n  ```\n  <!channel>",
		"https://e.com/<!channel> www.e.com/a|b a@b.co|<!here>",
		"<div>\n<!channel>\n</div>\n<!channel>\n\n<?php <@U1> ?>",
	} {
		got := MarkdownToMrkdwn(in)
		if p := mrkdwnProblem(got); p != "" {
			t.Errorf("%s in MarkdownToMrkdwn(%q) = %q", p, in, got)
		}
	}
}

// ourLink is a Slack link MarkdownToMrkdwn writes: an http(s) or mailto
// address and a label, neither with a character that could end it.
var ourLink = regexp.MustCompile(`<(?:https?://|mailto:)[^\s<>|]+\|[^<>|\n]*>`)

var quoteMark = regexp.MustCompile(`(?m)^> `)

// mrkdwnProblem is what makes s unsafe or broken as MarkdownToMrkdwn's
// output, or "": a control character, a '<' or '>' outside the links it
// writes and the quote marks starting lines (which could ping or forge a
// link), a '&' that starts no entity, or a code fence that is not a line
// of its own or is left open.
func mrkdwnProblem(s string) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for _, r := range s {
		if dropRune(r) {
			return fmt.Sprintf("control character %U", r)
		}
	}
	rest := quoteMark.ReplaceAllString(ourLink.ReplaceAllString(s, ""), "")
	if i := strings.IndexAny(rest, "<>"); i >= 0 {
		return fmt.Sprintf("a bare %q at …%s", rest[i], rest[max(0, i-20):min(len(rest), i+20)])
	}
	for i := strings.IndexByte(s, '&'); i >= 0; i = strings.IndexByte(s, '&') {
		s = s[i:]
		if !strings.HasPrefix(s, "&amp;") && !strings.HasPrefix(s, "&lt;") && !strings.HasPrefix(s, "&gt;") {
			return fmt.Sprintf("a bare '&' at %.20q", s)
		}
		s = s[1:]
	}
	return ""
}

// fenceProblem is what is wrong with the code fences of mrkdwn s: each
// must be a line of its own, and none left open.
func fenceProblem(s string) string {
	open := false
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, fence) {
			if l != fence {
				return fmt.Sprintf("a fence in %q", l)
			}
			open = !open
		}
	}
	if open {
		return "a code block left open"
	}
	return ""
}

func FuzzMarkdownToMrkdwn(f *testing.F) {
	f.Add("# A **b**\n- [ ] c\n  - d\n```go\n<!channel>\n```\n`<@U1>` <https://x|y> [l|m](https://e.com/?a&b)", 200)
	f.Add("| a | b |\n|---|---|\n| *x* | ~~y~~ |\n> q\n>\n> > r\n\n1. [x] s\n\n***", 60)
	f.Add("&lt;!here&gt; \\*x\\* www.e.com a@b.co 2*3*4 ``` a`b", 50)
	f.Add("00000000\\```", 107) // a backtick escaped next to two: no fence
	f.Fuzz(func(t *testing.T, md string, size int) {
		got := MarkdownToMrkdwn(md)
		if p := mrkdwnProblem(got); p != "" {
			t.Fatalf("%s in %q", p, got)
		}
		if p := fenceProblem(got); p != "" {
			t.Fatalf("%s: %q", p, got)
		}
		size = 60 + abs(size)%3000
		pieces, _ := mdChunk(md, size, 4*size)
		for _, p := range pieces {
			if runes(p) > size {
				t.Fatalf("a piece of %d characters for %d", runes(p), size)
			}
			if fp := fenceProblem(p); fp != "" {
				t.Fatalf("%s in a piece: %q", fp, p)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// BenchmarkMarkdown times the Markdown paths a render takes: a question's
// detail rewritten to mrkdwn sections (Render of a question that is no plan
// review, the full-plan modal, the Home tab), a plan made safe for the
// markdown block, and parsing alone.
//
//	go test -run '^$' -bench Markdown -benchmem ./blocks/
func BenchmarkMarkdown(b *testing.B) {
	plan6k, plan40k := planMarkdown(6000), planMarkdown(40<<10)
	detail := request(waterfall.Question{ID: "q", Question: "Which?", Detail: planMarkdown(2000), Options: opts("A", "B")})
	cases := []struct {
		name string
		f    func()
	}{
		{"render-detail", func() { Render(view(detail)) }},
		{"mrkdwn-6k", func() { MarkdownToMrkdwn(plan6k) }},
		{"mdchunk-40k", func() { mdChunk(plan40k, maxSectionText, 4*maxSectionText) }},
		{"plan-block-40k", func() { markdownPlan(plan40k, maxMarkdownText) }},
		{"parse-6k", func() { mdparse.Parse(plan6k) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.f()
			}
		})
	}
}
