package mdhtml

import (
	"bytes"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// page and inline are goldmark's HTML renderer, GFM's table and
// strikethrough renderers, and the hooks below, which take over the node
// kinds whose HTML this package decides. The renderers are listed here,
// not taken from mdparse's extensions: a node kind none of them knows
// renders as its content, never as markup an extension chose.
var (
	page   = newRenderer(hooks{})
	inline = newRenderer(hooks{inline: true})
)

func newRenderer(h hooks) renderer.Renderer {
	return renderer.NewRenderer(renderer.WithNodeRenderers(
		// Without html.WithUnsafe: a javascript: URL would be dropped
		// and raw HTML commented out, if the hooks did not handle both.
		util.Prioritized(html.NewRenderer(), 1000),
		util.Prioritized(extension.NewTableHTMLRenderer(), 500),
		util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500),
		util.Prioritized(h, 100),
	))
}

// out is the renderers' writer: it gathers the page and escapes every '
// (goldmark escapes & < > " only; no markup written here holds a ').
// anchor is the link whose <a> is open, so that nothing inside it writes
// another.
type out struct {
	buf    []byte
	anchor ast.Node
}

func (o *out) Write(p []byte) (int, error) {
	for {
		i := bytes.IndexByte(p, '\'')
		if i < 0 {
			o.buf = append(o.buf, p...)
			return len(p), nil
		}
		o.buf = append(append(o.buf, p[:i]...), "&#39;"...)
		p = p[i+1:]
	}
}

func (o *out) WriteString(s string) (int, error) {
	return o.Write(util.StringToReadOnlyBytes(s))
}

func (o *out) WriteByte(c byte) error {
	if c == '\'' {
		o.buf = append(o.buf, "&#39;"...)
	} else {
		o.buf = append(o.buf, c)
	}
	return nil
}

func (o *out) WriteRune(r rune) (int, error) {
	if r == '\'' {
		return o.WriteString("&#39;")
	}
	n := len(o.buf)
	o.buf = utf8.AppendRune(o.buf, r)
	return len(o.buf) - n, nil
}

func (o *out) Available() int { return 1 << 20 }
func (o *out) Buffered() int  { return len(o.buf) }
func (o *out) Flush() error   { return nil }

// escText writes s as text: references and backslash escapes resolved, as
// in a paragraph, then escaped.
func escText(w util.BufWriter, s []byte) { html.DefaultWriter.Write(w, s) }

// escRaw writes s escaped, as written.
func escRaw(w util.BufWriter, s []byte) { html.DefaultWriter.RawWrite(w, s) }

// hooks render what this package decides: shifted headings, fenced code
// with its language and diff lines, raw HTML as text, links and images
// checked, task items and aligned cells with classes. With inline set,
// paragraphs write no <p>.
type hooks struct{ inline bool }

func (h hooks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHeading, heading)
	reg.Register(ast.KindFencedCodeBlock, fencedCode)
	reg.Register(ast.KindHTMLBlock, htmlBlock)
	reg.Register(ast.KindRawHTML, rawHTML)
	reg.Register(ast.KindLink, link)
	reg.Register(ast.KindAutoLink, autoLink)
	reg.Register(ast.KindImage, image)
	reg.Register(ast.KindListItem, listItem)
	reg.Register(east.KindTaskCheckBox, taskCheckBox)
	reg.Register(east.KindTableCell, tableCell)
	if h.inline {
		reg.Register(ast.KindParagraph, inlineParagraph)
	}
}

// heading shifts levels down two: the page has its own h1 and h2.
func heading(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	tag := "h3h4h5h6"[2*min(node.(*ast.Heading).Level-1, 3):][:2]
	if entering {
		_, _ = w.WriteString("<" + tag + ">")
	} else {
		_, _ = w.WriteString("</" + tag + ">\n")
	}
	return ast.WalkContinue, nil
}

