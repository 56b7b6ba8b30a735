// Package mdhtml renders the Markdown an agent writes — a plan, a question's
// text, an option's label or preview — to HTML for a web page.
//
// The input is untrusted: an AI agent wrote it and it may be hostile. The
// output is meant for a page with a strict Content-Security-Policy but is
// safe without one, because nothing from the input reaches the page except
// as escaped text or as an attribute value this package checked:
//
//   - No raw HTML ever passes through. HTML in the Markdown, a block of it
//     or a tag in a line, shows as the literal text it is (a block in a
//     paragraph of its own). Every <, >, &, " and ' of the text is escaped.
//     Character references are decoded, as CommonMark says ("&lt;" shows
//     as "<"), and what they decode to is text, escaped like any other: no
//     reference can smuggle a tag, or a scheme past the URL check.
//   - The only tags written are h3–h6, p, br, pre, code, span, ul, ol, li,
//     input, blockquote, table, thead, tbody, tr, th, td, hr, strong, em,
//     del and a; the only attributes class, href, rel, target, title, start,
//     type, disabled and checked. No style, no id, no event attribute.
//     goldmark's HTML renderer (without html.WithUnsafe) and its GFM table
//     and strikethrough renderers write what they write safely; the node
//     kinds whose HTML this package decides go through the hooks in
//     render.go; a node kind none of them knows renders as its content.
//   - A link's URL must start with http://, https:// or mailto: (any case)
//     once its backslash escapes and references are resolved; any other
//     link — javascript:, data:, relative, protocol-relative //x — renders
//     as its text alone, and so does an autolink <…> with another scheme.
//     Links carry rel="noopener noreferrer nofollow" and target="_blank",
//     and their URL is percent-encoded as CommonMark's renderers encode it
//     (and at '), so no byte of it can end the attribute. A link's text
//     never holds another link: an autolink or image in it is text.
//   - No images: ![alt](url) renders as a link whose text is the alt text
//     (the URL when the alt is empty).
//
// The output depends only on the input (no ids, no counters, no maps
// iterated), so the same Markdown always gives the same bytes.
//
// # Supported Markdown
//
// CommonMark (https://spec.commonmark.org/0.31.2/) with the GitHub
// extensions agents write (https://github.github.com/gfm/): tables, task
// lists, strikethrough (~one~ or ~~two~~ tildes) and autolinks of bare
// http(s) URLs, www. addresses and e-mail addresses. internal/mdparse
// parses it (goldmark, bounded against hostile input); goldmark's HTML
// renderer renders it with the hooks in render.go. TestCommonMarkSpec
// renders the spec's 652 examples: all but 5 come out as the spec says once
// the differences below are accounted for (those 5 are a code block's
// language class and GFM's bare-URL autolinks).
//
// Deliberately different from CommonMark's reference HTML:
//   - Headings are shifted down two levels, because the page already has
//     its h1 and h2: # → h3, ## → h4, ### → h5, deeper → h6.
//   - Raw HTML, links and images as above; a link without text shows its
//     URL.
//   - A fenced code block's class="language-…" keeps [A-Za-z0-9_+-] of its
//     info string's first word, at most 20 characters. A block whose
//     language is diff or patch, or whose first non-blank line starts with
//     "--- ", "+++ ", "@@" or "diff --git", marks its lines: + (not +++) as
//     <span class="add">, - (not ---) as <span class="del">, @@ as
//     <span class="hunk">.
//   - A task item is <li class="task"> with <input type="checkbox"
//     disabled> (checked when done); a table cell's alignment is
//     class="left", "center" or "right" (the page's CSP allows no style
//     attribute, which is how goldmark aligns).
//   - Void elements are HTML's <br> and <hr>, not XHTML's <br />.
//
// Inline renders one paragraph's inline Markdown without block structure:
// "# x", "- x", "> x" and "[x]: url" are text there.
//
// # Size
//
// goldmark alone is not linear in hostile input: 10,000 nested quotes, or
// "[a](" repeated on one line, took it seconds, a megabyte of the latter
// minutes. internal/mdparse bounds it: quotes and lists nest at most
// mdparse.MaxDepth (16) deep, deeper markers being text, and so do
// emphasis, strikethrough, links and images, deeper ones being their
// content; links and link reference definitions are parsed in linear
// time; a table whose short rows would be padded to far more cells than
// its source has bytes stays a paragraph. Each input of TestAdversarial
// (BenchmarkAdversarial times them) then renders in time about linear in
// its size, the worst near a second for a megabyte. On top of that only
// the first maxMarkdown bytes (256 KiB, cut at a line end) render as
// Markdown and the rest shows as preformatted text, so that no input costs
// more than a fraction of a second; a plan is rarely a tenth of that.
//
// Render keeps the HTML of its recent inputs of 512 B to 1 MiB (16 MiB in
// all): the answer page renders the same plan on every view and every live
// refresh, and the first rendering of a 40 KB plan takes a few
// milliseconds.
package mdhtml

