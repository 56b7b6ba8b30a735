package hook

import (
	"testing"

	"github.com/askslack/askslack/waterfall"
)

// approvedByTwo is an answer that got a quorum of two: ann decided, after bob.
func approvedByTwo(it waterfall.AnswerItem) waterfall.Settlement {
	s := answer(it)
	s.Approvers = []waterfall.Respondent{{UserID: "U0BOB", UserName: "bob", Surface: waterfall.SurfaceSlack}, s.Respondent}
	return s
}

// An allow that needed a quorum names every approver in the reason, for
// Claude and Codex alike; a decline names the decliner as ever.
func TestQuorumDecisionsNameTheApprovers(t *testing.T) {
	plan := build(t, Claude, "claude_permission_exitplanmode.json")
	sameJSON(t, decide(t, plan, approvedByTwo(waterfall.AnswerItem{ID: "plan", Selected: []string{"Approve"}})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
		  "updatedInput":{"plan":"## Refactor auth\n1. Extract ...","planFilePath":"/home/u/.claude/plans/refactor-auth.md"},
		  "message":"Approved in Slack by bob and ann."}}}`)
	claude := build(t, Claude, "claude_permission_bash.json")
	sameJSON(t, decide(t, claude, approvedByTwo(waterfall.AnswerItem{ID: "permission", Selected: []string{"Allow"}})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"Approved in Slack by bob and ann."}}}`)
	codex := build(t, Codex, "codex_permission.json")
	sameJSON(t, decide(t, codex, approvedByTwo(waterfall.AnswerItem{ID: "permission", Selected: []string{"Allow"}})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"Approved in Slack by bob and ann."}}}`)
	sameJSON(t, decide(t, codex, answer(waterfall.AnswerItem{ID: "permission", Selected: []string{"Deny"}})),
		`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied in Slack by ann."}}}`)
}
