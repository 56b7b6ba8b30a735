// Package rules is the matching grammar of standing rules: which tool
// permission asks a rule a team granted in Slack answers without asking.
// It is pure (no I/O, no clock) and deliberately small, so that what a rule
// matches can be said in two sentences and checked by reading it.
//
// A rule names a tool and, for a tool that runs a shell command, a command
// pattern, or for a tool that touches a file, a path glob:
//
//   - Command patterns are words separated by spaces. A word without `*`
//     matches the same word exactly. A `*` inside a word matches any run of
//     plain characters within that one word (never a space, a quote, `\`, or
//     any of ; & | < > ( ) $ ` * ? [ ] { } ~ ! #). A pattern whose last word
//     is a lone `*` matches any number of further plain words, none too.
//     Every other character of a pattern matches only itself. So `npm test *`
//     allows `npm test` and `npm test --watch=false`, never
//     `npm test; curl x | sh`, `npm test && rm -rf /` or `npm test $(evil)`:
//     a command holding ; & | < > ( ) $ or a backtick matches only a pattern
//     that spells that same character out. A command with a newline, a
//     control character or an invisible Unicode character (bidi overrides,
//     zero-width characters, line separators) never matches an allow rule.
//     The first word of an allow pattern is literal: a rule names the
//     program it allows.
//   - Path globs are /-separated segments. `*` matches within one segment,
//     `**` as a whole segment matches any number of segments; wildcards
//     never match a segment starting with a dot (`.env`, `.git`). A path
//     with `..`, `.` or empty segments never matches an allow rule. Paths
//     are relative to the repository (askslack hook makes them so); a path
//     outside it is absolute and only a glob starting with / matches it.
//   - A rule with neither pattern: as an allow rule it matches only asks
//     that carry neither a command nor a path (an MCP tool); as a deny rule
//     it matches every ask of its tool.
//
// Deny rules are generous where allow rules are strict: a deny pattern
// matches any single command of a chain (split at ; & | ( ) ` < > and
// newlines), after quotes and backslashes are dropped (from the pattern too), and its `*` matches
// any characters but whitespace. A deny rule is a convenience, not a
// sandbox: `FOO=1 curl` or `sh -c "curl"` are not curl to it.
//
// Of the rules that match an ask, any deny wins over every allow; the rule
// named is the most specific: the most literal characters in its pattern,
// then the narrowest scope (one repo, one caller), then the oldest.
package rules

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Effect is what a rule answers.
type Effect string

// The effects of a rule.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// Rule is a standing rule as the grammar sees it.
type Rule struct {
	ID     int64
	Effect Effect
	// Tool is the tool name, matched exactly (Bash, Edit, mcp__gh__pr).
	Tool string
	// Command is a command pattern; Path a path glob; at most one is set.
	Command string
	Path    string
	// Repo and Caller narrow the rule to one repository (the base name of
	// the agent's working directory) and one API caller; "" is every one.
	Repo   string
	Caller string
}

// Ask is what a tool permission ask is about.
type Ask struct {
	Tool, Command, Path, Repo, Caller string
}

// MaxPattern caps a pattern's length.
const MaxPattern = 1000

// String is the rule's match as people read it: Bash(npm test *).
func (r Rule) String() string {
	switch {
	case r.Command != "":
		return r.Tool + "(" + r.Command + ")"
	case r.Path != "":
		return r.Tool + "(" + r.Path + ")"
	}
	return r.Tool
}

