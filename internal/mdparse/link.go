package mdparse

// This file is goldmark's link parser (github.com/yuin/goldmark v1.8.7,
// parser/link.go; MIT licence, Copyright (c) 2019 Yusuke Inuzuka, its text
// in LICENSE.goldmark) with the changes that make it linear in its input,
// which goldmark's is not: on hostile input each of these took seconds to
// minutes for 1 MiB.
//
//   - A link destination nests parentheses at most maxParens deep and an
//     <…> destination stops at an unescaped < (as CommonMark says; goldmark
//     read on to the line's end), so "[a](" repeated no longer rescans the
//     rest of the line at every "](".
//   - "No links in links" marks the openers before a new link inactive, as
//     the CommonMark reference algorithm does, instead of searching each
//     label's content for a link ("[[[…]]]" was quadratic).
//   - A shortcut reference's label is read from the paragraph's lines by
//     binary search, and only when it is short enough to be a label (the
//     reader's Value walked every line of the paragraph and copied the whole
//     span first).
//
// Everything else (CommonMark's links, images and their reference forms) is
// unchanged; the CommonMark spec examples in internal/mdhtml check it.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxParens bounds the nesting of parentheses in a link destination
// (CommonMark allows the limit; cmark's is 32 too).
const maxParens = 32

// maxLabel is CommonMark's bound on a link label: 999 characters.
const maxLabel = 999

var linkLabelStateKey = parser.NewContextKey()

type linkLabelState struct {
	ast.BaseInline

	Segment text.Segment

	IsImage bool

	// inactive: a link was made after this opener, so it can no longer
	// open one (CommonMark's "no links in links").
	inactive bool

	Prev *linkLabelState

	Next *linkLabelState

	First *linkLabelState

	Last *linkLabelState
}

func newLinkLabelState(segment text.Segment, isImage bool) *linkLabelState {
	return &linkLabelState{
		Segment: segment,
		IsImage: isImage,
	}
}

func (s *linkLabelState) Text(source []byte) []byte {
	return s.Segment.Value(source)
}

func (s *linkLabelState) Dump(source []byte, level int) {
	fmt.Printf("%slinkLabelState: \"%s\"\n", strings.Repeat("    ", level), s.Text(source))
}

var kindLinkLabelState = ast.NewNodeKind("LinkLabelState")

func (s *linkLabelState) Kind() ast.NodeKind {
	return kindLinkLabelState
}

func linkLabelStateLength(v *linkLabelState) int {
	if v == nil || v.Last == nil || v.First == nil {
		return 0
	}
	return v.Last.Segment.Stop - v.First.Segment.Start
}

func pushLinkLabelState(pc parser.Context, v *linkLabelState) {
	tlist := pc.Get(linkLabelStateKey)
	var list *linkLabelState
	if tlist == nil {
		list = v
		v.First = v
		v.Last = v
		pc.Set(linkLabelStateKey, list)
	} else {
		list = tlist.(*linkLabelState)
		l := list.Last
		list.Last = v
		l.Next = v
		v.Prev = l
	}
}

func removeLinkLabelState(pc parser.Context, d *linkLabelState) {
	tlist := pc.Get(linkLabelStateKey)
	var list *linkLabelState
	if tlist == nil {
		return
	}
	list = tlist.(*linkLabelState)

	if d.Prev == nil {
		list = d.Next
		if list != nil {
			list.First = d
			list.Last = d.Last
			list.Prev = nil
			pc.Set(linkLabelStateKey, list)
		} else {
			pc.Set(linkLabelStateKey, nil)
		}
	} else {
		d.Prev.Next = d.Next
		if d.Next != nil {
			d.Next.Prev = d.Prev
		}
	}
	if list != nil && d.Next == nil {
		list.Last = d.Prev
	}
	d.Next = nil
	d.Prev = nil
	d.First = nil
	d.Last = nil
}

// inLinkLabel reports whether a [ or ![ is open, as goldmark's
// Context.IsInLinkLabel does for its own link parser.
func inLinkLabel(pc parser.Context) bool { return pc.Get(linkLabelStateKey) != nil }

type linkParser struct{}

func (s linkParser) Trigger() []byte {
	return []byte{'!', '[', ']'}
}

var linkBottom = parser.NewContextKey()

