// Package mdparse is the one Markdown parser every surface reads an agent's
// Markdown with: CommonMark with the GitHub extensions agents write (tables,
// task lists, strikethrough, bare-URL autolinks), on goldmark.
//
// The answer page (internal/mdhtml), the playground's markdown block and the
// Slack rewriting in blocks all start from the same tree, so a plan reads the
// same everywhere; what differs is only how each renders it.
//
// The input is untrusted, so the parser is bounded where goldmark alone is
// not (bounds.go, link.go): block quotes and lists nest at most MaxDepth
// deep (deeper markers are text), and so do emphasis, strikethrough, links
// and images (deeper ones are their content alone); a link's destination
// nests parentheses at most 32 deep; a table whose short rows would be
// padded to far more cells than its source has bytes stays a paragraph;
// links are parsed in linear time. None of this changes a document an
// agent would write; the CommonMark spec examples in internal/mdhtml check
// the rest is CommonMark.
package mdparse

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Extensions configure goldmark to parse as Parse does: CommonMark with
// the bounds above, then the GitHub-flavoured additions agents use. A
// renderer built on goldmark.New passes them so it parses exactly as
// Parse. The first replaces goldmark's parser, so parser options given to
// goldmark.New before it are dropped.
var Extensions = []goldmark.Extender{
	commonMark{},
	table{},
	extension.Strikethrough,
	taskList{},
	// Bare http(s) URLs and www. links become links; a renderer still
	// decides which destinations it writes.
	linkify{},
}

// md and inline are built once: goldmark's parser is safe for concurrent
// use.
var (
	md = goldmark.New(goldmark.WithExtensions(Extensions...))
	// inline parses paragraphs only, with the extensions that act inside
	// one.
	inline = goldmark.New(goldmark.WithExtensions(commonMark{inline: true}, extension.Strikethrough, linkify{}))
)

// Parser is the configured parser, for a renderer of its own.
func Parser() parser.Parser { return md.Parser() }

// Parse parses source (normalised with Normalize first) and returns the
// document's root. The tree's segments index into the returned bytes.
func Parse(source string) (ast.Node, []byte) {
	src := []byte(Normalize(source))
	return md.Parser().Parse(text.NewReader(src)), src
}

// ParseInline parses source (normalised) as paragraphs and nothing else:
// no headings, lists, quotes, code blocks, tables or link reference
// definitions, whose markers stay text. For a one-line label, where
// "- x" or "# x" is what the agent wrote, not structure. Blank lines
// separate paragraphs.
func ParseInline(source string) (ast.Node, []byte) {
	src := []byte(Normalize(source))
	return inline.Parser().Parse(text.NewReader(src)), src
}

// Normalize makes the input valid UTF-8 with \n line ends and no NUL, so
// that nothing later has to think about them (and a browser cannot read a
// byte sequence differently from how it was escaped).
func Normalize(s string) string {
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
