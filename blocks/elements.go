package blocks

import (
	"fmt"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Modals returns every modal a person can open from message m of view v
// (as Render made it), keyed by a short name: "other-<q>" ("other" for a
// batch), "decline-<q>", "edit", "detail-<q>" (and "detail-<q>-page-<p>" for its
// further pages), "preview-<q>-<o>". meta is what the dispatcher would put
// in private_metadata. It is how `askslack render` prints the modals and how
// the tests reach each one; it decodes the message's own action ids, so a
// control that decodes wrongly opens the wrong modal here too.
func Modals(v waterfall.View, m Message, meta Meta) map[string]slack.ModalViewRequest {
	return modalsWhere(v, m, meta, func(string) bool { return true })
}

// modalsWhere is Modals building only the modals whose name keep accepts.
func modalsWhere(v waterfall.View, m Message, meta Meta, keep func(name string) bool) map[string]slack.ModalViewRequest {
	out := map[string]slack.ModalViewRequest{}
	meta.CallID = v.CallID
	for _, e := range Elements(m.Blocks) {
		for _, value := range e.Values {
			a, err := Decode(e.BlockID, e.ActionID, value)
			if err != nil || a.CallID != v.CallID {
				continue
			}
			if _, err := Resolve(a, v.Request); err != nil {
				continue
			}
			qi := max(a.Question, 0)
			switch a.Kind {
			case KindOther:
				name := fmt.Sprintf("other-%d", qi)
				if len(v.Request.Questions) > 1 {
					name = "other"
				}
				if keep(name) {
					out[name] = OtherModal(v, qi, meta)
				}
			case KindDecline:
				if name := fmt.Sprintf("decline-%d", qi); keep(name) {
					out[name] = DeclineModal(v, qi, meta)
				}
			case KindEdit:
				if keep("edit") && v.Request.Editable() {
					out["edit"] = EditModal(v, meta)
				}
			case KindFullPlan:
				name := fmt.Sprintf("detail-%d", qi)
				if _, done := out[name]; done || !keep(name) {
					continue
				}
				pages := detailPages(&v.Request.Questions[qi])
				out[name] = detailPage(v, qi, 0, pages)
				for p := 1; p < len(pages); p++ {
					out[fmt.Sprintf("%s-page-%d", name, p)] = detailPage(v, qi, p, pages)
				}
			case KindPreview:
				if name := fmt.Sprintf("preview-%d-%d", qi, a.Option); a.Option >= 0 && keep(name) {
					out[name] = PreviewModal(v, qi, a.Option)
				}
			}
		}
	}
	return out
}

// Element is one interactive element of rendered blocks: the ids Slack
// echoes back and the values it can send (a button's value, or each option
// value of a menu, radio or checkbox group).
type Element struct {
	BlockID  string
	ActionID string
	Type     slack.MessageElementType
	Values   []string
}

// Elements lists the interactive elements of bs in order: those of actions
// blocks, section accessories and input blocks.
func Elements(bs []slack.Block) []Element {
	var out []Element
	add := func(blockID string, el slack.BlockElement) {
		if e, ok := element(blockID, el); ok {
			out = append(out, e)
		}
	}
	for _, b := range bs {
		switch b := b.(type) {
		case *slack.ActionBlock:
			if b.Elements == nil {
				continue
			}
			for _, el := range b.Elements.ElementSet {
				add(b.BlockID, el)
			}
		case *slack.SectionBlock:
			if b.Accessory != nil {
				switch {
				case b.Accessory.ButtonElement != nil:
					add(b.BlockID, b.Accessory.ButtonElement)
				case b.Accessory.SelectElement != nil:
					add(b.BlockID, b.Accessory.SelectElement)
				case b.Accessory.OverflowElement != nil:
					add(b.BlockID, b.Accessory.OverflowElement)
				}
			}
		case *slack.InputBlock:
			add(b.BlockID, b.Element)
		}
	}
	return out
}

func element(blockID string, el slack.BlockElement) (Element, bool) {
	values := func(opts []*slack.OptionBlockObject) []string {
		vs := make([]string, 0, len(opts))
		for _, o := range opts {
			vs = append(vs, o.Value)
		}
		return vs
	}
	e := Element{BlockID: blockID, Type: el.ElementType()}
	switch x := el.(type) {
	case *slack.ButtonBlockElement:
		e.ActionID, e.Values = x.ActionID, []string{x.Value}
	case *slack.SelectBlockElement:
		e.ActionID, e.Values = x.ActionID, values(x.Options)
	case *slack.MultiSelectBlockElement:
		e.ActionID, e.Values = x.ActionID, values(x.Options)
	case *slack.CheckboxGroupsBlockElement:
		e.ActionID, e.Values = x.ActionID, values(x.Options)
	case *slack.RadioButtonsBlockElement:
		e.ActionID, e.Values = x.ActionID, values(x.Options)
	case *slack.OverflowBlockElement:
		e.ActionID, e.Values = x.ActionID, values(x.Options)
	case *slack.PlainTextInputBlockElement:
		e.ActionID = x.ActionID
	default:
		return e, false
	}
	return e, true
}
