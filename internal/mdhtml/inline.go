package mdhtml

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Inline parsing follows CommonMark's algorithm: one left-to-right scan
// produces a flat list of nodes — text, code spans, link boundaries — and
// a stack of delimiter runs (*, _, ~~) and brackets; emphasis is resolved by
// matching closers to openers, which only records tags on the delimiter
// nodes. Rendering walks the list once, so nothing recurses however deep
// the nesting, and the tags come out properly nested because the algorithm
// drops every delimiter between a matched pair. Nodes and delimiters are
// small pointer-free structs (offsets into the source, int32 indices): a
// hostile paragraph can make a node of nearly every byte.

type nodeKind uint8

const (
	nText      nodeKind = iota // src[start:end], escaped when rendered
	nSoft                      // a soft line break: a space
	nCode                      // a code span: its content is src[start:end]
	nBreak                     // a hard line break
	nLinkOpen                  // a link's (or image's) start: links[link]
	nLinkClose                 // its end
)

// tag is emphasis recorded on a delimiter node.
type tag uint8

const (
	tagEmStar tag = iota
	tagEmUnder
	tagStrongStar
	tagStrongUnder
	tagDel
)

// tagName and tagLit: the element, and the delimiter shown as text instead
// when the element would nest deeper than maxDepth.
var (
	tagName = [...]string{"em", "em", "strong", "strong", "del"}
	tagLit  = [...]string{"*", "_", "**", "__", "~~"}
)

// tagItem is an element of a list of tags in inlineParser.tags.
type tagItem struct {
	tag  tag
	next int32 // -1 ends the list
}

type node struct {
	kind       nodeKind
	start, end int32
	link       int32 // nLinkOpen, nLinkClose: the index in links
	// Emphasis on a delimiter node, as lists in inlineParser.tags (-1:
	// none). closes are rendered before the text, opens after it; both
	// lists hold the last matched first, which is the outermost: right
	// for opens, reversed for closes.
	closes, opens int32
}

type link struct {
	href, title string
	ok          bool // the URL's scheme is allowed: render an <a>
	showURL     bool // no text: show the URL as the text
	emitted     bool // the <a> was written (not nested in another link)
}

type delim struct {
	node              int32
	ch                byte
	canOpen, canClose bool
	n, orig           int32
	prev, next        int32 // the live delimiters below and above, -1 at the ends
}

type bracket struct {
	node   int32
	image  bool
	bottom int32 // the top of the delimiter stack when it was pushed
}

type inlineParser struct {
	src      string
	nodes    []node
	tags     []tagItem
	links    []link
	delims   []delim
	last     int32 // the top of the delimiter stack, -1 when empty
	brackets []bracket
	// floor: link brackets below this index are inactive (a link was formed
	// after them and links cannot contain links). One index instead of
	// walking the stack keeps many links after many open brackets linear.
	floor int32
	// Code span closers: positions of the backtick runs of each length and
	// how far each list has been searched, so no run is looked at twice.
	ticks  map[int][]int
	tickAt map[int]int
	// titleFail[k]: a link title of kind k ("…", '…', (…)) started at or
	// after this offset has no end: don't scan for one again.
	titleFail [3]int
}

var special = [256]bool{'\n': true, '\\': true, '`': true, '*': true, '_': true, '~': true, '[': true, ']': true, '!': true, '<': true}

func (p *inlineParser) parse(src string) {
	p.src = src
	p.nodes, p.tags, p.links, p.delims, p.brackets = p.nodes[:0], p.tags[:0], p.links[:0], p.delims[:0], p.brackets[:0]
	p.last, p.floor, p.ticks, p.tickAt = -1, 0, nil, nil
	p.titleFail = [3]int{len(src) + 1, len(src) + 1, len(src) + 1}
	start, i := 0, 0
	for i < len(src) {
		c := src[i]
		if !special[c] {
			i++
			continue
		}
		switch c {
		case '\n':
			end := i
			for end > start && src[end-1] == ' ' {
				end--
			}
			p.text(start, end)
			if i-end >= 2 {
				p.add(nBreak, 0, 0)
			} else {
				p.add(nSoft, 0, 0)
			}
			i++
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				p.text(start, i)
				p.add(nBreak, 0, 0)
				i += 2
			} else if i+1 < len(src) && isASCIIPunct(src[i+1]) {
				p.text(start, i)
				p.text(i+1, i+2)
				i += 2
			} else {
				i++
				continue
			}
		case '`':
			n := runLen(src, i, '`')
			p.text(start, i)
			if e, ok := p.tickCloser(i, n); ok {
				p.add(nCode, i+n, e)
				i = e + n
			} else {
				p.text(i, i+n)
				i += n
			}
		case '*', '_', '~':
			n := runLen(src, i, c)
			p.text(start, i)
			p.delimRun(i, n)
			i += n
		case '!':
			if i+1 >= len(src) || src[i+1] != '[' {
				i++
				continue
			}
			p.text(start, i)
			p.pushBracket(i, 2, true)
			i += 2
		case '[':
			p.text(start, i)
			p.pushBracket(i, 1, false)
			i++
		case ']':
			p.text(start, i)
			i = p.closeBracket(i)
		case '<':
			e, ok := p.autolink(i, start)
			if !ok {
				i++
				continue
			}
			i = e
		}
		start = i
	}
	p.text(start, len(src))
	p.processEmphasis(-1)
}

