package waterfall

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Permission says what a tool-permission ask is about, so that a standing
// rule can match it (see package rules): the tool, and either the shell
// command it runs or the file it touches, and the repository (the base name
// of the agent's working directory). askslack hook fills it from the hook
// input; in the HTTP API it is optional. Without it an ask is never
// answered by a rule.
type Permission struct {
	// Tool is the agent's tool name: Bash, Edit, Write, apply_patch,
	// mcp__server__tool.
	Tool string `json:"tool"`
	// Command is the shell command a Bash-like tool runs, exactly as the
	// agent gave it.
	Command string `json:"command,omitempty"`
	// Path is the file an Edit-like tool writes or reads.
	Path string `json:"path,omitempty"`
	// Repo is the base name of the agent's working directory.
	Repo string `json:"repo,omitempty"`
	// Editable lists the fields of the tool's input a person may change
	// before allowing it (Edit & allow…, edit.go), for an agent that runs
	// an edited input; empty for one that cannot (Codex).
	Editable []EditableField `json:"editable,omitempty"`
}

// Labels a permission ask offers: a rule answers with one of them, and the
// hooks read them back as allow and deny.
const (
	PermissionAllow = "Allow"
	// PermissionAlwaysAllow allows and asks the agent not to ask again
	// for the same call (askslack hook's option).
	PermissionAlwaysAllow = "Always allow"
	PermissionDeny        = "Deny"
)

// Limits of a Permission.
const (
	MaxToolLen    = 128
	MaxCommandLen = 20_000
	MaxPathLen    = 4096
	MaxRepoLen    = 128
)

// validatePermission checks r.Permission, which only a tool-permission ask
// may carry: exactly one question, id PermissionQuestionID, single-select,
// no plan intent, offering PermissionAllow and PermissionDeny (what a rule
// answers with). A plan or a question never carries one.
func validatePermission(r *Request) error {
	p := r.Permission
	if p == nil {
		return nil
	}
	if len(r.Questions) != 1 || r.Questions[0].ID != PermissionQuestionID {
		return Errorf(CodeBadRequest, `permission: only a tool-permission ask carries it, which has exactly one question, with id %q`, PermissionQuestionID)
	}
	q := &r.Questions[0]
	if q.Intent != nil || q.MultiSelect {
		return Errorf(CodeBadRequest, "permission: a tool-permission question is single-select and has no intent (plans are never answered by a rule)")
	}
	if q.OptionIndex(PermissionAllow) < 0 || q.OptionIndex(PermissionDeny) < 0 {
		return Errorf(CodeBadRequest, `permission: the question must offer the options %q and %q (a standing rule answers with one of them)`, PermissionAllow, PermissionDeny)
	}
	if !validToolName(p.Tool) {
		return Errorf(CodeBadRequest, "permission.tool is required: 1-%d characters of A-Z a-z 0-9 and _ - . :", MaxToolLen)
	}
	if p.Command != "" && p.Path != "" {
		return Errorf(CodeBadRequest, "permission: give a command or a path, not both")
	}
	if len(p.Command) > MaxCommandLen || !utf8.ValidString(p.Command) || strings.ContainsRune(p.Command, 0) {
		return Errorf(CodeBadRequest, "permission.command must be valid UTF-8 of at most %d bytes, without NUL", MaxCommandLen)
	}
	if len(p.Path) > MaxPathLen || !utf8.ValidString(p.Path) || strings.IndexFunc(p.Path, unicode.IsControl) >= 0 {
		return Errorf(CodeBadRequest, "permission.path must be valid UTF-8 of at most %d bytes, without control characters", MaxPathLen)
	}
	if len(p.Repo) > MaxRepoLen || !utf8.ValidString(p.Repo) || strings.IndexFunc(p.Repo, unicode.IsControl) >= 0 ||
		strings.ContainsAny(p.Repo, `/\`) || p.Repo == "." || p.Repo == ".." {
		return Errorf(CodeBadRequest, "permission.repo must be a directory's base name (no / or \\) of at most %d bytes", MaxRepoLen)
	}
	return validateEditable(r)
}

func validToolName(s string) bool {
	if s == "" || len(s) > MaxToolLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_-.:", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// AllowsPermission reports whether a permission option's label allows:
// Allow, Always allow, or an allow that also changes the agent's
// permissions, labelled "Allow, …" (askslack hook's "Allow, accept
// edits"). Anything else declines.
func AllowsPermission(label string) bool {
	return label == PermissionAllow || label == PermissionAlwaysAllow || strings.HasPrefix(label, PermissionAllow+", ")
}

// SamePermission compares two asks' permissions (part of what is asked):
// an ask re-sent under the same call id must ask the same thing.
func SamePermission(a, b *Permission) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Tool == b.Tool && a.Command == b.Command && a.Path == b.Path && a.Repo == b.Repo &&
		slices.Equal(a.Editable, b.Editable)
}
