package blocks

import (
	"regexp"
	"strings"
)

// Plans in Slack's markdown block
// (https://docs.slack.dev/reference/block-kit/blocks/markdown-block).
//
// A plan review's message shows its plan in one markdown block, as the agent
// wrote it: Slack renders the Markdown itself (headings, lists, tables,
// code), which mrkdwn sections cannot. The block exists in messages only;
// modals, the App Home tab and every other surface keep the mrkdwn sections
// (MarkdownToMrkdwn), and so does a plain question's detail.
//
// Slack caps the text of all markdown blocks of a message at 12,000
// characters together, and that text also counts toward the message's
// undocumented msg_blocks_too_long cap like any other block text
// (bolt-js#2509: a message of markdown blocks alone fails at about 13,300
// characters, less with other blocks), so the plan gets what the rest of
// the message leaves under maxBlockText, less planHeadroom.
const (
	// maxMarkdownText is Slack's cap on the markdown blocks of one message.
	maxMarkdownText = 12000
	// planHeadroom is block text a plan review's message leaves free for
	// what is added once it is rendered: the mention line (WithMentions),
	// the votes line (withVotes) and a delivery note (WithNote).
	planHeadroom = 500
)

// markdownPlan is the plan md made safe for a markdown block and cut to at
// most n characters; more reports that text was left out. It is md as
// written except for what could turn into Slack syntax:
//
//   - outside code, every '<' is written "&lt;", which Markdown shows as
//     '<', so no <!channel>, <@U…> or <url|label> can ping or forge a link
//     (and raw HTML shows as text);
//   - in code, where an entity would show as written, a '<' that opens
//     such a token (<!…, <@…, <#…, <scheme:…) is followed by a zero-width
//     space, which breaks the token and shows nothing;
//   - control characters are dropped (clean).
//
// A cut falls at the end of a line and never inside a fenced code block: a
// fence open at the cut is closed, with the opening fence's indentation so
// a fence in a list item closes there. Only a text whose first lines are
// too long to fill half the room is cut inside a line, marked with "…".
func markdownPlan(md string, n int) (string, bool) {
	src, more := head(md, 2*n+1000)
	lines := strings.Split(strings.Trim(clean(src), "\n"), "\n")
	if more && len(lines) > 1 {
		lines, more = lines[:len(lines)-1], true // the last line read may be a part
	}
	var out []string
	used := 0
	var f fenceState
	for _, line := range lines {
		next, isFence := f.after(line)
		var text string
		if f.marker != "" || isFence {
			text = codeSafe(line)
		} else {
			text = proseSafe(line)
		}
		sep := min(len(out), 1)
		if used+sep+runes(text)+next.closeLen() <= n {
			out, used, f = append(out, text), used+sep+runes(text), next
			continue
		}
		more = true
		if room := n - used - sep - f.closeLen() - 1; used < n/2 && !isFence && room > 0 {
			// A part of a line that is no fence could read as one.
			if p := cutLine(text, room) + "…"; p != "…" {
				if _, fence := f.after(p); !fence {
					out = append(out, p)
				}
			}
		}
		break
	}
	if f.marker == "" {
		for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
			out = out[:len(out)-1]
		}
	} else {
		out = append(out, f.indent+f.marker)
	}
	if len(out) == 0 {
		return "", more || strings.TrimSpace(src) != ""
	}
	return strings.Join(out, "\n"), more
}

// fenceState is the fenced code block open at a line: its opening fence's
// marker ("```", "~~~~", …) and indentation; marker "" outside one.
type fenceState struct {
	indent, marker string
}

// closeLen is what closing the open fence on a line of its own takes.
func (f fenceState) closeLen() int {
	if f.marker == "" {
		return 0
	}
	return 1 + runes(f.indent) + len(f.marker)
}

// after is the state after line, and whether line is a fence (opening or
// closing one), following CommonMark: a fence is three or more backticks
// or tildes (a backtick fence's info string has no backtick); it is closed
// by a fence of the same character, at least as long, with nothing after.
// Any indentation is taken, as agents indent fences in list items.
func (f fenceState) after(line string) (fenceState, bool) {
	t := strings.TrimLeft(line, " \t")
	indent := line[:len(line)-len(t)]
	for _, c := range []byte{'`', '~'} {
		k := 0
		for k < len(t) && t[k] == c {
			k++
		}
		if k < 3 {
			continue
		}
		rest := t[k:]
		switch {
		case f.marker == "" && !(c == '`' && strings.IndexByte(rest, '`') >= 0):
			return fenceState{indent: indent, marker: t[:k]}, true
		case f.marker != "" && f.marker[0] == c && k >= len(f.marker) && strings.TrimSpace(rest) == "":
			return fenceState{}, true
		}
	}
	return f, false
}

// slackToken matches the start of what Slack reads as a mention, broadcast,
// channel or link: <!…, <@…, <#…, <scheme:….
var slackToken = regexp.MustCompile(`<([!@#]|[A-Za-z][A-Za-z0-9+.-]{0,31}:)`)

// codeSafe is a line of code with Slack's tokens broken by a zero-width
// space after their '<'.
func codeSafe(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	return slackToken.ReplaceAllStringFunc(s, func(m string) string { return "<\u200b" + m[1:] })
}

// proseSafe is a line of Markdown text with '<' written "&lt;" outside its
// code spans, whose text codeSafe keeps as written. A backtick run that
// closes nothing on the line is text.
func proseSafe(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			break
		}
		k := i
		for k < len(s) && s[k] == '`' {
			k++
		}
		run := s[i:k]
		end := closingRun(s[k:], len(run))
		if end < 0 {
			b.WriteString(strings.ReplaceAll(s[:k], "<", "&lt;"))
			s = s[k:]
			continue
		}
		b.WriteString(strings.ReplaceAll(s[:i], "<", "&lt;"))
		b.WriteString(run + codeSafe(s[k:k+end]) + run)
		s = s[k+end+len(run):]
	}
	b.WriteString(strings.ReplaceAll(s, "<", "&lt;"))
	return b.String()
}

// closingRun is the index in s of the first backtick run of exactly n
// backticks, or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		k := i
		for k < len(s) && s[k] == '`' {
			k++
		}
		if k-i == n {
			return i
		}
		i = k
	}
	return -1
}

// cutLine is the head of line s of at most n characters, ending at a space
// when one is in its second half, never inside an entity ("&lt;") or right
// after a '<' (which the cut could leave opening a token).
func cutLine(s string, n int) string {
	h, more := head(s, n)
	if !more {
		return s
	}
	if i := strings.LastIndexByte(h, ' '); i > len(h)/2 {
		h = h[:i]
	}
	if i := strings.LastIndexByte(h, '&'); i >= 0 && !strings.Contains(h[i:], ";") {
		h = h[:i]
	}
	return strings.TrimRight(h, " \t<")
}
