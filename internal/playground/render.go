package playground

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/askslack/askslack/internal/blockcheck"
)

// Names resolves the ids mrkdwn mentions (<@U…>, <#C…>) to the names a
// Slack client shows; an unknown id is shown as it is.
type Names struct {
	Users    map[string]string
	Channels map[string]string
}

// User is the display name of a user id.
func (n Names) User(id string) string {
	if name, ok := n.Users[id]; ok {
		return name
	}
	return id
}

// Channel is the name of a channel id.
func (n Names) Channel(id string) string {
	if name, ok := n.Channels[id]; ok {
		return name
	}
	return id
}

// Surface is what the HTML of one message or view depends on besides its
// JSON: who is named in it, what the viewer has already chosen in its
// controls, and the field errors a modal shows.
type Surface struct {
	Names Names
	// State is the viewer's client-side state of the surface, shaped as
	// Slack's state.values (block_id → action_id → {type, selected_…}); a
	// control not in it shows its initial value.
	State map[string]any
	// Errors are a modal's field errors by input block_id
	// (response_action "errors").
	Errors map[string]string
	// Disabled renders controls that cannot be used (a closed view).
	Disabled bool
}

// Message renders a chat message from exactly the text and blocks Slack
// stored. When Slack would refuse them (blockcheck.Message) it renders the
// refusal, in red, instead: the page never shows what Slack would not.
func Message(text string, blocks json.RawMessage, s Surface) string {
	if err := blockcheck.Message(text, blocks); err != nil {
		return refusalHTML("Slack would refuse this message", err)
	}
	list, err := decodeList(blocks)
	if err != nil {
		return refusalHTML("Slack would refuse this message", err)
	}
	if len(list) == 0 {
		// No blocks: Slack shows the text as mrkdwn.
		return `<div class="b-text m-text">` + mrkdwn(text, s.Names) + `</div>`
	}
	return renderBlocks(list, s, "message")
}

