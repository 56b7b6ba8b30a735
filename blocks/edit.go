package blocks

import (
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// Edit & allow (waterfall/edit.go): the permission message's "Edit &
// allow…" button opens EditModal, a form with one input per editable field
// of the tool's input, prefilled with what the agent gave; submitting it
// allows with the values as edited (EditedValues reads them back).

// InputEdit is the action id of an editable field's input in EditModal;
// its block (EditBlockID) names the field.
const InputEdit = "askslack.edit.value"

// CallbackEdit is EditModal's callback id.
const CallbackEdit = "askslack.edit"

// EditBlockID is the input block of editable field name in EditModal.
func EditBlockID(callID, name string) string { return blockID(callID, 0) + "/edit/" + name }

// editButton is a permission message's "Edit & allow…", for an ask whose
// agent takes an edited input.
func editButton(v waterfall.View) *slack.ButtonBlockElement {
	if !v.Request.Editable() {
		return nil
	}
	b := slack.NewButtonBlockElement(actionID(KindEdit, -1), "edit", plain("Edit & allow…", maxButtonText))
	b.AccessibilityLabel = "Change the tool's input, then allow it"
	return b
}

// EditModal is the Edit & allow form of a permission ask: the question,
// then each editable field as the agent gave it, to change.
func EditModal(v waterfall.View, meta Meta) slack.ModalViewRequest {
	q := &v.Request.Questions[0]
	qt, _ := questionText(q, maxSectionText)
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText(qt), nil, nil)}
	for _, f := range v.Request.Permission.Editable {
		el := slack.NewPlainTextInputBlockElement(nil, InputEdit).WithMaxLength(waterfall.MaxEditLen).WithMultiline(f.Lines())
		el.InitialValue = f.Value
		bs = append(bs, slack.NewInputBlock(EditBlockID(v.CallID, f.Name), plain(fold(f.Title(), maxInputLabel), maxInputLabel), nil, el))
	}
	bs = append(bs, slack.NewContextBlock("", mrkdwnText("The agent runs the call with your changes. A standing rule never learns from them: rules match what the agent asked.")))
	meta.Question = 0
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain("Edit & allow", maxModalTitle),
		Submit:          plain("Allow", maxModalTitle),
		Close:           plain("Cancel", maxModalTitle),
		Blocks:          slack.Blocks{BlockSet: bs},
		PrivateMetadata: meta.Encode(),
		CallbackID:      CallbackEdit,
	}
}

// EditedValues reads what EditModal's inputs hold for the ask's editable
// fields (a field the state lacks is left out); ok is false when the state
// holds an edit input for a field the ask does not list.
func EditedValues(callID string, p *waterfall.Permission, values map[string]map[string]slack.BlockAction) (map[string]string, bool) {
	out := map[string]string{}
	prefix := EditBlockID(callID, "")
	for block, acts := range values {
		name, found := strings.CutPrefix(block, prefix)
		act, isEdit := acts[InputEdit]
		if !isEdit {
			continue
		}
		if !found || p.Field(name) == nil {
			return nil, false
		}
		out[name] = act.Value
	}
	return out, true
}

// FirstEditBlock is the first (by id) edit input block a form's state
// holds, where a message about the whole form is shown.
func FirstEditBlock(callID string, values map[string]map[string]slack.BlockAction) string {
	first := ""
	for block := range values {
		if strings.HasPrefix(block, EditBlockID(callID, "")) && (first == "" || block < first) {
			first = block
		}
	}
	return first
}

// changesText is the mrkdwn of an edited allow in the answered message,
// at most about n characters: each field as a line diff in a code block,
// what was removed and what was added given room each (waterfall.CutLines),
// measured escaped (escaping can make text five times longer: &amp;).
func changesText(cs []waterfall.Change, n int) string {
	var b strings.Builder
	per := max(n/len(cs)-60, 80)
	for _, c := range cs {
		lines := strings.Split(waterfall.LineDiff(c.Old, c.New), "\n")
		for i, l := range lines {
			lines[i] = Escape(strings.ReplaceAll(clean(l), "```", "ʼʼʼ"))
		}
		lines = waterfall.CutLines(lines, per, runes, func(s string, n int) string { return truncateEscaped(s, max(n, 2)) })
		b.WriteString("\n" + Escape(fold(c.Label, 48)) + ":\n```" + strings.Join(lines, "\n") + "```")
	}
	return b.String()
}