func (s linkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, segment := block.PeekLine()
	if line[0] == '!' {
		if len(line) > 1 && line[1] == '[' {
			block.Advance(1)
			pushLinkBottom(pc)
			return processLinkLabelOpen(block, segment.Start+1, true, pc)
		}
		return nil
	}
	if line[0] == '[' {
		pushLinkBottom(pc)
		return processLinkLabelOpen(block, segment.Start, false, pc)
	}

	// line[0] == ']'
	tlist := pc.Get(linkLabelStateKey)
	if tlist == nil {
		return nil
	}
	last := tlist.(*linkLabelState).Last
	if last == nil {
		_ = popLinkBottom(pc)
		return nil
	}
	block.Advance(1)
	removeLinkLabelState(pc, last)
	// CommonMark spec says:
	//  > A link label can have at most 999 characters inside the square brackets.
	if linkLabelStateLength(tlist.(*linkLabelState)) > 998 {
		ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
		_ = popLinkBottom(pc)
		return nil
	}

	if !last.IsImage && last.inactive { // a link in a link text is not allowed
		ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
		_ = popLinkBottom(pc)
		return nil
	}

	c := block.Peek()
	l, pos := block.Position()
	var link *ast.Link
	var hasValue bool
	switch c {
	case '(':
		link = s.parseLink(parent, last, block, pc)
	case '[':
		link, hasValue = s.parseReferenceLink(parent, last, block, pc)
		if link == nil && hasValue {
			ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
			_ = popLinkBottom(pc)
			return nil
		}
	}

	if link == nil {
		// maybe shortcut reference link
		block.SetPosition(l, pos)
		maybeReference, ok := labelValue(block.Source(), parent.Lines(), text.NewSegment(last.Segment.Stop, segment.Start))
		// CommonMark spec says:
		//  > A link label can have at most 999 characters inside the square brackets.
		if !ok {
			ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
			_ = popLinkBottom(pc)
			return nil
		}

		ref, ok := pc.Reference(util.ToLinkReference(maybeReference))
		if !ok {
			ast.MergeOrReplaceTextSegment(last.Parent(), last, last.Segment)
			_ = popLinkBottom(pc)
			return nil
		}
		link = ast.NewLink()
		s.processLinkLabel(parent, link, last, pc)
		link.Title = ref.Title()
		link.Destination = ref.Destination()
		link.Reference = ast.NewReferenceLink(ast.ReferenceLinkShortcut, maybeReference)
	}
	var n ast.Node
	if last.IsImage {
		last.Parent().RemoveChild(last.Parent(), last)
		n = ast.NewImage(link)
	} else {
		last.Parent().RemoveChild(last.Parent(), last)
		n = link
		// The openers still open all came before this link's, so none can
		// make a link any more. Those marked by an earlier link are older
		// than any opened since, so the walk stops at the first marked.
		if l, _ := pc.Get(linkLabelStateKey).(*linkLabelState); l != nil {
			for o := l.Last; o != nil && !o.inactive; o = o.Prev {
				o.inactive = true
			}
		}
	}
	n.(interface{ SetPos(int) }).SetPos(last.Segment.Start)
	return n
}

// labelValue returns the text of seg (a shortcut reference's label) as
// the paragraph's lines hold it, and false when it is longer than a label
// may be. It reads only the lines seg spans, found by binary search, and
// at most maxLabel+1 bytes of them.
func labelValue(source []byte, lines *text.Segments, seg text.Segment) ([]byte, bool) {
	n := lines.Len()
	i := sort.Search(n, func(i int) bool { return lines.At(i).Stop > seg.Start })
	if i < n {
		if l := lines.At(i); l.Start <= seg.Start && seg.Stop <= l.Stop && l.Padding == 0 {
			// Within one line, the common case: the bytes as they are.
			return source[seg.Start:seg.Stop], seg.Stop-seg.Start <= maxLabel
		}
	}
	var v []byte
	for ; i < n; i++ {
		l := lines.At(i)
		if l.Start >= seg.Stop {
			break
		}
		from, to := max(l.Start, seg.Start), min(l.Stop, seg.Stop)
		if len(v)+l.Padding+to-from > maxLabel {
			return nil, false
		}
		v = append(l.ConcatPadding(v), source[from:to]...)
	}
	return v, true
}

func processLinkLabelOpen(block text.Reader, pos int, isImage bool, pc parser.Context) *linkLabelState {
	start := pos
	if isImage {
		start--
	}
	state := newLinkLabelState(text.NewSegment(start, pos+1), isImage)
	pushLinkLabelState(pc, state)
	block.Advance(1)
	return state
}

func (s linkParser) processLinkLabel(parent ast.Node, link *ast.Link, last *linkLabelState, pc parser.Context) {
	bottom := popLinkBottom(pc)
	parser.ProcessDelimiters(bottom, pc)
	for c := last.NextSibling(); c != nil; {
		next := c.NextSibling()
		parent.RemoveChild(parent, c)
		link.AppendChild(link, c)
		c = next
	}
}

var linkFindClosureOptions text.FindClosureOptions = text.FindClosureOptions{
	Nesting: false,
	Newline: true,
	Advance: true,
}

// segmentsValue joins segments that each lie within one line, as the
// block reader's Value would but without searching the block's lines.
func segmentsValue(source []byte, segments *text.Segments) []byte {
	if segments.Len() == 1 {
		s := segments.At(0)
		return s.Value(source)
	}
	var v []byte
	for i := range segments.Len() {
		s := segments.At(i)
		v = append(s.ConcatPadding(v), source[s.Start:s.Stop]...)
	}
	return v
}

