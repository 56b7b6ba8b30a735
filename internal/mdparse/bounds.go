package mdparse

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxDepth caps nesting: of containers (a block quote or a list each count
// one) and, separately, of inline containers (emphasis, strikethrough, a
// link, an image). Agents never need more; hostile input cannot make a
// walk of the tree recurse, or a browser build, deeper than this. (Without
// it goldmark took a second for 10,000 nested quotes: each new one costs
// time in the depth.)
const MaxDepth = 16

// commonMark sets goldmark's CommonMark parser with the bounds: the
// default block and inline parsers, except that block quotes and lists
// open only below MaxDepth, links and link reference definitions are
// parsed by link.go and linkref.go, and the tree's inline nesting is
// flattened below MaxDepth (tidy). With inline set it parses paragraphs
// only.
type commonMark struct{ inline bool }

func (c commonMark) Extend(m goldmark.Markdown) {
	blocks := []util.PrioritizedValue{util.Prioritized(parser.NewParagraphParser(), 1000)}
	var paragraphs []util.PrioritizedValue
	if !c.inline {
		// parser.DefaultBlockParsers, with the containers bounded.
		blocks = append(blocks,
			util.Prioritized(parser.NewSetextHeadingParser(), 100),
			util.Prioritized(parser.NewThematicBreakParser(), 200),
			util.Prioritized(nested{parser.NewListParser()}, 300),
			util.Prioritized(parser.NewListItemParser(), 400),
			util.Prioritized(parser.NewCodeBlockParser(), 500),
			util.Prioritized(parser.NewATXHeadingParser(), 600),
			util.Prioritized(parser.NewFencedCodeBlockParser(), 700),
			util.Prioritized(nested{parser.NewBlockquoteParser()}, 800),
			util.Prioritized(parser.NewHTMLBlockParser(), 900),
		)
		// parser.DefaultParagraphTransformers, with linkref.go's parser.
		paragraphs = append(paragraphs, util.Prioritized(linkReferences{}, 100))
	}
	m.SetParser(parser.NewParser(
		parser.WithBlockParsers(blocks...),
		// parser.DefaultInlineParsers, with link.go's link parser.
		parser.WithInlineParsers(
			util.Prioritized(parser.NewCodeSpanParser(), 100),
			util.Prioritized(linkParser{}, 200),
			util.Prioritized(parser.NewAutoLinkParser(), 300),
			util.Prioritized(parser.NewRawHTMLParser(), 400),
			util.Prioritized(parser.NewEmphasisParser(), 500),
		),
		parser.WithParagraphTransformers(paragraphs...),
		// First, before any other transformer walks the tree.
		parser.WithASTTransformers(util.Prioritized(tidy{}, -1000)),
	))
}

// nested opens its container (a block quote or a list) only when fewer
// than MaxDepth quotes and lists hold it; a deeper marker is then text.
type nested struct{ parser.BlockParser }

func (n nested) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	depth := 0
	for p := parent; p != nil; p = p.Parent() {
		if k := p.Kind(); k == ast.KindBlockquote || k == ast.KindList {
			depth++
		}
	}
	if depth >= MaxDepth {
		return nil, parser.NoChildren
	}
	return n.BlockParser.Open(parent, reader, pc)
}

// tidy walks the tree once, without recursion (before it runs, the tree
// may be as deep as the input is long: "*a " 100,000 times, then " b*" as
// many), and
//   - replaces every inline container that MaxDepth others already hold
//     with its children, so the tree is at most that deep in them;
//   - drops the spaces before a hard line break that goldmark keeps when
//     the linkify parser has split the line's text at a space ("a    \nb"
//     is "a<br>b" in CommonMark, not "a  <br>b").
type tidy struct{}

func inlineContainer(n ast.Node) bool {
	switch n.Kind() {
	case ast.KindEmphasis, ast.KindLink, ast.KindImage, east.KindStrikethrough:
		return true
	}
	return false
}

func (tidy) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	for n := ast.Node(doc); n != nil; {
		if t, ok := n.(*ast.Text); ok && t.HardLineBreak() {
			trimBeforeBreak(t, source)
		}
		if inlineContainer(n) && inlineDepth(n) >= MaxDepth {
			parent, first := n.Parent(), n.FirstChild()
			next := first
			if next == nil {
				next = successor(n)
			}
			for c := first; c != nil; {
				after := c.NextSibling()
				parent.InsertBefore(parent, n, c)
				c = after
			}
			parent.RemoveChild(parent, n)
			n = next
			continue
		}
		if c := n.FirstChild(); c != nil {
			n = c
		} else {
			n = successor(n)
		}
	}
}

