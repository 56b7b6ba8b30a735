package blocks

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/askslack/askslack/internal/mdparse"
)

// MarkdownToMrkdwn rewrites an agent's Markdown to Slack mrkdwn, read as the
// answer page reads it (internal/mdparse: CommonMark with GitHub's tables,
// task lists, strikethrough and bare-URL links). Headings are bold lines;
// strong, emphasis and strikethrough are *x*, _x_ and ~x~; code spans and
// code blocks stay code (a fence loses its language tag, which Slack would
// show as code); lists are bulleted or numbered, nested ones indented, task
// items ☐ and ☑; quotes are "> " lines and a thematic break is a rule.
// mrkdwn has no tables: a table is a line per row, its cells separated by
// " | " and the header's bold, so links and styles in cells still work and
// nothing pretends to align columns in a proportional font. A blank line
// between blocks stays where the agent wrote one. What mrkdwn would read
// differently is kept from it: a style inside a word (which mrkdwn does not
// style) keeps the delimiters written, and a literal backtick, or a '*' in
// bold, is a look-alike.
//
// All text is escaped (Escape), so a plan cannot ping @channel or forge a
// <url|label> link. Only http(s) and mailto links become Slack links, and a
// written link names its host (or address) after its label, so a label
// cannot pass off one site as another; any other link stays as written.
func MarkdownToMrkdwn(md string) string {
	doc, src := mdparse.Parse(clean(md))
	w := mdWriter{src: src, fresh: true}
	w.blocks(doc)
	return strings.TrimLeft(w.b.String(), "\n") // as an empty heading leaves
}

// mdWriter writes mrkdwn for a goldmark tree.
type mdWriter struct {
	b      bytes.Buffer
	src    []byte
	quote  bool   // in a block quote: lines start "> " (nested quotes collapse)
	indent string // lines in a list item start with its indentation
	fresh  bool   // nothing is written on this line yet, not even its prefix
	open   string // the style markers open, outermost first
	label  bool   // in a link's label: one line, no '|'
}

// write writes s, first the line's quote marker and indentation if s
// starts the line.
func (w *mdWriter) write(s string) {
	if w.fresh {
		w.fresh = false
		if w.quote {
			w.b.WriteString("> ")
		}
		w.b.WriteString(w.indent)
	}
	w.b.WriteString(s)
}

func (w *mdWriter) nl() {
	w.b.WriteByte('\n')
	w.fresh = true
}

// blocks writes parent's blocks a line apart, or a blank line where the
// Markdown has one.
func (w *mdWriter) blocks(parent ast.Node) {
	first := true
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		if n.Kind() == ast.KindLinkReferenceDefinition {
			continue // it only defines a link's target
		}
		if !first {
			w.sep(n)
		}
		first = false
		w.block(n)
	}
}

func (w *mdWriter) sep(n ast.Node) {
	w.nl()
	if n.HasBlankPreviousLines() {
		if w.quote {
			w.b.WriteString("> ")
		}
		w.b.WriteByte('\n')
	}
}

func (w *mdWriter) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		w.styled("*", n) // a bold line; bold inside it adds nothing
	case *ast.ThematicBreak:
		w.write("──────────")
	case *ast.CodeBlock:
		w.code(n.Lines())
	case *ast.FencedCodeBlock:
		w.code(n.Lines())
	case *ast.Blockquote:
		q := w.quote
		w.quote = true
		w.blocks(n)
		w.quote = q
	case *ast.List:
		w.list(n)
	case *ast.HTMLBlock:
		html := segText(w.src, n.Lines())
		if n.HasClosure() {
			html += string(n.ClosureLine.Value(w.src))
		}
		w.html(html)
	case *extast.Table:
		for row := n.FirstChild(); row != nil; row = row.NextSibling() {
			if row != n.FirstChild() {
				w.nl()
			}
			for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
				if cell != row.FirstChild() {
					w.write(" | ")
				}
				if row.Kind() == extast.KindTableHeader {
					w.styled("*", cell)
				} else {
					w.inlines(cell)
				}
			}
		}
	default: // paragraphs, and whatever else holds inlines
		w.inlines(n)
	}
}

// bullets mark the items of bullet lists by depth, as Slack's own lists do.
var bullets = [...]string{"• ", "◦ ", "▪ "}

const listIndent = "    "

func (w *mdWriter) list(l *ast.List) {
	indent := w.indent
	k := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			w.sep(item)
		}
		switch c := item.FirstChild(); {
		case l.IsOrdered():
			w.write(strconv.Itoa(k) + string(l.Marker) + " ")
			k++
		case c != nil && c.FirstChild() != nil && c.FirstChild().Kind() == extast.KindTaskCheckBox:
			w.write("") // the box is the item's mark
		default:
			w.write(bullets[len(indent)/len(listIndent)%len(bullets)])
		}
		w.indent = indent + listIndent
		w.blocks(item)
		w.indent = indent
	}
}

