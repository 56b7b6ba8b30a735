// Package asktype holds the record of an ask and its parts — its state,
// the message that shows it, its votes, the audit trail's entries, the
// standing rules — as the domain (package waterfall) owns them and the
// stores (package store, store/redisstore) persist them. It imports only
// the standard library, so the Slack side reads records and the stores
// keep them without either depending on the other (as river's rivertype).
package asktype

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// State is where an ask is in its lifecycle: open, then settled, continued
// (its window closed, a late answer still delivered) or aborted.
type State string

// The states of an ask.
const (
	Open      State = "open"      // waiting; the tool call may still return the answer
	Continued State = "continued" // the timed window closed; answers arrive as a new turn
	Settled   State = "settled"   // answered (and, if late, admitted by the agent)
	Aborted   State = "aborted"   // withdrawn by the harness
)

// Active reports whether the ask can still take an answer.
func (s State) Active() bool { return s == Open || s == Continued }

// MessageRef locates the chat message that shows an ask, on whichever
// surface shows it: the surface's name, the conversation (a Slack channel
// or DM), the message's id there (Slack's ts) and the thread it is a reply
// in. The JSON names are the ones records were first stored with (channel,
// ts), so records written before the surface-neutral names still read.
// Refused, with no ID, records that the surface refused to show the ask for
// good (its error string).
type MessageRef struct {
	// Surface names the surface that shows the message ("" is Slack, the
	// only one before surfaces were named).
	Surface      string `json:"surface,omitempty"`
	Conversation string `json:"channel"`
	ID           string `json:"ts"`
	Refused      string `json:"refused,omitempty"`
	// Thread is the ts of the thread the message is a reply in (the
	// session's thread, ASKSLACK_THREADS=session); "" for a top-level
	// message. Reminders go to this thread, or to the message's own.
	Thread string `json:"thread,omitempty"`
	// Copies are further messages showing the ask with the same controls
	// (delivery "both": the pointer in the principal's DMs). An answer in
	// any of them settles the ask; every update goes to each.
	Copies []MessageRef `json:"copies,omitempty"`
}

// Adopted is the FinishPost holder of a message recorded from a click
// before its post's reply: it fills an empty record only.
const Adopted = "adopted:click"

// Posted reports whether a message shows the ask.
func (r MessageRef) Posted() bool { return r.ID != "" }

// Shows reports whether the message with id in conversation is r's or
// one of its copies.
func (r MessageRef) Shows(conversation, id string) bool {
	if r.Conversation == conversation && r.ID == id {
		return true
	}
	for _, c := range r.Copies {
		if c.Conversation == conversation && c.ID == id {
			return true
		}
	}
	return false
}

// Keeping returns r with other, and other's copies, among its copies:
// a second message of the ask (posted twice, or known from a click the
// record did not know of), which every render must reach too — a message
// nothing renders keeps live controls on an ask that ended. ok=false when
// r shows all of them already. r's own message stays the one recorded.
func (r MessageRef) Keeping(other MessageRef) (kept MessageRef, ok bool) {
	kept = r
	kept.Copies = append([]MessageRef(nil), r.Copies...)
	keep := func(c MessageRef) {
		if c.ID != "" && !kept.Shows(c.Conversation, c.ID) {
			c.Copies = nil
			kept.Copies = append(kept.Copies, c)
			ok = true
		}
	}
	keep(other)
	for _, c := range other.Copies {
		keep(c)
	}
	return kept, ok
}

// AbortReason says why an ask was aborted; the message and the waiting
// caller tell them apart.
type AbortReason string

// The reasons an ask ends aborted.
const (
	Withdrawn AbortReason = "withdrawn" // the harness withdrew it (DELETE)
	Abandoned AbortReason = "abandoned" // its blocking caller went away and did not re-attach in time
	NoMessage AbortReason = "refused"   // Slack refused to show it for good (NO_PROVIDER)
	// Elsewhere: the agent's own prompt (its terminal) was answered
	// first, and the harness withdrew the question for that reason.
	Elsewhere AbortReason = "elsewhere"
	// Uninstalled: the app was uninstalled from the ask's workspace (or
	// its bot token revoked), so no one there can answer it.
	Uninstalled AbortReason = "uninstalled"
)

