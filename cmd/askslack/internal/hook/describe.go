package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Limits of what Describe shows inline; the message's "View details" opens
// the rest (up to maxDetail).
const (
	maxDetail    = 12000
	maxDiffLines = 40
)

// Describe renders a tool's input as Markdown a person can judge at a
// glance: a shell command in a code block, a file path and a diff summary
// for edits, the JSON otherwise. Long input is cut with a note saying so.
func Describe(tool string, raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		in = nil
	}
	var s string
	switch {
	case str(in, "command") != "":
		s = describeCommand(in)
	case str(in, "file_path") != "" && (tool == "Edit" || tool == "MultiEdit"):
		s = describeEdit(in)
	case str(in, "file_path") != "" && tool == "Write":
		content := str(in, "content")
		s = fmt.Sprintf("Write `%s` (%d lines, %d bytes):\n%s", str(in, "file_path"),
			lineCount(content), len(content), fence("", headLines(content, maxDiffLines)))
	default:
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") != nil {
			b.Reset()
			b.Write(raw)
		}
		s = "Input:\n" + fence("json", b.String())
	}
	if r := []rune(s); len(r) > maxDetail {
		s = string(r[:maxDetail]) + fmt.Sprintf("\n\n_(input cut at %d of %d characters)_", maxDetail, len(r))
	}
	return s
}

func describeCommand(in map[string]any) string {
	var b strings.Builder
	if d := str(in, "description"); d != "" {
		b.WriteString(d + "\n")
	}
	b.WriteString(fence("", str(in, "command")))
	return b.String()
}

func describeEdit(in map[string]any) string {
	path := str(in, "file_path")
	type edit struct{ old, new string }
	var edits []edit
	if es, ok := in["edits"].([]any); ok {
		for _, e := range es {
			m, _ := e.(map[string]any)
			edits = append(edits, edit{str(m, "old_string"), str(m, "new_string")})
		}
	} else {
		edits = append(edits, edit{str(in, "old_string"), str(in, "new_string")})
	}
	var b strings.Builder
	removed, added := 0, 0
	var diff []string
	for _, e := range edits {
		removed += lineCount(e.old)
		added += lineCount(e.new)
		diff = append(diff, prefixLines("- ", e.old)...)
		diff = append(diff, prefixLines("+ ", e.new)...)
	}
	fmt.Fprintf(&b, "Edit `%s`: %d edit(s), −%d +%d lines", path, len(edits), removed, added)
	if all, _ := in["replace_all"].(bool); all {
		b.WriteString(", every occurrence")
	}
	more := ""
	if len(diff) > maxDiffLines {
		more = fmt.Sprintf("\n… %d more lines", len(diff)-maxDiffLines)
		diff = diff[:maxDiffLines]
	}
	b.WriteString(":\n" + fence("diff", strings.Join(diff, "\n")+more))
	return b.String()
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// fence wraps s in a Markdown code block; a ``` inside s is broken up so
// it cannot close the block early.
func fence(lang, s string) string {
	s = strings.ReplaceAll(s, "```", "`\u200b``")
	return "```" + lang + "\n" + strings.TrimRight(s, "\n") + "\n```"
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

func prefixLines(prefix, s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := range ls {
		ls[i] = prefix + ls[i]
	}
	return ls
}

func headLines(s string, n int) string {
	ls := strings.Split(s, "\n")
	if len(ls) <= n {
		return s
	}
	return strings.Join(ls[:n], "\n") + fmt.Sprintf("\n… %d more lines", len(ls)-n)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