func (p *inlineParser) add(k nodeKind, start, end int) {
	p.nodes = append(p.nodes, node{kind: k, start: int32(start), end: int32(end), closes: -1, opens: -1})
}

func (p *inlineParser) text(start, end int) {
	if start < end {
		p.add(nText, start, end)
	}
}

// codeText is a code span's content: line ends become spaces, and one space
// goes from both ends if both have one, so a span can start or end with a
// backtick by padding it with spaces.
func codeText(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		s = s[1 : len(s)-1]
	}
	return s
}

// tickCloser finds the backtick run of exactly n after the opener at i.
func (p *inlineParser) tickCloser(i, n int) (int, bool) {
	if p.ticks == nil {
		p.ticks, p.tickAt = map[int][]int{}, map[int]int{}
		for k := 0; k < len(p.src); {
			j := strings.IndexByte(p.src[k:], '`')
			if j < 0 {
				break
			}
			k += j
			m := runLen(p.src, k, '`')
			p.ticks[m] = append(p.ticks[m], k)
			k += m
		}
	}
	list, k := p.ticks[n], p.tickAt[n]
	for k < len(list) && list[k] <= i {
		k++
	}
	p.tickAt[n] = k
	if k == len(list) {
		return 0, false
	}
	return list[k], true
}

// delimRun adds a run of *, _ or ~ and, if it can open or close emphasis,
// pushes it on the delimiter stack (CommonMark's flanking rules; _ must
// also be at a word boundary, so snake_case stays text).
func (p *inlineParser) delimRun(i, n int) {
	c := p.src[i]
	p.text(i, i+n)
	if c == '~' && n != 2 {
		return
	}
	before, after := ' ', ' '
	if i > 0 {
		before, _ = utf8.DecodeLastRuneInString(p.src[:i])
	}
	if i+n < len(p.src) {
		after, _ = utf8.DecodeRuneInString(p.src[i+n:])
	}
	spB, spA := unicode.IsSpace(before), unicode.IsSpace(after)
	puB, puA := isPunct(before), isPunct(after)
	left := !spA && (!puA || spB || puB)
	right := !spB && (!puB || spA || puA)
	canOpen, canClose := left, right
	if c == '_' {
		canOpen = left && (!right || puB)
		canClose = right && (!left || puA)
	}
	if !canOpen && !canClose {
		return
	}
	d := delim{node: int32(len(p.nodes) - 1), ch: c, n: int32(n), orig: int32(n), canOpen: canOpen, canClose: canClose, prev: p.last, next: -1}
	p.delims = append(p.delims, d)
	if p.last >= 0 {
		p.delims[p.last].next = int32(len(p.delims) - 1)
	}
	p.last = int32(len(p.delims) - 1)
}

func (p *inlineParser) remove(d int32) {
	x := &p.delims[d]
	if x.prev >= 0 {
		p.delims[x.prev].next = x.next
	}
	if x.next >= 0 {
		p.delims[x.next].prev = x.prev
	} else {
		p.last = x.prev
	}
}

func delimKey(d *delim) int {
	k := 0
	switch d.ch {
	case '_':
		k = 6
	case '~':
		k = 12
	}
	if d.canOpen {
		k += 3
	}
	return k + int(d.orig%3)
}

func tagFor(c byte, use int32) tag {
	switch {
	case c == '~':
		return tagDel
	case use == 2 && c == '*':
		return tagStrongStar
	case use == 2:
		return tagStrongUnder
	case c == '*':
		return tagEmStar
	}
	return tagEmUnder
}

// push prepends t to the list at head.
func (p *inlineParser) push(head *int32, t tag) {
	p.tags = append(p.tags, tagItem{tag: t, next: *head})
	*head = int32(len(p.tags) - 1)
}

