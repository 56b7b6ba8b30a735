package mdhtml

import (
	"strconv"
	"strings"
)

// Block structure is parsed line by line into a small tree first and
// rendered after: whether a list is tight (no <p> in its items) is only
// known once all its items are parsed. A container (quote, list item) takes
// its lines, strips its prefix from them and parses them again one level
// deeper; with depth capped at maxDepth that is at most maxDepth passes over
// any line.

type blockKind uint8

const (
	bPara blockKind = iota
	bHeading
	bCode
	bRule
	bQuote
	bList
	bItem
	bTable
)

type align uint8

const (
	alignNone align = iota
	alignLeft
	alignCenter
	alignRight
)

var alignClass = [...]string{"", ` class="left"`, ` class="center"`, ` class="right"`}

type block struct {
	kind     blockKind
	level    int        // bHeading: the HTML level, 3..6
	text     string     // bPara, bHeading: inline source; bCode: the code, every line ending in \n
	lang     string     // bCode: the sanitized language, or ""
	diff     bool       // bCode: mark added, deleted and hunk lines
	children []*block   // bQuote, bList (its items), bItem
	ordered  bool       // bList
	start    int        // bList, ordered: the first number
	tight    bool       // bList: paragraphs in its items render without <p>
	task     int8       // bItem: 0 not a task, 1 open, 2 done
	aligns   []align    // bTable: one per column
	rows     [][]string // bTable: the header row first; cells' inline source
}

// splitLines splits normalized input into lines. Tabs stay as they are
// (Go code is indented with them); indentation is measured in columns with
// tab stops of 4 and stripped by stripCols.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// indent returns the width in columns of s's leading whitespace and its
// length in bytes.
func indent(s string) (cols, n int) {
	for ; n < len(s); n++ {
		switch s[n] {
		case ' ':
			cols++
		case '\t':
			cols += 4 - cols%4
		default:
			return cols, n
		}
	}
	return cols, n
}

func indentOf(s string) int {
	cols, _ := indent(s)
	return cols
}

// stripCols removes up to w columns of leading whitespace; a tab that
// straddles column w leaves the spaces it still stands for.
func stripCols(s string, w int) string {
	cols := 0
	for i := 0; i < len(s); i++ {
		if cols >= w {
			return s[i:]
		}
		switch s[i] {
		case ' ':
			cols++
		case '\t':
			next := cols + 4 - cols%4
			if next > w {
				return strings.Repeat(" ", next-w) + s[i+1:]
			}
			cols = next
		default:
			return s[i:]
		}
	}
	return ""
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\t' {
			return false
		}
	}
	return true
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// parseBlocks parses lines into blocks. blankBetween reports a blank line
// between two of them: it makes the list item holding them loose.
func parseBlocks(lines []string, depth int) (out []*block, blankBetween bool) {
	sawBlank := false
	for i := 0; i < len(lines); {
		if isBlank(lines[i]) {
			sawBlank = true
			i++
			continue
		}
		if sawBlank && len(out) > 0 {
			blankBetween = true
		}
		sawBlank = false
		var b *block
		b, i = parseBlock(lines, i, depth)
		out = append(out, b)
	}
	return out, blankBetween
}

// parseBlock parses the block starting at the non-blank line i and returns
// it with the index of the line after it.
func parseBlock(lines []string, i, depth int) (*block, int) {
	s := lines[i]
	if indentOf(s) >= 4 {
		return parseIndentedCode(lines, i)
	}
	if f, ok := fenceOpen(s); ok {
		return parseFenced(lines, i, f)
	}
	if level, text, ok := atxHeading(s); ok {
		return &block{kind: bHeading, level: min(level+2, 6), text: text}, i + 1
	}
	if isRule(s) {
		return &block{kind: bRule}, i + 1
	}
	// Past maxDepth a quote or list marker is text, so hostile nesting ends
	// up in a paragraph instead of deeper recursion.
	if depth < maxDepth {
		if isQuote(s) {
			return parseQuote(lines, i, depth)
		}
		if m, ok := listMarker(s); ok {
			return parseList(lines, i, depth, m)
		}
	}
	if aligns, ok := tableStart(lines, i); ok {
		return parseTable(lines, i, depth, aligns)
	}
	return parseParagraph(lines, i, depth)
}