import (
	"html/template"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/askslack/askslack/internal/mdparse"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
)

// maxMarkdown is how much of an input renders as Markdown; the rest, from
// the line it starts in, shows as plain text (see Size).
const maxMarkdown = 256 << 10

// Render returns the HTML of Markdown source md.
func Render(md string) template.HTML {
	if len(md) < cacheMin || len(md) > cacheMaxEntry {
		return renderPage(md)
	}
	h, ok := cache.get(md)
	if !ok {
		h = renderPage(md)
		cache.put(md, h)
	}
	return h
}

// renderPage renders md, uncached.
func renderPage(md string) template.HTML {
	md, rest := split(md)
	root, src := mdparse.Parse(md)
	o := render(page, root, src)
	if rest != "" {
		_, _ = o.WriteString("<pre><code>")
		escRaw(o, []byte(mdparse.Normalize(rest)))
		_, _ = o.WriteString("</code></pre>\n")
	}
	return template.HTML(o.buf)
}

// Inline renders one line's inline Markdown (no block structure): for
// option labels and descriptions. Newlines, if any, are soft breaks or
// hard breaks (<br>) as in a paragraph.
func Inline(s string) template.HTML {
	s, rest := split(s)
	root, src := mdparse.ParseInline(s)
	o := render(inline, root, src)
	escRaw(o, []byte(mdparse.Normalize(rest)))
	return template.HTML(o.buf)
}

func render(r renderer.Renderer, root ast.Node, src []byte) *out {
	o := &out{buf: make([]byte, 0, len(src)+len(src)/4+64)}
	_ = r.Render(o, src, root)
	return o
}

// split cuts md after maxMarkdown bytes: at the last line end before, or
// at a character boundary if the line is longer.
func split(md string) (head, rest string) {
	if len(md) <= maxMarkdown {
		return md, ""
	}
	cut := strings.LastIndexByte(md[:maxMarkdown], '\n') + 1
	if cut == 0 {
		cut = maxMarkdown
		for cut > 0 && !utf8.RuneStart(md[cut]) {
			cut--
		}
	}
	return md[:cut], md[cut:]
}

// cache holds the HTML of the inputs rendered last: the answer page
// renders the same plan on every view and every live refresh, and the
// output depends on the input only.
var cache = htmlCache{html: map[string]template.HTML{}}

const (
	cacheMin      = 512     // shorter inputs render about as fast as they hash
	cacheMaxEntry = 1 << 20 // longer ones are not kept
	cacheMax      = 16 << 20
)

// htmlCache maps inputs to their HTML; the inputs and HTML it holds total
// at most cacheMax bytes, the oldest dropped first.
type htmlCache struct {
	sync.Mutex
	html  map[string]template.HTML
	order []string // oldest first
	size  int
}

func (c *htmlCache) get(md string) (template.HTML, bool) {
	c.Lock()
	defer c.Unlock()
	h, ok := c.html[md]
	return h, ok
}

func (c *htmlCache) put(md string, h template.HTML) {
	c.Lock()
	defer c.Unlock()
	if _, ok := c.html[md]; ok {
		return
	}
	c.html[md] = h
	c.order = append(c.order, md)
	c.size += len(md) + len(h)
	for c.size > cacheMax {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(old) + len(c.html[old])
		delete(c.html, old)
	}
}