// processEmphasis matches the delimiters above bottom (a delimiter index, or
// -1 for all) and removes them from the stack. openersBottom remembers, per
// kind of closer, below which no opener can match, so a run of unmatched
// closers does not rescan the stack: linear overall.
func (p *inlineParser) processEmphasis(bottom int32) {
	var openersBottom [18]int32
	for k := range openersBottom {
		openersBottom[k] = bottom
	}
	cur := int32(-1)
	for d := p.last; d > bottom; d = p.delims[d].prev {
		cur = d
	}
	for cur >= 0 {
		c := &p.delims[cur]
		if !c.canClose {
			cur = c.next
			continue
		}
		key := delimKey(c)
		o := c.prev
		for ; o > bottom && o > openersBottom[key]; o = p.delims[o].prev {
			od := &p.delims[o]
			if od.ch != c.ch || !od.canOpen {
				continue
			}
			// The "rule of 3": "*foo**bar*" is not <em>foo</em><em>bar.
			odd := c.ch != '~' && (c.canOpen || od.canClose) &&
				(od.orig+c.orig)%3 == 0 && !(od.orig%3 == 0 && c.orig%3 == 0)
			if !odd {
				break
			}
		}
		if o <= bottom || o <= openersBottom[key] {
			openersBottom[key] = max(c.prev, bottom)
			next := c.next
			if !c.canOpen {
				p.remove(cur)
			}
			cur = next
			continue
		}
		od := &p.delims[o]
		use := int32(1)
		if c.ch == '~' || (c.n >= 2 && od.n >= 2) {
			use = 2
		}
		t := tagFor(c.ch, use)
		on, cn := &p.nodes[od.node], &p.nodes[c.node]
		on.end -= use
		p.push(&on.opens, t)
		cn.start += use
		p.push(&cn.closes, t)
		for d := c.prev; d != o; {
			prev := p.delims[d].prev
			p.remove(d)
			d = prev
		}
		od.n -= use
		c.n -= use
		if od.n == 0 {
			p.remove(o)
		}
		if c.n == 0 {
			next := c.next
			p.remove(cur)
			cur = next
		}
	}
	for d := p.last; d > bottom; d = p.delims[d].prev {
		p.remove(d)
	}
}

func (p *inlineParser) pushBracket(i, n int, image bool) {
	p.text(i, i+n)
	p.brackets = append(p.brackets, bracket{node: int32(len(p.nodes) - 1), image: image, bottom: p.last})
}

// closeBracket handles the ] at i and returns where scanning resumes.
func (p *inlineParser) closeBracket(i int) int {
	nb := int32(len(p.brackets))
	if nb == 0 {
		p.text(i, i+1)
		return i + 1
	}
	b := p.brackets[nb-1]
	inactive := !b.image && nb-1 < p.floor
	p.brackets = p.brackets[:nb-1]
	p.floor = min(p.floor, nb-1)
	if inactive {
		p.text(i, i+1)
		return i + 1
	}
	dest, title, end, ok := p.linkTail(i + 1)
	if !ok {
		p.text(i, i+1)
		return i + 1
	}
	li := int32(len(p.links))
	p.links = append(p.links, link{href: dest, title: title, ok: allowedURL(dest), showURL: len(p.nodes) == int(b.node)+1})
	op := &p.nodes[b.node]
	op.kind, op.link = nLinkOpen, li
	p.processEmphasis(b.bottom)
	p.nodes = append(p.nodes, node{kind: nLinkClose, link: li, closes: -1, opens: -1})
	if !b.image {
		p.floor = nb - 1
	}
	return end
}

// linkTail parses "(dest "title")" at i.
func (p *inlineParser) linkTail(i int) (dest, title string, end int, ok bool) {
	s := p.src
	if i >= len(s) || s[i] != '(' {
		return "", "", 0, false
	}
	j := skipSpace(s, i+1)
	if j < len(s) && s[j] == '<' {
		k := j + 1
		for ; k < len(s) && s[k] != '>'; k++ {
			if s[k] == '\n' || s[k] == '<' {
				return "", "", 0, false
			}
			if s[k] == '\\' && k+1 < len(s) && isASCIIPunct(s[k+1]) {
				k++
			}
		}
		if k >= len(s) {
			return "", "", 0, false
		}
		dest, j = s[j+1:k], k+1
	} else {
		k, depth := j, 0
	loop:
		for k < len(s) {
			switch c := s[k]; {
			case c == '\\' && k+1 < len(s) && isASCIIPunct(s[k+1]):
				k += 2
				continue
			case c == '(':
				if depth++; depth > 32 {
					return "", "", 0, false
				}
			case c == ')':
				if depth == 0 {
					break loop
				}
				depth--
			case c <= ' ' || c == 0x7f:
				break loop
			}
			k++
		}
		if depth != 0 {
			return "", "", 0, false
		}
		dest, j = s[j:k], k
	}
	k := skipSpace(s, j)
	if k > j && k < len(s) && (s[k] == '"' || s[k] == '\'' || s[k] == '(') {
		t, e, ok := p.linkTitle(k)
		if !ok {
			return "", "", 0, false
		}
		title, k = t, skipSpace(s, e)
	}
	if k >= len(s) || s[k] != ')' {
		return "", "", 0, false
	}
	return unescape(dest), unescape(title), k + 1, true
}

