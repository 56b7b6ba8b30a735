package blocks

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// blockText counts the characters of every text object in bs, the way
// Slack's undocumented msg_blocks_too_long cap (and internal/blockcheck)
// counts them: button labels, option texts and placeholders included.
// Layouts are built generously first and measured, then rebuilt smaller
// until they fit.
func blockText(bs []slack.Block) int {
	b, err := json.Marshal(bs)
	if err != nil {
		return maxBlockText + 1
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return maxBlockText + 1
	}
	return textIn(v)
}

func textIn(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if t, _ := x["type"].(string); t == "plain_text" || t == "mrkdwn" {
			if s, ok := x["text"].(string); ok {
				return utf8.RuneCountInString(s)
			}
		}
		for _, e := range x {
			n += textIn(e)
		}
	case []any:
		for _, e := range x {
			n += textIn(e)
		}
	}
	return n
}

// fitsMessage reports whether a message's blocks are within Slack's block
// count and cumulative text caps.
func fitsMessage(bs []slack.Block) bool {
	return len(bs) <= maxMsgBlocks && blockText(bs) <= maxBlockText
}

// viewSize is the JSON size of a modal as views.open sends it.
func viewSize(m slack.ModalViewRequest) int {
	b, err := json.Marshal(m)
	if err != nil {
		return maxViewBytes + 1
	}
	return len(b)
}

// fitsView reports whether a modal is within Slack's block count and size.
func fitsView(m slack.ModalViewRequest) bool {
	return len(m.Blocks.BlockSet) <= maxModalBlocks && viewSize(m) <= maxViewBytes
}

// jsonSize is the size s takes as a JSON string.
func jsonSize(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}
