package blocks

import (
	"net/url"
	"regexp"
	"strings"
)

var (
	mdBold     = regexp.MustCompile(`\*\*(\S(?:.*?\S)?)\*\*|__(\S(?:.*?\S)?)__`)
	mdItalic   = regexp.MustCompile(`(^|[^*\w])\*(\S(?:[^*]*?\S)?)\*($|[^*\w])`)
	mdStrike   = regexp.MustCompile(`~~(\S(?:.*?\S)?)~~`)
	mdLink     = regexp.MustCompile(`!?\[([^\]\n]+)\]\((https?://[^\s)]+)\)`)
	mdHeading  = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	mdBullet   = regexp.MustCompile(`^(\s*)[-*+]\s+`)
	mdCheckbox = regexp.MustCompile(`^(\s*)• \[( |x|X)\]\s+`)
	mdQuote    = regexp.MustCompile(`^\s{0,3}>\s?`)
	mdRule     = regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
)

// MarkdownToMrkdwn converts the common subset of Markdown an agent writes
// (headings, bold, italic, strike, links, bullet and task lists, quotes,
// rules, code) to Slack mrkdwn. Text is escaped first, so the plan cannot
// ping @channel or forge <url|label> links; only links written as Markdown
// links become Slack links, and they name their host so the target is never
// hidden. Fenced code blocks pass through untouched (escaped).
func MarkdownToMrkdwn(md string) string {
	lines := strings.Split(clean(strings.ReplaceAll(md, "\r\n", "\n")), "\n")
	inCode := false
	for i, line := range lines {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, fence) {
			// Slack shows a fence's language tag ("```go") as code: drop it.
			inCode = !inCode
			if inCode {
				t = fence
			}
			lines[i] = Escape(t)
			continue
		}
		if inCode {
			lines[i] = Escape(line)
			continue
		}
		lines[i] = mdLine(line)
	}
	return strings.Join(lines, "\n")
}

func mdLine(line string) string {
	if mdRule.MatchString(line) {
		return "──────────"
	}
	quote := ""
	for mdQuote.MatchString(line) { // nested quotes collapse into one level
		quote = "> "
		line = mdQuote.ReplaceAllString(line, "")
	}
	if m := mdHeading.FindStringSubmatch(line); m != nil {
		// A heading is bold; bold inside it would end the bold early.
		line = "**" + mdBold.ReplaceAllString(m[1], "$1$2") + "**"
	}
	line = mdBullet.ReplaceAllString(line, "$1• ")
	line = mdCheckbox.ReplaceAllStringFunc(line, func(m string) string {
		sub := mdCheckbox.FindStringSubmatch(m)
		if sub[2] == " " {
			return sub[1] + "☐ "
		}
		return sub[1] + "☑ "
	})
	return quote + inline(line)
}

func inline(line string) string {
	// Keep inline code spans verbatim (escaped), converting only around them.
	parts := strings.Split(line, "`")
	for i := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			parts[i] = Escape(parts[i])
			continue
		}
		parts[i] = convert(parts[i])
	}
	return strings.Join(parts, "`")
}

func convert(s string) string {
	// Links first, on unescaped text, then escape everything else.
	var b strings.Builder
	last := 0
	for _, m := range mdLink.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(styles(Escape(s[last:m[0]])))
		href, text := s[m[4]:m[5]], s[m[2]:m[3]]
		b.WriteString(link(href, text))
		last = m[1]
	}
	b.WriteString(styles(Escape(s[last:])))
	return b.String()
}

// link is a Slack link whose label is followed by the target's host, so a
// label cannot pass off one site as another.
func link(href, text string) string {
	u, err := url.Parse(href)
	if err != nil || u.Host == "" {
		return Escape("[" + text + "](" + href + ")")
	}
	safe := strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C").Replace(href)
	label := styles(Escape(strings.ReplaceAll(text, "|", "¦")))
	return "<" + safe + "|" + label + "> (" + Escape(u.Hostname()) + ")"
}

func styles(s string) string {
	// Bold first, to a placeholder, so the italic rule cannot read "**x**"
	// as "*" + "*x*" + "*"; clean removed control characters from the
	// text, so the placeholder cannot occur in it.
	s = mdBold.ReplaceAllStringFunc(s, func(m string) string {
		sub := mdBold.FindStringSubmatch(m)
		return "\x01" + sub[1] + sub[2] + "\x01"
	})
	s = mdItalic.ReplaceAllString(s, "${1}_${2}_${3}")
	s = strings.ReplaceAll(s, "\x01", "*")
	return mdStrike.ReplaceAllString(s, "~$1~")
}

const fence = "```"

// mdChunk is chunk over MarkdownToMrkdwn(md), converting only as much of a
// long text as the budget can show.
func mdChunk(md string, size, total int) ([]string, bool) {
	h, more := head(md, 2*total+1000)
	pieces, m := chunk(MarkdownToMrkdwn(h), size, total)
	return pieces, m || more
}

// chunk splits mrkdwn text into pieces of at most size characters each, in
// order, stopping once total characters are used; more reports whether
// text was left out. Pieces break at paragraph or line ends where they can,
// never inside an entity or a <link>, and a code block cut between pieces is
// closed and reopened so each piece renders on its own.
func chunk(s string, size, total int) (out []string, more bool) {
	s = strings.Trim(s, "\n")
	inFence := false
	used := 0
	for s != "" {
		room := min(size, total-used)
		prefix := ""
		if inFence {
			prefix = fence + "\n"
		}
		// Reserve room for reopening and closing a code block.
		avail := room - runes(prefix) - len("\n"+fence)
		if avail < 40 {
			return out, true
		}
		piece, rest := cut(s, avail)
		open := inFence
		for _, l := range strings.Split(piece, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), fence) {
				open = !open
			}
		}
		text := prefix + piece
		if open {
			text += "\n" + fence
		}
		if strings.TrimSpace(text) != "" {
			out = append(out, text)
			used += runes(text)
		}
		inFence = open
		s = strings.TrimLeft(rest, "\n")
	}
	return out, false
}

// cut returns the longest head of s of at most n characters that ends at a
// good break, and the rest.
func cut(s string, n int) (string, string) {
	head, more := head(s, n)
	if !more {
		return s, ""
	}
	end := len(head)
	// Prefer a paragraph break, then a line break, then a space, in the
	// second half of the window.
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(head, sep); i > len(head)/2 {
			if j := safeEnd(s, i); j > 0 {
				if j == i && sep == " " {
					return s[:j], s[j+1:] // the space breaks; neither piece keeps it
				}
				return s[:j], s[j:]
			}
		}
	}
	if j := safeEnd(s, end); j > 0 {
		end = j
	}
	return s[:end], s[end:]
}

// safeEnd moves a cut at byte end back so it splits neither an entity
// ("&amp;") nor a <link>. It returns 0 when no such cut exists.
func safeEnd(s string, end int) int {
	if i := strings.LastIndexByte(s[:end], '&'); i >= 0 && !strings.Contains(s[i:end], ";") {
		end = i
	}
	if i := strings.LastIndexByte(s[:end], '<'); i >= 0 && !strings.Contains(s[i:end], ">") {
		end = i
	}
	return end
}
