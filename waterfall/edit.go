package waterfall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Edit & allow: a person changes a tool call's input before letting it run
// (a Bash command narrowed, a path corrected, an edit's new text fixed).
// Only an agent that applies an edited input offers it: the ask lists the
// input's editable fields (Permission.Editable, with the values the agent
// gave), and an answer that allows may carry new values for them
// (AnswerItem.Edited). Claude Code takes them as the hook's updatedInput;
// Codex fails closed on updatedInput, so askslack hook never lists fields
// for it and an edit to an ask without fields is refused. What standing
// rules match stays what the agent asked (Permission.Command, Path): a rule
// answers before anyone edits, with Allow or Deny, never with an edit, and
// an edited answer grants no rule.

// EditableField is one field of a tool call's input that a person may
// change before allowing it.
type EditableField struct {
	// Name is the field's key in the tool's input: "command", "file_path",
	// "new_string", "content".
	Name string `json:"name"`
	// Label names it for a person ("Command"); Name when empty.
	Label string `json:"label,omitempty"`
	// Value is the field as the agent gave it.
	Value string `json:"value"`
	// Multiline asks for a text area rather than a one-line input (a
	// value holding a line break gets one anyway).
	Multiline bool `json:"multiline,omitempty"`
	// Of names the field of the ask's Permission this input field also is,
	// "command" or "path" (its value is the permission's, or for a path the
	// absolute form of a repository-relative one): an edit of it is the
	// call standing rules and quorum judge (EditedPermission). "" for a
	// field they do not read (an edit's new text).
	Of string `json:"of,omitempty"`
}

// What EditableField.Of may name.
const (
	OfCommand = "command"
	OfPath    = "path"
)

// Lines reports whether the field needs a text area: asked for, or its
// value holds a line break (a one-line input would flatten it).
func (f *EditableField) Lines() bool { return f.Multiline || strings.ContainsAny(f.Value, "\r\n") }

// Limits of editable fields. MaxEditLen is Slack's cap on a plain-text
// input (https://docs.slack.dev/reference/block-kit/block-elements/plain-text-input-element):
// a value longer than that could not be shown to edit in full.
const (
	MaxEditableFields = 4
	MaxEditLen        = 3000
	MaxEditLabelLen   = 48
	maxEditNameLen    = 64
	diffContext       = 2
)

// Title is the field's label for a person.
func (f *EditableField) Title() string {
	if f.Label != "" {
		return f.Label
	}
	return f.Name
}

// validateEditable checks the editable fields of a permission ask.
func validateEditable(r *Request) error {
	fs := r.Permission.Editable
	if len(fs) == 0 {
		return nil
	}
	if len(fs) > MaxEditableFields {
		return Errorf(CodeBadRequest, "permission.editable: at most %d fields", MaxEditableFields)
	}
	seen := make(map[string]bool, len(fs))
	for _, f := range fs {
		if !validFieldName(f.Name) {
			return Errorf(CodeBadRequest, "permission.editable: name %q must be 1-%d characters of a-z A-Z 0-9 and _", f.Name, maxEditNameLen)
		}
		if seen[f.Name] {
			return Errorf(CodeBadRequest, "permission.editable: %q listed twice", f.Name)
		}
		seen[f.Name] = true
		if utf8.RuneCountInString(f.Label) > MaxEditLabelLen || !utf8.ValidString(f.Label) {
			return Errorf(CodeBadRequest, "permission.editable: the label of %q must be valid UTF-8 of at most %d characters", f.Name, MaxEditLabelLen)
		}
		if err := checkEditValue(f.Value); err != nil {
			return Errorf(CodeBadRequest, "permission.editable: the value of %q %s", f.Name, err)
		}
		switch f.Of {
		case "":
		case OfCommand, OfPath:
			if !r.Permission.describes(&f) {
				return Errorf(CodeBadRequest, "permission.editable: %q is of the permission's %s, but its value is not the permission's %s", f.Name, f.Of, f.Of)
			}
		default:
			return Errorf(CodeBadRequest, "permission.editable: of %q must be %q, %q or empty", f.Of, OfCommand, OfPath)
		}
	}
	return nil
}

