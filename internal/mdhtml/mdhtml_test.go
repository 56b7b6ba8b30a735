package mdhtml

import (
	"fmt"
	"html"
	"html/template"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// rel ends every link's start tag, after its href (and title).
const rel = ` rel="noopener noreferrer nofollow" target="_blank">`

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"blank lines", "\n  \n\t\n", ""},

		// Headings: shifted so the top level is h3, clamped at h6, no ids.
		{"atx h1", "# Title", "<h3>Title</h3>\n"},
		{"atx h2", "## Title", "<h4>Title</h4>\n"},
		{"atx h3", "### Title", "<h5>Title</h5>\n"},
		{"atx h4 clamps", "#### Title", "<h6>Title</h6>\n"},
		{"atx h6 clamps", "###### Title", "<h6>Title</h6>\n"},
		{"seven hashes is text", "####### Title", "<p>####### Title</p>\n"},
		{"hashtag is text", "#tag", "<p>#tag</p>\n"},
		{"closing hashes", "## Title ##  ", "<h4>Title</h4>\n"},
		{"escaped closing hash", `# C\#`, "<h3>C#</h3>\n"},
		{"heading inline", "# The *plan* `v2`", "<h3>The <em>plan</em> <code>v2</code></h3>\n"},
		{"empty heading", "#", "<h3></h3>\n"},
		{"setext h1", "Title\n=====", "<h3>Title</h3>\n"},
		{"setext h2", "Title\n---", "<h4>Title</h4>\n"},
		{"setext two lines", "A\nB\n===", "<h3>A\nB</h3>\n"},

		// Paragraphs and breaks.
		{"paragraph", "hello", "<p>hello</p>\n"},
		{"soft breaks", "one\ntwo\n  three", "<p>one\ntwo\nthree</p>\n"},
		{"two paragraphs", "one\n\ntwo", "<p>one</p>\n<p>two</p>\n"},
		{"hard break spaces", "one  \ntwo", "<p>one<br>\ntwo</p>\n"},
		{"hard break backslash", "one\\\ntwo", "<p>one<br>\ntwo</p>\n"},
		{"hard break many spaces", "one     \ntwo", "<p>one<br>\ntwo</p>\n"},
		{"trailing spaces at end", "one  ", "<p>one</p>\n"},
		{"crlf", "one\r\ntwo\r\n\r\nthree", "<p>one\ntwo</p>\n<p>three</p>\n"},

		// Thematic breaks.
		{"hr dashes", "---", "<hr>\n"},
		{"hr stars", "***", "<hr>\n"},
		{"hr underscores", "___", "<hr>\n"},
		{"hr spaced", "- - -", "<hr>\n"},
		{"hr between paragraphs", "a\n\n---\n\nb", "<p>a</p>\n<hr>\n<p>b</p>\n"},
		{"stars hr interrupts paragraph", "a\n***", "<p>a</p>\n<hr>\n"},

		// Fenced code.
		{"fence", "```\ncode\n```", "<pre><code>code\n</code></pre>\n"},
		{"fence lang", "```go\nx := 1\n```", "<pre><code class=\"language-go\">x := 1\n</code></pre>\n"},
		{"tilde fence", "~~~python\nprint(1)\n~~~", "<pre><code class=\"language-python\">print(1)\n</code></pre>\n"},
		{"fence lang sanitized", "```c#\"><x {.a}\n1\n```", "<pre><code class=\"language-cx\">1\n</code></pre>\n"},
		{"fence lang first word, 20 chars", "```abcdefghijklmnopqrstuvwxyz extra\n1\n```", "<pre><code class=\"language-abcdefghijklmnopqrst\">1\n</code></pre>\n"},
		{"fence lang kept chars", "```objective-c++_2\n1\n```", "<pre><code class=\"language-objective-c++_2\">1\n</code></pre>\n"},
		{"fence unclosed runs to end", "```\na\n\nb", "<pre><code>a\n\nb\n</code></pre>\n"},
		{"fence keeps markdown", "```\n# not a heading\n*x*\n```", "<pre><code># not a heading\n*x*\n</code></pre>\n"},
		{"longer fence", "````\n```\n````", "<pre><code>```\n</code></pre>\n"},
		{"fence indent removed", "  ```\n  a\n    b\n  ```", "<pre><code>a\n  b\n</code></pre>\n"},
		{"fence escapes", "```\n<b>&amp;\"'</b>\n```", "<pre><code>&lt;b&gt;&amp;amp;&quot;&#39;&lt;/b&gt;\n</code></pre>\n"},
		{"fence interrupts paragraph", "text\n```\ncode\n```", "<p>text</p>\n<pre><code>code\n</code></pre>\n"},
		{"empty fence", "```\n```", "<pre><code></code></pre>\n"},

		// Diffs.
		{"diff info", "```diff\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new\n```",
			"<pre><code class=\"language-diff\">--- a/f\n+++ b/f\n<span class=\"hunk\">@@ -1,2 +1,2 @@</span>\n ctx\n<span class=\"del\">-old</span>\n<span class=\"add\">+new</span>\n</code></pre>\n"},
		{"patch info", "```patch\n+a\n-<b>\n```",
			"<pre><code class=\"language-patch\"><span class=\"add\">+a</span>\n<span class=\"del\">-&lt;b&gt;</span>\n</code></pre>\n"},
		{"diff detected by ---", "```\n--- a\n+++ b\n-x\n+y\n```",
			"<pre><code>--- a\n+++ b\n<span class=\"del\">-x</span>\n<span class=\"add\">+y</span>\n</code></pre>\n"},
		{"diff detected by @@", "```text\n@@ -1 +1 @@\n-x\n+y\n```",
			"<pre><code class=\"language-text\"><span class=\"hunk\">@@ -1 +1 @@</span>\n<span class=\"del\">-x</span>\n<span class=\"add\">+y</span>\n</code></pre>\n"},
		{"diff detected by diff --git", "```\ndiff --git a/x b/x\n+y\n```",
			"<pre><code>diff --git a/x b/x\n<span class=\"add\">+y</span>\n</code></pre>\n"},
		{"not a diff", "```\n- item\n+ item\n```", "<pre><code>- item\n+ item\n</code></pre>\n"},

		// Indented code.
		{"indented code", "    a\n      b\n\n    c", "<pre><code>a\n  b\n\nc\n</code></pre>\n"},
		{"indented code escapes", "    <script>", "<pre><code>&lt;script&gt;\n</code></pre>\n"},
		{"indented line continues paragraph", "text\n    more", "<p>text\nmore</p>\n"},
		{"tab indented code", "\tcode\n\t\tmore", "<pre><code>code\n\tmore\n</code></pre>\n"},
		{"tabs in fence kept", "```go\nfunc f() {\n\treturn\n}\n```", "<pre><code class=\"language-go\">func f() {\n\treturn\n}\n</code></pre>\n"},
		{"tabs in fence in item", "1. x\n   ```\n   \tgo\n   ```", "<ol>\n<li>x\n<pre><code>\tgo\n</code></pre>\n</li>\n</ol>\n"},
		{"tab after marker", "-\ta\n\tb", "<ul>\n<li>a\nb</li>\n</ul>\n"},
		{"tab nests list", "- a\n\t- b", "<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n"},
		{"tab after quote", ">\ta", "<blockquote>\n<p>a</p>\n</blockquote>\n"},

		// Lists.
		{"bullets", "- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"star bullets", "* a\n* b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"plus bullets", "+ a\n+ b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"bullet change starts a new list", "- a\n* b", "<ul>\n<li>a</li>\n</ul>\n<ul>\n<li>b</li>\n</ul>\n"},
		{"ordered", "1. a\n2. b", "<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		{"ordered paren", "1) a\n2) b", "<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		{"ordered start", "3. a\n4. b", "<ol start=\"3\">\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		{"ordered start zero", "0. a", "<ol start=\"0\">\n<li>a</li>\n</ol>\n"},
		{"ordered leading zeros", "007. a", "<ol start=\"7\">\n<li>a</li>\n</ol>\n"},
		{"ten digits is text", "1234567890. a", "<p>1234567890. a</p>\n"},
		{"list interrupts paragraph", "Steps:\n- a\n- b", "<p>Steps:</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"ordered not 1 does not interrupt", "In\n2024. it was", "<p>In\n2024. it was</p>\n"},
		{"nested", "- a\n  - b\n    - c\n- d",
			"<ul>\n<li>a\n<ul>\n<li>b\n<ul>\n<li>c</li>\n</ul>\n</li>\n</ul>\n</li>\n<li>d</li>\n</ul>\n"},
		{"nested under ordered, 3 spaces", "1. a\n   - b\n2. c",
			"<ol>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n<li>c</li>\n</ol>\n"},
		// CommonMark: a sublist of "1. a" is indented at least three.
		{"two spaces under ordered is not nested", "1. a\n  - b\n2. c",
			"<ol>\n<li>a</li>\n</ol>\n<ul>\n<li>b</li>\n</ul>\n<ol start=\"2\">\n<li>c</li>\n</ol>\n"},
		{"one space is a sibling", "- a\n - b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"nested ordered in bullet", "- a\n  1. b\n  2. c",
			"<ul>\n<li>a\n<ol>\n<li>b</li>\n<li>c</li>\n</ol>\n</li>\n</ul>\n"},
		{"continuation line", "- a\n  more\n- b", "<ul>\n<li>a\nmore</li>\n<li>b</li>\n</ul>\n"},
		{"lazy continuation", "- a\nmore\n- b", "<ul>\n<li>a\nmore</li>\n<li>b</li>\n</ul>\n"},
		{"loose list", "- a\n\n- b", "<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n</ul>\n"},
		{"item with two paragraphs", "- a\n\n  b\n- c",
			"<ul>\n<li>\n<p>a</p>\n<p>b</p>\n</li>\n<li>\n<p>c</p>\n</li>\n</ul>\n"},
		{"blank then unindented ends list", "- a\n\nb", "<ul>\n<li>a</li>\n</ul>\n<p>b</p>\n"},
		{"loose nested does not loosen parent", "- a\n  - b\n\n  - c\n- d",
			"<ul>\n<li>a\n<ul>\n<li>\n<p>b</p>\n</li>\n<li>\n<p>c</p>\n</li>\n</ul>\n</li>\n<li>d</li>\n</ul>\n"},
		{"code in item", "1. run:\n   ```sh\n   make\n   ```\n2. done",
			"<ol>\n<li>run:\n<pre><code class=\"language-sh\">make\n</code></pre>\n</li>\n<li>done</li>\n</ol>\n"},
		{"fence at column 0 ends the list", "- a\n```\nx\n```",
			"<ul>\n<li>a</li>\n</ul>\n<pre><code>x\n</code></pre>\n"},
		{"empty item", "-\n- b", "<ul>\n<li></li>\n<li>b</li>\n</ul>\n"},
		{"item then heading", "- a\n# H", "<ul>\n<li>a</li>\n</ul>\n<h3>H</h3>\n"},
		{"item then hr", "- a\n***", "<ul>\n<li>a</li>\n</ul>\n<hr>\n"},
		{"task items", "- [ ] todo\n- [x] done\n- [X] Done",
			"<ul>\n<li class=\"task\"><input type=\"checkbox\" disabled> todo</li>\n" +
				"<li class=\"task\"><input type=\"checkbox\" disabled checked> done</li>\n" +
				"<li class=\"task\"><input type=\"checkbox\" disabled checked> Done</li>\n</ul>\n"},
		{"loose task items", "- [ ] a\n\n- [x] b",
			"<ul>\n<li class=\"task\">\n<p><input type=\"checkbox\" disabled> a</p>\n</li>\n" +
				"<li class=\"task\">\n<p><input type=\"checkbox\" disabled checked> b</p>\n</li>\n</ul>\n"},
		{"ordered task", "1. [x] *a*", "<ol>\n<li class=\"task\"><input type=\"checkbox\" disabled checked> <em>a</em></li>\n</ol>\n"},
		{"empty task", "- [ ]", "<ul>\n<li class=\"task\"><input type=\"checkbox\" disabled></li>\n</ul>\n"},
		{"link is not a task", "- [x](https://a.b)", "<ul>\n<li><a href=\"https://a.b\"" + rel + "x</a></li>\n</ul>\n"},
		{"not a task", "- [y] a", "<ul>\n<li>[y] a</li>\n</ul>\n"},
		{"five spaces after marker is code", "-     code", "<ul>\n<li>\n<pre><code>code\n</code></pre>\n</li>\n</ul>\n"},

		// Block quotes.
		{"quote", "> a\n> b", "<blockquote>\n<p>a\nb</p>\n</blockquote>\n"},
		{"quote no space", ">a", "<blockquote>\n<p>a</p>\n</blockquote>\n"},
		{"nested quote", "> a\n>> b", "<blockquote>\n<p>a</p>\n<blockquote>\n<p>b</p>\n</blockquote>\n</blockquote>\n"},
		{"quote blocks", "> # H\n> - x\n>\n> ```\n> c\n> ```",
			"<blockquote>\n<h3>H</h3>\n<ul>\n<li>x</li>\n</ul>\n<pre><code>c\n</code></pre>\n</blockquote>\n"},
		{"quote lazy continuation", "> a\nb", "<blockquote>\n<p>a\nb</p>\n</blockquote>\n"},
		{"quote ends at blank line", "> a\n\nb", "<blockquote>\n<p>a</p>\n</blockquote>\n<p>b</p>\n"},
		{"quote interrupts paragraph", "a\n> b", "<p>a</p>\n<blockquote>\n<p>b</p>\n</blockquote>\n"},
		{"quote in list", "- a\n  > q", "<ul>\n<li>a\n<blockquote>\n<p>q</p>\n</blockquote>\n</li>\n</ul>\n"},

		// Tables.
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n"},
		{"table alignment", "|l|c|r|n|\n|:--|:-:|--:|---|\n|1|2|3|4|",
			"<table>\n<thead>\n<tr>\n<th class=\"left\">l</th>\n<th class=\"center\">c</th>\n<th class=\"right\">r</th>\n<th>n</th>\n</tr>\n</thead>\n" +
				"<tbody>\n<tr>\n<td class=\"left\">1</td>\n<td class=\"center\">2</td>\n<td class=\"right\">3</td>\n<td>4</td>\n</tr>\n</tbody>\n</table>\n"},
		{"table no outer pipes", "a | b\n--- | ---\n1 | 2",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n"},
		{"table pads and cuts rows", "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n" +
				"<tr>\n<td>1</td>\n<td></td>\n</tr>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n"},
		{"table escaped pipe", "| a |\n|---|\n| x \\| y `\\|` |",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>x | y <code>|</code></td>\n</tr>\n</tbody>\n</table>\n"},
		{"table inline", "| *a* | [l](https://x.y) |\n|---|---|",
			"<table>\n<thead>\n<tr>\n<th><em>a</em></th>\n<th><a href=\"https://x.y\"" + rel + "l</a></th>\n</tr>\n</thead>\n</table>\n"},
		{"table ends at blank", "| a |\n|---|\n| 1 |\n\ntext",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n</tr>\n</tbody>\n</table>\n<p>text</p>\n"},
		{"table ends at heading", "| a |\n|---|\n# H",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n</table>\n<h3>H</h3>\n"},
		{"table interrupts paragraph", "intro\n| a |\n|---|",
			"<p>intro</p>\n<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n</table>\n"},
		{"cell count mismatch is not a table", "| a | b |\n|---|\n| 1 | 2 |", "<p>| a | b |\n|---|\n| 1 | 2 |</p>\n"},
		{"table in list", "- x\n\n  | a |\n  |---|\n  | 1 |",
			"<ul>\n<li>\n<p>x</p>\n<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n</tr>\n</tbody>\n</table>\n</li>\n</ul>\n"},

		// Inline.
		{"code span", "`a`", "<p><code>a</code></p>\n"},
		{"code span double", "``a ` b``", "<p><code>a ` b</code></p>\n"},
		{"code span strip one space", "`` `x` ``", "<p><code>`x`</code></p>\n"},
		{"code span keeps markdown", "`*a* [b](https://c.d) <e>`", "<p><code>*a* [b](https://c.d) &lt;e&gt;</code></p>\n"},
		{"code span across lines", "`a\nb`", "<p><code>a b</code></p>\n"},
		{"unmatched backticks", "``a`", "<p>``a`</p>\n"},
		{"code span backslash literal", "`a\\`b", "<p><code>a\\</code>b</p>\n"},
		{"strong", "**a** and __b__", "<p><strong>a</strong> and <strong>b</strong></p>\n"},
		{"em", "*a* and _b_", "<p><em>a</em> and <em>b</em></p>\n"},
		{"strong em", "***a***", "<p><em><strong>a</strong></em></p>\n"},
		{"nested emphasis", "*a **b** c*", "<p><em>a <strong>b</strong> c</em></p>\n"},
		{"intraword star", "a*b*c", "<p>a<em>b</em>c</p>\n"},
		{"snake_case", "use snake_case_names and __init__ here", "<p>use snake_case_names and <strong>init</strong> here</p>\n"},
		{"intraword underscore", "foo_bar_", "<p>foo_bar_</p>\n"},
		{"unclosed", "**a", "<p>**a</p>\n"},
		{"space after star", "a * b * c", "<p>a * b * c</p>\n"},
		{"rule of three", "*a**b*", "<p><em>a**b</em></p>\n"},
		{"strike", "~~gone~~", "<p><del>gone</del></p>\n"},
		{"single tildes strike too (GFM)", "~5 min, ~a~", "<p>~5 min, <del>a</del></p>\n"},
		{"tilde before a space does not close", "~5 min, then ~10 min", "<p>~5 min, then ~10 min</p>\n"},
		{"emphasis across lines", "*a\nb*", "<p><em>a\nb</em></p>\n"},
		{"link", "[text](https://example.com)", "<p><a href=\"https://example.com\"" + rel + "text</a></p>\n"},
		{"link title", `[t](https://e.x "Ti<t>le")`, "<p><a href=\"https://e.x\" title=\"Ti&lt;t&gt;le\"" + rel + "t</a></p>\n"},
		{"link title single quotes", `[t](https://e.x 'T')`, "<p><a href=\"https://e.x\" title=\"T\"" + rel + "t</a></p>\n"},
		{"link title parens", `[t](https://e.x (T))`, "<p><a href=\"https://e.x\" title=\"T\"" + rel + "t</a></p>\n"},
		{"link http", "[t](http://e.x)", "<p><a href=\"http://e.x\"" + rel + "t</a></p>\n"},
		{"link mailto", "[mail](mailto:a@b.c)", "<p><a href=\"mailto:a@b.c\"" + rel + "mail</a></p>\n"},
		{"link angle dest", "[t](<https://e.x/a b>)", "<p><a href=\"https://e.x/a%20b\"" + rel + "t</a></p>\n"},
		{"link parens in dest", "[t](https://en.wikipedia.org/wiki/Go_(language))", "<p><a href=\"https://en.wikipedia.org/wiki/Go_(language)\"" + rel + "t</a></p>\n"},
		{"link ampersand", "[t](https://e.x/?a=1&b=2)", "<p><a href=\"https://e.x/?a=1&amp;b=2\"" + rel + "t</a></p>\n"},
		{"link inline content", "[**b** `c`](https://e.x)", "<p><a href=\"https://e.x\"" + rel + "<strong>b</strong> <code>c</code></a></p>\n"},
		{"link empty text shows url", "[](https://e.x)", "<p><a href=\"https://e.x\"" + rel + "https://e.x</a></p>\n"},
		{"relative link is text", "[file](src/main.go)", "<p>file</p>\n"},
		{"protocol-relative link is text", "[x](//evil.example)", "<p>x</p>\n"},
		{"fragment link is text", "[x](#top)", "<p>x</p>\n"},
		{"data link is text", "[x](data:text/html;base64,PHNjcmlwdD4=)", "<p>x</p>\n"},
		{"bare scheme is text", "[x](https://)", "<p>x</p>\n"},
		{"reference link", "[x][ref]\n\n[ref]: https://e.x \"T\"", "<p><a href=\"https://e.x\" title=\"T\"" + rel + "x</a></p>\n"},
		{"reference link not allowed", "[x][ref]\n\n[ref]: javascript:alert(1)", "<p>x</p>\n"},
		{"shortcut reference", "[x]\n\n[x]: https://e.x", "<p><a href=\"https://e.x\"" + rel + "x</a></p>\n"},
		{"brackets without link", "[x] and [y]", "<p>[x] and [y]</p>\n"},
		{"no links in links", "[a [b](https://b.x) c](https://a.x)", "<p>[a <a href=\"https://b.x\"" + rel + "b</a> c](<a href=\"https://a.x\"" + rel + "https://a.x</a>)</p>\n"},
		{"link text url not relinked", "[https://a.x](https://b.x)", "<p><a href=\"https://b.x\"" + rel + "https://a.x</a></p>\n"},
		{"image title", `![a](https://e.x/d.png "T")`, "<p><a href=\"https://e.x/d.png\" title=\"T\"" + rel + "a</a></p>\n"},
		{"image alt is text", "![a *b* `c`](https://e.x/d.png)", "<p><a href=\"https://e.x/d.png\"" + rel + "a b c</a></p>\n"},
		{"autolink in link", "[<https://a.x>](https://b.x)", "<p><a href=\"https://b.x\"" + rel + "https://a.x</a></p>\n"},
		{"www link", "see www.e.x/a.", "<p>see <a href=\"http://www.e.x/a\"" + rel + "www.e.x/a</a>.</p>\n"},
		{"bare email", "mail me@e.x", "<p>mail <a href=\"mailto:me@e.x\"" + rel + "me@e.x</a></p>\n"},
		{"no bare url after an open bracket", "[see https://e.x", "<p>[see https://e.x</p>\n"},
		{"image as link", "![a diagram](https://e.x/d.png)", "<p><a href=\"https://e.x/d.png\"" + rel + "a diagram</a></p>\n"},
		{"image no alt", "![](https://e.x/d.png)", "<p><a href=\"https://e.x/d.png\"" + rel + "https://e.x/d.png</a></p>\n"},
		{"image bad url", "![alt](javascript:x)", "<p>alt</p>\n"},
		{"image in link", "[![alt](https://i.x)](https://l.x)", "<p><a href=\"https://l.x\"" + rel + "alt</a></p>\n"},
		{"autolink", "<https://e.x/a_b>", "<p><a href=\"https://e.x/a_b\"" + rel + "https://e.x/a_b</a></p>\n"},
		{"autolink email", "<me@e.x>", "<p><a href=\"mailto:me@e.x\"" + rel + "me@e.x</a></p>\n"},
		{"autolink other scheme is text", "<ftp://e.x>", "<p>ftp://e.x</p>\n"},
		{"bare url", "see https://e.x/a_b?c=d#e.", "<p>see <a href=\"https://e.x/a_b?c=d#e\"" + rel + "https://e.x/a_b?c=d#e</a>.</p>\n"},
		{"bare url punctuation", "(https://e.x), http://f.y; https://g.z!? https://h.w:", "<p>(<a href=\"https://e.x\"" + rel + "https://e.x</a>), <a href=\"http://f.y\"" + rel + "http://f.y</a>; <a href=\"https://g.z\"" + rel + "https://g.z</a>!? <a href=\"https://h.w\"" + rel + "https://h.w</a>:</p>\n"},
		{"bare url balanced paren", "https://e.x/Go_(lang)", "<p><a href=\"https://e.x/Go_(lang)\"" + rel + "https://e.x/Go_(lang)</a></p>\n"},
		{"bare url in strong", "**https://e.x**", "<p><strong><a href=\"https://e.x\"" + rel + "https://e.x</a></strong></p>\n"},
		{"bare url needs boundary", "xhttps://e.x", "<p>xhttps://e.x</p>\n"},
		{"bare url needs host", "https://", "<p>https://</p>\n"},
		{"bare url stops at <", "https://e.x<b>", "<p><a href=\"https://e.x\"" + rel + "https://e.x</a>&lt;b&gt;</p>\n"},
		{"bare url in code is text", "`https://e.x`", "<p><code>https://e.x</code></p>\n"},
		{"backslash escapes", `\*a\* \_b\_ \[c\](d) \# \\ \a`, "<p>*a* _b_ [c](d) # \\ \\a</p>\n"},
		{"entities decoded, then escaped", "&amp; &lt;b&gt; &#60; &copy; &#39;", "<p>&amp; &lt;b&gt; &lt; \u00a9 &#39;</p>\n"},
		{"entities in code stay", "`&amp;`", "<p><code>&amp;amp;</code></p>\n"},
		{"quotes escaped", `"double" 'single'`, "<p>&quot;double&quot; &#39;single&#39;</p>\n"},
		{"nul and invalid utf8", "a\x00b\xffc", "<p>a\uFFFDb\uFFFDc</p>\n"},

		// A small document.
		{"document", "# Plan\n\nDo **this**:\n\n1. one\n2. two\n\n> note\n\n---\n",
			"<h3>Plan</h3>\n<p>Do <strong>this</strong>:</p>\n<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n<blockquote>\n<p>note</p>\n</blockquote>\n<hr>\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := string(Render(tc.in))
			if got != tc.want {
				t.Errorf("Render(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
			if err := checkHTML(got); err != nil {
				t.Errorf("Render(%q) = %q: %v", tc.in, got, err)
			}
		})
	}
}

func TestInline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Postgres", "Postgres"},
		{"trimmed", "  a  ", "a"},
		{"emphasis", "Use **Postgres** (_recommended_)", "Use <strong>Postgres</strong> (<em>recommended</em>)"},
		{"code", "run `make test`", "run <code>make test</code>"},
		{"link", "[docs](https://e.x)", "<a href=\"https://e.x\"" + rel + "docs</a>"},
		{"no blocks", "# not a heading", "# not a heading"},
		{"no list", "- not a list", "- not a list"},
		{"newline is a soft break", "a\nb", "a\nb"},
		{"html", "<b onclick=x>", "&lt;b onclick=x&gt;"},
		{"bad link", "[x](javascript:alert(1))", "x"},
		{"no definition", "[x]: https://e.x", "[x]: <a href=\"https://e.x\"" + rel + "https://e.x</a>"},
		{"no quote, no code", "> a\n    b", "&gt; a\nb"},
		{"paragraphs", "a\n\nb", "a\nb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := string(Inline(tc.in))
			if got != tc.want {
				t.Errorf("Inline(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
			if err := checkHTML(got); err != nil {
				t.Errorf("Inline(%q) = %q: %v", tc.in, got, err)
			}
		})
	}
}

func TestHostile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"script", "<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"},
		{"script block", "<script>\nalert(1)\n</script>", "<p>&lt;script&gt;\nalert(1)\n&lt;/script&gt;</p>\n"},
		{"javascript link", "[x](javascript:alert(1))", "<p>x</p>\n"},
		{"mixed case javascript", "[x](JaVaScRiPt:alert(1))", "<p>x</p>\n"},
		{"space before javascript", "[x]( javascript:alert(1))", "<p>x</p>\n"},
		{"escaped javascript", "[x](java\\script:alert(1))", "<p>x</p>\n"},
		{"entity javascript", "[x](&#106;avascript:alert(1))", "<p>x</p>\n"},
		{"angle javascript", "[x](<javascript:alert(1)>)", "<p>x</p>\n"},
		{"javascript autolink", "<javascript:alert(1)>", "<p>javascript:alert(1)</p>\n"},
		{"javascript image", "![x](javascript:alert(1))", "<p>x</p>\n"},
		{"vbscript", "[x](vbscript:msgbox)", "<p>x</p>\n"},
		{"img onerror", "<img src=x onerror=alert(1)>", "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"},
		{"svg in link text", `[a"><svg onload=alert(1)>](https://e.x)`,
			"<p><a href=\"https://e.x\"" + rel + "a&quot;&gt;&lt;svg onload=alert(1)&gt;</a></p>\n"},
		{"svg in url", `[a](https://e.x/"><svg/onload=alert(1)>)`,
			"<p><a href=\"https://e.x/%22%3E%3Csvg/onload=alert(1)%3E\"" + rel + "a</a></p>\n"},
		// Not a link (a space in the URL); GFM's autolink takes "> too.
		{"svg in url with space", `[a](https://e.x/"><svg onload=alert(1)>)`,
			"<p>[a](<a href=\"https://e.x/%22%3E\"" + rel + "https://e.x/&quot;&gt;</a>&lt;svg onload=alert(1)&gt;)</p>\n"},
		{"svg in angle url", `[a](<https://e.x/"><svg onload=alert(1)>)`,
			"<p>[a](<a href=\"https://e.x/%22\"" + rel + "https://e.x/&quot;</a>&lt;svg onload=alert(1)&gt;)</p>\n"},
		{"svg in autolink", `<https://e.x/"onmouseover="alert(1)>`,
			"<p><a href=\"https://e.x/%22onmouseover=%22alert(1)\"" + rel + "https://e.x/&quot;onmouseover=&quot;alert(1)</a></p>\n"},
		{"quote in title", `[a](https://e.x "x\" onmouseover=\"alert(1)")`,
			"<p><a href=\"https://e.x\" title=\"x&quot; onmouseover=&quot;alert(1)\"" + rel + "a</a></p>\n"},
		{"single quote in url", `[a](https://e.x/'onmouseover='alert(1))`,
			"<p><a href=\"https://e.x/%27onmouseover=%27alert(1)\"" + rel + "a</a></p>\n"},
		{"bare url with quote", `https://e.x/"onmouseover="alert(1)`,
			"<p><a href=\"https://e.x/%22onmouseover=%22alert(1)\"" + rel + "https://e.x/&quot;onmouseover=&quot;alert(1)</a></p>\n"},
		{"code block closing tags", "```\n</code></pre><script>alert(1)</script>\n```",
			"<pre><code>&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;\n</code></pre>\n"},
		{"code block lang", "```\"><script>\nx\n```", "<pre><code class=\"language-script\">x\n</code></pre>\n"},
		{"code span closing tag", "`</code>`", "<p><code>&lt;/code&gt;</code></p>\n"},
		{"table cell html", "| h |\n|---|\n| <b>x</b> |",
			"<table>\n<thead>\n<tr>\n<th>h</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>&lt;b&gt;x&lt;/b&gt;</td>\n</tr>\n</tbody>\n</table>\n"},
		{"heading html", "# <i>title</i>", "<h3>&lt;i&gt;title&lt;/i&gt;</h3>\n"},
		{"style tag", "<style>body{display:none}</style>", "<p>&lt;style&gt;body{display:none}&lt;/style&gt;</p>\n"},
		{"iframe", `<iframe src="x"></iframe>`, "<p>&lt;iframe src=&quot;x&quot;&gt;&lt;/iframe&gt;</p>\n"},
		{"html comment", "<!-- x --> y", "<p>&lt;!-- x --&gt; y</p>\n"},
		{"entity smuggling", "&lt;script&gt; &#x3C;b&#62;", "<p>&lt;script&gt; &lt;b&gt;</p>\n"},
		{"task html", "- [ ] <b>x</b>", "<ul>\n<li class=\"task\"><input type=\"checkbox\" disabled> &lt;b&gt;x&lt;/b&gt;</li>\n</ul>\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := string(Render(tc.in))
			if got != tc.want {
				t.Errorf("Render(%q)\n got: %q\nwant: %q", tc.in, got, tc.want)
			}
			if err := checkHTML(got); err != nil {
				t.Errorf("Render(%q) = %q: %v", tc.in, got, err)
			}
		})
	}
}

