package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// A webhook goes to a system outside the bot (a ticket system, a data
// warehouse) that holds no token and has no say in who answers: it carries
// no tool input. The audit trail, read by operators only, names a command
// or a path in full in three places, and the body names each by its
// SHA-256 instead (receivers compare it with a value they hold; anyone
// with an operator's token reads the text in the trail):
//
//   - an edited allow's detail (waterfall.EditDetail): "allowed with
//     changes", then per field "NAME (new value sha256:HEX):" and the
//     line diff of the old and the new value. The body keeps the field
//     names and hashes and drops the diff;
//   - a standing rule's pattern (waterfall.RuleDetail: "rule N: EFFECT
//     TOOL(PATTERN)…"), often the command an ask asked exactly
//     (rules.Suggest keeps a command with shell syntax whole);
//   - the rule that answered an ask (store.AuditRespondentOf: "by standing
//     rule N: EFFECT TOOL(PATTERN), granted by …").
//
// And Answer.Edited carries "sha256:HEX" per field, not the new value.

// editHeader is EditDetail's line naming one edited field. A diff line
// never matches it: each starts with "- ", "+ " or two spaces, and a
// field's name is letters, digits and _ only (waterfall.validateEditable).
var editHeader = regexp.MustCompile(`^[A-Za-z0-9_]{1,64} \(new value sha256:[0-9a-f]{64}\):$`)

// editMark starts EditDetail's account.
const editMark = "allowed with changes"

// redactEdits is detail with an edited allow's diffs dropped: what comes
// before "allowed with changes" (on whose behalf, who approved), the
// phrase, and the lines naming each field and its new value's hash.
// Anything else after the phrase is dropped, so an account in a shape this
// does not know loses its text rather than sends it.
func redactEdits(detail string) string {
	i := strings.Index(detail, editMark)
	if i < 0 {
		return detail
	}
	var b strings.Builder
	b.WriteString(detail[:i+len(editMark)])
	for _, l := range strings.Split(detail[i+len(editMark):], "\n") {
		if editHeader.MatchString(l) {
			b.WriteString("\n")
			b.WriteString(l)
		}
	}
	return b.String()
}

// ruleDetail is RuleDetail's "rule N: EFFECT TOOL(PATTERN)" and what
// follows (in repo, for caller, until). The pattern runs to the last ")":
// a repository or caller holding a ")" is then hashed with it, never the
// other way round.
var ruleDetail = regexp.MustCompile(`^(rule \d+: (?:allow|deny) [A-Za-z0-9_.:-]+)\((.*)\)([^)]*)$`)

// answeredByRule is AuditRespondentOf's "by standing rule N: EFFECT
// TOOL(PATTERN), granted by WHO (ID)", in whatever the detail holds.
var answeredByRule = regexp.MustCompile(`by standing rule \d+: (?:allow|deny) [A-Za-z0-9_.:-]+\(`)

// redactRule is a rule-granted or rule-revoked entry's detail with the
// rule's pattern named by its hash; a detail of another shape is dropped.
func redactRule(detail string) string {
	if !strings.Contains(detail, "(") {
		return detail // a rule on a tool, no pattern
	}
	m := ruleDetail.FindStringSubmatch(detail)
	if m == nil {
		return ""
	}
	return m[1] + "(" + hashed(m[2]) + ")" + m[3]
}

// redactRuleAnswer is an answered entry's detail with the pattern of the
// rule that answered named by its hash: the text up to the rule, the
// rule's tool, the hash, and who granted it (after the last ", granted
// by "). A pattern that cannot be told apart from the rest is hashed with
// everything after it.
func redactRuleAnswer(detail string) string {
	loc := answeredByRule.FindStringIndex(detail)
	if loc == nil {
		return detail
	}
	head, rest := detail[:loc[1]], detail[loc[1]:]
	j := strings.LastIndex(rest, "), granted by ")
	if j < 0 {
		return head + hashed(rest) + ")"
	}
	return head + hashed(rest[:j]) + rest[j:]
}

// hashed names s by its SHA-256.
func hashed(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// publicDetail is what a webhook body says of audit entry detail of an
// entry whose webhook type is typ.
func publicDetail(typ, detail string) string {
	switch typ {
	case AskAnswered:
		return redactRuleAnswer(redactEdits(detail))
	case RuleGranted, RuleRevoked:
		return redactRule(detail)
	}
	return detail
}

// hashedEdits is an answer's edited values, each named by its hash.
func hashedEdits(edited map[string]string) map[string]string {
	if len(edited) == 0 {
		return nil
	}
	out := make(map[string]string, len(edited))
	for k, v := range edited {
		out[k] = hashed(v)
	}
	return out
}
