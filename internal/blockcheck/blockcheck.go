// Package blockcheck checks Block Kit JSON against Slack's limits before it goes
// over the wire, so a payload Slack would answer with invalid_blocks (or
// msg_blocks_too_long, view_too_large, …) fails in a test instead of in production.
//
// It works on raw JSON — exactly what chat.postMessage, chat.update, views.open,
// views.update, views.push and a view_submission response_action send — not on
// slack-go structs, so it also catches what a struct's MarshalJSON produces.
// It does no I/O.
//
// The limits come from Slack's Block Kit reference
// (https://api.slack.com/reference/block-kit/blocks, …/block-elements,
// …/composition-objects, https://api.slack.com/methods/chat.postMessage);
// each constant below names its rule.
// Problems are reported with Slack-style JSON pointers, e.g.
// "must be less than 3001 characters [json-pointer:/blocks/0/text/text]". For
// views the pointers start at /view, as in Slack's views.open errors.
//
// Deliberately not checked: unknown extra fields on known objects (Slack rejects
// some), mrkdwn/markdown syntax, URLs' form, and the rules of block and element
// types outside the whitelist (they are rejected as unsupported).
package blockcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits. Lengths count characters (runes) unless noted.
const (
	MaxMessageBlocks = 50  // blocks in one message
	MaxViewBlocks    = 100 // blocks in one modal

	MaxBlockIDLen  = 255
	MaxActionIDLen = 255

	MaxTextLen         = 3000 // any text object; also section text
	MaxSectionFields   = 10
	MaxSectionFieldLen = 2000
	MaxHeaderTextLen   = 150
	MaxContextElements = 10
	MaxActionsElements = 25

	MaxButtonTextLen          = 75
	MaxButtonValueLen         = 2000
	MaxURLLen                 = 3000
	MaxAccessibilityLabelLen  = 75
	MaxCheckboxOptions        = 10
	MaxRadioOptions           = 10
	MaxOverflowOptions        = 5
	MaxSelectOptions          = 100 // options, or option_groups, of a static select
	MaxPlaceholderLen         = 150
	MaxOptionTextLen          = 75
	MaxOptionValueLen         = 75 // current docs say 150, older docs and @slack/types 75: 75 is safe
	MaxOptionDescriptionLen   = 75
	MaxOptionGroupLabelLen    = 75
	MaxConfirmTitleLen        = 100
	MaxConfirmTextLen         = 300
	MaxConfirmButtonLen       = 30
	MaxInputLabelLen          = 2000
	MaxInputHintLen           = 2000
	MaxPlainTextInputMinLen   = 3000 // the largest allowed min_length
	MaxImageAltTextLen        = 2000
	MaxImageTitleLen          = 2000
	MaxMarkdownBlockTotalLen  = 12000 // all markdown blocks of one message together
	MaxMessageTextLen         = 40000
	MaxViewTitleLen           = 24 // also submit and close
	MaxViewPrivateMetadataLen = 3000
	MaxViewCallbackIDLen      = 255
	MaxViewExternalIDLen      = 255
	MaxViewBytes              = 250_000 // whole view JSON; more is view_too_large

	// MaxMessageBlockTextLen caps the characters of all text in a message's
	// blocks together. Slack does not document it: bolt-js issue #2867
	// (github.com/slackapi/bolt-js/issues/2867) reports msg_blocks_too_long for
	// about 11.3k characters of block text, and Slack staff quoted "12,000 text
	// characters with a buffer for block containers". Counted: every text
	// object, rich_text text and the text of markdown blocks, which have their
	// own cap too: bolt-js issue #2509 (github.com/slackapi/bolt-js/issues/2509)
	// reports msg_blocks_too_long for markdown blocks alone at about 13.3k
	// characters, and earlier when other blocks share the message.
	MaxMessageBlockTextLen = 12000
)

// ErrNoText is matched (errors.Is) by the error Message returns for a message
// with neither text nor blocks; Slack answers that with "no_text".
var ErrNoText = errors.New("message has neither text nor blocks")

// Problem is one rule violation.
type Problem struct {
	Pointer string // JSON pointer into the request, e.g. "/blocks/0/text/text"
	Message string // what is wrong, e.g. "must be less than 3001 characters"
}

// String formats the problem like Slack's invalid_blocks errors.
func (p Problem) String() string {
	return p.Message + " [json-pointer:" + p.Pointer + "]"
}