// TestDepth: nesting past mdparse.MaxDepth is text, not deeper markup: a
// quote's or list's marker as written, emphasis as its content.
func TestDepth(t *testing.T) {
	t.Parallel()
	quotes := Render(strings.Repeat(">", 20) + " deep")
	want := strings.Repeat("<blockquote>\n", 16) + "<p>&gt;&gt;&gt;&gt; deep</p>\n" + strings.Repeat("</blockquote>\n", 16)
	if string(quotes) != want {
		t.Errorf("20 nested quotes:\n got: %q\nwant: %q", quotes, want)
	}
	var b strings.Builder
	for i := range 20 {
		b.WriteString(strings.Repeat("  ", i) + "- x\n")
	}
	if got := strings.Count(string(Render(b.String())), "<ul>"); got != 16 {
		t.Errorf("20 nested lists render %d <ul>, want 16", got)
	}
	em := string(Render(strings.Repeat("*a ", 20) + "b" + strings.Repeat(" c*", 20)))
	if got := strings.Count(em, "<em>"); got != 16 {
		t.Errorf("20 nested em render %d <em>, want 16: %s", got, em)
	}
	if !strings.Contains(em, "<em>a a a a a b c c c c c</em>") {
		t.Errorf("emphasis past the cap should be its text: %s", em)
	}
	if err := checkHTML(em); err != nil {
		t.Error(err)
	}
}