// describes reports whether f's value is p's field f.Of: the command
// itself, or the path itself or its absolute form (askslack hook keeps a
// path inside the working directory relative, for rules that fit every
// clone).
func (p *Permission) describes(f *EditableField) bool {
	switch f.Of {
	case OfCommand:
		return p.Command != "" && f.Value == p.Command
	case OfPath:
		v := path.Clean(f.Value)
		return p.Path != "" && (v == p.Path || !path.IsAbs(p.Path) && strings.HasSuffix(v, "/"+p.Path))
	}
	return false
}

// Describes is what askslack hook asks before marking a field Of: whether
// the ask would validate with it.
func (p *Permission) Describes(f *EditableField) bool { return p.describes(f) }

// EditedPermission is what the call an edited allow runs is about: the
// ask's permission with its command or path replaced by the edits of the
// fields that carry them (Of); the ask's own permission when no such field
// was edited. Standing rules and quorum judge it (engine).
func EditedPermission(r *Request, it *AnswerItem) *Permission {
	p := r.Permission
	if p == nil || it == nil || len(it.Edited) == 0 {
		return p
	}
	out := *p
	out.Editable = nil
	changed := false
	for _, f := range p.Editable {
		v, ok := it.Edited[f.Name]
		if !ok || f.Of == "" {
			continue
		}
		changed = true
		switch f.Of {
		case OfCommand:
			out.Command = v
		case OfPath:
			out.Path = rebase(v, f.Value, p.Path)
		}
	}
	if !changed {
		return p
	}
	return &out
}

// rebase is the edited path v in the form the ask's path has: relative to
// the same working directory when the ask's path was relative and v lies
// inside it, else v cleaned (a path outside matches no relative rule, as
// when an agent asks for it).
func rebase(v, was, rel string) string {
	v = path.Clean(v)
	if path.IsAbs(rel) || path.Clean(was) == rel {
		return v
	}
	base := strings.TrimSuffix(path.Clean(was), rel) // ends in "/"
	if r, ok := strings.CutPrefix(v, base); ok && r != "" {
		return r
	}
	return v
}

func validFieldName(s string) bool {
	if s == "" || len(s) > maxEditNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func checkEditValue(v string) error {
	if utf8.RuneCountInString(v) > MaxEditLen || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return fmt.Errorf("must be valid UTF-8 of at most %d characters, without NUL", MaxEditLen)
	}
	return nil
}

// Editable reports whether a person may edit r's tool input before
// allowing it: the agent listed fields, and one person's allow decides (a
// quorum votes on one input, so its ask is never edited).
func (r *Request) Editable() bool {
	return r != nil && r.Permission != nil && len(r.Permission.Editable) > 0 && r.Quorum <= 1 &&
		r.Kind() == KindPermission
}

// Field returns the editable field named name, or nil.
func (p *Permission) Field(name string) *EditableField {
	if p == nil {
		return nil
	}
	for i := range p.Editable {
		if p.Editable[i].Name == name {
			return &p.Editable[i]
		}
	}
	return nil
}

// ValidateEdits checks the edits an answer carries against the ask
// (BAD_ANSWER): only on the permission question of an ask that lists
// editable fields and takes one person's allow, only with Allow chosen (an
// edit is "allow this instead"; Always allow would make the agent's own
// rule for the call as asked), only the listed fields, each value within
// the limits.
func ValidateEdits(r *Request, a *Answer) error {
	for _, it := range a.Answers {
		if it.Edited == nil {
			continue
		}
		switch {
		case it.ID != PermissionQuestionID || r.Permission == nil || len(r.Permission.Editable) == 0:
			return Errorf(CodeBadAnswer, "question %q: this ask's agent takes no edited input (edited is only for a tool permission that lists permission.editable)", it.ID)
		case r.Quorum > 1:
			return Errorf(CodeBadAnswer, "this ask needs %d approvals: approvers vote on the input as asked, so it cannot be edited", r.Quorum)
		case len(it.Selected) != 1 || it.Selected[0] != PermissionAllow || it.Custom != "":
			return Errorf(CodeBadAnswer, "question %q: an edited input goes with %q alone", it.ID, PermissionAllow)
		}
		for name, v := range it.Edited {
			if r.Permission.Field(name) == nil {
				return Errorf(CodeBadAnswer, "question %q: %q is not an editable field of this ask", it.ID, name)
			}
			if err := checkEditValue(v); err != nil {
				return Errorf(CodeBadAnswer, "question %q: edited %q %s", it.ID, name, err)
			}
		}
	}
	return nil
}