// Problems is the error Message and View return; it lists every violation found.
type Problems struct {
	List   []Problem
	noText bool
}

func (p *Problems) Error() string {
	parts := make([]string, len(p.List))
	for i, pr := range p.List {
		parts[i] = pr.String()
	}
	return "invalid blocks: " + strings.Join(parts, "; ")
}

// Is reports whether target is ErrNoText and this is the no-text error.
func (p *Problems) Is(target error) bool { return target == ErrNoText && p.noText }

// Strings returns each problem formatted as by Problem.String, the shape of
// the "errors" array in Slack's invalid_blocks response.
func (p *Problems) Strings() []string {
	out := make([]string, len(p.List))
	for i, pr := range p.List {
		out[i] = pr.String()
	}
	return out
}

// Message checks a chat.postMessage / chat.update payload: text is the
// top-level text, blocks the JSON array of blocks (nil, empty or "null" when
// the message has none). It returns nil when Slack would accept both, else a
// *Problems.
func Message(text string, blocks json.RawMessage) error {
	blocks = bytes.TrimSpace(blocks)
	noBlocks := len(blocks) == 0 || string(blocks) == "null" || isEmptyArray(blocks)
	if text == "" && noBlocks {
		return &Problems{List: []Problem{{Pointer: "/text", Message: "no_text: " + ErrNoText.Error()}}, noText: true}
	}
	c := &checker{blockIDs: map[string]string{}}
	if n := utf8.RuneCountInString(text); n > MaxMessageTextLen {
		c.tooLong("/text", MaxMessageTextLen)
	}
	if !noBlocks {
		v, err := decode(blocks)
		if err != nil {
			c.add("/blocks", "invalid JSON: %v", err)
		} else {
			c.blocks("/blocks", v, MaxMessageBlocks)
		}
	}
	if c.markdownLen > MaxMarkdownBlockTotalLen {
		c.add("/blocks", "markdown blocks have %d characters together, must be at most %d", c.markdownLen, MaxMarkdownBlockTotalLen)
	}
	if c.blockTextLen > MaxMessageBlockTextLen {
		c.add("/blocks", "msg_blocks_too_long: blocks have %d characters of text together, must be at most %d", c.blockTextLen, MaxMessageBlockTextLen)
	}
	return c.err()
}

// openView starts checking a view of type typ: its size, that it is a JSON
// object, its type. ok is false when nothing more can be checked.
func openView(view json.RawMessage, typ string) (*checker, map[string]any, bool) {
	c := &checker{inView: true, blockIDs: map[string]string{}}
	view = bytes.TrimSpace(view)
	if len(view) > MaxViewBytes {
		c.add("/view", "view_too_large: %d bytes, must be at most %d", len(view), MaxViewBytes)
	}
	v, err := decode(view)
	if err != nil {
		c.add("/view", "invalid JSON: %v", err)
		return c, nil, false
	}
	m, ok := c.object("/view", v)
	if !ok {
		return c, nil, false
	}
	if got, ok := c.str("/view", m, "type", true, 0); ok && got != typ {
		c.add("/view/type", "must be %q, got %q", typ, got)
	}
	return c, m, true
}

// View checks a modal view object, as sent in views.open/views.update/views.push
// "view" or a response_action update/push. Pointers start at /view.
func View(view json.RawMessage) error {
	c, m, ok := openView(view, "modal")
	if !ok {
		return c.err()
	}
	c.textField("/view", m, "title", true, true, MaxViewTitleLen)
	c.textField("/view", m, "close", false, true, MaxViewTitleLen)
	hasSubmit := c.textField("/view", m, "submit", false, true, MaxViewTitleLen)
	c.str("/view", m, "private_metadata", false, MaxViewPrivateMetadataLen)
	c.str("/view", m, "callback_id", false, MaxViewCallbackIDLen)
	c.str("/view", m, "external_id", false, MaxViewExternalIDLen)
	c.boolField("/view", m, "clear_on_close")
	c.boolField("/view", m, "notify_on_close")
	if b, ok := m["blocks"]; !ok {
		c.add("/view", "missing required field: blocks")
	} else {
		c.blocks("/view/blocks", b, MaxViewBlocks)
	}
	if c.inputBlocks > 0 && !hasSubmit {
		c.add("/view/submit", "missing required field: submit (the view has input blocks)")
	}
	return c.err()
}