func (s linkParser) parseReferenceLink(parent ast.Node, last *linkLabelState,
	block text.Reader, pc parser.Context) (*ast.Link, bool) {
	_, orgpos := block.Position()
	block.Advance(1) // skip '['
	segments, found := block.FindClosure('[', ']', linkFindClosureOptions)
	if !found {
		return nil, false
	}

	refType := ast.ReferenceLinkFull
	maybeReference := segmentsValue(block.Source(), segments)
	if util.IsBlank(maybeReference) { // collapsed reference link
		var ok bool
		maybeReference, ok = labelValue(block.Source(), parent.Lines(), text.NewSegment(last.Segment.Stop, orgpos.Start-1))
		if !ok {
			return nil, true
		}
		refType = ast.ReferenceLinkCollapsed
	}
	// CommonMark spec says:
	//  > A link label can have at most 999 characters inside the square brackets.
	if len(maybeReference) > maxLabel {
		return nil, true
	}

	ref, ok := pc.Reference(util.ToLinkReference(maybeReference))
	if !ok {
		return nil, true
	}

	link := ast.NewLink()
	s.processLinkLabel(parent, link, last, pc)
	link.Title = ref.Title()
	link.Destination = ref.Destination()
	link.Reference = ast.NewReferenceLink(refType, maybeReference)
	return link, true
}

func (s linkParser) parseLink(parent ast.Node, last *linkLabelState, block text.Reader, pc parser.Context) *ast.Link {
	block.Advance(1) // skip '('
	block.SkipSpaces()
	var title []byte
	var destination []byte
	var ok bool
	if block.Peek() == ')' { // empty link like '[link]()'
		block.Advance(1)
	} else {
		destination, ok = parseLinkDestination(block)
		if !ok {
			return nil
		}
		block.SkipSpaces()
		if block.Peek() == ')' {
			block.Advance(1)
		} else {
			title, ok = parseLinkTitle(block)
			if !ok {
				return nil
			}
			block.SkipSpaces()
			if block.Peek() == ')' {
				block.Advance(1)
			} else {
				return nil
			}
		}
	}

	link := ast.NewLink()
	s.processLinkLabel(parent, link, last, pc)
	link.Destination = destination
	link.Title = title
	return link
}

func parseLinkDestination(block text.Reader) ([]byte, bool) {
	block.SkipSpaces()
	line, _ := block.PeekLine()
	if block.Peek() == '<' {
		i := 1
		for i < len(line) {
			c := line[i]
			if c == '\\' && i < len(line)-1 && util.IsPunct(line[i+1]) {
				i += 2
				continue
			} else if c == '>' {
				block.Advance(i + 1)
				return line[1:i], true
			} else if c == '<' || c == '\n' {
				return nil, false
			}
			i++
		}
		return nil, false
	}
	opened := 0
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' && i < len(line)-1 && util.IsPunct(line[i+1]) {
			i += 2
			continue
		} else if c == '(' {
			opened++
			if opened > maxParens {
				return nil, false
			}
		} else if c == ')' {
			opened--
			if opened < 0 {
				break
			}
		} else if util.IsSpace(c) {
			break
		}
		i++
	}
	block.Advance(i)
	return line[:i], len(line[:i]) != 0
}

func parseLinkTitle(block text.Reader) ([]byte, bool) {
	block.SkipSpaces()
	opener := block.Peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		return nil, false
	}
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	block.Advance(1)
	segments, found := block.FindClosure(opener, closer, linkFindClosureOptions)
	if found {
		return segmentsValue(block.Source(), segments), true
	}
	return nil, false
}

func pushLinkBottom(pc parser.Context) {
	bottoms := pc.Get(linkBottom)
	b := pc.LastDelimiter()
	if bottoms == nil {
		pc.Set(linkBottom, b)
		return
	}
	if s, ok := bottoms.([]ast.Node); ok {
		pc.Set(linkBottom, append(s, b))
		return
	}
	pc.Set(linkBottom, []ast.Node{bottoms.(ast.Node), b})
}

func popLinkBottom(pc parser.Context) ast.Node {
	bottoms := pc.Get(linkBottom)
	if bottoms == nil {
		return nil
	}
	if v, ok := bottoms.(ast.Node); ok {
		pc.Set(linkBottom, nil)
		return v
	}
	s := bottoms.([]ast.Node)
	v := s[len(s)-1]
	n := s[0 : len(s)-1]
	switch len(n) {
	case 0:
		pc.Set(linkBottom, nil)
	case 1:
		pc.Set(linkBottom, n[0])
	default:
		pc.Set(linkBottom, s[0:len(s)-1])
	}
	return v
}

func (s linkParser) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	pc.Set(linkBottom, nil)
	tlist := pc.Get(linkLabelStateKey)
	if tlist == nil {
		return
	}
	for s := tlist.(*linkLabelState); s != nil; {
		next := s.Next
		removeLinkLabelState(pc, s)
		s.Parent().ReplaceChild(s.Parent(), s, ast.NewTextSegment(s.Segment))
		s = next
	}
}
