package mdhtml

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/mdparse"
	"github.com/yuin/goldmark/ast"
)

// specExample is one example of testdata/spec.json: the CommonMark spec's
// examples (version 0.31.2, https://spec.commonmark.org/0.31.2/) as
// goldmark v1.8.7 ships them in its _test/spec.json. The spec is
// John MacFarlane's, licensed CC-BY-SA 4.0 (testdata/README.md).
type specExample struct {
	Markdown string `json:"markdown"`
	HTML     string `json:"html"`
	Example  int    `json:"example"`
	Section  string `json:"section"`
}

// specDifferent lists the examples the page deliberately renders
// otherwise than CommonMark does, by example number, with the reason;
// everything else renders as the spec says once the differences every
// example shares are normalised (specPage).
var specDifferent = map[string][]int{
	// The info string's first word goes into a class attribute: only
	// [A-Za-z0-9_+-] of it is kept ("föö" is "f", ";" is nothing).
	"code language class restricted": {34, 144},
	// GFM's autolink extension (mdparse's linkify): bare http(s) URLs,
	// www. links and e-mail addresses are links, which CommonMark leaves
	// as text.
	"GFM autolinks": {608, 611, 612},
}

// TestCommonMarkSpec renders every CommonMark spec example with Render and
// compares it with the spec's HTML as this page writes it (specPage:
// headings two levels down, links with rel and target or, when their URL
// is not allowed, their text alone, images as links, HTML5 void tags).
// The examples listed in specDifferent must differ; each of them says why.
func TestCommonMarkSpec(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	var examples []specExample
	if err := json.Unmarshal(b, &examples); err != nil {
		t.Fatal(err)
	}
	different := map[int]string{}
	for reason, nums := range specDifferent {
		for _, n := range nums {
			if r, dup := different[n]; dup {
				t.Errorf("example %d listed twice: %q and %q", n, r, reason)
			}
			different[n] = reason
		}
	}
	var exact, normalised, skipped int
	var failed []int
	for _, ex := range examples {
		got := string(Render(ex.Markdown))
		if err := checkHTML(got); err != nil {
			t.Errorf("example %d: %v\n%q\n%s", ex.Example, err, ex.Markdown, got)
		}
		switch _, listed := different[ex.Example]; {
		case strings.TrimSpace(got) == strings.TrimSpace(ex.HTML):
			exact++
		case specCanon(got) == specCanon(specPage(specRawHTML(ex.Markdown, ex.HTML))):
			normalised++
		case listed:
			skipped++
			continue
		default:
			failed = append(failed, ex.Example)
			if testing.Verbose() || len(failed) <= 20 {
				t.Errorf("example %d (%s):\n%q\n got: %q\nwant: %q", ex.Example, ex.Section, ex.Markdown, specCanon(got), specCanon(specPage(specRawHTML(ex.Markdown, ex.HTML))))
			}
			continue
		}
		if reason, listed := different[ex.Example]; listed {
			t.Errorf("example %d renders as CommonMark does now; remove it from specDifferent (%s)", ex.Example, reason)
		}
	}
	sort.Ints(failed)
	if len(failed) > 0 {
		t.Errorf("%d examples differ: %v", len(failed), failed)
	}
	t.Logf("%d CommonMark examples: %d exactly as the spec, %d after normalising, %d deliberately different", len(examples), exact, normalised, skipped)
}

// specRawHTML rewrites the raw HTML in the spec's HTML as this page shows
// it: as text, a block of it in a paragraph. Which parts are raw HTML the
// parse says; each must be in the spec's HTML as written, in order, or the
// page and CommonMark disagree and the example fails.
func specRawHTML(md, want string) string {
	root, src := mdparse.Parse(md)
	var b strings.Builder
	rest := want
	replace := func(raw, as string) {
		i := strings.Index(rest, raw)
		if i < 0 {
			return
		}
		b.WriteString(rest[:i])
		b.WriteString(as)
		rest = rest[i+len(raw):]
	}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.HTMLBlock:
			var raw []byte
			for i := range n.Lines().Len() {
				seg := n.Lines().At(i)
				raw = append(raw, seg.Value(src)...)
			}
			if n.HasClosure() {
				raw = append(raw, n.ClosureLine.Value(src)...)
			}
			t := strings.TrimRight(string(raw), "\n")
			replace(t, "<p>"+specEscape.Replace(t)+"</p>")
		case *ast.RawHTML:
			var raw []byte
			for i := range n.Segments.Len() {
				seg := n.Segments.At(i)
				raw = append(raw, seg.Value(src)...)
			}
			replace(string(raw), specEscape.Replace(string(raw)))
		}
		return ast.WalkContinue, nil
	})
	b.WriteString(rest)
	return b.String()
}

var specEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

var (
	specHeading = regexp.MustCompile(`<(/?)h([1-6])>`)
	specLink    = regexp.MustCompile(`(?s)<a href="([^"]*)"( title="[^"]*")?>(.*?)</a>`)
	specImage   = regexp.MustCompile(`<img src="([^"]*)" alt="([^"]*)"( title="[^"]*")? />`)
)

// specPage rewrites the spec's HTML as this page renders it: headings two
// levels down (h6 at most), links with rel and target when their URL is
// allowed and as their text otherwise, images as links to them whose text
// is the alt text (the URL when there is none), <br> and <hr> without the
// XHTML slash.
func specPage(s string) string {
	s = specHeading.ReplaceAllStringFunc(s, func(m string) string {
		sub := specHeading.FindStringSubmatch(m)
		level := min(int(sub[2][0]-'0')+2, 6)
		return fmt.Sprintf("<%sh%d>", sub[1], level)
	})
	s = specImage.ReplaceAllStringFunc(s, func(m string) string {
		sub := specImage.FindStringSubmatch(m)
		href, alt, title := sub[1], sub[2], sub[3]
		if !allowedURL([]byte(html.UnescapeString(href))) {
			return alt
		}
		if alt == "" {
			alt = href
		}
		return `<a href="` + href + `"` + title + `>` + alt + `</a>`
	})
	s = specLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := specLink.FindStringSubmatch(m)
		href, title, content := sub[1], sub[2], sub[3]
		if !allowedURL([]byte(html.UnescapeString(href))) {
			return content
		}
		return `<a href="` + href + `"` + title + `>` + content + `</a>`
	})
	s = strings.ReplaceAll(s, "<br />", "<br>")
	s = strings.ReplaceAll(s, "<hr />", "<hr>")
	return s
}

// specCanon makes both sides comparable: without a link's rel and target
// (specPage does not add them), ' as itself (Render escapes it in text and
// percent-encodes it in a URL; the spec's renderer does neither), and
// without leading or trailing white space.
func specCanon(s string) string {
	s = strings.ReplaceAll(s, ` rel="noopener noreferrer nofollow" target="_blank"`, "")
	s = strings.ReplaceAll(s, "&#39;", "'")
	s = strings.ReplaceAll(s, "%27", "'")
	return strings.TrimSpace(s)
}