// NormalizeEdits keeps only the edited values that differ from what the
// agent gave (an edit that changed nothing is a plain allow), in a copy:
// a's maps may be shared with its sender.
func NormalizeEdits(r *Request, a *Answer) {
	for i := range a.Answers {
		it := &a.Answers[i]
		if it.Edited == nil {
			continue
		}
		out := map[string]string{}
		for name, v := range it.Edited {
			if f := r.Permission.Field(name); f != nil && f.Value != v {
				out[name] = v
			}
		}
		it.Edited = nil
		if len(out) > 0 {
			it.Edited = out
		}
	}
}

// Change is one edited field: what the agent gave and what it runs with.
type Change struct {
	Name, Label string
	Old, New    string
}

// Changes lists the fields an answer item edited, in the order the ask
// lists them; nil when it edited none.
func Changes(r *Request, it *AnswerItem) []Change {
	if r == nil || r.Permission == nil || it == nil || len(it.Edited) == 0 {
		return nil
	}
	var out []Change
	for _, f := range r.Permission.Editable {
		if v, ok := it.Edited[f.Name]; ok {
			out = append(out, Change{Name: f.Name, Label: f.Title(), Old: f.Value, New: v})
		}
	}
	return out
}

// EditDetail is the audit trail's account of an edited allow: for each
// field the SHA-256 of the value that runs (so a cut diff still names it
// exactly) and its line diff, cut (CutDiff) so the whole fits about n
// bytes.
func EditDetail(cs []Change, n int) string {
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("allowed with changes")
	per := max(n/len(cs)-120, 200)
	for _, c := range cs {
		sum := sha256.Sum256([]byte(c.New))
		fmt.Fprintf(&b, "\n%s (new value sha256:%s):\n%s", c.Name, hex.EncodeToString(sum[:]), CutDiff(c.Old, c.New, per))
	}
	return b.String()
}

// CutDiff is LineDiff of old and new in about n bytes: what was removed
// (with the context) and what was added get half each, so a long change
// still shows what runs. A line cut short ends in "…".
func CutDiff(old, new string, n int) string {
	lines := strings.Split(LineDiff(old, new), "\n")
	size := func(s string) int { return len(s) }
	cut := func(s string, n int) string { return cutBytes(s, max(n-3, 0)) + "…" }
	return strings.Join(CutLines(lines, n, size, cut), "\n")
}

// CutLines cuts the lines of a LineDiff (as rendered: escaped for Slack,
// say) to about n in all by size: the removed lines and the context get
// half, the added lines ("+ …") the other half, and the line that meets
// its half's end is cut to the room left by cut.
func CutLines(lines []string, n int, size func(string) int, cut func(s string, n int) string) []string {
	half := max(n/2, 40)
	var out []string
	left := map[bool]int{false: half, true: half} // by "is an added line"
	for _, l := range lines {
		added := strings.HasPrefix(l, "+ ")
		room := left[added]
		switch {
		case room <= 0:
			continue
		case size(l)+1 > room:
			l = cut(l, room-1)
			left[added] = 0
		default:
			left[added] = room - size(l) - 1
		}
		out = append(out, l)
	}
	return out
}

// cutBytes is s cut to at most n bytes at a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// LineDiff shows old → new line by line: of the lines both share at the
// start and the end, the diffContext nearest the change (unmarked, "  ";
// "  …" for the rest), then the others as removed ("- ") and added ("+ ").
// It is a person's view of a small edit, not a minimal diff.
func LineDiff(old, new string) string {
	a, b := strings.Split(old, "\n"), strings.Split(new, "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var lines []string
	if pre > diffContext {
		lines = append(lines, "  …")
	}
	for _, l := range a[max(0, pre-diffContext):pre] {
		lines = append(lines, "  "+l)
	}
	for _, l := range a[pre : len(a)-suf] {
		lines = append(lines, "- "+l)
	}
	for _, l := range b[pre : len(b)-suf] {
		lines = append(lines, "+ "+l)
	}
	for _, l := range a[len(a)-suf : len(a)-suf+min(suf, diffContext)] {
		lines = append(lines, "  "+l)
	}
	if suf > diffContext {
		lines = append(lines, "  …")
	}
	return strings.Join(lines, "\n")
}
