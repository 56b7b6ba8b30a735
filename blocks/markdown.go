package blocks

import (
	"regexp"
	"strings"
)

var (
	mdBold     = regexp.MustCompile(`\*\*(\S(?:.*?\S)?)\*\*|__(\S(?:.*?\S)?)__`)
	mdItalic   = regexp.MustCompile(`(^|[^*\w])\*(\S(?:[^*]*?\S)?)\*($|[^*\w])`)
	mdStrike   = regexp.MustCompile(`~~(\S(?:.*?\S)?)~~`)
	mdLink     = regexp.MustCompile(`\[([^\]\n]+)\]\((https?://[^\s)]+)\)`)
	mdHeading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	mdBullet   = regexp.MustCompile(`^(\s*)[-*+]\s+`)
	mdCheckbox = regexp.MustCompile(`^(\s*)• \[( |x|X)\]\s+`)
)

// MarkdownToMrkdwn converts the common subset of Markdown an agent writes
// (headings, bold, italic, strike, links, bullet lists, code) to Slack
// mrkdwn. Text is escaped first, so the plan cannot ping @channel or forge
// links; only links written as Markdown links become Slack links. Fenced
// code blocks pass through untouched.
func MarkdownToMrkdwn(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	inCode := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			lines[i] = Escape(line)
			continue
		}
		if inCode {
			lines[i] = Escape(line)
			continue
		}
		lines[i] = inline(line)
	}
	return strings.Join(lines, "\n")
}

func inline(line string) string {
	// Keep inline code spans verbatim (escaped), converting only around them.
	parts := strings.Split(line, "`")
	for i := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			parts[i] = Escape(parts[i])
			continue
		}
		parts[i] = convert(parts[i], i == 0)
	}
	return strings.Join(parts, "`")
}

func convert(s string, lineStart bool) string {
	if lineStart {
		if m := mdHeading.FindStringSubmatch(s); m != nil {
			s = "**" + m[1] + "**"
		}
		s = mdBullet.ReplaceAllString(s, "$1• ")
		s = mdCheckbox.ReplaceAllStringFunc(s, func(m string) string {
			sub := mdCheckbox.FindStringSubmatch(m)
			if sub[2] == " " {
				return sub[1] + "☐ "
			}
			return sub[1] + "☑ "
		})
	}
	// Links first, on unescaped text, then escape everything else.
	var b strings.Builder
	last := 0
	for _, m := range mdLink.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(styles(Escape(s[last:m[0]])))
		url, text := s[m[4]:m[5]], s[m[2]:m[3]]
		b.WriteString("<" + strings.NewReplacer("|", "%7C", "<", "%3C", ">", "%3E").Replace(url) + "|" + styles(Escape(strings.ReplaceAll(text, "|", "¦"))) + ">")
		last = m[1]
	}
	b.WriteString(styles(Escape(s[last:])))
	return b.String()
}

func styles(s string) string {
	s = mdItalic.ReplaceAllString(s, "${1}_${2}_${3}")
	s = mdBold.ReplaceAllStringFunc(s, func(m string) string {
		sub := mdBold.FindStringSubmatch(m)
		return "*" + sub[1] + sub[2] + "*"
	})
	return mdStrike.ReplaceAllString(s, "~$1~")
}
