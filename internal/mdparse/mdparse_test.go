package mdparse

import (
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// count walks the tree (iteratively: it may be deep) and returns how
// many nodes of kind k it holds and the most of them on one path.
func count(root ast.Node, k ast.NodeKind) (n, deepest int) {
	_ = ast.Walk(root, func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && node.Kind() == k {
			n++
			d := 0
			for p := node; p != nil; p = p.Parent() {
				if p.Kind() == k {
					d++
				}
			}
			deepest = max(deepest, d)
		}
		return ast.WalkContinue, nil
	})
	return n, deepest
}

func TestDepth(t *testing.T) {
	t.Parallel()
	doc, _ := Parse(strings.Repeat(">", 40) + " x")
	if _, d := count(doc, ast.KindBlockquote); d != MaxDepth {
		t.Errorf("40 nested quotes parse %d deep, want %d", d, MaxDepth)
	}
	doc, _ = Parse(strings.Repeat("1. ", 40) + "x")
	if _, d := count(doc, ast.KindList); d != MaxDepth {
		t.Errorf("40 nested lists parse %d deep, want %d", d, MaxDepth)
	}
	doc, _ = Parse(strings.Repeat("> - ", 20) + "x")
	q, _ := count(doc, ast.KindBlockquote)
	l, _ := count(doc, ast.KindList)
	if q+l != MaxDepth {
		t.Errorf("quotes and lists alternating: %d + %d containers, want %d", q, l, MaxDepth)
	}
	doc, _ = Parse(strings.Repeat("*a ", 40) + "b" + strings.Repeat(" c*", 40))
	if n, d := count(doc, ast.KindEmphasis); n != MaxDepth || d != MaxDepth {
		t.Errorf("40 nested emphasis: %d, %d deep, want %d", n, d, MaxDepth)
	}
	doc, _ = Parse(strings.Repeat("![", 40) + "a" + strings.Repeat("](https://b)", 40))
	if _, d := count(doc, ast.KindImage); d != MaxDepth {
		t.Errorf("40 nested images parse %d deep, want %d", d, MaxDepth)
	}
	// A deep tree, flattened without recursion.
	doc, _ = Parse(strings.Repeat("*a ", 100000) + "b" + strings.Repeat(" c*", 100000))
	if n, d := count(doc, ast.KindEmphasis); n != MaxDepth || d != MaxDepth {
		t.Errorf("100,000 nested emphasis: %d, %d deep, want %d", n, d, MaxDepth)
	}
}

func TestTables(t *testing.T) {
	t.Parallel()
	doc, _ := Parse("| a | b |\n|---|:-:|\n| 1 |\n")
	if n, _ := count(doc, east.KindTable); n != 1 {
		t.Errorf("a table parses as %d tables", n)
	}
	wide := strings.Repeat("|a", 5000) + "|\n" + strings.Repeat("|-", 5000) + "|\n" + strings.Repeat("x\n", 5000)
	doc, _ = Parse(wide)
	if n, _ := count(doc, east.KindTable); n != 0 {
		t.Error("a table padded to 25,000,000 cells from 45 kB is a table")
	}
	// The blank line before a table that is a list item's second block
	// makes the list loose, as before any other block.
	doc, _ = Parse("- x\n\n  | a |\n  |---|\n")
	if l := doc.FirstChild().(*ast.List); l.IsTight {
		t.Error("a list with a blank line before its item's table is tight")
	}
}

func TestTaskMarker(t *testing.T) {
	t.Parallel()
	for md, want := range map[string]int{"- [x] a": 1, "- [ ] a": 1, "- [ ]": 1, "- [x](https://e.x)": 0, "- [x]a": 0} {
		doc, _ := Parse(md)
		if n, _ := count(doc, east.KindTaskCheckBox); n != want {
			t.Errorf("%q has %d checkboxes, want %d", md, n, want)
		}
	}
}

func TestLinkify(t *testing.T) {
	t.Parallel()
	for md, want := range map[string]int{"see https://e.x": 1, "[https://e.x](https://f.x)": 0, "[see https://e.x": 0, "see www.e.x and a@e.x": 2} {
		doc, _ := Parse(md)
		if n, _ := count(doc, ast.KindAutoLink); n != want {
			t.Errorf("%q has %d autolinks, want %d", md, n, want)
		}
	}
}

func TestHardBreak(t *testing.T) {
	t.Parallel()
	doc, src := Parse("a b    \nc")
	var text []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*ast.Text); ok && entering {
			text = append(text, string(t.Segment.Value(src)))
		}
		return ast.WalkContinue, nil
	})
	if got := strings.Join(text, "|"); strings.Contains(got, " |") {
		t.Errorf("spaces kept before the hard break: %q", got)
	}
}

func TestParseInline(t *testing.T) {
	t.Parallel()
	doc, _ := ParseInline("# a\n- b\n> c\n    d\n[x]: https://e.x\n| a |\n|---|\n\n*e* [f](https://e.x) https://g.x ~~h~~")
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Kind() != ast.KindParagraph {
			t.Errorf("ParseInline made a %v", c.Kind())
		}
	}
	for k, want := range map[ast.NodeKind]int{ast.KindEmphasis: 1, ast.KindLink: 1, ast.KindAutoLink: 2, east.KindStrikethrough: 1} {
		if n, _ := count(doc, k); n != want {
			t.Errorf("ParseInline made %d %v, want %d", n, k, want)
		}
	}
}

// TestHostile parses inputs that took goldmark alone seconds to minutes
// (quadratic in their length, or in their depth). How long each takes now
// is mdhtml's BenchmarkAdversarial's to say; a blow-up hangs this test.
func TestHostile(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	repeat := func(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }
	for name, md := range map[string]string{
		"open link tails":       repeat("[a](", mib),
		"open angle links":      repeat("[a](<b ", mib),
		"deep parens":           repeat("[a](b(", mib),
		"nested brackets":       strings.Repeat("[", mib/2) + strings.Repeat("]", mib/2),
		"reference definitions": repeat("[a]: b\n", mib),
		"bracket lines":         repeat("[a]\n", mib),
		"reference lines":       repeat("[a][b]\n", mib),
		"nested quotes":         strings.Repeat(">", mib),
		"nested ordered lists":  repeat("1. ", mib),
		"wide table":            strings.Repeat("|a", 20000) + "|\n" + strings.Repeat("|-", 20000) + "|\n" + repeat("x\n", mib),
	} {
		if doc, _ := Parse(md); doc.FirstChild() == nil {
			t.Errorf("%s: empty", name)
		}
	}
}
