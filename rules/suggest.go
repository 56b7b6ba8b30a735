package rules

import (
	"path"
	"strings"
)

// Suggest is the rule a form starts from for ask a: its tool, and
//   - for a command of plain words, its program and first plain argument
//     (not an option) followed by " *": `npm test *` for
//     `npm test -- --watch=false`;
//   - for a command with shell syntax, the command itself, exactly (so the
//     suggestion never allows more than was asked);
//   - for a path, the files of its directory with its extension:
//     `src/*.go` for `src/auth.go`; a dot file exactly.
//
// Every suggestion matches a (an allow as an allow, a deny as a deny).
func Suggest(a Ask, effect Effect) Rule {
	r := Rule{Effect: effect, Tool: a.Tool, Repo: a.Repo, Caller: a.Caller}
	switch {
	case a.Command != "":
		r.Command = suggestCommand(a.Command)
	case a.Path != "":
		r.Path = suggestPath(a.Path)
	}
	if !r.Matches(a) || Check(r) != nil {
		// Whatever the heuristics made of it, the exact ask is always a
		// rule that matches it (or nothing matches, and the form says so).
		r.Command, r.Path = strings.Join(words(a.Command), " "), a.Path
	}
	return r
}

func suggestCommand(cmd string) string {
	ws := words(cmd)
	if len(ws) == 0 {
		return ""
	}
	for _, w := range ws {
		if !allRunes(w, plainRune) {
			return strings.Join(ws, " ")
		}
	}
	keep := ws[:1]
	if len(ws) > 1 && !strings.HasPrefix(ws[1], "-") {
		keep = ws[:2]
	}
	return strings.Join(keep, " ") + " *"
}

func suggestPath(p string) string {
	dir, file := path.Split(p)
	if strings.HasPrefix(file, ".") || strings.ContainsAny(p, "*") {
		return p
	}
	if ext := path.Ext(file); ext != "" {
		return dir + "*" + ext
	}
	return dir + "*"
}