// interrupts reports whether line s starts a block that ends a paragraph
// (CommonMark: an indented line does not, nor does an empty list item or an
// ordered one not starting at 1 — "2024. was a year" is text).
func interrupts(s string, depth int) bool {
	if indentOf(s) >= 4 {
		return false
	}
	if _, ok := fenceOpen(s); ok {
		return true
	}
	if _, _, ok := atxHeading(s); ok {
		return true
	}
	if isRule(s) {
		return true
	}
	if depth < maxDepth {
		if isQuote(s) {
			return true
		}
		if m, ok := listMarker(s); ok && m.content != "" && (!m.ordered || m.start == 1) {
			return true
		}
	}
	return false
}

func parseParagraph(lines []string, i, depth int) (*block, int) {
	parts := []string{strings.TrimLeft(lines[i], " \t")}
	j := i + 1
	for ; j < len(lines); j++ {
		l := lines[j]
		if isBlank(l) {
			break
		}
		// A setext underline wins over a thematic break: "Title\n---" is
		// a heading, as CommonMark says.
		if level := setextLevel(l); level > 0 {
			text := strings.TrimSpace(strings.Join(parts, "\n"))
			return &block{kind: bHeading, level: level + 2, text: text}, j + 1
		}
		if interrupts(l, depth) {
			break
		}
		if _, ok := tableStart(lines, j); ok {
			break
		}
		parts = append(parts, strings.TrimLeft(l, " \t"))
	}
	return &block{kind: bPara, text: strings.TrimRight(strings.Join(parts, "\n"), " \t")}, j
}