// fencedCode writes the info string's first word, reduced to
// [A-Za-z0-9_+-] and 20 characters, as the language class, and marks a
// diff's lines.
func fencedCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	_, _ = w.WriteString("<pre><code")
	var lang []byte
	if n.Info != nil {
		lang = language(n.Info.Segment.Value(source))
		if len(lang) > 0 {
			_, _ = w.WriteString(` class="language-`)
			_, _ = w.Write(lang)
			_ = w.WriteByte('"')
		}
	}
	_ = w.WriteByte('>')
	lines := n.Lines()
	diff := bytes.EqualFold(lang, []byte("diff")) || bytes.EqualFold(lang, []byte("patch")) || looksLikeDiff(source, lines)
	for i := range lines.Len() {
		seg := lines.At(i)
		line := seg.Value(source)
		class := ""
		if diff {
			switch {
			case bytes.HasPrefix(line, []byte("+++")), bytes.HasPrefix(line, []byte("---")):
			case bytes.HasPrefix(line, []byte("+")):
				class = "add"
			case bytes.HasPrefix(line, []byte("-")):
				class = "del"
			case bytes.HasPrefix(line, []byte("@@")):
				class = "hunk"
			}
		}
		if class == "" {
			escRaw(w, line)
			continue
		}
		body, nl := bytes.CutSuffix(line, []byte("\n"))
		_, _ = w.WriteString(`<span class="` + class + `">`)
		escRaw(w, body)
		_, _ = w.WriteString("</span>")
		if nl {
			_ = w.WriteByte('\n')
		}
	}
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// language is the info string's first word, with its escapes and
// references resolved, kept to [A-Za-z0-9_+-] and 20 characters: it goes
// into a class attribute.
func language(info []byte) []byte {
	info = bytes.TrimLeft(info, " \t")
	if i := bytes.IndexAny(info, " \t"); i >= 0 {
		info = info[:i]
	}
	info = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(info)))
	lang := make([]byte, 0, min(len(info), 20))
	for _, c := range info {
		if len(lang) == 20 {
			break
		}
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '+' || c == '-' {
			lang = append(lang, c)
		}
	}
	return lang
}

// looksLikeDiff: agents often fence a diff without saying so. It is one
// when its first non-blank line starts a diff's header or hunk.
func looksLikeDiff(source []byte, lines *text.Segments) bool {
	for i := range lines.Len() {
		seg := lines.At(i)
		l := seg.Value(source)
		if util.IsBlank(l) {
			continue
		}
		return bytes.HasPrefix(l, []byte("--- ")) || bytes.HasPrefix(l, []byte("+++ ")) ||
			bytes.HasPrefix(l, []byte("@@")) || bytes.HasPrefix(l, []byte("diff --git"))
	}
	return false
}

// htmlBlock shows a block of raw HTML as the text it is, in a paragraph.
func htmlBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var b []byte
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		b = append(b, seg.Value(source)...)
	}
	if n.HasClosure() {
		b = append(b, n.ClosureLine.Value(source)...)
	}
	_, _ = w.WriteString("<p>")
	escRaw(w, bytes.TrimRight(b, "\n"))
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// rawHTML shows inline raw HTML as the text it is.
func rawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := node.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			escRaw(w, seg.Value(source))
		}
	}
	return ast.WalkSkipChildren, nil
}

// link writes an <a> only for an allowed URL and not inside another link;
// otherwise its content alone. A link without content shows its URL.
func link(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	o := w.(*out)
	if !entering {
		if o.anchor == node {
			_, _ = w.WriteString("</a>")
			o.anchor = nil
		}
		return ast.WalkContinue, nil
	}
	dest := resolve(n.Destination)
	if o.anchor != nil || !allowedURL(dest) {
		return ast.WalkContinue, nil
	}
	openLink(w, dest, n.Title)
	o.anchor = node
	if n.FirstChild() == nil {
		escRaw(w, dest)
	}
	return ast.WalkContinue, nil
}

// image renders as a link to the image, whose text is the alt text (the
// URL when there is none); with a URL not allowed, or inside a link, as
// its alt text alone.
func image(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	o := w.(*out)
	dest := resolve(n.Destination)
	if o.anchor != nil || !allowedURL(dest) {
		plainText(w, source, n)
		return ast.WalkSkipChildren, nil
	}
	openLink(w, dest, n.Title)
	if n.FirstChild() == nil {
		escRaw(w, dest)
	} else {
		plainText(w, source, n)
	}
	_, _ = w.WriteString("</a>")
	return ast.WalkSkipChildren, nil
}

// autoLink writes <https://…>, <a@b.c> and bare URLs as links; inside a
// link, or with a scheme not allowed, as their text alone.
func autoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := n.Label(source)
	url := n.URL(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !hasPrefixFold(url, "mailto:") {
		url = append([]byte("mailto:"), url...)
	}
	if w.(*out).anchor != nil || !allowedURL(url) {
		escRaw(w, label)
		return ast.WalkContinue, nil
	}
	openLink(w, url, nil)
	escRaw(w, label)
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// resolve is a destination as the browser would read it: backslash
// escapes and character references resolved.
func resolve(dest []byte) []byte {
	return util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(dest)))
}

