package rules

import (
	"path"
	"strings"
)

// matchPath matches a path glob against a path. deny: the path is cleaned
// first and wildcards match dot segments too; an allow needs a clean path
// and never lets a wildcard match a dot segment.
func matchPath(glob, p string, deny bool) bool {
	if hasHidden(p) {
		return deny && matchPath(glob, strings.Map(func(c rune) rune {
			if hasHidden(string(c)) {
				return -1
			}
			return c
		}, p), true)
	}
	if deny {
		p = path.Clean(p)
	} else if !cleanPath(p) {
		return false
	}
	if strings.HasPrefix(glob, "/") != strings.HasPrefix(p, "/") {
		return false
	}
	gs := strings.Split(strings.TrimPrefix(glob, "/"), "/")
	ps := strings.Split(strings.TrimPrefix(p, "/"), "/")
	return matchSegs(gs, ps, deny)
}

// cleanPath reports a path without empty, . or .. segments.
func cleanPath(p string) bool {
	for _, s := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// matchSegs matches glob segments against path segments, with the same
// table as matchWord: ** extends a match by any segment (but a dot segment
// unless dots), any other glob segment matches one path segment.
func matchSegs(gs, ps []string, dots bool) bool {
	at := make([]bool, len(ps)+1)
	next := make([]bool, len(ps)+1)
	at[0] = true
	for _, g := range gs {
		if g == "**" {
			next[0] = at[0]
			for j := 1; j <= len(ps); j++ {
				next[j] = at[j] || (next[j-1] && (dots || !strings.HasPrefix(ps[j-1], ".")))
			}
		} else {
			next[0] = false
			for j := 1; j <= len(ps); j++ {
				next[j] = at[j-1] && matchSeg(g, ps[j-1], dots)
			}
		}
		at, next = next, at
	}
	return at[len(ps)]
}

// matchSeg matches one glob segment: * within it, never a leading dot
// (unless dots, or the glob spells the dot out).
func matchSeg(g, seg string, dots bool) bool {
	if strings.Contains(g, "*") && !dots && strings.HasPrefix(seg, ".") && !strings.HasPrefix(g, ".") {
		return false
	}
	return matchWord(g, seg, func(c rune) bool { return c != '/' })
}
