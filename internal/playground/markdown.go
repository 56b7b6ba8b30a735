package playground

import (
	"encoding/json"
	"html"

	"github.com/askslack/askslack/internal/mdhtml"
)

// markdownBlock renders a markdown block: its text is standard Markdown,
// which Slack renders itself (headings, lists, tables, code), drawn here
// by mdhtml, the answer page's renderer, whose HTML holds the text only
// escaped and no tag or attribute the text chose. The character references
// the bot writes outside code (each '<' of a plan as &lt;, so that Slack
// reads no mention or link in it) show as their characters, in code as
// written, as CommonMark says. A markdown block exists in messages only
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
		string(mdhtml.Render(m.Text)) + `</div>`
}
