package slackfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// marshal encodes v without HTML escaping, so "<@U1>" stays readable in stored blocks.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("slackfake: marshal: %v", err)) // only JSON-decoded values and plain maps get here
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// decodeJSON decodes keeping numbers exact, so re-encoding changes nothing.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func decodeBlocks(b []byte) []any {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil
	}
	a, _ := v.([]any)
	return a
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// textOf returns the text of a text object.
func textOf(v any) string { return str(obj(v), "text") }

// elementRef is an element found in a block.
type elementRef struct {
	blockID string
	block   map[string]any
	el      map[string]any
}

// elements lists the elements of actions blocks, section accessories and
// input blocks, in order.
func elements(blocks []any) []elementRef {
	var out []elementRef
	for _, b := range blocks {
		bm := obj(b)
		id := str(bm, "block_id")
		switch str(bm, "type") {
		case "actions":
			els, _ := bm["elements"].([]any)
			for _, e := range els {
				if em := obj(e); em != nil {
					out = append(out, elementRef{id, bm, em})
				}
			}
		case "section":
			if em := obj(bm["accessory"]); em != nil {
				out = append(out, elementRef{id, bm, em})
			}
		case "input":
			if em := obj(bm["element"]); em != nil {
				out = append(out, elementRef{id, bm, em})
			}
		}
	}
	return out
}

// normalizeBlocks fills in what Slack fills in on its side: a block_id for
// every block and an action_id for every interactive element. Slack generates
// random ones, so code that relies on them being empty breaks against Slack.
func normalizeBlocks(blocks []any) {
	for _, b := range blocks {
		bm := obj(b)
		if bm == nil {
			continue
		}
		if _, ok := bm["block_id"]; !ok {
			bm["block_id"] = randAlnum(5)
		}
	}
	for _, r := range elements(blocks) {
		if t := str(r.el, "type"); t != "image" && t != "" {
			if _, ok := r.el["action_id"]; !ok {
				r.el["action_id"] = randAlnum(5)
			}
		}
	}
}

// normalizeRaw normalizes a JSON blocks array; invalid JSON is returned unchanged.
func normalizeRaw(raw []byte) json.RawMessage {
	blocks := decodeBlocks(raw)
	if len(blocks) == 0 {
		return nil
	}
	normalizeBlocks(blocks)
	return marshal(blocks)
}

// options returns an element's options, including those in option_groups.
func options(el map[string]any) []map[string]any {
	var out []map[string]any
	add := func(v any) {
		a, _ := v.([]any)
		for _, o := range a {
			if om := obj(o); om != nil {
				out = append(out, om)
			}
		}
	}
	add(el["options"])
	if groups, ok := el["option_groups"].([]any); ok {
		for _, g := range groups {
			add(obj(g)["options"])
		}
	}
	return out
}

// findOption finds an option by its visible text, else by its value.
func findOption(el map[string]any, text string) (map[string]any, error) {
	opts := options(el)
	for _, o := range opts {
		if textOf(o["text"]) == text {
			return o, nil
		}
	}
	for _, o := range opts {
		if str(o, "value") == text {
			return o, nil
		}
	}
	var have []string
	for _, o := range opts {
		have = append(have, fmt.Sprintf("%q", textOf(o["text"])))
	}
	return nil, fmt.Errorf("%w: no option %q in %s %q (options: %s)", ErrNoControl, text, str(el, "type"), str(el, "action_id"), strings.Join(have, ", "))
}

// stateKey identifies one user's client-side state of one message.
type stateKey struct{ channel, ts, user string }

var statefulTypes = map[string]bool{
	"checkboxes": true, "radio_buttons": true, "static_select": true, "multi_static_select": true,
	"users_select": true, "multi_users_select": true, "conversations_select": true,
	"multi_conversations_select": true, "plain_text_input": true,
}

// selectionField is the state/action field holding an element's selection.
func selectionField(typ string) string {
	switch typ {
	case "checkboxes", "multi_static_select":
		return "selected_options"
	case "radio_buttons", "static_select", "overflow":
		return "selected_option"
	case "users_select":
		return "selected_user"
	case "multi_users_select":
		return "selected_users"
	case "conversations_select":
		return "selected_conversation"
	case "multi_conversations_select":
		return "selected_conversations"
	case "plain_text_input":
		return "value"
	}
	return ""
}

// initialField is the element field holding its initial selection.
func initialField(typ string) string {
	switch typ {
	case "checkboxes", "multi_static_select":
		return "initial_options"
	case "radio_buttons", "static_select":
		return "initial_option"
	case "users_select":
		return "initial_user"
	case "multi_users_select":
		return "initial_users"
	case "conversations_select":
		return "initial_conversation"
	case "multi_conversations_select":
		return "initial_conversations"
	case "plain_text_input":
		return "initial_value"
	}
	return ""
}

func isMulti(typ string) bool {
	return typ == "checkboxes" || strings.HasPrefix(typ, "multi_")
}

// elementState returns the state.values entry of a stateful element: stored
// (a previous selection, may be nil) when it still fits the element, else the
// element's initial value. Selected options that are no longer offered are
// dropped, and the rest take the element's current option objects.
func elementState(el, stored map[string]any) map[string]any {
	typ := str(el, "type")
	field := selectionField(typ)
	var sel any
	if stored != nil && str(stored, "type") == typ {
		sel = stored[field]
	} else {
		sel = el[initialField(typ)]
	}
	if typ == "checkboxes" || typ == "radio_buttons" || strings.HasSuffix(typ, "static_select") {
		current := map[string]map[string]any{}
		for _, o := range options(el) {
			current[str(o, "value")] = o
		}
		if isMulti(typ) {
			kept := []any{}
			list, _ := sel.([]any)
			for _, o := range list {
				if cur, ok := current[str(obj(o), "value")]; ok {
					kept = append(kept, cur)
				}
			}
			sel = kept
		} else if cur, ok := current[str(obj(sel), "value")]; ok {
			sel = cur
		} else {
			sel = nil
		}
	} else if isMulti(typ) && sel == nil {
		sel = []any{}
	}
	return map[string]any{"type": typ, field: sel}
}

// stateValues builds state.values for every stateful element in blocks from a
// user's stored selections (block_id → action_id → entry, may be nil).
func stateValues(blocks []any, stored map[string]map[string]map[string]any) map[string]any {
	values := map[string]any{}
	for _, r := range elements(blocks) {
		if !statefulTypes[str(r.el, "type")] {
			continue
		}
		aid := str(r.el, "action_id")
		entry := elementState(r.el, stored[r.blockID][aid])
		byAction, _ := values[r.blockID].(map[string]any)
		if byAction == nil {
			byAction = map[string]any{}
			values[r.blockID] = byAction
		}
		byAction[aid] = entry
	}
	return values
}
