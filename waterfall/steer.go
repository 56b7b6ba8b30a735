package waterfall

import (
	"strings"
	"time"
)

// Source names what a steered message answers.
type Source struct {
	Kind   string `json:"kind"` // always "user-question"
	CallID string `json:"callId"`
}

// SteeredMessage is a late answer delivered to the agent as a user message
// whose source names the call. Its answers and respondent decode as a
// Settlement, which is what the ask settles with once the agent admits it.
type SteeredMessage struct {
	ID         string       `json:"id"`
	CallID     string       `json:"callId"`
	Source     Source       `json:"source"`
	Answers    []AnswerItem `json:"answers"`
	Respondent Respondent   `json:"respondent"`
	// Approvers: everyone who approved an ask that needed a quorum
	// (Settlement.Approvers).
	Approvers []Respondent `json:"approvers,omitempty"`
	// Text renders the answer for the model, free text fenced as untrusted.
	Text string `json:"text"`
	// QueuedAt is when the late answer arrived.
	QueuedAt time.Time `json:"queuedAt"`
}

// Settlement returns the message as the answer batch it carries.
func (m *SteeredMessage) Settlement() Settlement {
	return Settlement{Answer: Answer{Answers: m.Answers}, Respondent: m.Respondent, Approvers: m.Approvers}
}

const replyPrefix = "reply:"

// MessageID is the id of the steered message answering callID.
func MessageID(callID string) string { return replyPrefix + callID }

// CallIDOf reverses MessageID: the ask a steered message is about, and
// whether messageID names one at all.
func CallIDOf(messageID string) (string, bool) { return strings.CutPrefix(messageID, replyPrefix) }

// PendingQuestion is one timed call that can still take an answer
// (PendingUserQuestion).
type PendingQuestion struct {
	CallID    string     `json:"callId"`
	Questions []Question `json:"questions"`
	State     string     `json:"state"`
}

// SettledQuestion is one timed call and the answers it settled with
// (SettledUserQuestion).
type SettledQuestion struct {
	CallID  string       `json:"callId"`
	Answers []AnswerItem `json:"answers"`
}

// Projection is both halves of a session's timed questions
// (UserQuestionProjectionView).
type Projection struct {
	Active  []PendingQuestion `json:"active"`
	Settled []SettledQuestion `json:"settled"`
}
