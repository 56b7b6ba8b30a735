package waterfall

import (
	"encoding/json"
)

// Result is what a (possibly timed) ask returns: the settlement, or
// {pending:true, callId} when the foreground window closed first.
type Result struct {
	Settlement *Settlement
	CallID     string
}

// Pending reports whether the window closed before an answer arrived.
func (r Result) Pending() bool { return r.Settlement == nil }

// MarshalJSON encodes the seed's TimedUserQuestionResult plus respondent.
func (r Result) MarshalJSON() ([]byte, error) {
	if r.Settlement == nil {
		return json.Marshal(struct {
			Pending bool   `json:"pending"`
			CallID  string `json:"callId"`
		}{true, r.CallID})
	}
	return json.Marshal(r.Settlement)
}

// Outcome is what answering an ask did.
type Outcome struct {
	// Record is the ask as the answer left it (or as it stood when the
	// answer was refused); nil when no ask was read.
	Record *Record
	// Settlement is the answer that stands: the caller's, or the one that
	// settled the ask first (with ALREADY_SETTLED).
	Settlement *Settlement
	// Queued is true when the answer came after the window closed and was
	// queued for the agent as a steered user message.
	Queued bool
	// Voted is true when the answer was recorded as a vote and the ask
	// waits for more (a quorum): nothing was settled or queued.
	Voted bool
}
