// Package waterfall is askslack's domain: the question/answer types of the
// seeds (JSON exactly as seed 000's TypeScript), their validation with the
// seed's error codes, the answerer chain, the typed ask record (Record and
// its Phase) that Slack, the HTTP API and the steering code all read, and
// the pure decisions over it (quorum, standing rules, settlement policy,
// the audit trail's summary). It links no store: package engine runs asks
// over one, and the Slack side reads this package alone.
package waterfall

import "time"

// Option is one selectable answer offered to the user (AskUserQuestionOption).
type Option struct {
	// Label is user-facing and is also the value the agent receives when chosen.
	Label string `json:"label"`
	// Description is optional extra context rendered by capable UIs.
	Description string `json:"description,omitempty"`
	// Preview is optional preview content (mockup, snippet) shown on request,
	// never crammed into the label (seed 004's option preview).
	Preview string `json:"preview,omitempty"`
}

// IntentPlanReview is the only presentation intent the seed defines.
const IntentPlanReview = "plan-review"

// Intent is a caller-declared presentation intent (AskUserQuestionIntent). It
// changes presentation only, never the answer encoding.
type Intent struct {
	Kind string `json:"kind"`
	// Approve names the option label that approves the plan; every other
	// option declines it.
	Approve string `json:"approve,omitempty"`
	// CallID is the logged tool invocation whose arguments hold the plan.
	CallID string `json:"callId,omitempty"`
}

