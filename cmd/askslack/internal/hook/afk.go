package hook

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Claude Code's question timeout: how long its terminal question
// (AskUserQuestion) waits, idle, before Claude Code goes on with the
// answers selected so far ("No response after …, proceed using your best
// judgment"). It is the setting askUserQuestionTimeout — "60s", "5m",
// "10m" or "never"; unset, the terminal does not go on at all (Claude Code
// 2.1.332's settings schema) — and the variable CLAUDE_AFK_TIMEOUT_MS
// (milliseconds) overrides it.

// AFKTimeoutEnv is the variable that overrides the setting.
const AFKTimeoutEnv = "CLAUDE_AFK_TIMEOUT_MS"

// QuestionTimeout is Claude Code's question timeout given the value of
// CLAUDE_AFK_TIMEOUT_MS (env, "" when unset) and the settings files'
// contents, highest precedence first (a file that is missing or not JSON
// is nil or skipped). ok is false when Claude Code's question does not time
// out: the setting is "never", or set nowhere.
func QuestionTimeout(env string, settings ...[]byte) (d time.Duration, ok bool) {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(env), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	for _, b := range settings {
		var s struct {
			AskUserQuestionTimeout *string `json:"askUserQuestionTimeout"`
		}
		if len(b) == 0 || json.Unmarshal(b, &s) != nil || s.AskUserQuestionTimeout == nil {
			continue
		}
		switch v := strings.TrimSpace(*s.AskUserQuestionTimeout); v {
		case "never":
			return 0, false
		default:
			if d, err := time.ParseDuration(v); err == nil && d > 0 {
				return d, true
			}
			// A value Claude Code does not know it ignores (.catch): the
			// next file decides.
		}
	}
	return 0, false
}
