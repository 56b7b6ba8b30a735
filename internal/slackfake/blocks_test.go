package slackfake

import (
	"encoding/json"
	"testing"
)

// The bot's blocks are outside input to the fake: normalizing them and
// building state from them must not panic, and must keep valid JSON valid.
func FuzzNormalize(f *testing.F) {
	f.Add(`[{"type":"actions","elements":[{"type":"checkboxes","options":[{"text":{"type":"plain_text","text":"a"},"value":"a"}],"initial_options":[{"value":"a"}]}]}]`)
	f.Add(`[{"type":"section","accessory":{"type":"static_select","option_groups":[{"options":[1,{"value":2}]}],"initial_option":"x"}},{"type":"input","element":{"type":"multi_users_select","initial_users":7}}]`)
	f.Add(`[null,[],"x",{"type":"actions","elements":{"a":1}}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		out := normalizeRaw([]byte(raw))
		if out != nil && !json.Valid(out) {
			t.Fatalf("normalizeRaw(%q) = %q, not JSON", raw, out)
		}
		blocks := decodeBlocks(out)
		_ = marshal(stateValues(blocks, nil))
		for _, r := range elements(blocks) {
			if o := options(r.el); len(o) > 0 {
				_, _ = findOption(r.el, "x")
			}
		}
	})
}