// Ask is the stored record of one call. Request, Settlement and Reply are
// opaque JSON owned by the waterfall package. An Ask a store returns is the
// caller's to change, but its byte slices (Request, Settlement, Reply) and
// Message.Copies may be shared with the store and other readers: replace
// them, never write into them.
type Ask struct {
	CallID    string
	SessionID string
	// Caller is the name of the API caller that created the ask ("" for
	// asks made inside the process): the ask belongs to it.
	Caller string
	// Kind is what is asked (waterfall: question, plan or permission), and
	// AgentID and AgentSession are the asking agent's id and its own
	// session id: they label metrics and the audit trail.
	Kind, AgentID, AgentSession string
	Request                     json.RawMessage
	State                       State
	Seq                         int64     // creation order across the store
	Created                     time.Time // when the ask was first stored
	Deadline                    time.Time // zero for an untimed ask
	// Version increases with every transition and message change; renderers
	// record the version they last showed (Rendered) to find stale messages.
	Version  int64
	Rendered int64
	// Settlement is the answer that settled the ask (the in-window answer, or
	// the admitted late reply); SettledAt orders the projection's settled half.
	Settlement json.RawMessage
	SettledAt  time.Time
	// Reply is a late answer queued for the agent, waiting for admission.
	Reply   json.RawMessage
	ReplyAt time.Time
	// Votes are the votes recorded on the ask, oldest first (Votes.Vote):
	// shared with the store and other readers like the byte slices.
	Votes []Vote
	// AbortedAt is when the ask was aborted, and AbortReason why.
	AbortedAt   time.Time
	AbortReason AbortReason
	// PostAttempt is when a message for the ask was first attempted: a post
	// whose outcome is unknown (a lost response, a crash) may have reached
	// Slack, so the next poster looks for it before posting again.
	PostAttempt time.Time
	Message     MessageRef
	// Poster, given to Create, names the replica about to post the new
	// ask's message: Create then takes the post lease for Poster.Holder
	// until Poster.Until and records the post attempt in the same round
	// trip, which is what that replica's BeginPost would do next, and
	// returns the ask as it was before the attempt, Poster kept, so the
	// poster goes straight to posting. Records read back never carry it
	// (the lease is not part of the ask), nor does a Create that found the
	// call id taken; BeginPost's ErrHeld names the lease that holds it.
	Poster PostLease
}

// PostLease is a holder's claim to post an ask's message, until a time.
type PostLease struct {
	Holder string
	Until  time.Time
}

// Bucket names a token bucket of Budget that refills PerMinute tokens a
// minute up to Burst.
type Bucket struct {
	Name      string
	PerMinute int
	Burst     int
}

// Vote is one recorded vote of an ask, oldest first in Ask.Votes.
type Vote struct {
	Voter string          `json:"voter"`
	Vote  json.RawMessage `json:"vote"`
	At    time.Time       `json:"at"`
}

// RecentAsk is what a permission ask was about, for the rule form's
// preview.
type RecentAsk struct {
	CallID  string    `json:"callId"`
	At      time.Time `json:"at"`
	Tool    string    `json:"tool"`
	Command string    `json:"command,omitempty"`
	Path    string    `json:"path,omitempty"`
	Repo    string    `json:"repo,omitempty"`
	Caller  string    `json:"caller,omitempty"`
}