// Modal renders a modal view (views.open, views.push, views.update):
// title, blocks, and its Close and Submit buttons. A view Slack would
// refuse (blockcheck.View) renders as the refusal, in red.
func Modal(view json.RawMessage, s Surface) string {
	if err := blockcheck.View(asPublished(view)); err != nil {
		return refusalHTML("Slack would refuse this modal", err)
	}
	var v struct {
		ID     string          `json:"id"`
		Title  textObj         `json:"title"`
		Close  *textObj        `json:"close"`
		Submit *textObj        `json:"submit"`
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(view, &v); err != nil {
		return refusalHTML("Slack would refuse this modal", err)
	}
	list, _ := decodeList(v.Blocks)
	var b strings.Builder
	fmt.Fprintf(&b, `<form class="modal" data-view-id="%s">`, html.EscapeString(v.ID))
	b.WriteString(`<div class="modal-title">` + plain(v.Title.Text, v.Title.Emoji) + `</div>`)
	b.WriteString(`<div class="modal-body">` + renderBlocks(list, s, "modal") + `</div>`)
	b.WriteString(`<div class="modal-foot">`)
	closeText := "Cancel"
	if v.Close != nil {
		closeText = v.Close.Text
	}
	b.WriteString(`<button type="button" class="el-button" data-act="close">` + plain(closeText, true) + `</button>`)
	if v.Submit != nil {
		b.WriteString(`<button type="submit" class="el-button style-primary" data-act="submit">` + plain(v.Submit.Text, true) + `</button>`)
	}
	b.WriteString(`</div></form>`)
	return b.String()
}

// Home renders a Home tab (views.publish); one Slack would refuse
// (blockcheck.Home) renders as the refusal, in red.
func Home(view json.RawMessage, s Surface) string {
	if err := blockcheck.Home(asPublished(view)); err != nil {
		return refusalHTML("Slack would refuse this Home tab", err)
	}
	var v struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(view, &v); err != nil {
		return refusalHTML("Slack would refuse this Home tab", err)
	}
	list, _ := decodeList(v.Blocks)
	return `<div class="home-view">` + renderBlocks(list, s, "home") + `</div>`
}

// asPublished is a view as an app publishes it, from the view as Slack
// returns and stores it: without the fields Slack adds (id, hash, state,
// …) and the ones it fills with null where the app sent none. A field the
// app did send stays, so the check sees what it sent.
func asPublished(view json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(view, &m) != nil {
		return view
	}
	for _, k := range []string{"id", "team_id", "state", "hash", "root_view_id", "previous_view_id", "app_id", "app_installed_team_id", "bot_id"} {
		delete(m, k)
	}
	for k, v := range m {
		if string(v) == "null" || string(v) == `""` || (k == "clear_on_close" || k == "notify_on_close") && string(v) == "false" {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return view
	}
	return b
}

// Refused renders what Slack answered to a call it refused: the method,
// its error and the problems it listed.
func Refused(method, code string, problems []string) string {
	var b strings.Builder
	b.WriteString(`<div class="refused"><div class="refused-title">Slack refused ` + html.EscapeString(method) + `: <code>` + html.EscapeString(code) + `</code></div>`)
	if len(problems) > 0 {
		b.WriteString(`<ul>`)
		for _, p := range problems {
			b.WriteString(`<li>` + html.EscapeString(p) + `</li>`)
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

func refusalHTML(title string, err error) string {
	var ps *blockcheck.Problems
	var list []string
	switch {
	case errors.As(err, &ps) && len(ps.List) > 0:
		list = ps.Strings()
	case errors.Is(err, blockcheck.ErrNoText):
		list = []string{"no_text: neither text nor blocks"}
	default:
		list = []string{err.Error()}
	}
	var b strings.Builder
	b.WriteString(`<div class="refused"><div class="refused-title">` + html.EscapeString(title) + `</div><ul>`)
	for _, p := range list {
		b.WriteString(`<li>` + html.EscapeString(p) + `</li>`)
	}
	b.WriteString(`</ul></div>`)
	return b.String()
}

// textObj is a Block Kit text object.
type textObj struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Emoji    bool   `json:"emoji"`
	Verbatim bool   `json:"verbatim"`
}

func (t *textObj) html(n Names) string {
	if t == nil {
		return ""
	}
	if t.Type == "mrkdwn" {
		return mrkdwn(t.Text, n)
	}
	return plain(t.Text, t.Emoji)
}

// option is a Block Kit option object.
type option struct {
	Text        textObj  `json:"text"`
	Value       string   `json:"value"`
	Description *textObj `json:"description"`
}

// element is any Block Kit element the renderer knows.
type element struct {
	Type           string        `json:"type"`
	ActionID       string        `json:"action_id"`
	Text           *textObj      `json:"text"`
	Value          string        `json:"value"`
	Style          string        `json:"style"`
	URL            string        `json:"url"`
	Placeholder    *textObj      `json:"placeholder"`
	Options        []option      `json:"options"`
	OptionGroups   []optionGroup `json:"option_groups"`
	InitialOption  *option       `json:"initial_option"`
	InitialOptions []option      `json:"initial_options"`
	InitialValue   string        `json:"initial_value"`
	Multiline      bool          `json:"multiline"`
	MinLength      int           `json:"min_length"`
	MaxLength      int           `json:"max_length"`
	MaxSelected    int           `json:"max_selected_items"`
	AltText        string        `json:"alt_text"`
	ImageURL       string        `json:"image_url"`
}

type optionGroup struct {
	Label   textObj  `json:"label"`
	Options []option `json:"options"`
}

// block is any Block Kit block the renderer knows.
type block struct {
	Type      string            `json:"type"`
	BlockID   string            `json:"block_id"`
	Text      *textObj          `json:"text"`
	Fields    []textObj         `json:"fields"`
	Accessory json.RawMessage   `json:"accessory"`
	Elements  []json.RawMessage `json:"elements"`
	Label     *textObj          `json:"label"`
	Hint      *textObj          `json:"hint"`
	Element   json.RawMessage   `json:"element"`
	Optional  bool              `json:"optional"`
	AltText   string            `json:"alt_text"`
	Title     *textObj          `json:"title"`
}

func decodeList(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	err := json.Unmarshal(raw, &list)
	return list, err
}

// renderBlocks renders blocks in order; a block or element the renderer
// does not know is shown in red as such, never silently dropped.
func renderBlocks(list []json.RawMessage, s Surface, where string) string {
	var b strings.Builder
	for i, raw := range list {
		var kind struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &kind) == nil && kind.Type == "markdown" {
			// Its text is a string, not a text object: markdown.go.
			b.WriteString(markdownBlock(raw, where))
			continue
		}
		var bl block
		if err := json.Unmarshal(raw, &bl); err != nil {
			b.WriteString(unsupported(fmt.Sprintf("block %d: %v", i, err)))
			continue
		}
		id := html.EscapeString(bl.BlockID)
		switch bl.Type {
		case "section":
			fmt.Fprintf(&b, `<div class="b-section" data-block-id="%s"><div class="b-section-main">`, id)
			if bl.Text != nil {
				b.WriteString(`<div class="b-text">` + bl.Text.html(s.Names) + `</div>`)
			}
			if len(bl.Fields) > 0 {
				b.WriteString(`<div class="b-fields">`)
				for _, f := range bl.Fields {
					b.WriteString(`<div class="b-field">` + f.html(s.Names) + `</div>`)
				}
				b.WriteString(`</div>`)
			}
			b.WriteString(`</div>`)
			if len(bl.Accessory) > 0 {
				b.WriteString(`<div class="b-accessory">` + renderElement(bl.Accessory, bl.BlockID, s) + `</div>`)
			}
			b.WriteString(`</div>`)
		case "context":
			fmt.Fprintf(&b, `<div class="b-context" data-block-id="%s">`, id)
			for _, raw := range bl.Elements {
				var t textObj
				var el element
				_ = json.Unmarshal(raw, &el)
				switch el.Type {
				case "mrkdwn", "plain_text":
					_ = json.Unmarshal(raw, &t)
					b.WriteString(`<span class="b-context-el">` + t.html(s.Names) + `</span>`)
				case "image":
					b.WriteString(`<span class="b-context-img" title="` + html.EscapeString(el.AltText) + `">▣</span>`)
				default:
					b.WriteString(unsupported("context element " + el.Type))
				}
			}
			b.WriteString(`</div>`)
		case "divider":
			b.WriteString(`<hr class="b-divider">`)
		case "header":
			fmt.Fprintf(&b, `<div class="b-header" data-block-id="%s">%s</div>`, id, bl.Text.html(s.Names))
		case "actions":
			fmt.Fprintf(&b, `<div class="b-actions" data-block-id="%s">`, id)
			for _, raw := range bl.Elements {
				b.WriteString(renderElement(raw, bl.BlockID, s))
			}
			b.WriteString(`</div>`)
		case "input":
			fmt.Fprintf(&b, `<div class="b-input" data-block-id="%s"><label class="b-label">%s`, id, bl.Label.html(s.Names))
			if bl.Optional {
				b.WriteString(` <span class="b-optional">(optional)</span>`)
			}
			b.WriteString(`</label>` + renderElement(bl.Element, bl.BlockID, s))
			if bl.Hint != nil {
				b.WriteString(`<div class="b-hint">` + bl.Hint.html(s.Names) + `</div>`)
			}
			if e := s.Errors[bl.BlockID]; e != "" {
				b.WriteString(`<div class="b-error">` + html.EscapeString(e) + `</div>`)
			}
			b.WriteString(`</div>`)
		case "image":
			fmt.Fprintf(&b, `<div class="b-image" data-block-id="%s">▣ %s</div>`, id, html.EscapeString(bl.AltText))
		default:
			b.WriteString(unsupported("block type " + strconv.Quote(bl.Type) + " in a " + where))
		}
	}
	return b.String()
}

func unsupported(what string) string {
	return `<div class="refused unsupported">The playground cannot show ` + html.EscapeString(what) + `; Slack might.</div>`
}

// allOptions lists an element's options, those in option groups included.
func (el *element) allOptions() []option {
	out := append([]option{}, el.Options...)
	for _, g := range el.OptionGroups {
		out = append(out, g.Options...)
	}
	return out
}

// selected returns the values the viewer has chosen in el: their state
// when they touched it, else its initial options.
func (el *element) selected(blockID string, s Surface) map[string]bool {
	out := map[string]bool{}
	if entry, ok := stateEntry(s.State, blockID, el.ActionID); ok {
		switch v := entry["selected_options"].(type) {
		case []any:
			for _, o := range v {
				if m, ok := o.(map[string]any); ok {
					out[fmt.Sprint(m["value"])] = true
				}
			}
			return out
		}
		if m, ok := entry["selected_option"].(map[string]any); ok {
			out[fmt.Sprint(m["value"])] = true
		}
		return out
	}
	if el.InitialOption != nil {
		out[el.InitialOption.Value] = true
	}
	for _, o := range el.InitialOptions {
		out[o.Value] = true
	}
	return out
}

// stateEntry finds block_id → action_id in a state.values map.
func stateEntry(state map[string]any, blockID, actionID string) (map[string]any, bool) {
	byAction, ok := state[blockID].(map[string]any)
	if !ok {
		return nil, false
	}
	e, ok := byAction[actionID].(map[string]any)
	return e, ok
}

// renderElement renders one interactive element. Every control carries
// data-act (what using it does), data-block-id and data-action-id: page.js
// sends exactly those back, and the fake delivers the interaction.
func renderElement(raw json.RawMessage, blockID string, s Surface) string {
	var el element
	if err := json.Unmarshal(raw, &el); err != nil {
		return unsupported("element: " + err.Error())
	}
	attrs := fmt.Sprintf(`data-block-id="%s" data-action-id="%s"`, html.EscapeString(blockID), html.EscapeString(el.ActionID))
	if s.Disabled {
		attrs += " disabled"
	}
	var b strings.Builder
	switch el.Type {
	case "button":
		cls := "el-button"
		if el.Style != "" {
			cls += " style-" + html.EscapeString(el.Style)
		}
		if el.URL != "" && safeURL(el.URL) {
			fmt.Fprintf(&b, `<a class="%s" href="%s" target="_blank" rel="noopener">%s</a>`, cls, html.EscapeString(el.URL), el.Text.html(s.Names))
			break
		}
		fmt.Fprintf(&b, `<button type="button" class="%s" data-act="button" %s data-value="%s">%s</button>`, cls, attrs, html.EscapeString(el.Value), el.Text.html(s.Names))
	case "checkboxes", "radio_buttons":
		input := "checkbox"
		if el.Type == "radio_buttons" {
			input = "radio"
		}
		sel := el.selected(blockID, s)
		fmt.Fprintf(&b, `<div class="el-%s" data-act="%s" %s>`, input+"es", el.Type, attrs)
		for _, o := range el.Options {
			checked := ""
			if sel[o.Value] {
				checked = " checked"
			}
			dis := ""
			if s.Disabled {
				dis = " disabled"
			}
			fmt.Fprintf(&b, `<label class="el-choice"><input type="%s" name="%s" value="%s"%s%s><span class="el-choice-text">%s`,
				input, html.EscapeString(blockID+"|"+el.ActionID), html.EscapeString(o.Value), checked, dis, o.Text.html(s.Names))
			if o.Description != nil {
				b.WriteString(`<span class="el-choice-desc">` + o.Description.html(s.Names) + `</span>`)
			}
			b.WriteString(`</span></label>`)
		}
		b.WriteString(`</div>`)
	case "static_select", "multi_static_select":
		sel := el.selected(blockID, s)
		multi := ""
		if el.Type == "multi_static_select" {
			multi = " multiple"
		}
		fmt.Fprintf(&b, `<select class="el-select" data-act="%s" %s%s>`, el.Type, attrs, multi)
		if multi == "" {
			placeholder := "Select an item"
			if el.Placeholder != nil {
				placeholder = el.Placeholder.Text
			}
			fmt.Fprintf(&b, `<option value="" disabled%s>%s</option>`, map[bool]string{true: " selected"}[len(sel) == 0], html.EscapeString(placeholder))
		}
		writeOpts := func(opts []option) {
			for _, o := range opts {
				fmt.Fprintf(&b, `<option value="%s"%s>%s</option>`, html.EscapeString(o.Value), map[bool]string{true: " selected"}[sel[o.Value]], html.EscapeString(o.Text.Text))
			}
		}
		writeOpts(el.Options)
		for _, g := range el.OptionGroups {
			fmt.Fprintf(&b, `<optgroup label="%s">`, html.EscapeString(g.Label.Text))
			writeOpts(g.Options)
			b.WriteString(`</optgroup>`)
		}
		b.WriteString(`</select>`)
	case "overflow":
		fmt.Fprintf(&b, `<select class="el-select el-overflow" data-act="overflow" %s><option value="" selected disabled>⋯</option>`, attrs)
		for _, o := range el.Options {
			fmt.Fprintf(&b, `<option value="%s">%s</option>`, html.EscapeString(o.Value), html.EscapeString(o.Text.Text))
		}
		b.WriteString(`</select>`)
	case "plain_text_input":
		value := el.InitialValue
		if entry, ok := stateEntry(s.State, blockID, el.ActionID); ok {
			if v, ok := entry["value"].(string); ok {
				value = v
			}
		}
		limits := ""
		if el.MaxLength > 0 {
			limits += fmt.Sprintf(` maxlength="%d"`, el.MaxLength)
		}
		if el.MinLength > 0 {
			limits += fmt.Sprintf(` minlength="%d"`, el.MinLength)
		}
		placeholder := ""
		if el.Placeholder != nil {
			placeholder = html.EscapeString(el.Placeholder.Text)
		}
		if el.Multiline {
			fmt.Fprintf(&b, `<textarea class="el-text" data-act="text" %s%s placeholder="%s" rows="4">%s</textarea>`, attrs, limits, placeholder, html.EscapeString(value))
		} else {
			fmt.Fprintf(&b, `<input type="text" class="el-text" data-act="text" %s%s placeholder="%s" value="%s">`, attrs, limits, placeholder, html.EscapeString(value))
		}
	case "image":
		fmt.Fprintf(&b, `<span class="el-image" title="%s">▣</span>`, html.EscapeString(el.AltText))
	default:
		b.WriteString(unsupported("element type " + strconv.Quote(el.Type)))
	}
	return b.String()
}