func atxHeading(s string) (level int, text string, ok bool) {
	ind := indentOf(s)
	if ind > 3 {
		return 0, "", false
	}
	n := runLen(s, ind, '#')
	if n < 1 || n > 6 {
		return 0, "", false
	}
	rest := s[ind+n:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	text = strings.TrimRight(rest, " \t")
	// A closing run of #s goes if a space precedes it (or it is all there
	// is); "C\#" keeps its escaped #.
	k := len(text)
	for k > 0 && text[k-1] == '#' {
		k--
	}
	if k == 0 || text[k-1] == ' ' || text[k-1] == '\t' {
		text = text[:k]
	}
	return n, strings.TrimSpace(text), true
}

func isRule(s string) bool {
	ind := indentOf(s)
	if ind > 3 || ind >= len(s) {
		return false
	}
	c := s[ind]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for i := ind; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// setextLevel is 1 for a === underline, 2 for ---, 0 for anything else.
func setextLevel(s string) int {
	ind := indentOf(s)
	if ind > 3 || ind >= len(s) {
		return 0
	}
	c := s[ind]
	if c != '=' && c != '-' {
		return 0
	}
	n := runLen(s, ind, c)
	if !isBlank(s[ind+n:]) {
		return 0
	}
	if c == '=' {
		return 1
	}
	return 2
}

type fence struct {
	ch     byte
	n      int
	indent int
	info   string
}

func fenceOpen(s string) (fence, bool) {
	ind := indentOf(s)
	if ind > 3 || ind >= len(s) {
		return fence{}, false
	}
	c := s[ind]
	if c != '`' && c != '~' {
		return fence{}, false
	}
	n := runLen(s, ind, c)
	if n < 3 {
		return fence{}, false
	}
	info := strings.TrimSpace(s[ind+n:])
	// "```x```" on one line is a code span, not a fence.
	if c == '`' && strings.IndexByte(info, '`') >= 0 {
		return fence{}, false
	}
	return fence{ch: c, n: n, indent: ind, info: info}, true
}

func (f fence) closedBy(s string) bool {
	ind := indentOf(s)
	if ind > 3 {
		return false
	}
	n := runLen(s, ind, f.ch)
	return n >= f.n && isBlank(s[ind+n:])
}

func parseFenced(lines []string, i int, f fence) (*block, int) {
	var b strings.Builder
	j := i + 1
	for j < len(lines) {
		l := lines[j]
		j++
		if f.closedBy(l) {
			break
		}
		b.WriteString(stripCols(l, f.indent))
		b.WriteByte('\n')
	}
	code := b.String()
	word, _, _ := strings.Cut(f.info, " ")
	word, _, _ = strings.Cut(word, "\t")
	lang := sanitizeLang(word)
	diff := strings.EqualFold(lang, "diff") || strings.EqualFold(lang, "patch") || looksLikeDiff(code)
	return &block{kind: bCode, text: code, lang: lang, diff: diff}, j
}

// sanitizeLang keeps [A-Za-z0-9_+-] of the info string's first word, at
// most 20 of them: it goes into a class attribute.
func sanitizeLang(s string) string {
	b := make([]byte, 0, min(len(s), 20))
	for i := 0; i < len(s) && len(b) < 20; i++ {
		c := s[i]
		if isAlnum(c) || c == '_' || c == '+' || c == '-' {
			b = append(b, c)
		}
	}
	return string(b)
}

// looksLikeDiff: agents often fence a diff without saying so.
func looksLikeDiff(code string) bool {
	for l := range strings.Lines(code) {
		if isBlank(strings.TrimSuffix(l, "\n")) {
			continue
		}
		return strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") ||
			strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "diff --git")
	}
	return false
}

func parseIndentedCode(lines []string, i int) (*block, int) {
	end := i
	for j := i; j < len(lines); j++ {
		if isBlank(lines[j]) {
			continue
		}
		if indentOf(lines[j]) < 4 {
			break
		}
		end = j + 1
	}
	var b strings.Builder
	for _, l := range lines[i:end] {
		b.WriteString(stripCols(l, 4))
		b.WriteByte('\n')
	}
	return &block{kind: bCode, text: b.String()}, end
}

func isQuote(s string) bool {
	ind := indentOf(s)
	return ind <= 3 && ind < len(s) && s[ind] == '>'
}

func parseQuote(lines []string, i, depth int) (*block, int) {
	var inner []string
	j := i
	for ; j < len(lines) && isQuote(lines[j]); j++ {
		l := lines[j]
		col := indentOf(l) + 1 // the column after the >, which has no tab before it
		l = l[col:]
		// One space after > belongs to the marker; so does one column of a
		// tab, whose other columns become spaces.
		if l != "" && l[0] == ' ' {
			l = l[1:]
		} else if l != "" && l[0] == '\t' {
			l = strings.Repeat(" ", 3-col%4) + l[1:]
		}
		inner = append(inner, l)
	}
	children, _ := parseBlocks(inner, depth+1)
	return &block{kind: bQuote, children: children}, j
}

// marker is a list item's first line.
type marker struct {
	ordered    bool
	ch         byte // the bullet, or the ordered delimiter . or )
	start      int
	indent     int    // spaces before the marker
	contentCol int    // the column the item's content starts at
	content    string // the first line's content
}

func listMarker(s string) (marker, bool) {
	ind := indentOf(s)
	if ind > 3 || ind >= len(s) {
		return marker{}, false
	}
	m := marker{indent: ind}
	p := ind
	switch c := s[p]; {
	case c == '-' || c == '*' || c == '+':
		m.ch = c
		p++
	case isDigit(c):
		q := p
		for q < len(s) && q-p < 10 && isDigit(s[q]) {
			q++
		}
		if q-p > 9 || q >= len(s) || (s[q] != '.' && s[q] != ')') {
			return marker{}, false
		}
		m.ordered, m.ch = true, s[q]
		m.start, _ = strconv.Atoi(s[p:q])
		p = q + 1
	default:
		return marker{}, false
	}
	if p < len(s) && s[p] != ' ' && s[p] != '\t' {
		return marker{}, false
	}
	end, col := p, p // no tab before the marker: bytes are columns up to here
	for ; p < len(s) && (s[p] == ' ' || s[p] == '\t'); p++ {
		if s[p] == '\t' {
			col += 4 - col%4
		} else {
			col++
		}
	}
	switch {
	case p == len(s):
		m.contentCol = end + 1
	case col-end >= 5:
		// Five columns or more: the content is indented code one column in.
		m.contentCol = end + 1
		m.content = strings.Repeat(" ", col-end-1) + s[p:]
	default:
		m.contentCol = col
		m.content = s[p:]
	}
	return m, true
}

// itemStart: a list marker that is not a thematic break ("- - -", "* * *").
func itemStart(s string) (marker, bool) {
	if isRule(s) {
		return marker{}, false
	}
	return listMarker(s)
}

func parseList(lines []string, i, depth int, m marker) (*block, int) {
	l := &block{kind: bList, ordered: m.ordered, start: m.start, tight: true}
	for {
		item, end, loose := parseItem(lines, i, depth, m)
		l.children = append(l.children, item)
		if loose {
			l.tight = false
		}
		i = end
		k := i
		for k < len(lines) && isBlank(lines[k]) {
			k++
		}
		if k == len(lines) {
			break
		}
		next, ok := itemStart(lines[k])
		if !ok || next.ordered != m.ordered || next.ch != m.ch {
			break
		}
		if k > i {
			l.tight = false
		}
		i, m = k, next
	}
	return l, i
}

// parseItem parses the item whose marker is on line i. end is the line after
// its last non-blank line: blank lines after it are left to the caller, which
// decides whether they separate items (a loose list) or end the list.
func parseItem(lines []string, i, depth int, m marker) (item *block, end int, loose bool) {
	// Lines indented to the content column belong to the item; so do lines
	// indented two past the marker, which is how agents nest under "1. ".
	threshold := min(m.contentCol, m.indent+2)
	content := []string{m.content}
	var open *fence // an open fence at the item's top level: no lazy lines inside
	track := func(l string) {
		if open != nil {
			if open.closedBy(l) {
				open = nil
			}
		} else if f, ok := fenceOpen(l); ok {
			open = &f
		}
	}
	track(m.content)
	blank := false
	lazy := m.content != "" // an empty first line has no paragraph to continue
	end = i + 1
	for j := i + 1; j < len(lines); j++ {
		l := lines[j]
		if isBlank(l) {
			blank = true
			continue
		}
		if ind := indentOf(l); ind >= threshold {
			for range j - end {
				content = append(content, "")
			}
			l = stripCols(l, m.contentCol)
			content = append(content, l)
			track(l)
			end, blank, lazy = j+1, false, true
			continue
		}
		if blank || open != nil || !lazy {
			break
		}
		if _, ok := listMarker(l); ok || interrupts(l, 0) {
			break
		}
		// A lazy continuation line of the item's paragraph.
		content = append(content, l)
		end = j + 1
	}
	item = &block{kind: bItem}
	if t, rest, ok := taskMarker(content[0]); ok {
		item.task, content[0] = t, rest
	}
	item.children, loose = parseBlocks(content, depth+1)
	return item, end, loose
}

func taskMarker(s string) (int8, string, bool) {
	if len(s) < 3 || s[0] != '[' || s[2] != ']' || (len(s) > 3 && s[3] != ' ' && s[3] != '\t') {
		return 0, s, false
	}
	switch s[1] {
	case ' ':
		return 1, strings.TrimLeft(s[3:], " \t"), true
	case 'x', 'X':
		return 2, strings.TrimLeft(s[3:], " \t"), true
	}
	return 0, s, false
}

// tableStart reports whether line i is a table's header row: it has a pipe
// and the next line is a delimiter row with as many cells.
func tableStart(lines []string, i int) ([]align, bool) {
	if i+1 >= len(lines) {
		return nil, false
	}
	h := lines[i]
	if indentOf(h) > 3 || strings.IndexByte(h, '|') < 0 {
		return nil, false
	}
	aligns, ok := delimiterRow(lines[i+1])
	if !ok || len(splitRow(h)) != len(aligns) {
		return nil, false
	}
	return aligns, true
}

func delimiterRow(s string) ([]align, bool) {
	if indentOf(s) > 3 {
		return nil, false
	}
	pipe, dash := false, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '|':
			pipe = true
		case '-':
			dash = true
		case ':', ' ', '\t':
		default:
			return nil, false
		}
	}
	if !pipe || !dash {
		return nil, false
	}
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	s = strings.TrimSuffix(s, "|")
	var aligns []align
	for cell := range strings.SplitSeq(s, "|") {
		cell = strings.TrimSpace(cell)
		left, right := strings.HasPrefix(cell, ":"), strings.HasSuffix(cell, ":")
		core := strings.TrimSuffix(strings.TrimPrefix(cell, ":"), ":")
		if core == "" || strings.Trim(core, "-") != "" {
			return nil, false
		}
		a := alignNone
		switch {
		case left && right:
			a = alignCenter
		case left:
			a = alignLeft
		case right:
			a = alignRight
		}
		aligns = append(aligns, a)
	}
	return aligns, true
}