// Question is one question of a request (AskUserQuestionItem).
type Question struct {
	ID          string   `json:"id"`
	Question    string   `json:"question"`
	Detail      string   `json:"detail,omitempty"`
	Header      string   `json:"header,omitempty"`
	Options     []Option `json:"options,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
	Intent      *Intent  `json:"intent,omitempty"`
}

// PermissionQuestionID is the id of the question a tool-permission ask
// (askslack hook's PermissionRequest) asks: it marks the ask's kind.
const PermissionQuestionID = "permission"

// Kinds of ask, for metrics and the audit trail.
const (
	KindQuestion   = "question"
	KindPlan       = "plan"
	KindPermission = "permission"
)

// Kind says what r asks: a plan review (any question with the plan-review
// intent), a tool permission (a question with PermissionQuestionID), or a
// question.
func (r *Request) Kind() string {
	kind := KindQuestion
	for i := range r.Questions {
		switch {
		case r.Questions[i].PlanReview():
			return KindPlan
		case r.Questions[i].ID == PermissionQuestionID:
			kind = KindPermission
		}
	}
	return kind
}

// PlanReview reports whether q is a plan submitted for review.
func (q *Question) PlanReview() bool {
	return q.Intent != nil && q.Intent.Kind == IntentPlanReview
}

// Approves reports whether it, the answer to q, approves the plan q submits
// for review: exactly the approve option and no typed text (feedback
// declines). It is false for a nil item and for a question that is not a
// plan review; every other answer to a plan review declines it.
func (q *Question) Approves(it *AnswerItem) bool {
	return q.PlanReview() && it != nil && len(it.Selected) == 1 &&
		it.Selected[0] == q.Intent.Approve && it.Custom == ""
}

// OptionIndex returns the index of the option labelled label, or -1.
func (q *Question) OptionIndex(label string) int {
	for i, o := range q.Options {
		if o.Label == label {
			return i
		}
	}
	return -1
}

// Agent identifies the asking agent. SessionID names the session whose queue
// receives late answers; Principal is the end user on whose behalf the agent
// runs (seed 004's attribution); OwnerID is set for an agent owned by another
// agent, which may not ask a human (DELEGATED_CALLER).
type Agent struct {
	ID           string `json:"id"`
	SessionID    string `json:"sessionId,omitempty"`
	OwnerID      string `json:"ownerId,omitempty"`
	Principal    string `json:"principal,omitempty"`
	SourceTaskID string `json:"sourceTaskId,omitempty"`
}

// Request is the body of POST /v1/asks: the seed's AskUserQuestionRequest
// keyed by the tool call it answers.
type Request struct {
	CallID    string     `json:"callId"`
	Agent     Agent      `json:"agent"`
	Questions []Question `json:"questions"`
	// TimeoutMs makes the ask timed (askTimed): when the window closes the
	// caller gets {pending:true} and the question turns continued. It is
	// untimed when absent. It is a float so that a non-integer wait can be
	// reported as BAD_TIMEOUT instead of failing JSON decoding.
	TimeoutMs *float64 `json:"timeoutMs,omitempty"`
	// OnTimeout says what the agent does when a timed window closes
	// unanswered, so that the message can say it: "" — it moves on, and a
	// late answer reaches it as a new message; OnTimeoutTerminal — it
	// withdraws the question and asks in its own terminal instead (askslack
	// hook). Like the wait, it is not part of what is asked: a re-attach
	// keeps the stored one.
	OnTimeout string `json:"onTimeout,omitempty"`
	// Channel overrides the default Slack channel for this ask.
	Channel string `json:"channel,omitempty"`
	// Workspace is the Slack workspace (team id) the ask belongs to when
	// one deployment serves several (package installs): set by the host
	// API from its caller's binding, so an agent never picks another's.
	// Its message, DMs and reminders go out with that workspace's token,
	// and only people of that workspace answer it. "" with one workspace.
	Workspace string `json:"workspace,omitempty"`
	// Permission says what a tool-permission ask is about, for standing
	// rules (permission.go); nil for every other ask.
	Permission *Permission `json:"permission,omitempty"`
	// Delivery overrides where the question goes (ASKSLACK_DELIVERY):
	// "channel", "dm" (a direct message to the principal) or "both" (the
	// channel, and a copy in the principal's DMs). "" is the default.
	Delivery string `json:"delivery,omitempty"`
	// Approvals raises how many distinct people must approve a plan or a
	// tool permission (ASKSLACK_QUORUM sets the floor; an ask never lowers
	// it); Approvers, when set, narrows who counts to these Slack user and
	// user group ids. See quorum.go.
	Approvals int      `json:"approvals,omitempty"`
	Approvers []string `json:"approvers,omitempty"`
	// Quorum is the number of approvals the ask needs, fixed by the Host
	// when it stores the ask (RequiredApprovals): whatever a caller sends
	// here is replaced, so every replica and renderer reads one count.
	Quorum int `json:"quorum,omitempty"`
	// Recall is what people answered last time to the questions of this
	// ask that were asked before (recall.go), filled by the Host when it
	// stores the ask: whatever a caller sends here is replaced, so no
	// agent can claim "last time alice chose Approve".
	Recall []Recall `json:"recall,omitempty"`
	// Caller is the name of the API caller that asked (its token's name),
	// set by the host API from the bearer token, never from the body: an
	// agent chooses its Agent.ID, not its Caller. "" for asks made inside
	// the process. Stored with the ask, not in the request JSON.
	Caller string `json:"-"`
}

// OnTimeoutTerminal is Request.OnTimeout of an agent that asks in its
// terminal when the window closes, withdrawing the question.
const OnTimeoutTerminal = "terminal"

// Deliveries a request may name.
const (
	DeliverChannel = "channel"
	DeliverDM      = "dm"
	DeliverBoth    = "both"
)

// Timeout returns the foreground wait of a timed ask, or 0.
func (r *Request) Timeout() time.Duration {
	if r.TimeoutMs == nil {
		return 0
	}
	return time.Duration(*r.TimeoutMs) * time.Millisecond
}

// AnswerItem is the answer to one question (AskUserQuestionAnswerItem).
type AnswerItem struct {
	ID string `json:"id"`
	// Selected holds offered option labels only, never typed text.
	Selected []string `json:"selected"`
	// Custom is free "Other" text; it may accompany selections only for a
	// multi-select question.
	Custom string `json:"custom,omitempty"`
	// Edited, on a tool permission's Allow, holds new values for fields of
	// the tool's input the ask lists as editable (Permission.Editable), by
	// name: the agent runs the call with them ("allowed with changes").
	Edited map[string]string `json:"edited,omitempty"`
}

// Answer is the human's answer batch (AskUserQuestionAnswer), one item per
// question of the call.
type Answer struct {
	Answers []AnswerItem `json:"answers"`
}

// Item returns the answer item for question id, or nil.
func (a *Answer) Item(id string) *AnswerItem {
	for i := range a.Answers {
		if a.Answers[i].ID == id {
			return &a.Answers[i]
		}
	}
	return nil
}

// Surfaces through which an answer can arrive.
const (
	SurfaceSlack = "slack"
	SurfaceAPI   = "api"
	// SurfaceWeb: the answer page, signed in with Slack. Its respondent is
	// a Slack user as much as a click's is (SlackUser).
	SurfaceWeb = "web"
)

// SlackUser is the Slack user id of a person who answered in Slack or on
// the answer page (signed in with Slack): one person whichever of the two
// they used. "" for an answer surface (an API caller) or a rule.
func (r Respondent) SlackUser() string {
	if r.Surface == SurfaceSlack || r.Surface == SurfaceWeb {
		return r.UserID
	}
	return ""
}

// Respondent says who answered, when and through which surface. It travels
// beside the seed's answers, never inside them.
type Respondent struct {
	UserID   string    `json:"userId,omitempty"`
	UserName string    `json:"userName,omitempty"`
	At       time.Time `json:"at"`
	Surface  string    `json:"surface"`
	// Claim is who an answer surface (an API caller with the answer role,
	// named in UserName) says gave the answer: shown with the surface's
	// name ("alice via console"), never instead of it, and never taken as
	// an identity (it is not checked against anything).
	Claim *Claimant `json:"claim,omitempty"`
	// Rule is the standing rule that answered (Surface SurfaceRule), with
	// UserName saying so in words ("rule 12 by alice, until 18:00 UTC").
	Rule *RuleRef `json:"rule,omitempty"`
	// Channel and MessageTS locate the Slack message that took the answer.
	Channel   string `json:"channel,omitempty"`
	MessageTS string `json:"messageTs,omitempty"`
}

// Claimant is the person an answer surface names as the one who answered.
type Claimant struct {
	UserID   string `json:"userId,omitempty"`
	UserName string `json:"userName,omitempty"`
}

// SessionKey is the store's session of an agent session: sessions belong to
// their caller, so two callers that use the same sessionId never share a
// queue of late answers, a cap or a Slack thread. A caller name holds no
// '/', which no sessionId holds either (ValidID), so keys cannot collide.
func SessionKey(caller, sessionID string) string {
	if caller == "" || sessionID == "" {
		return sessionID
	}
	return caller + "/" + sessionID
}

// Settlement is an answer together with who gave it.
type Settlement struct {
	Answer
	Respondent Respondent `json:"respondent"`
	// Approvers, on an ask that needed a quorum and got it, are everyone
	// who approved, in the order they did; Respondent is the last of them
	// (the one whose approval decided).
	Approvers []Respondent `json:"approvers,omitempty"`
}
