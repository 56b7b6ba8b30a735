// Package webhook sends signed webhooks (ASKSLACK_WEBHOOKS): what happens
// to asks and standing rules, POSTed as JSON to the endpoints an operator
// configured, each request signed the Standard Webhooks way (Sign, Verify).
//
// The events come from the audit trail (store.Audit), which every
// transition of every ask appends to atomically, on every replica, and
// which is kept for ASKSLACK_AUDIT_RETENTION: the trail is the durable
// outbox. Each endpoint has a cursor into it (a position, store.AuditTail)
// kept in the store; the one replica holding the endpoint's lease reads on
// from the cursor, turns the entries webhooks carry into events (TypeOf),
// delivers them in order, and moves the cursor past each one delivered.
// Several replicas run a Dispatcher; only the holder delivers, and a dead
// holder's lease lapses so another takes over from the stored cursor. So
// delivery is at least once: an event delivered by a holder that died
// before it stored the cursor is delivered again, with the same id.
//
// The event at an endpoint's head is retried, with exponential backoff and
// full jitter, until it is answered 2xx or it has failed for MaxAge (24h);
// then it goes to the endpoint's dead-letter list (store.Lists) and the
// cursor moves on. Redeliver moves dead letters to a redelivery list the
// holder sends before the trail. See docs/webhooks.md.
package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
	"unicode/utf8"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
)

// The event types a webhook carries.
const (
	AskCreated   = "ask.created"   // an ask was stored (its question is on its way to Slack)
	AskAnswered  = "ask.answered"  // answered: in its window, or late ("late": true) for the agent to pick up
	AskContinued = "ask.continued" // its timed window closed without an answer; later answers still count
	AskWithdrawn = "ask.withdrawn" // withdrawn, abandoned by its caller, or never shown ("reason")
	RuleGranted  = "rule.granted"  // a standing rule was granted
	RuleRevoked  = "rule.revoked"  // a standing rule was revoked
	// Personal agent tokens (askslack login): connected, revoked, and a
	// revoked or expired one presented.
	AgentConnected = "agent.connected"
	AgentRevoked   = "agent.revoked"
	AgentRefused   = "agent.refused"
)

// Types are every event type, in the order the docs list them.
var Types = []string{AskCreated, AskAnswered, AskContinued, AskWithdrawn, RuleGranted, RuleRevoked, AgentConnected, AgentRevoked, AgentRefused}

// TypeOf is the event an audit entry's event becomes: late for an answer
// given after the window and queued for the agent; ok false for audit
// events no webhook carries (posted, refused, voted, delivered, …).
func TypeOf(auditEvent string) (typ string, late, ok bool) {
	switch auditEvent {
	case asktype.EventAsked:
		return AskCreated, false, true
	case asktype.EventAnswered:
		return AskAnswered, false, true
	case asktype.EventQueued:
		return AskAnswered, true, true
	case asktype.EventContinued:
		return AskContinued, false, true
	case asktype.EventWithdrawn, asktype.EventAbandoned:
		return AskWithdrawn, false, true
	case asktype.EventRuleGranted:
		return RuleGranted, false, true
	case asktype.EventRuleRevoked:
		return RuleRevoked, false, true
	case asktype.EventAgentConnected:
		return AgentConnected, false, true
	case asktype.EventAgentRevoked:
		return AgentRevoked, false, true
	case asktype.EventAgentRefused:
		return AgentRefused, false, true
	}
	return "", false, false
}

// Body is the JSON a delivery carries. Fields are only ever added; empty
// ones are left out. docs/webhooks.md shows an example.
type Body struct {
	// ID is the delivery id: the same for every attempt and redelivery of
	// this event to this endpoint (DeliveryID). Dedupe on it.
	ID   string `json:"id"`
	Type string `json:"type"`
	// CreatedAt is when the event happened (not when it was sent).
	CreatedAt time.Time `json:"createdAt"`
	// Seq is the event's entry in the audit trail (askslack audit).
	Seq        int64       `json:"seq"`
	CallID     string      `json:"callId,omitempty"`
	Caller     string      `json:"caller,omitempty"`
	Agent      *Agent      `json:"agent,omitempty"`
	Respondent *Respondent `json:"respondent,omitempty"`
	// Detail is the audit entry's detail in words: the ask's kind and
	// window, on whose behalf an answer was given, why an ask was
	// withdrawn, the rule granted or revoked. A command or path in it (an
	// edited allow's diff, a rule's pattern) is named by its SHA-256
	// instead (redact.go).
	Detail string `json:"detail,omitempty"`
	// Late marks an ask.answered given after the ask's window closed.
	Late bool `json:"late,omitempty"`
	// Reason says why an ask.withdrawn ended: withdrawn (by its caller or
	// an operator), abandoned (its blocking caller went away), refused
	// (no surface could show it), elsewhere (answered in the agent's own
	// terminal), revoked (the personal agent token that asked was
	// revoked).
	Reason string `json:"reason,omitempty"`
	// Ask is what was asked (and, on ask.answered, the answer), while the
	// ask's record is still kept (ASKSLACK_RETENTION).
	Ask *Ask `json:"ask,omitempty"`
}