// splitRow splits a table row at its unescaped pipes; leading and trailing
// pipes are optional and \| is a pipe inside a cell. Other backslashes stay
// for the inline parser.
func splitRow(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	var cells []string
	start, endsWithPipe := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, s[start:i])
			start, endsWithPipe = i+1, i == len(s)-1
		}
	}
	if !endsWithPipe {
		cells = append(cells, s[start:])
	}
	for k, c := range cells {
		c = strings.TrimSpace(c)
		if strings.Contains(c, `\|`) {
			c = strings.ReplaceAll(c, `\|`, "|")
		}
		cells[k] = c
	}
	return cells
}

func parseTable(lines []string, i, depth int, aligns []align) (*block, int) {
	t := &block{kind: bTable, aligns: aligns}
	// Padding is bounded by the table's own size: a thousand-column header
	// over a million one-cell rows must not become a billion cells.
	budget := len(lines[i]) + len(lines[i+1])
	fit := func(cells []string) []string {
		if len(cells) > len(aligns) {
			return cells[:len(aligns)]
		}
		if need := len(aligns) - len(cells); need > 0 && need <= budget {
			budget -= need
			for range need {
				cells = append(cells, "")
			}
		}
		return cells
	}
	t.rows = append(t.rows, splitRow(lines[i]))
	j := i + 2
	for ; j < len(lines) && !isBlank(lines[j]) && !interrupts(lines[j], depth); j++ {
		budget += len(lines[j])
		t.rows = append(t.rows, fit(splitRow(lines[j])))
	}
	return t, j
}

