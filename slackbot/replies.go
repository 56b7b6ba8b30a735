package slackbot

import (
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Interaction results, as counted in metrics.
const (
	resultSettled   = "settled"
	resultQueued    = "queued"
	resultDuplicate = "duplicate"
	resultRefused   = "refused"
	resultInvalid   = "invalid"
	resultIgnored   = "ignored"
	resultRecorded  = "recorded"
	resultOpened    = "opened"
	resultError     = "error"
)

// What the person who clicked or submitted is told. Errors become text
// here and nowhere else in the dispatcher.
const (
	// tryAgain answers a click or submission that failed on our side (the
	// store unreachable): the question is still there.
	tryAgain          = "Sorry, your answer could not be recorded right now. Please try again in a moment."
	textGone          = "This question is no longer available; answers here are not delivered to the agent."
	textGoneModal     = "This question is no longer available."
	textWithdrawn     = "The agent withdrew this question; no answer is needed."
	textNothingPicked = "Nothing is selected yet. Choose an answer first, or use “Other…” to type one."
	textNoModal       = "Sorry, the form could not be opened in time. Please click again."
	textNotOffered    = "That choice is not one of the offered options."
	textNoFeedback    = "Say what should change, so the agent can revise the plan."
	textNoEdit        = "This ask's agent cannot run an edited call: allow or deny it as asked."
	textNoText        = "Type an answer, or close this window to go back."
	textNoAnswers     = "Answer at least one question, or close this window to go back."
)

// refusal explains a failed answer to the person who gave it, and returns
// the metrics result. resultError means the failure was ours (the store),
// which the caller logs.
func refusal(req *waterfall.Request, out waterfall.Outcome, err error) (msg, result string) {
	switch waterfall.CodeOf(err) {
	case waterfall.CodeAlreadySettled:
		return blocks.AlreadyAnswered(req, out.Settlement, false), resultDuplicate
	case waterfall.CodeReplyQueued:
		return blocks.AlreadyAnswered(req, out.Settlement, true), resultDuplicate
	case waterfall.CodeAskAborted:
		return textWithdrawn, resultDuplicate
	case waterfall.CodeBadAnswer:
		return "That answer doesn't fit the question: " + err.Error(), resultInvalid
	case waterfall.CodeForbidden:
		return forbiddenText(err), resultRefused // a vote the ask's policy does not count (quorum.go)
	}
	return tryAgain, resultError
}