// TestAdversarial renders hostile inputs of up to 1 MiB: each renders,
// within a bounded size, to well-formed HTML. How long each takes is
// BenchmarkAdversarial's to say (a wall-clock limit here failed under a
// loaded CI machine: 13.5 s for what takes 0.17 s alone); the fuzz target
// and these inputs would hang the run on a blow-up, not pass it.
func TestAdversarial(t *testing.T) {
	t.Parallel()
	for _, tc := range adversarial() {
		t.Run(tc.name, func(t *testing.T) {
			out := string(renderPage(tc.in))
			if len(out) > 40*len(tc.in)+1000 {
				t.Errorf("%s: %d bytes rendered to %d", tc.name, len(tc.in), len(out))
			}
			if err := checkHTML(out); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		})
	}
}

// TestPlainTextRest: past maxMarkdown bytes, from the start of a line,
// the input shows as preformatted text.
func TestPlainTextRest(t *testing.T) {
	t.Parallel()
	md := "# a\n\n" + strings.Repeat("word word\n", maxMarkdown/10) + "# b <i>'\xff\n"
	got := string(Render(md))
	if !strings.HasPrefix(got, "<h3>a</h3>\n<p>word word\nword word") {
		t.Errorf("the start is not Markdown: %.80q", got)
	}
	if !strings.Contains(got, "word word</p>\n<pre><code>word word\n") ||
		!strings.HasSuffix(got, "word word\n# b &lt;i&gt;&#39;\uFFFD\n</code></pre>\n") {
		t.Errorf("the rest is not text: %q", got[max(0, len(got)-120):])
	}
	if err := checkHTML(got); err != nil {
		t.Error(err)
	}
	// One line past the bound is cut at a character.
	long := string(Render(strings.Repeat("é", maxMarkdown)))
	if !utf8.ValidString(long) || strings.Contains(long, "\uFFFD") || strings.Count(long, "é") != maxMarkdown {
		t.Errorf("the long line is cut inside a character: %q", long[len(long)-40:])
	}
	if got := string(Inline(strings.Repeat("*a* ", maxMarkdown))); !strings.HasSuffix(got, "*a* *a* ") || checkHTML(got) != nil {
		t.Errorf("Inline past the bound: %q", got[len(got)-40:])
	}
}

