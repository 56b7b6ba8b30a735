package waterfall

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on what a request may carry. They keep a single ask storable and
// renderable; Slack's own caps are the blocks package's business.
const (
	MaxIDLen       = 128 // callId, sessionId
	MaxQuestions   = 20
	MaxOptions     = 100
	MaxLabelLen    = 2000
	MaxTextLen     = 100_000 // question, detail, description, preview
	MaxTimeout     = 24 * time.Hour
	MaxChannelLen  = 64
	MaxQuestionIDL = 128
)

// Validate checks a request the way seed 000's ask()/askTimed() do and
// returns an *Error with the seed's code for the first problem found.
func Validate(r *Request) error {
	if r.CallID == "" {
		return Errorf(CodeBadRequest, "callId is required")
	}
	if !ValidID(r.CallID) {
		return Errorf(CodeBadRequest, "callId must be 1-%d characters of A-Z a-z 0-9 and - _ . : @ + =", MaxIDLen)
	}
	if r.Agent.ID == "" {
		return Errorf(CodeBadRequest, "agent.id is required")
	}
	if r.Agent.SessionID != "" && !ValidID(r.Agent.SessionID) {
		return Errorf(CodeBadRequest, "agent.sessionId must be 1-%d characters of A-Z a-z 0-9 and - _ . : @ + =", MaxIDLen)
	}
	if r.Agent.OwnerID != "" {
		return Errorf(CodeDelegatedCaller, "agent %q is owned by agent %q; only a root agent may ask a human", r.Agent.ID, r.Agent.OwnerID)
	}
	if err := ValidateTimeout(r.TimeoutMs); err != nil {
		return err
	}
	if r.TimeoutMs != nil && r.Agent.SessionID == "" {
		return Errorf(CodeBadRequest, "a timed ask (timeoutMs) needs agent.sessionId: a late answer is delivered to that session's queue, and without one it would reach nobody")
	}
	if r.OnTimeout != "" && r.OnTimeout != OnTimeoutTerminal {
		return Errorf(CodeBadRequest, `onTimeout must be "terminal" or absent`)
	}
	if len(r.Channel) > MaxChannelLen || strings.ContainsAny(r.Channel, " \t\n") {
		return Errorf(CodeBadRequest, "channel must be a Slack channel id")
	}
	switch r.Delivery {
	case "", DeliverChannel, DeliverDM, DeliverBoth:
	default:
		return Errorf(CodeBadRequest, `delivery must be "channel", "dm" or "both"`)
	}
	if len(r.Questions) == 0 {
		return Errorf(CodeEmptyQuestions, "at least one question is required")
	}
	if len(r.Questions) > MaxQuestions {
		return Errorf(CodeBadRequest, "at most %d questions per ask", MaxQuestions)
	}
	seen := make(map[string]bool, len(r.Questions))
	for i := range r.Questions {
		q := &r.Questions[i]
		if err := validateQuestion(q); err != nil {
			return err
		}
		if seen[q.ID] {
			return Errorf(CodeBadRequest, "duplicate question id %q", q.ID)
		}
		seen[q.ID] = true
	}
	if err := validateQuorum(r); err != nil { // quorum.go
		return err
	}
	return validatePermission(r)
}

// ValidateTimeout checks askTimed's timeoutMs: absent (nil) means untimed;
// otherwise a positive integer number of milliseconds up to MaxTimeout.
func ValidateTimeout(p *float64) error {
	if p == nil {
		return nil
	}
	ms := *p
	if math.IsNaN(ms) || math.IsInf(ms, 0) || ms != math.Trunc(ms) {
		return Errorf(CodeBadTimeout, "timeoutMs must be an integer number of milliseconds")
	}
	if ms <= 0 {
		return Errorf(CodeBadTimeout, "timeoutMs must be positive")
	}
	if ms > float64(MaxTimeout/time.Millisecond) {
		return Errorf(CodeBadTimeout, "timeoutMs must be at most %d (%s)", MaxTimeout/time.Millisecond, MaxTimeout)
	}
	return nil
}