func isEmptyArray(b []byte) bool {
	var a []json.RawMessage
	return json.Unmarshal(b, &a) == nil && a != nil && len(a) == 0
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

type checker struct {
	inView       bool
	probs        []Problem
	blockIDs     map[string]string // block_id → pointer of its first use
	blockTextLen int
	markdownLen  int
	inputBlocks  int
}

func (c *checker) err() error {
	if len(c.probs) == 0 {
		return nil
	}
	return &Problems{List: c.probs}
}

func (c *checker) add(ptr, format string, args ...any) {
	c.probs = append(c.probs, Problem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) tooLong(ptr string, max int) {
	c.add(ptr, "must be less than %d characters", max+1)
}

func (c *checker) object(ptr string, v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "must be an object")
	}
	return m, ok
}

// str checks the string field key of m. max 0 means no length limit.
// It reports whether the field is present and a string.
func (c *checker) str(ptr string, m map[string]any, key string, required bool, max int) (string, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			c.add(ptr, "missing required field: %s", key)
		}
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		c.add(ptr+"/"+key, "must be a string")
		return "", false
	}
	if max > 0 && utf8.RuneCountInString(s) > max {
		c.tooLong(ptr+"/"+key, max)
	}
	return s, true
}

func (c *checker) boolField(ptr string, m map[string]any, key string) {
	if v, ok := m[key]; ok && v != nil {
		if _, ok := v.(bool); !ok {
			c.add(ptr+"/"+key, "must be a boolean")
		}
	}
}

// intField returns the integer field key of m, and whether it is present and an integer.
func (c *checker) intField(ptr string, m map[string]any, key string) (int64, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	n, ok := v.(json.Number)
	if !ok {
		c.add(ptr+"/"+key, "must be an integer")
		return 0, false
	}
	i, err := n.Int64()
	if err != nil {
		c.add(ptr+"/"+key, "must be an integer")
		return 0, false
	}
	return i, true
}

// array checks the array field key of m has min..max items (max 0: no limit).
func (c *checker) array(ptr string, m map[string]any, key string, required bool, min, max int) ([]any, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			c.add(ptr, "missing required field: %s", key)
		}
		return nil, false
	}
	a, ok := v.([]any)
	if !ok {
		c.add(ptr+"/"+key, "must be an array")
		return nil, false
	}
	if len(a) < min {
		c.add(ptr+"/"+key, "must provide at least %d items", min)
	}
	if max > 0 && len(a) > max {
		c.add(ptr+"/"+key, "must provide at most %d items, got %d", max, len(a))
	}
	return a, true
}

// textField checks the text object in field key of m; it reports whether the field is present.
func (c *checker) textField(ptr string, m map[string]any, key string, required, plainOnly bool, max int) bool {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			c.add(ptr, "missing required field: %s", key)
		}
		return false
	}
	c.text(ptr+"/"+key, v, plainOnly, max)
	return true
}

// text checks a text object and returns its text.
func (c *checker) text(ptr string, v any, plainOnly bool, max int) string {
	m, ok := c.object(ptr, v)
	if !ok {
		return ""
	}
	typ, ok := c.str(ptr, m, "type", true, 0)
	if ok {
		switch {
		case typ != "plain_text" && typ != "mrkdwn":
			c.add(ptr+"/type", "must be plain_text or mrkdwn, got %q", typ)
		case plainOnly && typ != "plain_text":
			c.add(ptr+"/type", "must be plain_text, got %q", typ)
		}
	}
	c.boolField(ptr, m, "emoji")
	c.boolField(ptr, m, "verbatim")
	s, ok := c.str(ptr, m, "text", true, max)
	if ok && s == "" {
		c.add(ptr+"/text", "must be more than 0 characters")
	}
	c.blockTextLen += utf8.RuneCountInString(s)
	return s
}

func (c *checker) blocks(ptr string, v any, max int) {
	a, ok := v.([]any)
	if !ok {
		c.add(ptr, "must be an array")
		return
	}
	if len(a) > max {
		c.add(ptr, "must provide at most %d items, got %d", max, len(a))
	}
	for i, b := range a {
		c.block(fmt.Sprintf("%s/%d", ptr, i), b)
	}
}

