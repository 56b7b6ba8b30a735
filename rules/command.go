package rules

import (
	"strings"
)

// Meta are the characters that make a shell line more than one plain
// command: a command holding any of them matches only an allow pattern that
// spells the same character out.
const Meta = ";&|<>()$`\n\r"

// notPlain are the characters an allow pattern's * never matches: Meta,
// quotes and the escape (which make the shell's words differ from ours),
// globs and expansions, and comments.
const notPlain = Meta + `'"\*?[]{}~!#`

// plainRune reports whether an allow pattern's * may match c.
func plainRune(c rune) bool {
	return c != ' ' && c != '\t' && !strings.ContainsRune(notPlain, c)
}

// allowCommand matches an allow pattern against a whole command line.
func allowCommand(pattern, command string) bool {
	if hasHidden(command) {
		return false
	}
	return matchWords(words(pattern), words(command), plainRune, false)
}

// denyCommand matches a deny pattern against each command of a chain,
// generously: see the package doc.
func denyCommand(pattern, command string) bool {
	unquote := strings.NewReplacer(`"`, "", `'`, "", `\`, "")
	pw := words(unquote.Replace(pattern))
	any := func(c rune) bool { return c != ' ' && c != '\t' }
	segs := strings.FieldsFunc(command, func(c rune) bool { return strings.ContainsRune(Meta, c) })
	segs = append(segs, command)
	for _, seg := range segs {
		seg = unquote.Replace(seg)
		if matchWords(pw, words(seg), any, true) {
			return true
		}
	}
	return false
}

// matchWords matches pattern words against command words: literal words
// exactly, words with * by matchWord, and a trailing lone * any number of
// further words (each all of ok's characters). prefix: the pattern may
// also match the start of the command (a deny of `rm -rf *` matches
// `rm -rf / x`).
func matchWords(pw, cw []string, ok func(rune) bool, prefix bool) bool {
	if n := len(pw); n > 0 && pw[n-1] == "*" {
		if len(cw) < n-1 || !matchWords(pw[:n-1], cw[:n-1], ok, false) {
			return false
		}
		for _, w := range cw[n-1:] {
			if !allRunes(w, ok) {
				return false
			}
		}
		return true
	}
	if len(cw) != len(pw) && !(prefix && len(cw) > len(pw)) {
		return false
	}
	for i := range pw {
		if !matchWord(pw[i], cw[i], ok) {
			return false
		}
	}
	return true
}

func allRunes(s string, ok func(rune) bool) bool {
	for _, c := range s {
		if !ok(c) {
			return false
		}
	}
	return true
}

// matchWord matches one pattern word, whose * match runs (maybe empty) of
// ok's characters, against one command word. A table over (pattern
// position, word position), so any number of *s costs len(p)·len(w), never
// the exponential backtracking a hostile pattern could ask for.
func matchWord(p, w string, ok func(rune) bool) bool {
	if !strings.Contains(p, "*") {
		return p == w
	}
	wr := []rune(w)
	// at[j]: pattern[:i] matches word[:j], for the current i.
	at := make([]bool, len(wr)+1)
	next := make([]bool, len(wr)+1)
	at[0] = true
	for _, c := range p {
		if c == '*' {
			// * extends any match by ok characters.
			next[0] = at[0]
			for j := 1; j <= len(wr); j++ {
				next[j] = at[j] || (next[j-1] && ok(wr[j-1]))
			}
		} else {
			next[0] = false
			for j := 1; j <= len(wr); j++ {
				next[j] = at[j-1] && wr[j-1] == c
			}
		}
		at, next = next, at
	}
	return at[len(wr)]
}