// TestCache: a cached render is the render, and the cache stays within
// its bound, dropping the oldest first.
func TestCache(t *testing.T) {
	t.Parallel()
	md, want, _ := plan()
	for range 2 {
		if got := string(Render(md)); got != want {
			t.Fatal("the cached plan differs from its render")
		}
	}
	c := htmlCache{html: map[string]template.HTML{}}
	entry := strings.Repeat("x", cacheMax/10)
	for i := range 25 {
		c.put(fmt.Sprint(i, entry), template.HTML(entry))
	}
	fit := cacheMax / (2*len(entry) + 2)
	if c.size > cacheMax || len(c.order) != len(c.html) || len(c.html) != fit {
		t.Errorf("cache holds %d bytes in %d entries (%d in order), want %d entries, at most %d bytes", c.size, len(c.html), len(c.order), fit, cacheMax)
	}
	if _, ok := c.get(fmt.Sprint(24, entry)); !ok {
		t.Error("the newest entry is gone")
	}
	if _, ok := c.get(fmt.Sprint(0, entry)); ok {
		t.Error("the oldest entry is kept")
	}
}

// TestCheckHTML: the oracle of the fuzz target rejects what it must.
func TestCheckHTML(t *testing.T) {
	t.Parallel()
	good := `<p>a &amp; &lt;b&gt; &quot;&#39;<a href="https://e.x/?a=1&amp;b" title="t &quot;x&quot;" rel="r" target="_blank">x</a></p>` +
		"\n<ul>\n<li class=\"task\"><input type=\"checkbox\" disabled checked> x<br>\n</li>\n</ul>\n<hr>\n"
	if err := checkHTML(good); err != nil {
		t.Errorf("checkHTML(%q) = %v, want nil", good, err)
	}
	for _, bad := range []string{
		"<script>", "<SCRIPT>", "<p>&lt;</p><ScRiPt src=x>", "<div></div>", "<img src=x>", "<svg>",
		`<a onclick="x">`, `<p onmouseover="x"></p>`, `<p style="x"></p>`, `<p id="x"></p>`,
		`<a href="javascript:alert(1)">x</a>`, `<a href="JavaScript:x">x</a>`, `<a href=" javascript:x">x</a>`,
		`<a href="data:text/html,x">x</a>`, `<a href="/x">x</a>`, `<a href="//x">x</a>`,
		`<a href="https://x" title="a"onclick="b">x</a>`, `<a href=https://x>x</a>`, `<a href="https://x'">x</a>`,
		`<p>a"b</p>`, `<p>a'b</p>`, `<p>a>b</p>`, "<p>a & b</p>", "<p>&#106;</p>",
		"<em><strong></em></strong>", "<p>", "</p>", `<a href="https://x"><a href="https://y">y</a></a>`,
		"<p/>", "<p >", "<!-- x -->",
	} {
		if checkHTML(bad) == nil {
			t.Errorf("checkHTML(%q) = nil, want an error", bad)
		}
	}
}

