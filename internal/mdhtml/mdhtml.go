// Package mdhtml renders the Markdown an agent writes — a plan, a question's
// text, an option's label or preview — to HTML for a web page.
//
// The input is untrusted: an AI agent wrote it and it may be hostile. The
// output is meant for a page with a strict Content-Security-Policy but is
// safe without one, because nothing from the input reaches the page except
// as escaped text or as an attribute value this package checked:
//
//   - No raw HTML ever passes through. Every <, >, &, " and ' of the text is
//     escaped; HTML in the Markdown shows as literal text. Character
//     references are not decoded either: "&amp;" in the source shows as the
//     five characters "&amp;" (the simplest safe choice: no entity can
//     smuggle a character past the escaper).
//   - The only tags written are h3–h6, p, br, pre, code, span, ul, ol, li,
//     input, blockquote, table, thead, tbody, tr, th, td, hr, strong, em,
//     del and a; the only attributes class, href, rel, target, title, start,
//     type, disabled and checked. No style, no id, no event attribute.
//   - A link's URL must start with http://, https:// or mailto: (any case);
//     any other link — javascript:, data:, relative, protocol-relative //x —
//     renders as its text alone. Links carry
//     rel="noopener noreferrer nofollow" and target="_blank", and their URL
//     is percent-encoded where a byte could end the attribute.
//   - No images: ![alt](url) renders as a link whose text is the alt text
//     (the URL when the alt is empty).
//
// The output depends only on the input (no ids, no counters, no maps
// iterated), so the same Markdown always gives the same bytes.
//
// # Supported Markdown
//
// A CommonMark-like subset, the one agents write; anything else is text.
//
// Blocks:
//   - ATX headings "#" … "######" and setext headings (a paragraph underlined
//     with === or ---), shifted down two levels because the page already has
//     its h1 and h2: # → h3, ## → h4, ### → h5, deeper → h6.
//   - Paragraphs: consecutive lines join with a space; a line ending in two
//     spaces or a backslash ends with a <br>.
//   - Fenced code (``` or ~~~, at least three; an unclosed fence runs to the
//     end of its container) with the info string's first word, kept to
//     [A-Za-z0-9_+-] and 20 characters, as class="language-…". A block whose
//     info is diff or patch, or whose first non-blank line starts with
//     "--- ", "+++ ", "@@" or "diff --git", marks its lines: + (not +++) as
//     <span class="add">, - (not ---) as <span class="del">, @@ as
//     <span class="hunk">.
//   - Indented code (four spaces).
//   - Bullet lists (-, *, +) and ordered lists (1. or 1), start="n" when not
//     1). An item holds the lines indented past its marker (two spaces past
//     the marker is enough: agents indent sublists of "1. x" by two) and
//     lazy continuation lines of its paragraph. Task items "- [ ] x" / "- [x] x"
//     get <li class="task"> and a disabled checkbox. A list separated by
//     blank lines is loose (<p> in its items), otherwise tight.
//   - Block quotes (>), whose contents are blocks; every line of a quote
//     starts with > (no lazy continuation).
//   - GFM tables: header row, delimiter row (|---|:--:|--:|), body rows up
//     to a blank line or another block; alignment as class="left",
//     "center" or "right"; short rows padded, long rows cut; \| is a pipe
//     inside a cell. A table needs a | in its header and delimiter rows.
//   - Thematic breaks ---, ***, ___ → <hr>.
//
// Inline: code spans (any backtick run length), **strong** / __strong__,
// *em* / _em_ with CommonMark's flanking rules (so snake_case_names stay as
// they are), ~~strike~~ → <del> (exactly two tildes: "~5 min" is text),
// inline links [text](url "title"), autolinks <https://…> and <a@b.c>,
// bare http:// and https:// URLs (without trailing .,;:!?*_~'" or an
// unbalanced ) or ]), backslash escapes of ASCII punctuation and hard
// breaks. Link text is never linked again (no links in links). Reference
// links, raw HTML, entities and footnotes are not supported.
//
// # Size
//
// Rendering is linear in the input (no backtracking; the CommonMark
// delimiter algorithm with its "openers bottom" bound, memoized searches for
// code-span closers and link titles). Containers (quotes, lists) nest at
// most 16 deep (maxDepth) — deeper markers are text — and so does emphasis,
// whose delimiters beyond that depth show as literal characters. A table pads
// short rows with at most as many cells as its source has bytes, so output
// stays proportional to input.
package mdhtml

import (
	"html/template"
	"strings"
)

// maxDepth caps nesting: of containers (a quote or a list each count one)
// and of emphasis. Agents never need more; hostile input cannot make the
// renderer recurse, or the browser build, deeper than this.
const maxDepth = 16

// Render returns the HTML of Markdown source md.
func Render(md string) template.HTML {
	lines := splitLines(normalize(md))
	blocks, _ := parseBlocks(lines, 0)
	var r renderer
	r.out = make([]byte, 0, len(md)+len(md)/4+64)
	r.blocks(blocks, false)
	return template.HTML(r.out)
}

// Inline renders one line's inline Markdown (no block structure): for
// option labels and descriptions. Newlines, if any, are soft breaks (a
// space) or hard breaks (<br>) as in a paragraph.
func Inline(s string) template.HTML {
	lines := strings.Split(normalize(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " \t")
	}
	var r renderer
	r.inline(strings.Trim(strings.Join(lines, "\n"), " \t\n"))
	return template.HTML(r.out)
}

// normalize makes the input valid UTF-8 with \n line ends and no NUL, so
// that nothing later has to think about them (and a browser cannot read a
// byte sequence differently from how it was escaped).
func normalize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}
