package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
)

// The audit trail: every step of every ask, appended to one hash chain.
//
// Each transition of an ask records its audit event inside the same atomic
// step (the Lua script in Redis, the critical section in memory), so no step
// escapes the trail; events that change no ask (a refused click or API call)
// are appended through Audit.Append. Entries are chained: each one's Hash is
// the hex SHA-256 of its canonical JSON (Canonical), which includes Prev, the
// hash of the entry before it. Editing an entry breaks its own hash; deleting
// one breaks the next entry's Prev and leaves a gap in Seq. The chain shows
// tampering; it does not stop someone who can write the store from rewriting
// the whole chain, so ship the trail elsewhere (askslack audit) to anchor it.

// Link makes e the entry after the one whose seq and hash are given (0 and
// "" for the first entry): it sets Seq, Prev and Hash, and normalises At to
// UTC milliseconds as the stores keep it.
func Link(e *asktype.AuditEntry, prevSeq int64, prevHash string) {
	e.At = FromMillis(Millis(e.At)).UTC()
	e.Seq, e.Prev = prevSeq+1, prevHash
	e.Hash = asktype.HashOf(e)
}

// ErrBadCursor refuses a cursor no Audit page returned.
var ErrBadCursor = errors.New("store: not an audit cursor")

// Page sizes of Audit.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// DefaultAuditRetention is how long the audit trail is kept
// (ASKSLACK_AUDIT_RETENTION).
const DefaultAuditRetention = 2160 * time.Hour

// Audit is the store's audit trail (see the comment at the top of this
// file). Both stores keep one chain: Memory in a bounded ring under its
// lock, Redis in one stream every replica appends to through a chainer.
type Audit interface {
	// Append records an event that changes no ask (a refused click or API
	// call). Seq, Prev and Hash are the store's to set. Once Append
	// returns, the event is in the trail or on its way (it is kept until
	// a chainer appends it).
	Append(ctx context.Context, e asktype.AuditEntry) error
	// Audit returns up to q.Limit entries matching q, oldest first, and the
	// cursor of the next page ("" when there is no more right now). A page
	// may hold fewer entries than the limit and still have a next (a
	// callId filter scans a bounded stretch per page). Events of
	// transitions that have returned are in the trail moments later; a
	// first page (no cursor) first appends whatever is waiting.
	Audit(ctx context.Context, q asktype.AuditQuery) (entries []asktype.AuditEntry, next string, err error)
}

// PageSize returns q's limit, defaulted and capped.
func PageSize(q asktype.AuditQuery) int {
	switch {
	case q.Limit <= 0:
		return DefaultAuditLimit
	case q.Limit > MaxAuditLimit:
		return MaxAuditLimit
	}
	return q.Limit
}

// Matches reports whether e passes q's filters (not its cursor or limit).
func Matches(q asktype.AuditQuery, e *asktype.AuditEntry) bool {
	return (q.CallID == "" || e.CallID == q.CallID) && (q.Since.IsZero() || !e.At.Before(q.Since))
}

// ChainBreak is where a chain of audit entries stops holding together.
type ChainBreak struct {
	Seq     int64  // the entry at which the break shows
	Problem string // what is wrong, in words
}

func (b *ChainBreak) Error() string { return fmt.Sprintf("seq %d: %s", b.Seq, b.Problem) }

// ChainVerifier checks a chain entry by entry, in order (the trail's pages
// one after another); the zero value is ready.
type ChainVerifier struct {
	// Count is how many entries passed; First and Last are their seqs,
	// Head the last one's hash.
	Count       int64
	First, Last int64
	Head        string
	started     bool
}

// Next checks e against its own hash and the entry before it. The first
// entry checked may follow entries the trail no longer keeps (retention):
// its prev cannot be checked then, unless it is seq 1, whose prev is "".
func (v *ChainVerifier) Next(e *asktype.AuditEntry) error {
	if got := asktype.HashOf(e); got != e.Hash {
		return &ChainBreak{Seq: e.Seq, Problem: fmt.Sprintf("hash mismatch: the entry was edited (it hashes to %s, it says %s)", short(got), short(e.Hash))}
	}
	switch {
	case !v.started:
		if e.Seq == 1 && e.Prev != "" {
			return &ChainBreak{Seq: e.Seq, Problem: "the first entry has a prev"}
		}
		v.First = e.Seq
	case e.Seq > v.Last+1:
		missing := fmt.Sprintf("seq %d", v.Last+1)
		if e.Seq > v.Last+2 {
			missing = fmt.Sprintf("seqs %d to %d", v.Last+1, e.Seq-1)
		}
		return &ChainBreak{Seq: e.Seq, Problem: "seq gap after " + fmt.Sprint(v.Last) + ": " + missing + " deleted"}
	case e.Seq != v.Last+1:
		return &ChainBreak{Seq: e.Seq, Problem: fmt.Sprintf("out of order after seq %d: an entry was duplicated or moved", v.Last)}
	case e.Prev != v.Head:
		return &ChainBreak{Seq: e.Seq, Problem: fmt.Sprintf("prev mismatch: it names %s, seq %d hashes to %s (an entry was deleted or replaced)", short(e.Prev), v.Last, short(v.Head))}
	}
	v.started = true
	v.Count++
	v.Last, v.Head = e.Seq, e.Hash
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	if h == "" {
		return `""`
	}
	return h
}