// TestRandomMarkdown renders documents made of Markdown's own pieces, which
// reach deeper into the parser than byte-level fuzzing does in little time.
func TestRandomMarkdown(t *testing.T) {
	t.Parallel()
	pieces := []string{
		"*", "**", "***", "_", "__", "~~", "~", "`", "``", "```", "~~~", "\\", "\\*", "&", "&amp;", "<", ">", "\"", "'",
		"[", "]", "![", "](", ")", "(", "](https://e.x)", "](javascript:alert(1))", "](https://e.x \"t\")", "](<https://e.x>)",
		"<https://e.x>", "<a@b.c>", "https://e.x/a_b", "http://e.x).", "javascript:", "<script>", "<img onerror=x>", " onload=",
		"\n", "\n\n", "\n- ", "\n* ", "\n1. ", "\n2) ", "\n  - ", "\n    ", "\n> ", "\n>> ", "\n# ", "\n### ", "\n---", "\n===",
		"\n| a | b |\n|---|:-:|\n", "|", "\\|", "\n```diff\n", "\n+x", "\n-y", "\n@@", "[ ] ", "[x] ", "\t", "  \n",
		"a", "b c", "snake_case", "word", " ", "é", "\u2028", "\x00", "\xff",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		md := b.String()
		if err := checkHTML(string(Render(md))); err != nil {
			t.Fatalf("Render(%q): %v\n%s", md, err, Render(md))
		}
		if err := checkHTML(string(Inline(md))); err != nil {
			t.Fatalf("Inline(%q): %v\n%s", md, err, Inline(md))
		}
	}
}

