package playground

import (
	"html"
	"regexp"
	"strings"
)

// mrkdwn turns Slack mrkdwn into HTML, as a Slack client shows it: the
// three entities Slack escapes (&amp; &lt; &gt;) are decoded and the text is
// HTML-escaped again, so "&lt;b&gt;" shows as "<b>" and never as markup;
// *bold*, _italic_, ~strike~, `code`, ```pre```, "> " quotes, <url|links>,
// <@user>, <#channel>, <!here>, <!subteam^…>, <!date^…> and :emoji:
// shortcodes. Anything else stays text.
func mrkdwn(s string, names Names) string {
	var b strings.Builder
	// Code blocks first: nothing inside them is formatted.
	for s != "" {
		i := strings.Index(s, "```")
		if i < 0 {
			b.WriteString(mrkdwnLines(s, names))
			break
		}
		j := strings.Index(s[i+3:], "```")
		if j < 0 {
			b.WriteString(mrkdwnLines(s, names))
			break
		}
		b.WriteString(mrkdwnLines(s[:i], names))
		code := strings.Trim(s[i+3:i+3+j], "\n")
		b.WriteString(`<pre class="m-pre">` + escapeText(code) + `</pre>`)
		s = strings.TrimPrefix(s[i+3+j+3:], "\n")
	}
	return b.String()
}

// mrkdwnLines formats text outside code blocks line by line; consecutive
// quoted lines make one quote.
func mrkdwnLines(s string, names Names) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	lines := strings.Split(s, "\n")
	inQuote := false
	for i, line := range lines {
		rest, quoted := cutQuote(line)
		if quoted && !inQuote {
			b.WriteString(`<blockquote class="m-quote">`)
			inQuote = true
		} else if !quoted && inQuote {
			b.WriteString(`</blockquote>`)
			inQuote = false
		} else if i > 0 {
			b.WriteString("<br>")
		}
		b.WriteString(inline(rest, names))
	}
	if inQuote {
		b.WriteString(`</blockquote>`)
	}
	return b.String()
}

// cutQuote strips a quote marker: Slack quotes a line that starts with ">"
// (sent escaped as "&gt;").
func cutQuote(line string) (string, bool) {
	for _, p := range []string{"&gt; ", "&gt;", "> "} {
		if rest, ok := strings.CutPrefix(line, p); ok {
			return rest, true
		}
	}
	return line, false
}

// inline formats one line: inline code spans are cut out first, then the
// <…> tokens, then emphasis in what is left.
func inline(s string, names Names) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(tokens(s, names))
			break
		}
		j := strings.IndexByte(s[i+1:], '`')
		if j <= 0 {
			b.WriteString(tokens(s, names))
			break
		}
		b.WriteString(tokens(s[:i], names))
		b.WriteString(`<code class="m-code">` + escapeText(s[i+1:i+1+j]) + `</code>`)
		s = s[i+1+j+1:]
	}
	return b.String()
}

// tokens formats <…> tokens and the plain text between them.
func tokens(s string, names Names) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(emphasis(s))
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(emphasis(s))
			break
		}
		b.WriteString(emphasis(s[:i]))
		b.WriteString(token(s[i+1:i+j], names))
		s = s[i+j+1:]
	}
	return b.String()
}

// token renders the inside of one <…>.
func token(t string, names Names) string {
	body, label, hasLabel := strings.Cut(t, "|")
	switch {
	case strings.HasPrefix(body, "@"):
		id := body[1:]
		name := names.User(id)
		if hasLabel && label != "" {
			name = label
		}
		return `<span class="m-mention" data-user="` + html.EscapeString(id) + `">@` + escapeText(name) + `</span>`
	case strings.HasPrefix(body, "#"):
		id := body[1:]
		name := names.Channel(id)
		if hasLabel && label != "" {
			name = label
		}
		return `<span class="m-channel">#` + escapeText(name) + `</span>`
	case strings.HasPrefix(body, "!date^"):
		return dateToken(body, label)
	case strings.HasPrefix(body, "!subteam^"):
		name := strings.TrimPrefix(label, "@")
		if name == "" {
			name = strings.TrimPrefix(body, "!subteam^")
		}
		return `<span class="m-mention">@` + escapeText(name) + `</span>`
	case body == "!here" || body == "!channel" || body == "!everyone":
		return `<span class="m-mention m-broadcast">@` + body[1:] + `</span>`
	case strings.HasPrefix(body, "!"):
		return escapeText(label)
	case strings.Contains(body, "://") || strings.HasPrefix(body, "mailto:"):
		text := body
		if hasLabel {
			text = label
		}
		href := decodeEntities(body)
		if !safeURL(href) {
			return escapeText(text)
		}
		return `<a class="m-link" href="` + html.EscapeString(href) + `" target="_blank" rel="noopener">` + emphasis(text) + `</a>`
	}
	// Not a token Slack knows: the text as it was.
	return escapeText("<" + t + ">")
}