// renderer writes HTML to out, cmark style: a block starts on a fresh line.
type renderer struct {
	out    []byte
	ip     inlineParser
	closes []tag  // scratch: a node's closing tags in order
	pend   []byte // text waiting to be escaped (and its bare URLs linked)
	depth  int    // emphasis nesting of the inline being rendered
	inLink int    // links open around the text being rendered
}

func (r *renderer) str(ss ...string) {
	for _, s := range ss {
		r.out = append(r.out, s...)
	}
}

func (r *renderer) cr() {
	if len(r.out) > 0 && r.out[len(r.out)-1] != '\n' {
		r.out = append(r.out, '\n')
	}
}

func (r *renderer) blocks(bs []*block, tight bool) {
	for _, b := range bs {
		r.block(b, tight)
	}
}

func (r *renderer) block(b *block, tight bool) {
	switch b.kind {
	case bPara:
		if tight {
			r.inline(b.text)
			return
		}
		r.cr()
		r.str("<p>")
		r.inline(b.text)
		r.str("</p>\n")
	case bHeading:
		h := strconv.Itoa(b.level)
		r.cr()
		r.str("<h", h, ">")
		r.inline(b.text)
		r.str("</h", h, ">\n")
	case bRule:
		r.cr()
		r.str("<hr>\n")
	case bCode:
		r.code(b)
	case bQuote:
		r.cr()
		r.str("<blockquote>\n")
		r.blocks(b.children, false)
		r.cr()
		r.str("</blockquote>\n")
	case bList:
		tag := "ul"
		if b.ordered {
			tag = "ol"
		}
		r.cr()
		r.str("<", tag)
		if b.ordered && b.start != 1 {
			r.str(` start="`, strconv.Itoa(b.start), `"`)
		}
		r.str(">\n")
		for _, it := range b.children {
			r.item(it, b.tight)
		}
		r.str("</", tag, ">\n")
	case bTable:
		r.table(b)
	}
}