// Rule is a standing rule as stored. Effect, Tool, Command, Path, Repo and
// Caller are package rules' Rule; the rest says who granted it, when, until
// when, and how it has been used.
type Rule struct {
	ID      int64  `json:"id"`
	Effect  string `json:"effect"`
	Tool    string `json:"tool"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	Repo    string `json:"repo,omitempty"`
	Caller  string `json:"caller,omitempty"`
	// GrantedBy is the Slack user id of the person who granted it, and
	// GrantedByName their name as shown; Admin says they granted it as a
	// rule admin (ASKSLACK_RULE_ADMINS).
	GrantedBy     string `json:"grantedBy"`
	GrantedByName string `json:"grantedByName,omitempty"`
	Admin         bool   `json:"admin,omitempty"`
	// FromCall is the ask it was granted from.
	FromCall string    `json:"fromCall,omitempty"`
	Granted  time.Time `json:"granted"`
	// Until is when it ends; zero lasts until revoked.
	Until time.Time `json:"until,omitempty"`
	// Uses counts the asks it answered; LastUsed is the latest.
	Uses     int64     `json:"uses"`
	LastUsed time.Time `json:"lastUsed,omitempty"`
}

// Live reports whether r answers asks at now.
func (r *Rule) Live(now time.Time) bool { return r.Until.IsZero() || now.Before(r.Until) }

// AuditAgent is the agent an entry is about.
type AuditAgent struct {
	ID        string `json:"id,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// AuditRespondent is the person (or answer surface) an entry is about: who
// answered, or whose click was refused.
type AuditRespondent struct {
	UserID   string `json:"userId,omitempty"`
	UserName string `json:"userName,omitempty"`
	Surface  string `json:"surface,omitempty"`
}

// AuditEntry is one event of the trail. Seq numbers the chain from 1 with
// no gaps; At is when the event happened (milliseconds, UTC); Prev is the
// Hash of the entry before it ("" for the first entry ever); Hash is
// HashOf(the entry).
type AuditEntry struct {
	Seq        int64            `json:"seq"`
	At         time.Time        `json:"at"`
	CallID     string           `json:"callId,omitempty"`
	Event      string           `json:"event"`
	Caller     string           `json:"caller,omitempty"`
	Agent      *AuditAgent      `json:"agent,omitempty"`
	Respondent *AuditRespondent `json:"respondent,omitempty"`
	Detail     string           `json:"detail,omitempty"`
	Prev       string           `json:"prev"`
	Hash       string           `json:"hash"`
}

// canonicalEntry is AuditEntry without its hash, in the same field order.
type canonicalEntry struct {
	Seq        int64            `json:"seq"`
	At         time.Time        `json:"at"`
	CallID     string           `json:"callId,omitempty"`
	Event      string           `json:"event"`
	Caller     string           `json:"caller,omitempty"`
	Agent      *AuditAgent      `json:"agent,omitempty"`
	Respondent *AuditRespondent `json:"respondent,omitempty"`
	Detail     string           `json:"detail,omitempty"`
	Prev       string           `json:"prev"`
}

// Canonical is the JSON the entry's hash covers: the entry as the API shows
// it (keys in the order above, empty ones left out, at in UTC RFC 3339),
// without "hash", compact, with <, > and & not escaped.
func (e *AuditEntry) Canonical() []byte {
	c := canonicalEntry{Seq: e.Seq, At: e.At.UTC(), CallID: e.CallID, Event: e.Event, Caller: e.Caller,
		Agent: e.Agent, Respondent: e.Respondent, Detail: e.Detail, Prev: e.Prev}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(c) // strings, numbers and a time: cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// HashOf is the hash an entry must carry: hex SHA-256 of its Canonical JSON.
func HashOf(e *AuditEntry) string {
	sum := sha256.Sum256(e.Canonical())
	return hex.EncodeToString(sum[:])
}

// NeedsMessageWork reports whether a message behind its ask can be brought
// up to date: it exists, or it should (active, not refused), or it may exist
// (an attempt whose outcome is unknown).
func (a *Ask) NeedsMessageWork() bool {
	switch {
	case a.Message.Posted():
		return true
	case a.Message.Refused != "":
		return false
	}
	return a.State.Active() || !a.PostAttempt.IsZero()
}

// Audit event kinds. Later features add their own (rule, vote).
const (
	EventAsked     = "asked"     // an ask was stored (Detail: its kind, and its window when timed)
	EventPosted    = "posted"    // its message was posted (Detail: channel and ts)
	EventAnswered  = "answered"  // answered inside its window (Respondent: who)
	EventRefused   = "refused"   // a click or API call was refused, or Slack refused to show the question (Detail: why)
	EventQueued    = "queued"    // a late answer was queued for the agent (Respondent: who)
	EventDelivered = "delivered" // the agent admitted the late answer
	EventWithdrawn = "withdrawn" // the ask was withdrawn (Detail: by whom, or why)
	EventAbandoned = "abandoned" // its blocking caller went away for good
	EventContinued = "continued" // its timed window closed without an answer in it
)

// Audit events of rules. A rule's answer to an ask is that ask's
// "answered" entry, its respondent's surface "rule".
const (
	EventRuleGranted = "rule-granted" // Respondent: who granted it; Detail: the rule
	EventRuleRevoked = "rule-revoked" // Respondent: who revoked it; Detail: the rule
)

// EventVoted is the audit event of a vote that leaves the ask waiting for
// more (Respondent: who voted; Detail: the count).
const EventVoted = "voted"

// AuditQuery selects entries of the trail, oldest first.
type AuditQuery struct {
	// Since keeps entries at or after it (zero: from the oldest kept).
	Since time.Time
	// CallID keeps the entries of one ask ("" all).
	CallID string
	// Limit caps the entries returned (0: the store's default page,
	// store.DefaultAuditLimit; at most store.MaxAuditLimit).
	Limit int
	// Cursor continues after the page that returned it ("" from the start).
	Cursor string
}
