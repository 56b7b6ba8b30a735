package slackbot

import (
	"errors"
	"fmt"

	"github.com/askslack/askslack/waterfall"
)

// resultVoted: the answer was recorded as one vote of a quorum; the ask
// waits for more.
const resultVoted = "voted"

// votedText tells a voter their vote counted and what the ask waits for.
func votedText(out waterfall.Outcome) string {
	if out.Record == nil || out.Record.Request == nil {
		return "Your approval counts."
	}
	v := waterfall.VotesOf(out.Record)
	return fmt.Sprintf("Your approval counts: %d of %d. The agent gets its answer once %s.", len(v.Approved), v.Need, waitingFor(v))
}

// waitingFor says in words what a quorum waits for: "one more approves".
func waitingFor(v waterfall.Votes) string {
	if n := v.Missing(); n != 1 {
		return fmt.Sprintf("%d more approve", n)
	}
	return "one more approves"
}

// forbiddenText is what a refused voter is told: the policy's own words.
func forbiddenText(err error) string {
	var e *waterfall.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "You can't answer this question."
}