func (r *renderer) item(it *block, tight bool) {
	r.cr()
	kids := it.children
	if it.task == 0 {
		r.str("<li>")
	} else {
		r.str(`<li class="task">`)
		box := `<input type="checkbox" disabled>`
		if it.task == 2 {
			box = `<input type="checkbox" disabled checked>`
		}
		switch {
		case len(kids) > 0 && kids[0].kind == bPara && tight:
			r.str(box, " ")
			r.inline(kids[0].text)
			kids = kids[1:]
		case len(kids) > 0 && kids[0].kind == bPara:
			r.cr()
			r.str("<p>", box, " ")
			r.inline(kids[0].text)
			r.str("</p>\n")
			kids = kids[1:]
		default:
			r.str(box)
		}
	}
	r.blocks(kids, tight)
	r.str("</li>\n")
}

func (r *renderer) code(b *block) {
	r.cr()
	r.str("<pre><code")
	if b.lang != "" {
		r.str(` class="language-`, b.lang, `"`)
	}
	r.str(">")
	if !b.diff {
		r.out = appendEscaped(r.out, b.text)
	} else {
		for l := range strings.Lines(b.text) {
			l = strings.TrimSuffix(l, "\n")
			class := ""
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			case strings.HasPrefix(l, "+"):
				class = "add"
			case strings.HasPrefix(l, "-"):
				class = "del"
			case strings.HasPrefix(l, "@@"):
				class = "hunk"
			}
			if class == "" {
				r.out = appendEscaped(r.out, l)
			} else {
				r.str(`<span class="`, class, `">`)
				r.out = appendEscaped(r.out, l)
				r.str("</span>")
			}
			r.out = append(r.out, '\n')
		}
	}
	r.str("</code></pre>\n")
}

func (r *renderer) table(b *block) {
	r.cr()
	r.str("<table>\n<thead>\n<tr>\n")
	for k, c := range b.rows[0] {
		r.cell("th", b.aligns[k], c)
	}
	r.str("</tr>\n</thead>\n")
	if len(b.rows) > 1 {
		r.str("<tbody>\n")
		for _, row := range b.rows[1:] {
			r.str("<tr>\n")
			for k, c := range row {
				r.cell("td", b.aligns[k], c)
			}
			r.str("</tr>\n")
		}
		r.str("</tbody>\n")
	}
	r.str("</table>\n")
}

func (r *renderer) cell(tag string, a align, text string) {
	r.str("<", tag, alignClass[a], ">")
	r.inline(text)
	r.str("</", tag, ">\n")
}