const mib = 1 << 20

func repeatTo(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }

func adversarial() []struct{ name, in string } {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "*_~[]()!<>`\\ \n\n|-#:ah/.\"'&1"
	random := make([]byte, mib)
	for i := range random {
		random[i] = alphabet[rng.IntN(len(alphabet))]
	}
	var deepQuotes, deepLists, wideTable strings.Builder
	for i := range 10000 {
		deepQuotes.WriteString(strings.Repeat(">", i%100) + " x\n")
	}
	for i := range 2000 {
		deepLists.WriteString(strings.Repeat(" ", i) + "- x\n")
	}
	wideTable.WriteString(strings.Repeat("|a", 20000) + "|\n" + strings.Repeat("|-", 20000) + "|\n")
	wideTable.WriteString(strings.Repeat("x\n", 300000))
	return []struct{ name, in string }{
		{"50000 stars", strings.Repeat("*", 50000)},
		{"a then 50000 stars", "a" + strings.Repeat("*", 50000)},
		{"1MiB stars", "a" + strings.Repeat("*", mib)},
		{"star words", repeatTo("*a ", mib)},
		{"star runs", repeatTo("*a **b ***c ", mib)},
		{"openers then closers", strings.Repeat("*a ", mib/6) + strings.Repeat("b* ", mib/6)},
		{"underscores", repeatTo("_a ", mib)},
		{"mixed delimiters", repeatTo("*_~~", mib)},
		{"tildes", repeatTo("~~a ", mib)},
		{"50000 brackets", strings.Repeat("[", 50000)},
		{"1MiB brackets", strings.Repeat("[", mib)},
		{"closing brackets", strings.Repeat("]", mib)},
		{"nested brackets", strings.Repeat("[", mib/2) + strings.Repeat("]", mib/2)},
		{"brackets then links", strings.Repeat("[", mib/4) + repeatTo("[a](https://b) ", mib/2)},
		{"images then links", strings.Repeat("[", mib/8) + strings.Repeat("![", mib/8) + repeatTo("[a](https://b) ", mib/2)},
		{"nested images", strings.Repeat("![", mib/20) + "a" + strings.Repeat("](https://b)", mib/20)},
		{"open link tails", repeatTo("[a](", mib)},
		{"open angle dests", repeatTo("[a](<b ", mib)},
		{"open titles", repeatTo(`[a](b "`, mib)},
		{"open titles single", repeatTo(`[a](b '`, mib)},
		{"open titles paren", repeatTo(`[a](b (`, mib)},
		{"unclosed title", `[a](b "` + repeatTo("[a](b ", mib)},
		{"deep parens", repeatTo("[a](b(", mib)},
		{"backticks", strings.Repeat("`", mib)},
		{"backtick runs", func() string {
			var b strings.Builder
			for n := 1; b.Len() < mib; n++ {
				b.WriteString(strings.Repeat("`", n%2000+1) + "a")
			}
			return b.String()
		}()},
		{"angles", strings.Repeat("<", mib)},
		{"angle words", repeatTo("<a", mib)},
		{"angle urls", repeatTo("<http://a", mib)},
		{"bare urls", repeatTo("https://a", mib)},
		{"bad bare urls", repeatTo("https://-", mib)},
		{"url punctuation", "https://a" + strings.Repeat(")", mib)},
		{"backslashes", strings.Repeat("\\", mib)},
		{"ampersands", strings.Repeat("&", mib)},
		{"pipes", strings.Repeat("|", mib)},
		{"10000 nested quotes", strings.Repeat(">", 10000) + " x"},
		{"1MiB nested quotes", strings.Repeat(">", mib)},
		{"deep quote lines", deepQuotes.String()},
		{"nested list markers", repeatTo("- ", mib) + "x"},
		{"deep list indentation", deepLists.String()},
		{"ordered markers", repeatTo("1. ", mib) + "x"},
		{"wide table short rows", wideTable.String()},
		{"table rows", "|a|b|\n|-|-|\n" + repeatTo("|x|\n", mib)},
		{"fences", repeatTo("```\n", mib)},
		{"headings", repeatTo("# a\n", mib)},
		{"setext", repeatTo("a\n-\n", mib)},
		{"blank lines", strings.Repeat("\n", mib)},
		{"tabs", strings.Repeat("\t", mib) + "x"},
		{"long line", repeatTo("word ", mib)},
		{"random", string(random)},
		// Each of these took goldmark alone seconds or more (mdparse's
		// link.go and linkref.go are the linear versions).
		{"reference definitions", repeatTo("[a]: b\n", mib)},
		{"bracket lines", repeatTo("[a]\n", mib)},
		{"reference link lines", repeatTo("[a][b]\n", mib)},
		{"collapsed references", repeatTo("[a][]\n", mib)},
		// Linear in goldmark too; here so that stays so.
		{"emails", repeatTo(" a@b.c", mib)},
		{"www links", repeatTo("(www.a", mib)},
		{"code span lines", repeatTo("`a\n", mib)},
		{"html tags", repeatTo("<a ", mib)},
		{"task items", repeatTo("- [ ] a\n", mib)},
		{"list items", repeatTo("- a\n", mib)},
		{"tables", repeatTo("|a|\n|-|\n", mib)},
		{"hard breaks", repeatTo("a    \n", mib)},
		{"nested strikethrough", strings.Repeat("~~a ", mib/8) + strings.Repeat("b~~ ", mib/8)},
		{"multibyte line", repeatTo("é*", mib)},
	}
}

