package playground

import (
	"encoding/json"
	"html"
	"strings"

	"github.com/askslack/askslack/internal/mdhtml"
)

// markdownBlock renders a markdown block: its text is standard Markdown,
// which Slack renders itself (headings, lists, tables, code), drawn here
// by mdhtml, whose HTML holds the text only escaped and no tag or
// attribute the text chose. A markdown block exists in messages only
// (blockcheck refuses one in a modal or Home tab before this runs).
func markdownBlock(raw json.RawMessage, where string) string {
	var m struct {
		BlockID string `json:"block_id"`
		Text    string `json:"text"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return unsupported("markdown block: " + err.Error())
	}
	if where != "message" {
		return unsupported("markdown block in a " + where)
	}
	return `<div class="b-markdown" data-block-id="` + html.EscapeString(m.BlockID) + `">` +
		string(mdhtml.Render(entities(m.Text))) + `</div>`
}

var entityEscapes = strings.NewReplacer("&lt;", `\<`, "&gt;", `\>`, "&amp;", `\&`)

// entities rewrites the character references &lt;, &gt; and &amp; outside
// code as backslash escapes. Markdown shows a reference outside code as its
// character (the bot writes each '<' of a plan's text as &lt;, so that
// Slack reads no mention or link in it) and in code as written; mdhtml
// decodes no reference, and shows a backslash escape as its character.
// Code is fenced blocks (``` or ~~~, closed by the same character at least
// as long) and code spans (backtick runs of the same length on one line).
func entities(md string) string {
	if !strings.Contains(md, "&") {
		return md
	}
	lines := strings.Split(md, "\n")
	open := "" // the open fence's marker
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if m := fenceMarker(t); m != "" {
			rest := t[len(m):]
			switch {
			case open == "" && !(m[0] == '`' && strings.Contains(rest, "`")):
				open = m
				continue
			case open != "" && m[0] == open[0] && len(m) >= len(open) && strings.TrimSpace(rest) == "":
				open = ""
				continue
			}
		}
		if open == "" {
			lines[i] = outsideSpans(l, entityEscapes.Replace)
		}
	}
	return strings.Join(lines, "\n")
}

// fenceMarker is the run of three or more backticks or tildes t starts
// with, or "".
func fenceMarker(t string) string {
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	k := 0
	for k < len(t) && t[k] == t[0] {
		k++
	}
	if k < 3 {
		return ""
	}
	return t[:k]
}

// outsideSpans applies f to the parts of line s outside its code spans. A
// backtick run that closes nothing on the line is text.
func outsideSpans(s string, f func(string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			break
		}
		k := i
		for k < len(s) && s[k] == '`' {
			k++
		}
		end := closingRun(s[k:], k-i)
		if end < 0 {
			b.WriteString(f(s[:k]))
			s = s[k:]
			continue
		}
		b.WriteString(f(s[:i]))
		b.WriteString(s[i : k+end+(k-i)])
		s = s[k+end+(k-i):]
	}
	b.WriteString(f(s))
	return b.String()
}

// closingRun is the index in s of the first run of exactly n backticks, or
// -1.
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