func (c *checker) block(ptr string, v any) {
	b, ok := c.object(ptr, v)
	if !ok {
		return
	}
	if id, ok := c.str(ptr, b, "block_id", false, MaxBlockIDLen); ok {
		if id == "" {
			c.add(ptr+"/block_id", "must be more than 0 characters")
		} else if first, dup := c.blockIDs[id]; dup {
			c.add(ptr+"/block_id", "duplicate block_id %q (also at %s)", id, first)
		} else {
			c.blockIDs[id] = ptr + "/block_id"
		}
	}
	typ, ok := c.str(ptr, b, "type", true, 0)
	if !ok {
		return
	}
	switch typ {
	case "section":
		c.section(ptr, b)
	case "actions":
		c.actions(ptr, b)
	case "context":
		c.context(ptr, b)
	case "divider":
	case "header":
		c.textField(ptr, b, "text", true, true, MaxHeaderTextLen)
	case "input":
		c.input(ptr, b)
	case "markdown":
		if c.inView {
			c.add(ptr+"/type", "markdown blocks are only allowed in messages")
		}
		if s, ok := c.str(ptr, b, "text", true, MaxMarkdownBlockTotalLen); ok {
			if s == "" {
				c.add(ptr+"/text", "must be more than 0 characters")
			}
			c.markdownLen += utf8.RuneCountInString(s)
			c.blockTextLen += utf8.RuneCountInString(s)
		}
	case "rich_text":
		c.richText(ptr, b)
	case "image":
		c.image(ptr, b)
		c.textField(ptr, b, "title", false, true, MaxImageTitleLen)
	default:
		c.add(ptr+"/type", "unsupported block type %q", typ)
	}
}

// actions checks an actions block: its elements, and action_ids unique
// within it.
func (c *checker) actions(ptr string, b map[string]any) {
	els, ok := c.array(ptr, b, "elements", true, 1, MaxActionsElements)
	if ok {
		ids := map[string]bool{}
		for i, e := range els {
			p := fmt.Sprintf("%s/elements/%d", ptr, i)
			if id := c.element(p, e, inActions); id != "" {
				if ids[id] {
					c.add(p+"/action_id", "duplicate action_id %q in this block", id)
				}
				ids[id] = true
			}
		}
	}
}

// context checks a context block's images and texts.
func (c *checker) context(ptr string, b map[string]any) {
	els, _ := c.array(ptr, b, "elements", true, 1, MaxContextElements)
	for i, e := range els {
		p := fmt.Sprintf("%s/elements/%d", ptr, i)
		m, ok := c.object(p, e)
		if !ok {
			continue
		}
		switch t, _ := m["type"].(string); t {
		case "image":
			c.image(p, m)
		default:
			c.text(p, m, false, MaxTextLen)
		}
	}
}

// input checks an input block (modals only) and its element.
func (c *checker) input(ptr string, b map[string]any) {
	c.inputBlocks++
	if !c.inView {
		c.add(ptr+"/type", "input blocks are not allowed in messages")
	}
	c.textField(ptr, b, "label", true, true, MaxInputLabelLen)
	c.textField(ptr, b, "hint", false, true, MaxInputHintLen)
	c.boolField(ptr, b, "optional")
	c.boolField(ptr, b, "dispatch_action")
	if e, ok := b["element"]; !ok || e == nil {
		c.add(ptr, "missing required field: element")
	} else {
		c.element(ptr+"/element", e, inInput)
	}
}

func (c *checker) section(ptr string, b map[string]any) {
	hasText := c.textField(ptr, b, "text", false, false, MaxTextLen)
	fields, hasFields := c.array(ptr, b, "fields", false, 1, MaxSectionFields)
	for i, f := range fields {
		c.text(fmt.Sprintf("%s/fields/%d", ptr, i), f, false, MaxSectionFieldLen)
	}
	if !hasText && !hasFields {
		c.add(ptr, "must provide either text or fields")
	}
	c.boolField(ptr, b, "expand")
	if a, ok := b["accessory"]; ok && a != nil {
		c.element(ptr+"/accessory", a, inAccessory)
	}
}