// trimBeforeBreak trims the trailing spaces of t, which ends its line
// with a hard break, and of the text nodes before it that are only spaces
// after that.
func trimBeforeBreak(t *ast.Text, source []byte) {
	for {
		t.Segment = t.Segment.TrimRightSpace(source)
		prev, ok := t.PreviousSibling().(*ast.Text)
		if t.Segment.Len() > 0 || !ok || prev.SoftLineBreak() || prev.HardLineBreak() {
			return
		}
		t = prev
	}
}

// inlineDepth is the number of inline containers holding n. The walk has
// flattened them already, so it counts at most MaxDepth.
func inlineDepth(n ast.Node) int {
	depth := 0
	for p := n.Parent(); p != nil && p.Type() == ast.TypeInline; p = p.Parent() {
		if inlineContainer(p) {
			depth++
		}
	}
	return depth
}

// successor is the node after n's subtree in document order.
func successor(n ast.Node) ast.Node {
	for n != nil && n.NextSibling() == nil {
		n = n.Parent()
	}
	if n != nil {
		n = n.NextSibling()
	}
	return n
}

// table is extension.Table with a bound on its size: a paragraph whose
// table would have more than 8 cells a byte of its source (GFM pads every
// short row to the header's width: a 20,000-column header over 300,000
// one-cell rows is 6·10⁹ cells from 700 kB) stays a paragraph.
type table struct{}

func (table) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithParagraphTransformers(util.Prioritized(tableSize{extension.NewTableParagraphTransformer()}, 200)),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(extension.NewTableHTMLRenderer(), 500)))
}

type tableSize struct{ parser.ParagraphTransformer }

// Transform also keeps the paragraph's blank line before a table that
// takes its place, which goldmark drops, so that a list holding it is
// loose ("- x", blank line, table: CommonMark's <li><p>x</p><table>).
func (t tableSize) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	// A table has at most as many columns as its widest line has cells.
	source := reader.Source()
	width, size := 0, 0
	for i := range lines.Len() {
		l := lines.At(i)
		size += l.Stop - l.Start
		width = max(width, bytes.Count(source[l.Start:l.Stop], []byte{'|'})+1)
	}
	if width*lines.Len() > 8*size+4096 {
		return
	}
	parent, prev, blank := node.Parent(), node.PreviousSibling(), node.HasBlankPreviousLines()
	t.ParagraphTransformer.Transform(node, reader, pc)
	if node.Parent() == nil && blank && parent != nil {
		next := parent.FirstChild()
		if prev != nil {
			next = prev.NextSibling()
		}
		if next != nil && next.Kind() == east.KindTable {
			next.SetBlankPreviousLines(true)
		}
	}
}

// taskList is extension.TaskList, with GFM's rule that the marker is
// followed by white space: "- [x](https://e.x)" is a link, not a checked
// item before "(https://e.x)".
type taskList struct{}

func (taskList) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(taskMarker{extension.NewTaskCheckBoxParser()}, 0)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(extension.NewTaskCheckBoxHTMLRenderer(), 500)))
}

type taskMarker struct{ parser.InlineParser }

func (t taskMarker) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if line, _ := block.PeekLine(); len(line) > 3 && !util.IsSpace(line[3]) {
		return nil
	}
	return t.InlineParser.Parse(parent, block, pc)
}

// linkify is extension.NewLinkify for http(s) and mailto, kept out of link
// text as goldmark's is (it asks goldmark's link parser, which link.go
// replaces, whether a [ is open).
type linkify struct{}

func (linkify) Extend(m goldmark.Markdown) {
	p := extension.NewLinkifyParser(extension.WithLinkifyAllowedProtocols([]string{"http:", "https:", "mailto:"}))
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(outsideLinks{p}, 999)))
}

type outsideLinks struct{ parser.InlineParser }

func (o outsideLinks) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if inLinkLabel(pc) {
		return nil
	}
	return o.InlineParser.Parse(parent, block, pc)
}