func validateQuestion(q *Question) error {
	if q.ID == "" || len(q.ID) > MaxQuestionIDL {
		return Errorf(CodeBadRequest, "every question needs an id of 1-%d characters", MaxQuestionIDL)
	}
	if strings.TrimSpace(q.Question) == "" {
		return Errorf(CodeBadRequest, "question %q has no text", q.ID)
	}
	for _, s := range []string{q.Question, q.Detail, q.Header} {
		if utf8.RuneCountInString(s) > MaxTextLen || !utf8.ValidString(s) {
			return Errorf(CodeBadRequest, "question %q: text must be valid UTF-8 of at most %d characters", q.ID, MaxTextLen)
		}
	}
	if len(q.Options) > MaxOptions {
		return Errorf(CodeBadRequest, "question %q: at most %d options", q.ID, MaxOptions)
	}
	labels := make(map[string]bool, len(q.Options))
	for _, o := range q.Options {
		if strings.TrimSpace(o.Label) == "" {
			return Errorf(CodeBadRequest, "question %q: every option needs a label", q.ID)
		}
		if utf8.RuneCountInString(o.Label) > MaxLabelLen || !utf8.ValidString(o.Label) {
			return Errorf(CodeBadRequest, "question %q: option labels must be valid UTF-8 of at most %d characters", q.ID, MaxLabelLen)
		}
		for _, s := range []string{o.Description, o.Preview} {
			if utf8.RuneCountInString(s) > MaxTextLen || !utf8.ValidString(s) {
				return Errorf(CodeBadRequest, "question %q: option text must be valid UTF-8 of at most %d characters", q.ID, MaxTextLen)
			}
		}
		if labels[o.Label] {
			return Errorf(CodeBadRequest, "question %q: duplicate option label %q", q.ID, o.Label)
		}
		labels[o.Label] = true
	}
	if q.Intent != nil {
		switch q.Intent.Kind {
		case IntentPlanReview:
			if strings.TrimSpace(q.Detail) == "" {
				return Errorf(CodeBadRequest, "question %q: a plan review needs the plan in detail", q.ID)
			}
			if !labels[q.Intent.Approve] {
				return Errorf(CodeBadRequest, "question %q: intent.approve %q names no option of this question", q.ID, q.Intent.Approve)
			}
			if q.MultiSelect {
				return Errorf(CodeBadRequest, "question %q: a plan review is single-select", q.ID)
			}
		case "":
			return Errorf(CodeBadRequest, "question %q: intent.kind is required", q.ID)
		default:
			// Unknown intents render as the generic flow (the seed says so).
		}
	}
	return nil
}

// ValidateAnswer checks an answer batch against the questions it answers
// (BAD_ANSWER): each question exactly once, selections only among offered
// labels, at most one for single-select, custom text alone for single-select.
func ValidateAnswer(qs []Question, a *Answer) error {
	if len(a.Answers) != len(qs) {
		return Errorf(CodeBadAnswer, "the batch has %d items for %d questions; name each question exactly once", len(a.Answers), len(qs))
	}
	byID := make(map[string]*Question, len(qs))
	for i := range qs {
		byID[qs[i].ID] = &qs[i]
	}
	seen := make(map[string]bool, len(qs))
	for _, it := range a.Answers {
		q, ok := byID[it.ID]
		if !ok {
			return Errorf(CodeBadAnswer, "no question %q in this call", it.ID)
		}
		if seen[it.ID] {
			return Errorf(CodeBadAnswer, "question %q answered twice", it.ID)
		}
		seen[it.ID] = true
		if !q.MultiSelect && len(it.Selected) > 1 {
			return Errorf(CodeBadAnswer, "question %q is single-select; %d labels selected", it.ID, len(it.Selected))
		}
		if !q.MultiSelect && len(it.Selected) == 1 && it.Custom != "" {
			return Errorf(CodeBadAnswer, "question %q is single-select: give a label or custom text, not both", it.ID)
		}
		picked := make(map[string]bool, len(it.Selected))
		for _, l := range it.Selected {
			if q.OptionIndex(l) < 0 {
				return Errorf(CodeBadAnswer, "question %q: %q is not an offered option", it.ID, l)
			}
			if picked[l] {
				return Errorf(CodeBadAnswer, "question %q: %q selected twice", it.ID, l)
			}
			picked[l] = true
		}
		if utf8.RuneCountInString(it.Custom) > MaxTextLen || !utf8.ValidString(it.Custom) {
			return Errorf(CodeBadAnswer, "question %q: custom text must be valid UTF-8 of at most %d characters", it.ID, MaxTextLen)
		}
	}
	return nil
}

// Normalize returns a copy of a with items in question order and nil
// selections as empty slices, so stored and returned answers read the same.
func Normalize(qs []Question, a Answer) Answer {
	out := Answer{Answers: make([]AnswerItem, 0, len(qs))}
	for _, q := range qs {
		it := a.Item(q.ID)
		if it == nil {
			continue
		}
		c := *it
		if c.Selected == nil {
			c.Selected = []string{}
		}
		out.Answers = append(out.Answers, c)
	}
	return out
}

// ValidID reports whether s can name a call or a session: it appears in URL
// paths, Slack action ids and Redis keys (inside a {hash tag}), so it is
// limited to characters that need no escaping in any of them.
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.:@+=", c) >= 0:
		default:
			return false
		}
	}
	return true
}