// code writes a code block from the start of a line, without the quote
// marker or indentation, which would be part of the code. A "```" in the
// code, which would end it, is written with look-alikes.
func (w *mdWriter) code(lines *text.Segments) {
	if !w.fresh {
		w.nl()
	}
	w.b.WriteString(fence)
	for i := range lines.Len() {
		seg := lines.At(i)
		line := strings.TrimSuffix(string(seg.Value(w.src)), "\n")
		w.b.WriteString("\n" + Escape(strings.ReplaceAll(line, fence, "ˋˋˋ")))
	}
	w.b.WriteString("\n" + fence)
	w.fresh = false
}

// segText is the source text of segs.
func segText(src []byte, segs *text.Segments) string {
	var b strings.Builder
	for i := range segs.Len() {
		seg := segs.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

// html writes HTML as written, as text.
func (w *mdWriter) html(s string) {
	for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if i > 0 {
			w.br()
		}
		w.text(l)
	}
}

// br breaks the line, closing the styles open and opening them again on
// the next line, since a mrkdwn style does not span lines. A label stays
// on its line.
func (w *mdWriter) br() {
	if w.label {
		w.b.WriteByte(' ')
		return
	}
	for i := len(w.open) - 1; i >= 0; i-- {
		w.b.WriteByte(w.open[i])
	}
	w.nl()
	w.write(w.open)
}

// styled writes n's inlines between marker, once: mrkdwn has no bold in
// bold. Nothing is written for nothing.
func (w *mdWriter) styled(marker string, n ast.Node) {
	if strings.Contains(w.open, marker) {
		w.inlines(n)
		return
	}
	w.write(marker)
	start := w.b.Len()
	w.open += marker
	w.inlines(n)
	w.open = w.open[:len(w.open)-1]
	if w.b.Len() == start {
		w.b.Truncate(start - len(marker))
	} else {
		w.b.WriteString(marker)
	}
}

// style writes n, an emphasis of k delimiters, with marker: a style that
// touches a letter or digit around it, which mrkdwn does not read as one
// ("2*3*4", "snake**case**"), is written with its delimiters as written.
func (w *mdWriter) style(n ast.Node, marker string, k int) {
	before, _ := utf8.DecodeLastRune(w.b.Bytes())
	after := ' '
	if t, ok := n.NextSibling().(*ast.Text); ok {
		after, _ = utf8.DecodeRune(t.Value(w.src))
	}
	if !isWord(before) && !isWord(after) || strings.Contains(w.open, marker) || n.Pos() < 0 || n.Pos() >= len(w.src) {
		w.styled(marker, n)
		return
	}
	d := strings.Repeat(string(w.src[n.Pos()]), k)
	w.text(d)
	w.inlines(n)
	w.text(d)
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func (w *mdWriter) inlines(parent ast.Node) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		w.inline(n)
	}
}

func (w *mdWriter) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		if n.IsRaw() {
			w.text(string(n.Value(w.src)))
		} else {
			w.text(plainText(n.Value(w.src)))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			w.br()
		}
	case *ast.String:
		w.text(string(n.Value))
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Value(w.src))
			}
		}
		w.write("`")
		w.raw(codeText.Replace(b.String()))
		w.write("`")
	case *ast.Emphasis:
		w.style(n, "_*"[n.Level-1:n.Level], n.Level)
	case *extast.Strikethrough:
		w.style(n, "~", 2)
	case *extast.TaskCheckBox:
		if n.IsChecked {
			w.write("☑ ")
		} else {
			w.write("☐ ")
		}
	case *ast.Link:
		w.link(n.Destination, n, "")
	case *ast.Image:
		w.link(n.Destination, n, "!")
	case *ast.AutoLink:
		href, label := string(util.URLEscape(n.URL(w.src), false)), string(n.Label(w.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(href), "mailto:") {
			href = "mailto:" + href
		}
		if _, ok := target(href); !ok || w.label {
			w.text(label)
			return
		}
		// The label is the address: it needs no host after it.
		w.write("<" + slackURL(href) + "|")
		w.label = true
		w.raw(label)
		w.label = false
		w.write(">")
	case *ast.RawHTML:
		w.html(segText(w.src, n.Segments))
	default:
		w.inlines(n)
	}
}

// link writes a link to dest labelled with n's inlines: a Slack link for
// http(s) and mailto, its host or address after it; anything else as
// written ("!" before an image), so that nothing is hidden. In a label,
// where a link cannot nest, only its label.
func (w *mdWriter) link(dest []byte, n ast.Node, bang string) {
	href := string(util.URLEscape(dest, true))
	host, ok := target(href)
	switch {
	case w.label:
		w.inlines(n)
	case !ok:
		w.text(bang + "[")
		w.inlines(n)
		w.text("](" + plainText(dest) + ")")
	default:
		w.write("<" + slackURL(href) + "|")
		w.label = true
		start := w.b.Len()
		w.inlines(n)
		if w.b.Len() == start {
			w.raw(href)
		}
		w.label = false
		w.write("> (")
		w.raw(host)
		w.write(")")
	}
}

