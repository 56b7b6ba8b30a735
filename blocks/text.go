package blocks

import (
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Slack caps this package keeps to (see shared/reference/slack-platform.md).
const (
	maxButtonText   = 75
	maxOptionText   = 75
	maxOptionDesc   = 75
	maxHeaderText   = 150
	maxSectionText  = 3000
	maxContextText  = 3000
	maxPlaceholder  = 150
	maxModalTitle   = 24
	maxInputLabel   = 2000
	maxMessageText  = 3000 // the fallback text; chat.update is reported to refuse ~4,000 bytes
	maxActionsElems = 25
	maxCheckboxes   = 10
	maxRadios       = 10
	maxSelectOpts   = 100
	maxMsgBlocks    = 50
	maxModalBlocks  = 100
	// maxBlockText keeps the sum of text across a message's blocks under the
	// undocumented msg_blocks_too_long cap (bolt-js#2867: ~12,000).
	maxBlockText = 11000
)

// Truncate shortens s to at most n characters (runes), marking the cut with
// "…" so readers see that text is missing.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:n-1]), func(r rune) bool { return r == ' ' || r == '\n' }) + "…"
}

// Escape makes agent- or user-supplied text inert in mrkdwn: '&', '<' and
// '>' are the only characters Slack asks apps to escape, and escaping them
// defuses <!channel>, <@U…> mentions and <url|label> links.
func Escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Mrkdwn returns escaped, truncated mrkdwn text.
func mrkdwn(s string, n int) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, truncateEscaped(Escape(s), n), false, true)
}

// truncateEscaped truncates escaped text without cutting an entity in half.
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

// plain returns truncated plain_text; plain text is never parsed for
// mentions or links, so it needs no escaping.
func plain(s string, n int) *slack.TextBlockObject {
	s = strings.TrimSpace(s)
	if s == "" {
		s = " "
	}
	return slack.NewTextBlockObject(slack.PlainTextType, Truncate(s, n), true, false)
}

// oneLine folds newlines so a label stays one line in buttons and options.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// quoteBlock prefixes every line with "> " so multi-line text reads as a quote.
func quoteBlock(s string) string {
	return "> " + strings.ReplaceAll(s, "\n", "\n> ")
}
