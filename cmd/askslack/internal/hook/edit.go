package hook

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/askslack/askslack/waterfall"
)

// claudeEditable are the fields of Claude Code's tools a person may change
// before allowing a call (Edit & allow…), in the order the form shows them.
// Claude takes the whole input back as the PermissionRequest decision's
// updatedInput (https://code.claude.com/docs/en/hooks#permissionrequest-decision-control);
// Codex fails closed on updatedInput, so its asks list none. An edit's
// old_string is not offered: changing it would only make the edit miss.
// A command and a file path are also what standing rules and quorum read
// (Of): an edit of them is judged as the call it makes.
var claudeEditable = map[string][]waterfall.EditableField{
	"Bash":      {{Name: "command", Label: "Command", Multiline: true, Of: waterfall.OfCommand}},
	"Edit":      {{Name: "file_path", Label: "File", Of: waterfall.OfPath}, {Name: "new_string", Label: "New text", Multiline: true}},
	"Write":     {{Name: "file_path", Label: "File", Of: waterfall.OfPath}, {Name: "content", Label: "Content", Multiline: true}},
	"MultiEdit": {{Name: "file_path", Label: "File", Of: waterfall.OfPath}},
}

// editableOf lists the fields of in's tool input a person may edit, with
// the values the agent gave: a field that is missing, not a string, or
// longer than a form can show whole is left out, and so is a field rules
// read (Of) whose value is not what p says it is (p is what rules match:
// an edit of it must be judged against the same thing).
func editableOf(in *Input, p *waterfall.Permission) []waterfall.EditableField {
	spec := claudeEditable[in.ToolName]
	if len(spec) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(in.ToolInput, &fields) != nil {
		return nil
	}
	var out []waterfall.EditableField
	for _, f := range spec {
		var v string
		raw, ok := fields[f.Name]
		if !ok || json.Unmarshal(raw, &v) != nil || v == "" || utf8.RuneCountInString(v) > waterfall.MaxEditLen {
			continue
		}
		f.Value = v
		if f.Of != "" && !p.Describes(&f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// editedInput is in's tool input with the edited fields replaced, every
// other field as the agent gave it (updatedInput replaces the whole
// input).
func editedInput(in *Input, edited map[string]string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(in.ToolInput, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("hook: the tool input is not an object, so it cannot be edited")
	}
	for name, v := range edited {
		if _, ok := fields[name]; !ok || !slices.ContainsFunc(claudeEditable[in.ToolName], func(f waterfall.EditableField) bool { return f.Name == name }) {
			return nil, fmt.Errorf("hook: the edit names %q, which is not an editable field of %s's input", name, in.ToolName)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fields[name] = b
	}
	return json.Marshal(fields)
}
