package blocks

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Slack caps this package keeps to (https://api.slack.com/reference/block-kit/blocks
// and …/block-elements; internal/blockcheck, which the tests run over every
// output, names each rule's source).
const (
	maxButtonText   = 75
	maxOptionText   = 75
	maxOptionDesc   = 75
	maxHeaderText   = 150
	maxSectionText  = 3000
	maxPlaceholder  = 150
	maxModalTitle   = 24
	maxInputLabel   = 2000
	maxAccessLabel  = 75
	maxActionsElems = 25
	maxContextElems = 10
	maxCheckboxes   = 10
	maxRadios       = 10
	maxSelectOpts   = 100
	maxMsgBlocks    = 50
	maxModalBlocks  = 100
	// maxBlockText keeps the sum of text across a message's blocks under
	// the undocumented msg_blocks_too_long cap (bolt-js#2867: about 12,000
	// characters "with a buffer for block containers"); 1,000 below it.
	maxBlockText = 11000
	// maxViewBytes keeps a modal's JSON under views.open's 250 kB
	// (view_too_large), with room for what Slack adds.
	maxViewBytes = 200_000
	// maxFallbackText caps the top-level text: notifications and screen
	// readers read only it, and chat.update is reported to refuse about
	// 4,000 bytes, so it is cut by characters and by bytes.
	maxFallbackText  = 700
	maxFallbackBytes = 3000
)

// Truncate shortens s to at most n characters (runes), marking the cut with
// "…" so readers see that text is missing.
func Truncate(s string, n int) string {
	h, more := head(s, n)
	if !more {
		return s
	}
	if n <= 1 {
		return "…"
	}
	h, _ = head(h, n-1)
	return strings.TrimRightFunc(h, unicode.IsSpace) + "…"
}

// head returns the first n characters of s, and whether s is longer. It
// reads no further than it must, so cutting a 100,000-character text to a
// label is cheap.
func head(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false // bytes ≥ runes
	}
	i := 0
	for c := 0; c < n && i < len(s); c++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i], i < len(s)
}

// fold is s on one line (whitespace folded, control characters dropped)
// and cut to n characters with "…".
func fold(s string, n int) string {
	f, _ := folded(s, n)
	return f
}

// folded is fold, also reporting whether anything was cut. It reads only
// a bounded prefix of s.
func folded(s string, n int) (string, bool) {
	h, more := head(s, 4*n+64)
	l := oneLine(h)
	if !more {
		t := Truncate(l, n)
		return t, t != l
	}
	// The text goes on past what was read: always mark the cut.
	if n <= 1 {
		return "…", true
	}
	r, _ := head(l, n-1)
	return strings.TrimRightFunc(r, unicode.IsSpace) + "…", true
}

// Escape makes agent- or user-supplied text inert in mrkdwn: '&', '<' and
// '>' are the only characters Slack asks apps to escape, and escaping them
// defuses <!channel>, <@U…> mentions and <url|label> links.
func Escape(s string) string {
	return escaper.Replace(s)
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// clean drops what has no business in a Slack message: invalid UTF-8,
// control characters other than newline and tab (JSON would inflate each to
// six bytes), bidirectional overrides that can make a label read backwards,
// and carriage returns.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	ok := true
	for _, r := range s {
		if dropRune(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\u2028' || r == '\u2029':
			return '\n'
		case dropRune(r):
			return -1
		}
		return r
	}, s)
}

func dropRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

// oneLine folds all whitespace so a label stays one line in buttons and
// options.
func oneLine(s string) string {
	return strings.Join(strings.Fields(clean(s)), " ")
}

// label is an option label as a control shows it: one line, at most n
// characters, "…" marking a cut. Values are indexes, so the answer carries
// the offered label whatever the control shows.
func label(s string, n int) string {
	return fold(s, n)
}

// truncateEscaped truncates escaped mrkdwn to at most n characters without
// cutting an entity ("&amp;") in half.
func truncateEscaped(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	t := Truncate(s, n)
	body := strings.TrimSuffix(t, "…")
	if i := strings.LastIndexByte(body, '&'); i >= 0 && !strings.Contains(body[i:], ";") {
		body = body[:i]
	}
	return body + "…"
}

// mrkdwnText is a mrkdwn text object for text already escaped. verbatim keeps
// Slack from turning bare names and URLs into mentions and links.
func mrkdwnText(s string) *slack.TextBlockObject {
	if strings.TrimSpace(s) == "" {
		s = " "
	}
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, true)
}

// plain returns truncated plain_text; plain text is never parsed for
// mentions or links, so it needs no escaping.
func plain(s string, n int) *slack.TextBlockObject {
	s = strings.TrimSpace(clean(s))
	if s == "" {
		s = "…"
	}
	return slack.NewTextBlockObject(slack.PlainTextType, Truncate(s, n), true, false)
}

// strong renders raw text in bold mrkdwn that the text cannot break out of:
// it is escaped, '*' (which would end the bold) becomes '∗', and inline
// code spans stay code so "rename `foo`?" reads as written. Each line is
// bolded on its own because Slack's bold does not span lines.
func strong(s string) string {
	lines := strings.Split(strings.TrimSpace(clean(s)), "\n")
	for i, l := range lines {
		lines[i] = strongLine(l)
	}
	return strings.Join(lines, "\n")
}

func strongLine(l string) string {
	parts := strings.Split(l, "`")
	if len(parts)%2 == 0 { // an unpaired backtick: show it as a look-alike
		last := len(parts) - 1
		parts[last-1] += "ˋ" + parts[last]
		parts = parts[:last]
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			if strings.TrimSpace(p) == "" {
				b.WriteString("ˋ" + Escape(p) + "ˋ")
			} else {
				b.WriteString("`" + Escape(p) + "`")
			}
			continue
		}
		b.WriteString(bold(p))
	}
	return b.String()
}

// bold wraps the words of s in '*', keeping surrounding spaces outside the
// markers (Slack ignores "* x *"). Text without a letter or digit stays
// plain: a lone "?" between markers may not parse.
func bold(s string) string {
	core := strings.TrimSpace(s)
	if core == "" {
		return s
	}
	lead := s[:strings.Index(s, core)]
	trail := s[len(lead)+len(core):]
	core = Escape(strings.ReplaceAll(core, "*", "∗"))
	if strings.IndexFunc(core, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return lead + core + trail
	}
	return lead + "*" + core + "*" + trail
}

// code renders raw text as an inline code span (for ids).
func code(s string) string {
	s = strings.ReplaceAll(oneLine(s), "`", "ˋ")
	if s == "" {
		return ""
	}
	return "`" + Escape(s) + "`"
}

// quoteBlock prefixes every line with "> " so multi-line text reads as a quote.
func quoteBlock(s string) string {
	return "> " + strings.ReplaceAll(s, "\n", "\n> ")
}

// runes is the length Slack counts.
func runes(s string) int { return utf8.RuneCountInString(s) }

// fallback cuts the top-level text for notifications: escaped, at most
// maxFallbackText characters and maxFallbackBytes bytes.
func fallback(s string) string {
	s = truncateEscaped(Escape(oneLine(s)), maxFallbackText)
	for len(s) > maxFallbackBytes {
		s = truncateEscaped(s, runes(s)*9/10)
	}
	return s
}