// target is where an http(s) or mailto URL leads, its host or address;
// ok is false for any other URL.
func target(href string) (string, bool) {
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Hostname(), u.Hostname() != ""
	case "mailto":
		addr, _, _ := strings.Cut(u.Opaque, "?")
		return addr, addr != ""
	}
	return "", false
}

// slackURL is href for a Slack link, where '&', '<', '>' and '|' would
// end or break it.
func slackURL(href string) string { return urlText.Replace(href) }

var (
	urlText = strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C")
	// mrkdwn cannot show a backtick in code: a look-alike does.
	codeText = strings.NewReplacer("\n", " ", "`", "ˋ")
)

// text writes prose, with look-alikes for a '*' in bold, which would end
// it, and for a backtick, which with others could start code in mrkdwn
// where CommonMark reads none.
func (w *mdWriter) text(s string) {
	if strings.Contains(w.open, "*") {
		s = strings.ReplaceAll(s, "*", "∗")
	}
	w.raw(strings.ReplaceAll(s, "`", "ˋ"))
}

// raw writes s escaped; in a label, a '|' (which would end it) as '¦'.
func (w *mdWriter) raw(s string) {
	if w.label {
		s = strings.ReplaceAll(s, "|", "¦")
	}
	w.write(Escape(s))
}

// plainText is Markdown text as it reads: a backslash before punctuation
// dropped, entity and numeric references resolved, and what they resolve
// to cleaned (clean) and on one line.
func plainText(v []byte) string {
	if !bytes.ContainsAny(v, `\&`) {
		return string(v)
	}
	var b []byte
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && util.IsPunct(v[i+1]) {
			i++
		} else if v[i] == '&' {
			j := i + 1
			for j < len(v) && (v[j] == '#' || util.IsAlphaNumeric(v[j])) {
				j++
			}
			if ref := v[i:min(j+1, len(v))]; j < len(v) && v[j] == ';' {
				if r := util.ResolveEntityNames(util.ResolveNumericReferences(ref)); !bytes.Equal(r, ref) {
					b, i = append(b, strings.ReplaceAll(clean(string(r)), "\n", " ")...), j
					continue
				}
			}
		}
		b = append(b, v[i])
	}
	return string(b)
}

const fence = "```"

// mdChunk is chunk over MarkdownToMrkdwn(md), converting only as much of a
// long text as the budget can show.
func mdChunk(md string, size, total int) ([]string, bool) {
	h, more := head(md, 2*total+1000)
	pieces, m := chunk(MarkdownToMrkdwn(h), size, total)
	return pieces, m || more
}

// chunk splits mrkdwn text into pieces of at most size characters each, in
// order, stopping once total characters are used; more reports whether
// text was left out. Pieces break at paragraph or line ends where they can,
// never inside an entity or a <link>, and a code block cut between pieces is
// closed and reopened so each piece renders on its own.
func chunk(s string, size, total int) (out []string, more bool) {
	s = strings.Trim(s, "\n")
	inFence := false
	used := 0
	for s != "" {
		room := min(size, total-used)
		prefix := ""
		if inFence {
			prefix = fence + "\n"
		}
		// Reserve room for reopening and closing a code block.
		avail := room - runes(prefix) - len("\n"+fence)
		if avail < 40 {
			return out, true
		}
		piece, rest := cut(s, avail)
		open := inFence
		for _, l := range strings.Split(piece, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), fence) {
				open = !open
			}
		}
		text := prefix + piece
		if open {
			text += "\n" + fence
		}
		if strings.TrimSpace(text) != "" {
			out = append(out, text)
			used += runes(text)
		}
		inFence = open
		s = strings.TrimLeft(rest, "\n")
	}
	return out, false
}

// cut returns the longest head of s of at most n characters that ends at a
// good break, and the rest.
func cut(s string, n int) (string, string) {
	head, more := head(s, n)
	if !more {
		return s, ""
	}
	end := len(head)
	// Prefer a paragraph break, then a line break, then a space, in the
	// second half of the window.
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(head, sep); i > len(head)/2 {
			if j := safeEnd(s, i); j > 0 {
				if j == i && sep == " " {
					return s[:j], s[j+1:] // the space breaks; neither piece keeps it
				}
				return s[:j], s[j:]
			}
		}
	}
	if j := safeEnd(s, end); j > 0 {
		end = j
	}
	return s[:end], s[end:]
}

// safeEnd moves a cut at byte end back so it splits neither an entity
// ("&amp;") nor a <link>. It returns 0 when no such cut exists.
func safeEnd(s string, end int) int {
	if i := strings.LastIndexByte(s[:end], '&'); i >= 0 && !strings.Contains(s[i:end], ";") {
		end = i
	}
	if i := strings.LastIndexByte(s[:end], '<'); i >= 0 && !strings.Contains(s[i:end], ">") {
		end = i
	}
	return end
}
