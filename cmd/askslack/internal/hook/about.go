package hook

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/askslack/askslack/waterfall"
)

// Tools whose tool_input.command is a shell command a rule may match.
// Codex's apply_patch also has a "command", but it is a patch, not a
// command line: its rules match the tool alone.
var notShell = map[string]bool{"apply_patch": true}

// permissionOf says what a PermissionRequest is about, for standing rules:
// the tool, its shell command (Bash, Codex's shell) or the file it touches
// (Edit, Write, MultiEdit, NotebookEdit, Read), and the repository, the
// base name of cwd. Input a rule could not match safely (a command too long
// or not UTF-8) leaves the field out, so the ask is asked, never matched.
func permissionOf(in *Input) *waterfall.Permission {
	p := &waterfall.Permission{Tool: in.ToolName, Repo: cwdBase(in.Cwd)}
	if len(p.Repo) > waterfall.MaxRepoLen || !utf8.ValidString(p.Repo) || p.Repo == "/" || p.Repo == "." {
		p.Repo = ""
	}
	var fields map[string]any
	if json.Unmarshal(in.ToolInput, &fields) != nil {
		fields = nil
	}
	if c := str(fields, "command"); c != "" && !notShell[in.ToolName] {
		p.Command = c
	} else {
		for _, k := range []string{"file_path", "notebook_path", "path"} {
			if v := str(fields, k); v != "" {
				p.Path = repoPath(in.Cwd, v)
				break
			}
		}
	}
	// An ask must validate; a permission that cannot is dropped whole (the
	// ask is still asked), rather than cut down to something it is not.
	probe := &waterfall.Request{CallID: "x", Agent: waterfall.Agent{ID: "x"}, Permission: p, Questions: []waterfall.Question{{
		ID: waterfall.PermissionQuestionID, Question: "x", Options: []waterfall.Option{{Label: LabelAllow}, {Label: LabelDeny}}}}}
	if waterfall.Validate(probe) != nil {
		return nil
	}
	return p
}

// repoPath is path relative to the working directory when it lies inside
// it ("src/auth.go"), so one path rule fits every clone of the repository;
// a path outside it stays absolute and cleaned, which no relative glob
// matches.
func repoPath(cwd, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = filepath.Clean(path)
	if strings.TrimSpace(cwd) == "" || !filepath.IsAbs(cwd) {
		return path
	}
	rel, err := filepath.Rel(filepath.Clean(cwd), path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return filepath.ToSlash(rel)
}