// richText checks a rich_text block loosely: the container structure and the
// types of its leaves, counting their text toward the message's text cap.
func (c *checker) richText(ptr string, b map[string]any) {
	els, ok := c.array(ptr, b, "elements", true, 1, 0)
	if !ok {
		return
	}
	for i, e := range els {
		p := fmt.Sprintf("%s/elements/%d", ptr, i)
		m, ok := c.object(p, e)
		if !ok {
			continue
		}
		typ, ok := c.str(p, m, "type", true, 0)
		if !ok {
			continue
		}
		switch typ {
		case "rich_text_section", "rich_text_preformatted", "rich_text_quote":
			c.richLeaves(p, m)
		case "rich_text_list":
			if st, ok := c.str(p, m, "style", true, 0); ok && st != "bullet" && st != "ordered" {
				c.add(p+"/style", "must be bullet or ordered, got %q", st)
			}
			items, _ := c.array(p, m, "elements", true, 1, 0)
			for j, it := range items {
				q := fmt.Sprintf("%s/elements/%d", p, j)
				im, ok := c.object(q, it)
				if !ok {
					continue
				}
				if t, _ := im["type"].(string); t != "rich_text_section" {
					c.add(q+"/type", "rich_text_list items must be rich_text_section, got %q", t)
					continue
				}
				c.richLeaves(q, im)
			}
		default:
			c.add(p+"/type", "unsupported rich_text element type %q", typ)
		}
	}
}

func (c *checker) richLeaves(ptr string, m map[string]any) {
	leaves, _ := c.array(ptr, m, "elements", true, 0, 0)
	for i, l := range leaves {
		p := fmt.Sprintf("%s/elements/%d", ptr, i)
		lm, ok := c.object(p, l)
		if !ok {
			continue
		}
		typ, ok := c.str(p, lm, "type", true, 0)
		if !ok {
			continue
		}
		switch typ {
		case "text", "link":
			s, _ := c.str(p, lm, "text", typ == "text", 0)
			c.blockTextLen += utf8.RuneCountInString(s)
			if typ == "link" {
				c.str(p, lm, "url", true, MaxURLLen)
			}
		case "emoji", "user", "channel", "usergroup", "date", "broadcast", "color", "team":
		default:
			c.add(p+"/type", "unsupported rich_text leaf type %q", typ)
		}
	}
}

func (c *checker) image(ptr string, m map[string]any) {
	_, hasURL := c.str(ptr, m, "image_url", false, MaxURLLen)
	_, hasFile := m["slack_file"]
	if !hasURL && !hasFile {
		c.add(ptr, "missing required field: image_url or slack_file")
	}
	if s, ok := c.str(ptr, m, "alt_text", true, MaxImageAltTextLen); ok && s == "" {
		c.add(ptr+"/alt_text", "must be more than 0 characters")
	}
}

type place int

const (
	inActions place = iota
	inAccessory
	inInput
)

var allowed = map[place]map[string]bool{
	inActions: {
		"button": true, "checkboxes": true, "radio_buttons": true, "overflow": true,
		"static_select": true, "multi_static_select": true, "users_select": true,
		"multi_users_select": true, "conversations_select": true, "multi_conversations_select": true,
	},
	inAccessory: {
		"button": true, "checkboxes": true, "radio_buttons": true, "overflow": true,
		"static_select": true, "multi_static_select": true, "users_select": true,
		"multi_users_select": true, "conversations_select": true, "multi_conversations_select": true,
		"image": true,
	},
	inInput: {
		"plain_text_input": true, "checkboxes": true, "radio_buttons": true,
		"static_select": true, "multi_static_select": true, "users_select": true,
		"multi_users_select": true, "conversations_select": true, "multi_conversations_select": true,
	},
}

var placeName = map[place]string{inActions: "an actions block", inAccessory: "a section accessory", inInput: "an input block"}

// element checks a block element and returns its action_id ("" if none).
func (c *checker) element(ptr string, v any, where place) string {
	m, ok := c.object(ptr, v)
	if !ok {
		return ""
	}
	typ, ok := c.str(ptr, m, "type", true, 0)
	if !ok {
		return ""
	}
	if !allowed[where][typ] {
		if allowed[inActions][typ] || allowed[inAccessory][typ] || allowed[inInput][typ] {
			c.add(ptr+"/type", "element type %q is not allowed in %s", typ, placeName[where])
		} else {
			c.add(ptr+"/type", "unsupported element type %q", typ)
		}
		return ""
	}
	if typ == "image" {
		c.image(ptr, m)
		return ""
	}
	id, _ := c.str(ptr, m, "action_id", false, MaxActionIDLen)
	if _, ok := m["action_id"]; ok && id == "" {
		c.add(ptr+"/action_id", "must be more than 0 characters")
	}
	if cf, ok := m["confirm"]; ok && cf != nil {
		c.confirm(ptr+"/confirm", cf)
	}
	c.boolField(ptr, m, "focus_on_load")

	c.elementFields(ptr, m, typ)
	return id
}