// TestGoldenPlan renders a realistic ~40 KB plan and compares it with the HTML
// built alongside it: every section renders, in order, nothing cut.
func TestGoldenPlan(t *testing.T) {
	t.Parallel()
	md, want, headings := plan()
	if len(md) < 40000 {
		t.Fatalf("plan is %d bytes, want ≥ 40000", len(md))
	}
	got := string(Render(md))
	for _, h := range headings {
		if !strings.Contains(got, ">"+h+"</h") {
			t.Errorf("heading %q missing from the output", h)
		}
	}
	if got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("plan output differs at byte %d:\n got: %q\nwant: %q", i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
	}
	if err := checkHTML(got); err != nil {
		t.Error(err)
	}
}

// plan returns a plan of repeated sections, the HTML it must render to and
// the text of its section headings.
func plan() (md, html string, headings []string) {
	var m, h strings.Builder
	m.WriteString("# Migration plan: sessions to Redis\n\nThis plan moves **session state** out of process memory.\n\n")
	h.WriteString("<h3>Migration plan: sessions to Redis</h3>\n<p>This plan moves <strong>session state</strong> out of process memory.</p>\n")
	headings = append(headings, "Migration plan: sessions to Redis")
	for i := 1; m.Len() < 41000; i++ {
		title := fmt.Sprintf("Step %d: move store_%d behind an interface", i, i)
		headings = append(headings, title, fmt.Sprintf("Risks for step %d", i))
		fmt.Fprintf(&m, `## %[2]s

Step %[1]d changes `+"`store_%[1]d.go`"+` so that callers use the *interface*; see
https://example.com/design/%[1]d. Nothing else changes in step_%[1]d.

- [x] write the interface
- [ ] port the callers:
  - `+"`internal/a%[1]d`"+`
  - `+"`internal/b%[1]d`"+` (**hard**)
- [ ] delete the old code

1. Run the tests.
2. Deploy to staging.

| File | Lines | Risk |
|:-----|------:|:----:|
| store_%[1]d.go | %[1]d0 | low |
| api_%[1]d.go | 2%[1]d | high |

`+"```diff"+`
--- a/store_%[1]d.go
+++ b/store_%[1]d.go
@@ -1,3 +1,3 @@
 package store
-var m = map[string]int{}
+var m Store
`+"```"+`

`+"```go"+`
func Get%[1]d(ctx context.Context) (int, error) {
	return s.Get(ctx, "k<%[1]d>")
}
`+"```"+`

### Risks for step %[1]d

> Rolling back needs the old binary & a flush.
> See [the runbook](https://example.com/runbook#step-%[1]d "Runbook").

---

`, i, title)
		fmt.Fprintf(&h, `<h4>%[2]s</h4>
<p>Step %[1]d changes <code>store_%[1]d.go</code> so that callers use the <em>interface</em>; see
<a href="https://example.com/design/%[1]d"`+rel+`https://example.com/design/%[1]d</a>. Nothing else changes in step_%[1]d.</p>
<ul>
<li class="task"><input type="checkbox" disabled checked> write the interface</li>
<li class="task"><input type="checkbox" disabled> port the callers:
<ul>
<li><code>internal/a%[1]d</code></li>
<li><code>internal/b%[1]d</code> (<strong>hard</strong>)</li>
</ul>
</li>
<li class="task"><input type="checkbox" disabled> delete the old code</li>
</ul>
<ol>
<li>Run the tests.</li>
<li>Deploy to staging.</li>
</ol>
<table>
<thead>
<tr>
<th class="left">File</th>
<th class="right">Lines</th>
<th class="center">Risk</th>
</tr>
</thead>
<tbody>
<tr>
<td class="left">store_%[1]d.go</td>
<td class="right">%[1]d0</td>
<td class="center">low</td>
</tr>
<tr>
<td class="left">api_%[1]d.go</td>
<td class="right">2%[1]d</td>
<td class="center">high</td>
</tr>
</tbody>
</table>
<pre><code class="language-diff">--- a/store_%[1]d.go
+++ b/store_%[1]d.go
<span class="hunk">@@ -1,3 +1,3 @@</span>
 package store
<span class="del">-var m = map[string]int{}</span>
<span class="add">+var m Store</span>
</code></pre>
<pre><code class="language-go">func Get%[1]d(ctx context.Context) (int, error) {
	return s.Get(ctx, &quot;k&lt;%[1]d&gt;&quot;)
}
</code></pre>
<h5>Risks for step %[1]d</h5>
<blockquote>
<p>Rolling back needs the old binary &amp; a flush.
See <a href="https://example.com/runbook#step-%[1]d" title="Runbook"`+rel+`the runbook</a>.</p>
</blockquote>
<hr>
`, i, title)
	}
	m.WriteString("## Done\n\nThe **last** line.\n")
	h.WriteString("<h4>Done</h4>\n<p>The <strong>last</strong> line.</p>\n")
	headings = append(headings, "Done")
	return m.String(), h.String(), headings
}

