package mdparse

// This file is goldmark's link reference definition parser
// (github.com/yuin/goldmark v1.8.7, parser/link_ref.go; MIT licence,
// Copyright (c) 2019 Yusuke Inuzuka, its text in LICENSE.goldmark), made
// linear in the paragraph's length: goldmark's read each label and title
// through the block reader's Value, which walks the paragraph's lines from the last one, and cut each
// definition's lines out of the paragraph with a copy of the rest, so that
// a paragraph of 30,000 one-line definitions took seconds. Definitions
// parse as goldmark's do, with link.go's destination rule.

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

type linkReferences struct{}

func (linkReferences) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	block := text.NewBlockReader(reader.Source(), lines)
	// The definitions are the paragraph's first lines, one after another:
	// the first line that is none ends them.
	cut := 0
	for {
		ref, start, end := parseLinkReferenceDefinition(block, pc)
		if start < 0 {
			break
		}
		if start == 0 {
			ref.SetBlankPreviousLines(node.HasBlankPreviousLines())
		}
		node.Parent().InsertBefore(node.Parent(), node, ref)
		for i := start + 1; i < end; i++ {
			ref.Lines().Append(lines.At(i))
		}
		seg := ref.Lines().At(ref.Lines().Len() - 1)
		ref.Lines().Set(ref.Lines().Len()-1, seg.TrimRightSpace(reader.Source()))
		if start == end {
			end++
		}
		cut = max(cut, min(end, lines.Len()))
	}
	if cut == 0 {
		return
	}
	if cut == lines.Len() {
		node.Parent().RemoveChild(node.Parent(), node)
		return
	}
	lines.SetSliced(cut, lines.Len())
	node.SetLines(lines)
}

func parseLinkReferenceDefinition(block text.Reader, pc parser.Context) (*ast.LinkReferenceDefinition, int, int) {
	block.SkipSpaces()
	line, _ := block.PeekLine()
	if line == nil {
		return nil, -1, -1
	}
	startLine, _ := block.Position()
	width, pos := util.IndentWidth(line, 0)
	if width > 3 {
		return nil, -1, -1
	}
	if width != 0 {
		pos++
	}
	if line[pos] != '[' {
		return nil, -1, -1
	}
	_, startPos := block.Position()
	block.Advance(pos + 1)
	segments, found := block.FindClosure('[', ']', linkFindClosureOptions)
	if !found {
		return nil, -1, -1
	}
	label := segmentsValue(block.Source(), segments)
	if util.IsBlank(label) {
		return nil, -1, -1
	}
	if block.Peek() != ':' {
		return nil, -1, -1
	}
	block.Advance(1)
	block.SkipSpaces()
	destination, ok := parseLinkDestination(block)
	if !ok {
		return nil, -1, -1
	}
	line, _ = block.PeekLine()
	isNewLine := line == nil || util.IsBlank(line)

	endLine, _ := block.Position()
	_, spaces, _ := block.SkipSpaces()
	opener := block.Peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		if !isNewLine {
			return nil, -1, -1
		}
		return reference(pc, startPos, label, destination, nil), startLine, endLine + 1
	}
	if spaces == 0 {
		return nil, -1, -1
	}
	block.Advance(1)
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	segments, found = block.FindClosure(opener, closer, linkFindClosureOptions)
	if !found {
		if !isNewLine {
			return nil, -1, -1
		}
		ref := reference(pc, startPos, label, destination, nil)
		block.AdvanceLine()
		return ref, startLine, endLine + 1
	}
	title := segmentsValue(block.Source(), segments)

	line, _ = block.PeekLine()
	if line != nil && !util.IsBlank(line) {
		if !isNewLine {
			return nil, -1, -1
		}
		return reference(pc, startPos, label, destination, title), startLine, endLine
	}

	endLine, _ = block.Position()
	return reference(pc, startPos, label, destination, title), startLine, endLine + 1
}

// reference makes the definition's node and adds it to the document's
// references.
func reference(pc parser.Context, start text.Segment, label, destination, title []byte) *ast.LinkReferenceDefinition {
	ref := ast.NewLinkReferenceDefinition(label, destination, title)
	ref.Lines().Append(start)
	pc.AddReference(parser.NewReference(label, destination, title))
	return ref
}