// elementFields checks the fields particular to an element's type.
func (c *checker) elementFields(ptr string, m map[string]any, typ string) {
	switch typ {
	case "button":
		c.textField(ptr, m, "text", true, true, MaxButtonTextLen)
		c.str(ptr, m, "value", false, MaxButtonValueLen)
		c.str(ptr, m, "url", false, MaxURLLen)
		c.str(ptr, m, "accessibility_label", false, MaxAccessibilityLabelLen)
		if s, ok := c.str(ptr, m, "style", false, 0); ok && s != "primary" && s != "danger" {
			c.add(ptr+"/style", "must be primary or danger, got %q", s)
		}
	case "checkboxes":
		opts := c.options(ptr, m, "options", true, 1, MaxCheckboxOptions, optionChoice)
		c.initialOptions(ptr, m, opts, true)
	case "radio_buttons":
		opts := c.options(ptr, m, "options", true, 1, MaxRadioOptions, optionChoice)
		c.initialOptions(ptr, m, opts, false)
	case "overflow":
		c.options(ptr, m, "options", true, 1, MaxOverflowOptions, optionOverflow)
	case "static_select", "multi_static_select":
		c.staticSelect(ptr, m, typ == "multi_static_select")
	case "users_select", "conversations_select", "multi_users_select", "multi_conversations_select":
		c.textField(ptr, m, "placeholder", false, true, MaxPlaceholderLen)
		if strings.HasPrefix(typ, "multi_") {
			c.maxSelected(ptr, m)
		}
	case "plain_text_input":
		c.plainTextInput(ptr, m)
	}
}

// staticSelect checks a static (multi-)select: options or option groups,
// the initial choice, the selection cap.
func (c *checker) staticSelect(ptr string, m map[string]any, multi bool) {
	c.textField(ptr, m, "placeholder", false, true, MaxPlaceholderLen)
	_, hasOpts := m["options"]
	_, hasGroups := m["option_groups"]
	var opts []optionKey
	switch {
	case hasOpts && hasGroups:
		c.add(ptr, "must provide either options or option_groups, not both")
	case hasGroups:
		opts = c.optionGroups(ptr, m)
	default:
		opts = c.options(ptr, m, "options", true, 1, MaxSelectOptions, optionMenu)
	}
	c.initialOptions(ptr, m, opts, multi)
	if multi {
		c.maxSelected(ptr, m)
	}
}

// plainTextInput checks a text input's placeholder, initial value and
// length bounds.
func (c *checker) plainTextInput(ptr string, m map[string]any) {
	c.textField(ptr, m, "placeholder", false, true, MaxPlaceholderLen)
	c.str(ptr, m, "initial_value", false, 0)
	c.boolField(ptr, m, "multiline")
	minLen, hasMin := c.intField(ptr, m, "min_length")
	if hasMin && (minLen < 0 || minLen > MaxPlainTextInputMinLen) {
		c.add(ptr+"/min_length", "must be between 0 and %d, got %d", MaxPlainTextInputMinLen, minLen)
	}
	maxLen, hasMax := c.intField(ptr, m, "max_length")
	if hasMax && maxLen < 1 {
		c.add(ptr+"/max_length", "must be at least 1, got %d", maxLen)
	}
	if hasMin && hasMax && maxLen < minLen {
		c.add(ptr+"/max_length", "must be at least min_length (%d), got %d", minLen, maxLen)
	}
}

func (c *checker) maxSelected(ptr string, m map[string]any) {
	if n, ok := c.intField(ptr, m, "max_selected_items"); ok && n < 1 {
		c.add(ptr+"/max_selected_items", "must be at least 1, got %d", n)
	}
}