func FuzzRender(f *testing.F) {
	md, _, _ := plan()
	for _, s := range []string{
		"", "# h\n\ntext *em* **strong** `code` ~~del~~",
		"- [ ] a\n  - b\n\n1. c\n> q\n>> r",
		"| a | b |\n|:-|-:|\n| 1 |\n",
		"```diff\n+a\n-b\n@@\n```", "    code",
		"[x](javascript:alert(1)) [y](https://e.x \"t\") ![i](https://i.x) <https://a.b> <a@b.c> https://c.d/e).",
		"<script>alert(1)</script><img src=x onerror=alert(1)>",
		`[a"><svg onload=alert(1)>](https://x) [b](https://e.x/"><svg/onload=alert(1)>)`,
		"***a*** _a_b_ __a__ *a **b** c*", "\\* \\\n &amp; &#60;",
		"Title\n===\nSub\n---\n***", strings.Repeat(">", 40) + " x",
		md[:4000],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(renderPage(s))
		if err := checkHTML(out); err != nil {
			t.Fatalf("Render(%q) = %q: %v", s, out, err)
		}
		if again := string(renderPage(s)); again != out {
			t.Fatalf("Render(%q) is not deterministic", s)
		}
		in := string(Inline(s))
		if err := checkHTML(in); err != nil {
			t.Fatalf("Inline(%q) = %q: %v", s, in, err)
		}
	})
}

// BenchmarkRender40KB renders a 40 KB plan, not from the cache.
func BenchmarkRender40KB(b *testing.B) {
	md, _, _ := plan()
	b.SetBytes(int64(len(md)))
	b.ReportAllocs()
	for b.Loop() {
		renderPage(md)
	}
}

// BenchmarkRender40KBCached is a view of the page after the first.
func BenchmarkRender40KBCached(b *testing.B) {
	md, _, _ := plan()
	b.ReportAllocs()
	for b.Loop() {
		Render(md)
	}
}

// BenchmarkAdversarial reports the time of each hostile 1 MiB input.
func BenchmarkAdversarial(b *testing.B) {
	for _, tc := range adversarial() {
		b.Run(strings.ReplaceAll(tc.name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(tc.in)))
			for b.Loop() {
				renderPage(tc.in)
			}
		})
	}
}

var (
	allowedTags = map[string]bool{
		"h3": true, "h4": true, "h5": true, "h6": true, "p": true, "br": true, "pre": true, "code": true,
		"span": true, "ul": true, "ol": true, "li": true, "input": true, "blockquote": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "hr": true,
		"strong": true, "em": true, "del": true, "a": true,
	}
	voidTags     = map[string]bool{"br": true, "hr": true, "input": true}
	allowedAttrs = map[string]bool{
		"class": true, "href": true, "rel": true, "target": true, "title": true,
		"start": true, "type": true, "disabled": true, "checked": true,
	}
	onAttr   = regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	entities = []string{"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"}
)

// checkHTML tokenizes out and reports the first thing that is not safe,
// allowlisted, well-formed HTML: <script anywhere, a tag or attribute
// outside the allowlists, an on…= event attribute, an href whose scheme is
// not http, https or mailto (so never javascript:), an unescaped < > " ' or
// a bare & in text or in an attribute value, an unclosed or misnested tag,
// a link inside a link.
func checkHTML(out string) error {
	if strings.Contains(strings.ToLower(out), "<script") {
		return fmt.Errorf("contains <script")
	}
	var stack []string
	lower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	for i := 0; i < len(out); {
		switch out[i] {
		case '<':
			j := i + 1
			closing := j < len(out) && out[j] == '/'
			if closing {
				j++
			}
			k := j
			for k < len(out) && (lower(out[k]) || '0' <= out[k] && out[k] <= '9') {
				k++
			}
			name := out[j:k]
			if !allowedTags[name] {
				return fmt.Errorf("tag %.20q not allowed", out[i:])
			}
			// Attributes: ` name` or ` name="value"`, then >.
			var names []string
			for k < len(out) && out[k] == ' ' {
				n := k + 1
				for n < len(out) && lower(out[n]) {
					n++
				}
				attr := out[k+1 : n]
				if !allowedAttrs[attr] || closing {
					return fmt.Errorf("attribute %q not allowed in %.80q", attr, out[i:])
				}
				names = append(names, " "+attr+"=")
				k = n
				if k < len(out) && out[k] == '=' {
					if k+1 >= len(out) || out[k+1] != '"' {
						return fmt.Errorf("unquoted attribute in %.80q", out[i:])
					}
					e := strings.IndexByte(out[k+2:], '"')
					if e < 0 {
						return fmt.Errorf("unterminated attribute in %.80q", out[i:])
					}
					value := out[k+2 : k+2+e]
					if strings.ContainsAny(value, "<>'") {
						return fmt.Errorf("unescaped character in attribute %q", value)
					}
					if err := checkEntities(value); err != nil {
						return err
					}
					if attr == "href" {
						href := strings.ToLower(html.UnescapeString(value))
						if !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "http://") && !strings.HasPrefix(href, "mailto:") {
							return fmt.Errorf("href %q not allowed", value)
						}
					}
					k += 2 + e + 1
				}
			}
			if onAttr.MatchString(strings.Join(names, "")) {
				return fmt.Errorf("event attribute in %.80q", out[i:])
			}
			if k >= len(out) || out[k] != '>' {
				return fmt.Errorf("bad tag %.80q", out[i:])
			}
			switch {
			case closing:
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return fmt.Errorf("</%s> closes %v", name, stack)
				}
				stack = stack[:len(stack)-1]
			case voidTags[name]:
			default:
				if name == "a" && slices.Contains(stack, "a") {
					return fmt.Errorf("link inside a link")
				}
				stack = append(stack, name)
			}
			i = k + 1
		case '>', '"', '\'':
			return fmt.Errorf("unescaped %c in text at %d: %.40q", out[i], i, out[max(0, i-20):])
		default:
			j := strings.IndexAny(out[i:], "<>\"'")
			if j < 0 {
				j = len(out) - i
			}
			if j == 0 {
				j = 1
			}
			if err := checkEntities(out[i : i+j]); err != nil {
				return err
			}
			i += j
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %v", stack)
	}
	return nil
}

// checkEntities: every & in s starts one of the references the renderer
// writes.
func checkEntities(s string) error {
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			return nil
		}
		s = s[i:]
		ok := false
		for _, e := range entities {
			if strings.HasPrefix(s, e) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("bare & at %.20q", s)
		}
		s = s[1:]
	}
}