func (p *inlineParser) linkTitle(k int) (string, int, bool) {
	s := p.src
	open, kind := s[k], 0
	closing := open
	switch open {
	case '\'':
		kind = 1
	case '(':
		kind, closing = 2, ')'
	}
	if k+1 >= p.titleFail[kind] {
		return "", 0, false
	}
	for m := k + 1; m < len(s); m++ {
		switch c := s[m]; {
		case c == '\\' && m+1 < len(s) && isASCIIPunct(s[m+1]):
			m++
		case c == closing:
			return s[k+1 : m], m + 1, true
		case open == '(' && c == '(':
			return "", 0, false
		}
	}
	p.titleFail[kind] = k + 1
	return "", 0, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	return i
}

func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}

// autolink handles <https://…> and <name@host> at i; any other <…> is text.
func (p *inlineParser) autolink(i, start int) (int, bool) {
	s := p.src
	j := i + 1
	for ; j < len(s) && s[j] != '>'; j++ {
		if s[j] == '<' || s[j] <= ' ' || s[j] == 0x7f {
			return 0, false
		}
	}
	if j >= len(s) {
		return 0, false
	}
	inner := s[i+1 : j]
	href := inner
	switch {
	case isEmail(inner):
		href = "mailto:" + inner
	case !allowedURL(inner):
		return 0, false
	}
	p.text(start, i)
	li := int32(len(p.links))
	p.links = append(p.links, link{href: href, ok: true})
	p.nodes = append(p.nodes, node{kind: nLinkOpen, link: li, closes: -1, opens: -1})
	p.text(i+1, j)
	p.nodes = append(p.nodes, node{kind: nLinkClose, link: li, closes: -1, opens: -1})
	return j + 1, true
}

func isEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return false
	}
	for i := 0; i < at; i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune(".!#$%&'*+/=?^_`{|}~-", rune(c)) {
			return false
		}
	}
	for label := range strings.SplitSeq(s[at+1:], ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}