// Agent is the agent an event is about.
type Agent struct {
	ID        string `json:"id,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// Respondent is who answered, granted or revoked.
type Respondent struct {
	UserID   string `json:"userId,omitempty"`
	UserName string `json:"userName,omitempty"`
	Surface  string `json:"surface,omitempty"`
}

// Ask is what an event's ask asked.
type Ask struct {
	// Kind is question, plan or permission.
	Kind string `json:"kind"`
	// Workspace is the Slack workspace (team id) the ask belongs to when
	// one deployment serves several; absent with one.
	Workspace string     `json:"workspace,omitempty"`
	Questions []Question `json:"questions"`
	// Answers are the answer's items, one per question (ask.answered).
	Answers []Answer `json:"answers,omitempty"`
}

// Question is one question, its text cut to maxText characters.
type Question struct {
	ID          string   `json:"id"`
	Header      string   `json:"header,omitempty"`
	Question    string   `json:"question"`
	Options     []string `json:"options,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
}

// Answer is the answer to one question: the option labels chosen, and
// free text ("Other").
type Answer struct {
	ID       string   `json:"id"`
	Selected []string `json:"selected"`
	Custom   string   `json:"custom,omitempty"`
	// Edited names the fields a tool permission allowed with changes
	// (Edit & allow) changed, each with its new value's SHA-256
	// ("sha256:HEX"), never the value: it is tool input.
	Edited map[string]string `json:"edited,omitempty"`
}

// maxText bounds a question's text in a body (a plan may be long; the ask
// page has it whole).
const maxText = 4000

// DeliveryID is the id of the event of audit entry e at the endpoint named
// endpoint: derived from the entry's hash, so every replica, every retry
// and every redelivery computes the same one, and two endpoints get
// different ones.
func DeliveryID(endpoint string, e *asktype.AuditEntry) string {
	sum := sha256.Sum256([]byte(endpoint + "\x00" + e.Hash))
	return "wh_" + hex.EncodeToString(sum[:16])
}

// BodyOf is the body of entry e's event at endpoint; a is e's ask when the
// store still keeps it (nil otherwise, and for rule events).
func BodyOf(endpoint string, e *asktype.AuditEntry, a *asktype.Ask) (Body, bool) {
	typ, late, ok := TypeOf(e.Event)
	if !ok {
		return Body{}, false
	}
	b := Body{ID: DeliveryID(endpoint, e), Type: typ, CreatedAt: e.At.UTC(), Seq: e.Seq, CallID: e.CallID, Caller: e.Caller,
		Detail: publicDetail(typ, e.Detail), Late: late}
	if e.Agent != nil {
		b.Agent = &Agent{ID: e.Agent.ID, SessionID: e.Agent.SessionID}
	}
	if r := e.Respondent; r != nil {
		b.Respondent = &Respondent{UserID: r.UserID, UserName: r.UserName, Surface: r.Surface}
	}
	if typ == AskWithdrawn {
		b.Reason = string(asktype.Withdrawn)
		switch {
		case e.Event == asktype.EventAbandoned:
			b.Reason = string(asktype.Abandoned)
		case a != nil && a.State == asktype.Aborted && a.AbortReason != "":
			b.Reason = string(a.AbortReason)
		}
	}
	if a != nil && typ != RuleGranted && typ != RuleRevoked {
		b.Ask = askOf(a, typ == AskAnswered)
	}
	return b, true
}

// askOf is what a asked, and its answer when answered: the settlement, or
// the late answer still waiting for the agent.
func askOf(a *asktype.Ask, answered bool) *Ask {
	req, err := waterfall.DecodeRequest(a)
	if err != nil {
		return nil
	}
	out := &Ask{Kind: req.Kind(), Workspace: req.Workspace, Questions: make([]Question, 0, len(req.Questions))}
	for _, q := range req.Questions {
		x := Question{ID: q.ID, Header: q.Header, Question: cut(q.Question, maxText), MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			x.Options = append(x.Options, o.Label)
		}
		out.Questions = append(out.Questions, x)
	}
	if !answered {
		return out
	}
	var items []waterfall.AnswerItem
	if r, err := waterfall.Decode(a); err == nil {
		if s := r.Answered(); s != nil {
			items = s.Answers
		}
	}
	for _, it := range items {
		out.Answers = append(out.Answers, Answer{ID: it.ID, Selected: append([]string{}, it.Selected...), Custom: it.Custom, Edited: hashedEdits(it.Edited)})
	}
	return out
}

// Marshal is b's JSON as sent: compact, <, > and & as they are.
func (b *Body) Marshal() []byte { return marshal(b) }

// cut shortens s to at most n characters, ending it with "…" when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