func (c *checker) confirm(ptr string, v any) {
	m, ok := c.object(ptr, v)
	if !ok {
		return
	}
	c.textField(ptr, m, "title", true, true, MaxConfirmTitleLen)
	c.textField(ptr, m, "text", true, false, MaxConfirmTextLen)
	c.textField(ptr, m, "confirm", true, true, MaxConfirmButtonLen)
	c.textField(ptr, m, "deny", true, true, MaxConfirmButtonLen)
	if s, ok := c.str(ptr, m, "style", false, 0); ok && s != "primary" && s != "danger" {
		c.add(ptr+"/style", "must be primary or danger, got %q", s)
	}
}

type optionKind int

const (
	optionMenu     optionKind = iota // select menus: plain_text only
	optionOverflow                   // overflow: plain_text only, url allowed
	optionChoice                     // checkboxes, radio buttons: mrkdwn allowed
)

// optionKey identifies an option for initial_option(s) matching.
type optionKey struct{ value, text string }

func (c *checker) options(ptr string, m map[string]any, key string, required bool, min, max int, kind optionKind) []optionKey {
	a, ok := c.array(ptr, m, key, required, min, max)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var keys []optionKey
	for i, o := range a {
		p := fmt.Sprintf("%s/%s/%d", ptr, key, i)
		k, ok := c.option(p, o, kind)
		if !ok {
			continue
		}
		if seen[k.value] {
			c.add(p+"/value", "duplicate option value %q in this element", k.value)
		}
		seen[k.value] = true
		keys = append(keys, k)
	}
	return keys
}

func (c *checker) optionGroups(ptr string, m map[string]any) []optionKey {
	groups, ok := c.array(ptr, m, "option_groups", true, 1, MaxSelectOptions)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var keys []optionKey
	for i, g := range groups {
		p := fmt.Sprintf("%s/option_groups/%d", ptr, i)
		gm, ok := c.object(p, g)
		if !ok {
			continue
		}
		c.textField(p, gm, "label", true, true, MaxOptionGroupLabelLen)
		for _, k := range c.options(p, gm, "options", true, 1, MaxSelectOptions, optionMenu) {
			if seen[k.value] {
				c.add(p+"/options", "duplicate option value %q in this element", k.value)
			}
			seen[k.value] = true
			keys = append(keys, k)
		}
	}
	return keys
}

func (c *checker) option(ptr string, v any, kind optionKind) (optionKey, bool) {
	m, ok := c.object(ptr, v)
	if !ok {
		return optionKey{}, false
	}
	plainOnly := kind != optionChoice
	var k optionKey
	if t, ok := m["text"]; !ok || t == nil {
		c.add(ptr, "missing required field: text")
	} else {
		k.text = c.text(ptr+"/text", t, plainOnly, MaxOptionTextLen)
	}
	c.textField(ptr, m, "description", false, plainOnly, MaxOptionDescriptionLen)
	k.value, ok = c.str(ptr, m, "value", true, MaxOptionValueLen)
	if ok && k.value == "" {
		c.add(ptr+"/value", "must be more than 0 characters")
	}
	if _, has := m["url"]; has {
		if kind == optionOverflow {
			c.str(ptr, m, "url", false, MaxURLLen)
		} else {
			c.add(ptr+"/url", "url is only allowed in overflow menu options")
		}
	}
	return k, true
}

// initialOptions checks initial_options (multi) or initial_option (single) are among opts.
func (c *checker) initialOptions(ptr string, m map[string]any, opts []optionKey, multi bool) {
	key := "initial_option"
	if multi {
		key = "initial_options"
	}
	v, ok := m[key]
	if !ok || v == nil {
		return
	}
	var list []any
	if multi {
		a, ok := v.([]any)
		if !ok {
			c.add(ptr+"/"+key, "must be an array")
			return
		}
		list = a
	} else {
		list = []any{v}
	}
	known := map[optionKey]bool{}
	for _, o := range opts {
		known[o] = true
	}
	for i, o := range list {
		p := ptr + "/" + key
		if multi {
			p = fmt.Sprintf("%s/%d", p, i)
		}
		om, ok := c.object(p, o)
		if !ok {
			continue
		}
		var k optionKey
		k.value, _ = om["value"].(string)
		if t, ok := om["text"].(map[string]any); ok {
			k.text, _ = t["text"].(string)
		}
		if !known[k] {
			c.add(p, "must match one of the element's options (value %q, text %q)", k.value, k.text)
		}
	}
}