// allowedURL: only these schemes can do nothing but navigate. Checked on the
// destination as written (after backslash escapes): a leading space,
// control character or entity makes it fail, never pass.
func allowedURL(u string) bool {
	for _, scheme := range [...]string{"https://", "http://", "mailto:"} {
		if len(u) > len(scheme) && strings.EqualFold(u[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// inline parses and renders one paragraph's (heading's, cell's) inline
// source.
func (r *renderer) inline(src string) {
	if len(src) >= math.MaxInt32 {
		// Offsets are int32; a 2 GiB paragraph is text.
		r.out = appendEscaped(r.out, src)
		return
	}
	p := &r.ip
	p.parse(src)
	r.depth, r.inLink = 0, 0
	for i := range p.nodes {
		n := &p.nodes[i]
		switch n.kind {
		case nText:
			if n.closes >= 0 {
				r.flush()
				r.closes = r.closes[:0]
				for k := n.closes; k >= 0; k = p.tags[k].next {
					r.closes = append(r.closes, p.tags[k].tag)
				}
				for k := len(r.closes) - 1; k >= 0; k-- {
					r.closeTag(r.closes[k])
				}
			}
			r.pend = append(r.pend, src[n.start:n.end]...)
			if n.opens >= 0 {
				r.flush()
				for k := n.opens; k >= 0; k = p.tags[k].next {
					r.openTag(p.tags[k].tag)
				}
			}
			continue
		case nSoft:
			r.pend = append(r.pend, ' ')
			continue
		}
		r.flush()
		switch n.kind {
		case nCode:
			r.str("<code>")
			r.out = appendEscaped(r.out, codeText(src[n.start:n.end]))
			r.str("</code>")
		case nBreak:
			r.str("<br>\n")
		case nLinkOpen:
			l := &p.links[n.link]
			if r.inLink == 0 && l.ok {
				r.openLink(l.href, l.title)
				l.emitted = true
				if l.showURL {
					r.out = appendEscaped(r.out, l.href)
				}
			}
			r.inLink++
		case nLinkClose:
			r.inLink--
			if p.links[n.link].emitted {
				r.str("</a>")
			}
		}
	}
	r.flush()
}

func (r *renderer) openTag(t tag) {
	r.depth++
	if r.depth > maxDepth {
		r.str(tagLit[t])
		return
	}
	r.str("<", tagName[t], ">")
}

func (r *renderer) closeTag(t tag) {
	if r.depth > maxDepth {
		r.str(tagLit[t])
	} else {
		r.str("</", tagName[t], ">")
	}
	r.depth--
}

func (r *renderer) openLink(href, title string) {
	r.str(`<a href="`)
	r.out = appendURL(r.out, href)
	if title != "" {
		r.str(`" title="`)
		r.out = appendEscaped(r.out, title)
	}
	r.str(`" rel="noopener noreferrer nofollow" target="_blank">`)
}

// flush writes the pending text: escaped, and outside links with its bare
// URLs linked. Text is gathered across nodes first so that a URL split by
// a delimiter node (https://x/a_b) is still found whole.
func (r *renderer) flush() {
	if len(r.pend) == 0 {
		return
	}
	if r.inLink > 0 {
		r.out = appendEscaped(r.out, r.pend)
	} else {
		r.linkify(r.pend)
	}
	r.pend = r.pend[:0]
}

// linkify escapes s, linking its bare http:// and https:// URLs (GFM's
// extended autolinks): a URL starts at a word boundary, ends at whitespace,
// < or >, and loses trailing punctuation and unbalanced ) or ].
func (r *renderer) linkify(s []byte) {
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != 'h' || (i > 0 && (s[i-1] >= utf8.RuneSelf || isAlnum(s[i-1]))) {
			continue
		}
		n := schemeLen(s[i:])
		// The host must start with a letter or digit: checked before the
		// scan so a failed attempt costs nothing.
		if n == 0 || i+n >= len(s) || !isAlnum(s[i+n]) {
			continue
		}
		end := i + n
		for end < len(s) && s[end] > ' ' && s[end] != '<' && s[end] != '>' && s[end] != 0x7f {
			end++
		}
		end = i + trimURL(s[i:end])
		u := string(s[i:end])
		r.out = appendEscaped(r.out, s[last:i])
		r.openLink(u, "")
		r.out = appendEscaped(r.out, u)
		r.str("</a>")
		last = end
		i = end - 1
	}
	r.out = appendEscaped(r.out, s[last:])
}

func schemeLen(s []byte) int {
	for _, scheme := range [...]string{"https://", "http://"} {
		if len(s) >= len(scheme) && strings.EqualFold(string(s[:len(scheme)]), scheme) {
			return len(scheme)
		}
	}
	return 0
}

func trimURL(u []byte) int {
	var paren, square int // closers minus openers
	for _, c := range u {
		switch c {
		case '(':
			paren--
		case ')':
			paren++
		case '[':
			square--
		case ']':
			square++
		}
	}
	end := len(u)
	for end > 0 {
		switch u[end-1] {
		case '.', ',', ';', ':', '!', '?', '*', '_', '~', '\'', '"':
		case ')':
			if paren <= 0 {
				return end
			}
			paren--
		case ']':
			if square <= 0 {
				return end
			}
			square--
		default:
			return end
		}
		end--
	}
	return end
}

// appendEscaped escapes the five characters that matter in HTML text and
// in quoted attribute values.
func appendEscaped[S string | []byte](out []byte, s S) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '&':
			rep = "&amp;"
		case '"':
			rep = "&quot;"
		case '\'':
			rep = "&#39;"
		default:
			continue
		}
		out = append(out, s[last:i]...)
		out = append(out, rep...)
		last = i + 1
	}
	return append(out, s[last:]...)
}

// appendURL writes an href value: bytes that could end the attribute or
// that a URL may not hold are percent-encoded, & is escaped.
func appendURL(out []byte, u string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c <= ' ' || c == 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\' || c == '`':
			out = append(out, '%', hex[c>>4], hex[c&15])
		case c == '&':
			out = append(out, "&amp;"...)
		default:
			out = append(out, c)
		}
	}
	return out
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isASCIIPunct(c byte) bool {
	return ('!' <= c && c <= '/') || (':' <= c && c <= '@') || ('[' <= c && c <= '`') || ('{' <= c && c <= '~')
}

// isPunct is CommonMark's Unicode punctuation: P and S categories.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIPunct(byte(r))
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}
