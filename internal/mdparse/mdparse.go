// Package mdparse is the one Markdown parser every surface reads an agent's
// Markdown with: CommonMark with the GitHub extensions agents write (tables,
// task lists, strikethrough, bare-URL autolinks), on goldmark.
//
// The answer page (internal/mdhtml), the playground's markdown block and the
// Slack rewriting in blocks all start from the same tree, so a plan reads the
// same everywhere; what differs is only how each renders it.
package mdparse

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Extensions are the GitHub-flavoured additions to CommonMark agents use. A
// renderer built on goldmark.New passes them so it parses exactly as Parse.
var Extensions = []goldmark.Extender{
	extension.Table,
	extension.Strikethrough,
	extension.TaskList,
	// Bare http(s) URLs and www. links become links; a renderer still
	// decides which destinations it writes.
	extension.NewLinkify(extension.WithLinkifyAllowedProtocols([]string{"http:", "https:", "mailto:"})),
}

// md is built once: goldmark's parser is safe for concurrent use.
var md = goldmark.New(goldmark.WithExtensions(Extensions...))

// Parser is the configured parser, for a renderer of its own.
func Parser() parser.Parser { return md.Parser() }

// Parse parses source (normalised with Normalize first) and returns the
// document's root. The tree's segments index into the returned bytes.
func Parse(source string) (ast.Node, []byte) {
	src := []byte(Normalize(source))
	return md.Parser().Parse(text.NewReader(src)), src
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
