package blocks

import "encoding/json"

// BuilderJSON encodes v (a message's blocks, a modal) as indented JSON the
// way a person reads it and Block Kit Builder takes it — for `askslack
// render` and the golden files, never for Slack's API: slack-go marshals '<',
// '>' and '&' as \u003c, \u003e and \u0026, which are turned back into the
// characters (both forms are the same JSON string).
func BuilderJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return unescapeHTML(b), nil
}

// unescapeHTML replaces \u003c, \u003e and \u0026 that are escapes, not
// an escaped backslash followed by "u003c".
func unescapeHTML(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		if i+5 < len(b) && b[i+1] == 'u' && b[i+2] == '0' && b[i+3] == '0' {
			switch string(b[i+4 : i+6]) {
			case "3c":
				out, i = append(out, '<'), i+5
				continue
			case "3e":
				out, i = append(out, '>'), i+5
				continue
			case "26":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		// Any other escape: copy it whole, so "\\u003c" stays as it is.
		out = append(out, b[i], b[i+1])
		i++
	}
	return out
}