// Check reports what is wrong with a rule, in words a person can act on.
func Check(r Rule) error {
	if r.Effect != Allow && r.Effect != Deny {
		return errors.New(`a rule allows or denies`)
	}
	if r.Tool == "" || len(r.Tool) > 128 || strings.IndexFunc(r.Tool, func(c rune) bool {
		return !(c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("_-.:", c)))
	}) >= 0 {
		return errors.New("the tool is a tool name: only letters, digits and the characters _ - . : in it")
	}
	if r.Command != "" && r.Path != "" {
		return errors.New("a rule matches a command or a path, not both")
	}
	for _, p := range []string{r.Command, r.Path, r.Repo, r.Caller} {
		if len(p) > MaxPattern || !utf8.ValidString(p) || hasHidden(p) {
			return fmt.Errorf("patterns are at most %d bytes of visible characters, on one line", MaxPattern)
		}
	}
	if r.Command != "" {
		ws := words(r.Command)
		if len(ws) == 0 {
			return errors.New("the command pattern is empty")
		}
		if r.Effect == Allow && strings.Contains(ws[0], "*") {
			return fmt.Errorf("the first word of an allow pattern names the program: %q has a *", ws[0])
		}
	}
	if r.Path != "" {
		for _, seg := range strings.Split(strings.TrimPrefix(r.Path, "/"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				return fmt.Errorf("the path glob %q has an empty, . or .. segment", r.Path)
			}
			if strings.Contains(seg, "**") && seg != "**" {
				return fmt.Errorf("** stands alone as a path segment (src/**/x.go), not inside %q", seg)
			}
		}
	}
	return nil
}

// Matches reports whether r covers a (tool, scope and pattern).
func (r Rule) Matches(a Ask) bool {
	if r.Tool != a.Tool || (r.Repo != "" && r.Repo != a.Repo) || (r.Caller != "" && r.Caller != a.Caller) {
		return false
	}
	if Check(r) != nil {
		return false // a rule that is not well-formed covers nothing
	}
	switch {
	case r.Command != "":
		if a.Command == "" {
			return false
		}
		if r.Effect == Deny {
			return denyCommand(r.Command, a.Command)
		}
		return allowCommand(r.Command, a.Command)
	case r.Path != "":
		if a.Path == "" {
			return false
		}
		return matchPath(r.Path, a.Path, r.Effect == Deny)
	}
	return r.Effect == Deny || (a.Command == "" && a.Path == "")
}

// Match returns the rule that answers a, if any: a deny when any deny
// matches, else an allow; the most specific of those.
func Match(rs []Rule, a Ask) (Rule, bool) {
	var best Rule
	found := false
	for _, r := range rs {
		if !r.Matches(a) {
			continue
		}
		if !found || better(r, best) {
			best, found = r, true
		}
	}
	return best, found
}

// better reports whether r names the answer rather than cur: a deny over
// an allow, then the more specific.
func better(r, cur Rule) bool {
	if (r.Effect == Deny) != (cur.Effect == Deny) {
		return r.Effect == Deny
	}
	if a, b := Specificity(r), Specificity(cur); a != b {
		return a > b
	}
	if a, b := scope(r), scope(cur); a != b {
		return a > b
	}
	return r.ID < cur.ID
}

// Specificity is how much of a rule's pattern is literal: its characters
// other than *.
func Specificity(r Rule) int {
	p := r.Command + r.Path
	return utf8.RuneCountInString(p) - strings.Count(p, "*")
}

func scope(r Rule) int {
	n := 0
	if r.Repo != "" {
		n++
	}
	if r.Caller != "" {
		n++
	}
	return n
}

// hasHidden reports characters a person reading the text cannot see or
// that end a shell command line: control characters (newline, tab
// included), format characters (bidi overrides, zero-width joiners) and
// Unicode line and paragraph separators.
func hasHidden(s string) bool {
	return strings.IndexFunc(s, func(c rune) bool {
		return unicode.IsControl(c) || unicode.Is(unicode.Cf, c) || unicode.Is(unicode.Zl, c) || unicode.Is(unicode.Zp, c) || c == utf8.RuneError
	}) >= 0
}

// words splits at runs of spaces (and, in commands, tabs).
func words(s string) []string {
	return strings.FieldsFunc(s, func(c rune) bool { return c == ' ' || c == '\t' })
}