// AuditRespondentOf reads who answered from a settlement or queued reply
// (waterfall's JSON: a top-level "respondent" object), for the audit trail:
// the respondent, and a detail naming whom an answer surface says answered
// ("" when it names nobody). It returns nil for JSON without one.
func AuditRespondentOf(raw json.RawMessage) (*asktype.AuditRespondent, string) {
	var v struct {
		Respondent *struct {
			asktype.AuditRespondent
			Claim *struct {
				UserID   string `json:"userId"`
				UserName string `json:"userName"`
			} `json:"claim"`
			Rule *struct {
				ID            int64  `json:"id"`
				Effect        string `json:"effect"`
				Match         string `json:"match"`
				GrantedBy     string `json:"grantedBy"`
				GrantedByName string `json:"grantedByName"`
			} `json:"rule"`
		} `json:"respondent"`
	}
	if json.Unmarshal(raw, &v) != nil || v.Respondent == nil {
		return nil, ""
	}
	r := v.Respondent.AuditRespondent
	detail := ""
	if c := v.Respondent.Claim; c != nil {
		detail = "on behalf of " + strings.TrimSpace(c.UserName+" "+paren(c.UserID))
	}
	if x := v.Respondent.Rule; x != nil {
		// Nobody was asked: the entry names the standing rule and who
		// granted it, the person accountable for the answer.
		detail = fmt.Sprintf("by standing rule %d: %s %s, granted by %s", x.ID, x.Effect, x.Match,
			strings.TrimSpace(x.GrantedByName+" "+paren(x.GrantedBy)))
	}
	return &r, detail
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// AskedDetail is the detail of an "asked" entry: the ask's kind, and its
// window when it is timed.
func AskedDetail(a *asktype.Ask) string {
	kind := a.Kind
	if kind == "" {
		kind = "question"
	}
	if !a.Deadline.IsZero() {
		return kind + "; window " + a.Deadline.Sub(a.Created).Round(time.Millisecond).String()
	}
	return kind
}

// AbortEvent is the audit event and detail of an abort for why, by actor
// ("" when unknown).
func AbortEvent(why asktype.AbortReason, actor string) (event, detail string) {
	switch why {
	case asktype.Abandoned:
		return asktype.EventAbandoned, "its caller went away and did not re-attach in time"
	case asktype.NoMessage:
		return asktype.EventWithdrawn, "no provider: no surface could show it"
	case asktype.Revoked:
		if actor != "" {
			return asktype.EventWithdrawn, "its agent token was revoked (by " + actor + ")"
		}
		return asktype.EventWithdrawn, "its agent token was revoked"
	case asktype.Uninstalled:
		return asktype.EventWithdrawn, "askslack was uninstalled from its workspace"
	case asktype.Elsewhere:
		if actor != "" {
			return asktype.EventWithdrawn, "answered in the agent's terminal (withdrawn by " + actor + ")"
		}
		return asktype.EventWithdrawn, "answered in the agent's terminal"
	}
	if actor != "" {
		return asktype.EventWithdrawn, "by " + actor
	}
	return asktype.EventWithdrawn, ""
}

type actorKey struct{}

// WithActor names, for the audit trail, the API caller on whose request the
// transitions under ctx happen (an operator withdrawing an agent's ask).
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// ActorOf is the name WithActor put in ctx, or "".
func ActorOf(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}

// PostedDetail is the detail of a "posted" entry.
func PostedDetail(ref asktype.MessageRef) string {
	d := "channel " + ref.Conversation + " ts " + ref.ID
	if n := len(ref.Copies); n > 0 {
		d += fmt.Sprintf(" (+%d copies)", n)
	}
	return d
}

// RefusedPostDetail is the detail of the "refused" entry Store.Refuse
// records, and the event: an untimed ask ends there (withdrawn, no
// provider); a timed one waits out its window.
func RefusedPostDetail(why string, ends bool) (event, detail string) {
	if ends {
		return asktype.EventWithdrawn, "no provider: Slack refused to show the question (" + why + ")"
	}
	return asktype.EventRefused, "Slack refused to show the question (" + why + "); its window runs on"
}

// ContinuedEarly is the audit detail of a window closed before its deadline
// (Store.Continue): the agent went on without the answer.
const ContinuedEarly = "the agent went on without an answer"