func safeURL(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "mailto:")
}

// dateToken renders <!date^unix^format^link|fallback> as a <time> the page
// formats in the viewer's own time zone (page.js); without JavaScript it
// shows the fallback, as Slack's clients do for a date they cannot format.
func dateToken(body, fallback string) string {
	parts := strings.SplitN(strings.TrimPrefix(body, "!date^"), "^", 3)
	ts := parts[0]
	format := ""
	if len(parts) > 1 {
		format = parts[1]
	}
	for _, c := range ts {
		if c < '0' || c > '9' {
			return escapeText(fallback)
		}
	}
	return `<time class="m-date" data-ts="` + ts + `" data-format="` + html.EscapeString(decodeEntities(format)) + `">` + escapeText(fallback) + `</time>`
}

// Emphasis markers open after a start, space or punctuation and close
// before an end, space or punctuation, as in Slack; the text between them
// does not start or end with a space.
var (
	boldRe   = regexp.MustCompile(`(^|[\s(\[{"'.,;:!?-])\*([^\s*](?:[^*]*[^\s*])?)\*($|[\s)\]}"'.,;:!?-])`)
	italicRe = regexp.MustCompile(`(^|[\s(\[{"'.,;:!?*~-])_([^\s_](?:[^_]*[^\s_])?)_($|[\s)\]}"'.,;:!?*~-])`)
	strikeRe = regexp.MustCompile(`(^|[\s(\[{"'.,;:!?*_-])~([^\s~](?:[^~]*[^\s~])?)~($|[\s)\]}"'.,;:!?*_-])`)
)

// emphasis escapes plain text and applies bold, italic, strike and emoji.
// It works on the escaped text: the markers are not touched by escaping.
func emphasis(s string) string {
	out := escapeText(s)
	out = replaceAll(boldRe, out, "<b>", "</b>")
	out = replaceAll(italicRe, out, "<i>", "</i>")
	out = replaceAll(strikeRe, out, "<s>", "</s>")
	return emoji(out)
}

// replaceAll applies a marker regexp until nothing changes (adjacent
// matches share their boundary character).
func replaceAll(re *regexp.Regexp, s, open, close string) string {
	for range 8 {
		next := re.ReplaceAllString(s, "${1}"+open+"${2}"+close+"${3}")
		if next == s {
			break
		}
		s = next
	}
	return s
}

// decodeEntities undoes Slack's escaping (the only three entities it uses).
func decodeEntities(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// escapeText shows Slack text literally: Slack's entities decoded, then
// escaped for HTML.
func escapeText(s string) string {
	return html.EscapeString(decodeEntities(s))
}

var emojiRe = regexp.MustCompile(`:([a-z0-9_+-]+):`)

// emojis are the shortcodes askslack uses and a few common ones; others
// stay as text (Slack would show a custom emoji or the text).
var emojis = map[string]string{
	"arrow_right": "➡️", "bell": "🔔", "clipboard": "📋", "hourglass": "⌛", "hourglass_flowing_sand": "⏳",
	"information_source": "ℹ️", "no_entry_sign": "🚫", "raising_hand": "🙋", "robot_face": "🤖",
	"rotating_light": "🚨", "speech_balloon": "💬", "stopwatch": "⏱️", "white_check_mark": "✅", "x": "❌",
	"zzz": "💤", "incoming_envelope": "📨", "warning": "⚠️", "lock": "🔒", "eyes": "👀", "tada": "🎉",
	"heavy_check_mark": "✔️", "thumbsup": "👍", "+1": "👍", "thumbsdown": "👎", "-1": "👎", "memo": "📝",
	"wave": "👋", "question": "❓", "exclamation": "❗", "pencil": "📝", "gear": "⚙️", "rocket": "🚀",
}

func emoji(s string) string {
	return emojiRe.ReplaceAllStringFunc(s, func(m string) string {
		if e, ok := emojis[m[1:len(m)-1]]; ok {
			return `<span class="m-emoji" title="` + m + `">` + e + `</span>`
		}
		return m
	})
}

// plain renders a plain_text object's text: literal, with emoji shortcodes
// when emoji is on.
func plain(s string, withEmoji bool) string {
	out := html.EscapeString(s)
	if withEmoji {
		out = emoji(out)
	}
	return strings.ReplaceAll(out, "\n", "<br>")
}
