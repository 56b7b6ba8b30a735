package waterfall

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Answer memory: when an agent asks a question someone already answered —
// the same text, header and options, from the same caller and agent — the
// message says what they chose last time and offers it first. It is only
// ever a hint: nothing is answered with it, typed text is never kept (people
// type secrets into "Other…"), and tool permissions are never remembered (a
// standing rule is how a past allow answers again, in the open, revocably).

// Recall is a past answer to a question, shown beside it.
type Recall struct {
	// Question is the id of the question of this ask it belongs to.
	Question string `json:"question"`
	// Selected are the option labels chosen then (all offered now: the
	// options are part of what makes a question the same).
	Selected []string `json:"selected"`
	// By names who chose (a display name; never a mention: a new message
	// that mentions someone notifies them). Via, when set, is the answer
	// surface (an API caller) that said By chose: shown beside it, never
	// cut away from it.
	By  string `json:"by"`
	Via string `json:"via,omitempty"`
	// At is when they answered.
	At time.Time `json:"at"`
}

// Recalls reports whether an ask of this kind may show past answers:
// questions only, never a tool permission or a plan (each plan is new).
func (r *Request) Recalls() bool { return r.Kind() == KindQuestion }

// RecallKey is the key under which answers to question q of r are
// remembered: a digest of who asks and where — the caller, the agent, the
// channel and delivery it asked for (a choice made in a private channel is
// not shown in a public one) — and of what is asked: the question, its
// header and detail, whether it is multi-select, and its options (label,
// description, preview) in any order, so the same labels given a new
// meaning are a new question. "" for a question that offers no options
// (its answers are typed text, never kept).
func RecallKey(r *Request, q *Question) string {
	if len(q.Options) == 0 {
		return ""
	}
	opts := slices.Clone(q.Options)
	slices.SortFunc(opts, func(a, b Option) int { return strings.Compare(a.Label, b.Label) })
	b, _ := json.Marshal(struct {
		Caller, Agent, Channel, Delivery string
		Header, Question, Detail         string
		Multi                            bool
		Options                          []Option
	}{r.Caller, r.Agent.ID, r.Channel, r.Delivery, q.Header, q.Question, q.Detail, q.MultiSelect, opts})
	sum := sha256.Sum256(b)
	return "recall:" + hex.EncodeToString(sum[:16])
}

// maxRecallName bounds By and Via.
const maxRecallName = 80

// Remembered is what an answer leaves to remember for each question of r,
// by RecallKey: the labels chosen, and by whom; nil for a question whose
// memory is to be forgotten — answered with typed text or skipped this
// time, so an older choice is no longer "last time". Answers a standing
// rule gave and asks that may not recall change nothing.
func Remembered(r *Request, s *Settlement) map[string]*Recall {
	if !r.Recalls() || s.Respondent.Rule != nil || s.Respondent.Surface == SurfaceRule {
		return nil
	}
	by, via := s.Respondent.UserName, ""
	if c := s.Respondent.Claim; c != nil && c.UserName != "" {
		by, via = c.UserName, s.Respondent.UserName
	}
	if by == "" {
		by = s.Respondent.UserID
	}
	out := map[string]*Recall{}
	for i := range r.Questions {
		q := &r.Questions[i]
		key := RecallKey(r, q)
		if key == "" {
			continue
		}
		it := s.Item(q.ID)
		if it == nil || len(it.Selected) == 0 || it.Custom != "" || by == "" {
			out[key] = nil
			continue
		}
		out[key] = &Recall{Selected: slices.Clone(it.Selected), By: cutRunes(by, maxRecallName), Via: cutRunes(via, maxRecallName), At: s.Respondent.At.UTC()}
	}
	return out
}

// RecalledFirst is q's option indexes with rc's choices first (nil rc:
// in order), each group in the order the agent gave them: every surface
// offers what was chosen last time first, and an option keeps its index,
// which is what a choice sends back.
func RecalledFirst(q *Question, rc *Recall) []int {
	out := make([]int, 0, len(q.Options))
	for _, first := range []bool{true, false} {
		for oi, o := range q.Options {
			if (rc != nil && slices.Contains(rc.Selected, o.Label)) == first {
				out = append(out, oi)
			}
		}
	}
	return out
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// Recalled returns the past answer shown beside question id, or nil.
func (r *Request) Recalled(id string) *Recall {
	for i := range r.Recall {
		if r.Recall[i].Question == id {
			return &r.Recall[i]
		}
	}
	return nil
}

// Offered reports whether a recall still names only options q offers (a
// stored recall read back under a digest that collided, or edited in the
// store, is not shown).
func (rc *Recall) Offered(q *Question) bool {
	if rc == nil || len(rc.Selected) == 0 || (!q.MultiSelect && len(rc.Selected) > 1) {
		return false
	}
	for _, l := range rc.Selected {
		if q.OptionIndex(l) < 0 {
			return false
		}
	}
	return true
}
