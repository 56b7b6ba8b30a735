package hook

import "github.com/askslack/askslack/waterfall"

// approvedBy is the reason an allow carries when the ask needed several
// approvals (ASKSLACK_QUORUM, "approvals"): everyone who approved, so the
// agent and its transcript say who let it through. "" otherwise, which
// leaves the decision as it always was.
func approvedBy(s waterfall.Settlement) string {
	if names := waterfall.ApproverNames(&s); names != "" {
		return "Approved in Slack by " + names + "."
	}
	return ""
}