// allowedURL: only these schemes can do nothing but navigate. Checked on
// the resolved destination, so no escape or reference can hide a scheme.
func allowedURL(u []byte) bool {
	for _, scheme := range [...]string{"https://", "http://", "mailto:"} {
		if len(u) > len(scheme) && hasPrefixFold(u, scheme) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s []byte, prefix string) bool {
	return len(s) >= len(prefix) && bytes.EqualFold(s[:len(prefix)], []byte(prefix))
}

// openLink writes <a href title rel target>. The URL is percent-encoded
// where CommonMark's renderers encode it, and also at ' (the attribute
// is quoted with ", which is escaped).
func openLink(w util.BufWriter, url, title []byte) {
	_, _ = w.WriteString(`<a href="`)
	u := util.URLEscape(url, false)
	for len(u) > 0 {
		i := bytes.IndexByte(u, '\'')
		if i < 0 {
			escRaw(w, u)
			break
		}
		escRaw(w, u[:i])
		_, _ = w.WriteString("%27")
		u = u[i+1:]
	}
	_ = w.WriteByte('"')
	if title != nil {
		_, _ = w.WriteString(` title="`)
		escText(w, title)
		_ = w.WriteByte('"')
	}
	_, _ = w.WriteString(` rel="noopener noreferrer nofollow" target="_blank">`)
}

// plainText writes the text of n's descendants (an image's alt text).
func plainText(w util.BufWriter, source []byte, n ast.Node) {
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			if c.IsRaw() || c.Parent().Kind() == ast.KindCodeSpan {
				escRaw(w, c.Segment.Value(source))
			} else {
				escText(w, c.Segment.Value(source))
			}
			if c.SoftLineBreak() || c.HardLineBreak() {
				_ = w.WriteByte('\n')
			}
		case *ast.String:
			if c.IsCode() || c.IsRaw() {
				escRaw(w, c.Value)
			} else {
				escText(w, c.Value)
			}
		case *ast.AutoLink:
			escRaw(w, c.Label(source))
		case *ast.RawHTML:
			for i := range c.Segments.Len() {
				seg := c.Segments.At(i)
				escRaw(w, seg.Value(source))
			}
		}
		return ast.WalkContinue, nil
	})
}

// listItem marks a task item <li class="task"> (the page's CSS lines up
// its checkbox); otherwise it is goldmark's.
func listItem(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		_, _ = w.WriteString("</li>\n")
		return ast.WalkContinue, nil
	}
	fc := n.FirstChild()
	if fc != nil && fc.FirstChild() != nil && fc.FirstChild().Kind() == east.KindTaskCheckBox {
		_, _ = w.WriteString(`<li class="task">`)
	} else {
		_, _ = w.WriteString("<li>")
	}
	if fc != nil && fc.Kind() != ast.KindTextBlock {
		_ = w.WriteByte('\n')
	}
	return ast.WalkContinue, nil
}

// taskCheckBox is a disabled checkbox.
func taskCheckBox(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	if node.(*east.TaskCheckBox).IsChecked {
		_, _ = w.WriteString(`<input type="checkbox" disabled checked>`)
	} else {
		_, _ = w.WriteString(`<input type="checkbox" disabled>`)
	}
	if node.NextSibling() != nil {
		_ = w.WriteByte(' ')
	}
	return ast.WalkContinue, nil
}

// tableCell aligns with a class (left, center, right), not goldmark's
// style attribute, which the page's Content-Security-Policy forbids.
func tableCell(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*east.TableCell)
	tag := "td"
	if n.Parent().Kind() == east.KindTableHeader {
		tag = "th"
	}
	if !entering {
		_, _ = w.WriteString("</" + tag + ">\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<" + tag)
	if n.Alignment != east.AlignNone {
		_, _ = w.WriteString(` class="` + n.Alignment.String() + `"`)
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

// inlineParagraph writes a paragraph's content alone; paragraphs after
// the first start on a new line.
func inlineParagraph(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering && n.PreviousSibling() != nil {
		_ = w.WriteByte('\n')
	}
	return ast.WalkContinue, nil
}
