package blocks

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// blockText counts the characters of every text object in bs, the way
// Slack's undocumented msg_blocks_too_long cap (and internal/blockcheck)
// counts them: button labels, option texts, placeholders and the text of
// markdown blocks included.
// Layouts are built generously first and measured, then rebuilt smaller
// until they fit, so this runs several times per render: it walks the
// slack-go values directly. A block or element it does not know is
// measured through its JSON (blockTextJSON), which is the definition.
func blockText(bs []slack.Block) int {
	var c textCounter
	for _, b := range bs {
		c.block(b)
	}
	if c.unknown {
		return blockTextJSON(bs)
	}
	return c.n
}

// blockTextJSON is blockText by definition: encode, decode, and count
// every {"type":"plain_text"|"mrkdwn"|"markdown","text":…} object (the
// last is the markdown block).
func blockTextJSON(bs []slack.Block) int {
	b, err := json.Marshal(bs)
	if err != nil {
		return maxBlockText + 1
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return maxBlockText + 1
	}
	return textIn(v)
}

// textCounter sums the runes of text objects in the block and element
// types blocks renders; unknown is set on anything else.
type textCounter struct {
	n       int
	unknown bool
}

func (c *textCounter) text(t *slack.TextBlockObject) {
	if t != nil && (t.Type == slack.PlainTextType || t.Type == slack.MarkdownType) {
		c.n += utf8.RuneCountInString(t.Text)
	}
}

func (c *textCounter) options(os ...*slack.OptionBlockObject) {
	for _, o := range os {
		if o != nil {
			c.text(o.Text)
			c.text(o.Description)
		}
	}
}

func (c *textCounter) groups(gs []*slack.OptionGroupBlockObject) {
	for _, g := range gs {
		if g != nil {
			c.text(g.Label)
			c.options(g.Options...)
		}
	}
}

func (c *textCounter) confirm(x *slack.ConfirmationBlockObject) {
	if x != nil {
		c.text(x.Title)
		c.text(x.Text)
		c.text(x.Confirm)
		c.text(x.Deny)
	}
}

func (c *textCounter) block(b slack.Block) {
	switch b := b.(type) {
	case *slack.SectionBlock:
		if b == nil {
			return
		}
		c.text(b.Text)
		for _, f := range b.Fields {
			c.text(f)
		}
		if b.Accessory != nil {
			c.accessory(b.Accessory)
		}
	case *slack.ActionBlock:
		if b == nil || b.Elements == nil {
			return
		}
		for _, e := range b.Elements.ElementSet {
			c.element(e)
		}
	case *slack.ContextBlock:
		if b == nil {
			return
		}
		for _, e := range b.ContextElements.Elements {
			switch e := e.(type) {
			case *slack.TextBlockObject:
				c.text(e)
			case *slack.ImageBlockElement: // no text objects
			default:
				c.unknown = true
			}
		}
	case *slack.HeaderBlock:
		if b != nil {
			c.text(b.Text)
		}
	case *slack.InputBlock:
		if b == nil {
			return
		}
		c.text(b.Label)
		c.text(b.Hint)
		c.element(b.Element)
	case *slack.MarkdownBlock:
		// Its text counts toward the cap like any other (bolt-js#2509).
		if b != nil {
			c.n += utf8.RuneCountInString(b.Text)
		}
	case *slack.DividerBlock:
	default:
		c.unknown = true
	}
}

// accessory counts the one element an Accessory holds; with none or
// several set, its JSON decides.
func (c *textCounter) accessory(a *slack.Accessory) {
	var set []slack.BlockElement
	for _, e := range []slack.BlockElement{a.ButtonElement, a.OverflowElement, a.SelectElement, a.MultiSelectElement,
		a.RadioButtonsElement, a.CheckboxGroupsBlockElement, a.PlainTextInputElement} {
		if !isNilElement(e) {
			set = append(set, e)
		}
	}
	others := a.ImageElement != nil || a.DatePickerElement != nil || a.TimePickerElement != nil ||
		a.RichTextInputElement != nil || a.WorkflowButtonElement != nil || a.UnknownElement != nil
	if len(set) != 1 || others {
		c.unknown = true
		return
	}
	c.element(set[0])
}

// isNilElement reports a nil element, typed or not, of the kinds an
// accessory holds.
func isNilElement(e slack.BlockElement) bool {
	switch e := e.(type) {
	case nil:
		return true
	case *slack.ButtonBlockElement:
		return e == nil
	case *slack.OverflowBlockElement:
		return e == nil
	case *slack.SelectBlockElement:
		return e == nil
	case *slack.MultiSelectBlockElement:
		return e == nil
	case *slack.RadioButtonsBlockElement:
		return e == nil
	case *slack.CheckboxGroupsBlockElement:
		return e == nil
	case *slack.PlainTextInputBlockElement:
		return e == nil
	}
	return false
}

func (c *textCounter) element(e slack.BlockElement) {
	if isNilElement(e) {
		return
	}
	switch e := e.(type) {
	case *slack.ButtonBlockElement:
		c.text(e.Text)
		c.confirm(e.Confirm)
	case *slack.SelectBlockElement:
		c.text(e.Placeholder)
		c.options(e.Options...)
		c.groups(e.OptionGroups)
		c.options(e.InitialOption)
		c.confirm(e.Confirm)
	case *slack.MultiSelectBlockElement:
		c.text(e.Placeholder)
		c.options(e.Options...)
		c.groups(e.OptionGroups)
		c.options(e.InitialOptions...)
		c.confirm(e.Confirm)
	case *slack.CheckboxGroupsBlockElement:
		c.options(e.Options...)
		c.options(e.InitialOptions...)
		c.confirm(e.Confirm)
	case *slack.RadioButtonsBlockElement:
		c.options(e.Options...)
		c.options(e.InitialOption)
		c.confirm(e.Confirm)
	case *slack.OverflowBlockElement:
		c.options(e.Options...)
		c.confirm(e.Confirm)
	case *slack.PlainTextInputBlockElement:
		c.text(e.Placeholder)
	default:
		c.unknown = true
	}
}

func textIn(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if t, _ := x["type"].(string); t == "plain_text" || t == "mrkdwn" || t == "markdown" {
			if s, ok := x["text"].(string); ok {
				return utf8.RuneCountInString(s)
			}
		}
		for _, e := range x {
			n += textIn(e)
		}
	case []any:
		for _, e := range x {
			n += textIn(e)
		}
	}
	return n
}

// fitsMessage reports whether a message's blocks are within Slack's block
// count and cumulative text caps, the markdown blocks' own cap included.
func fitsMessage(bs []slack.Block) bool {
	return len(bs) <= maxMsgBlocks && blockText(bs) <= maxBlockText && markdownText(bs) <= maxMarkdownText
}

// markdownText counts the characters of the markdown blocks in bs.
func markdownText(bs []slack.Block) int {
	n := 0
	for _, b := range bs {
		if m, ok := b.(*slack.MarkdownBlock); ok && m != nil {
			n += utf8.RuneCountInString(m.Text)
		}
	}
	return n
}

// viewSize is the JSON size of a modal as views.open sends it.
func viewSize(m slack.ModalViewRequest) int {
	b, err := json.Marshal(m)
	if err != nil {
		return maxViewBytes + 1
	}
	return len(b)
}

// fitsView reports whether a modal is within Slack's block count and size.
func fitsView(m slack.ModalViewRequest) bool {
	return len(m.Blocks.BlockSet) <= maxModalBlocks && viewSize(m) <= maxViewBytes
}

// jsonSize is the size s takes as a JSON string.
func jsonSize(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}
