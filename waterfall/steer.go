package waterfall

import (
	"context"
	"errors"
	"github.com/askslack/askslack/asktype"
	"sort"
	"strings"
	"time"

	"github.com/askslack/askslack/store"
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

// Messages returns the steered messages waiting for the session's agent to
// admit them, oldest first. With wait > 0 it long-polls until at least one
// is waiting or wait passes.
func (h *Host) Messages(ctx context.Context, sessionID string, wait time.Duration) ([]SteeredMessage, error) {
	changes, stop := h.store.SessionChanges(sessionID)
	defer stop()
	var timeout <-chan time.Time
	if wait > 0 {
		timeout = h.clock.After(wait)
	}
	// The queue is read from the store every time (no record is cached);
	// a session's long poll is short and rare, so its own tick reads it
	// (the waiters' sweep covers asks, not queues).
	net := h.clock.NewTicker(h.check)
	defer net.Stop()
	for {
		msgs, err := h.pending(ctx, sessionID)
		if err != nil || len(msgs) > 0 || wait <= 0 {
			return msgs, err
		}
		select {
		case <-ctx.Done():
			return msgs, nil
		case <-timeout:
			return msgs, nil
		case <-changes:
		case <-net.C:
		}
	}
}

func (h *Host) pending(ctx context.Context, sessionID string) ([]SteeredMessage, error) {
	// Only the session's queued replies are read, never its whole history.
	asks, err := h.store.Replies(ctx, sessionID)
	if err != nil {
		return nil, unavailable(err)
	}
	msgs := []SteeredMessage{}
	for _, a := range asks {
		if a.State != asktype.Continued || len(a.Reply) == 0 || a.SessionID != sessionID {
			continue
		}
		r, err := Decode(a)
		if err != nil {
			h.log.Error("undecodable queued reply", "callId", a.CallID, "err", err)
			continue
		}
		msgs = append(msgs, *r.Reply)
	}
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].QueuedAt.Before(msgs[j].QueuedAt) })
	return msgs, nil
}

// Ack records that the agent admitted a steered message: the question moves
// to settled in the projection. Acknowledging twice is not an error.
func (h *Host) Ack(ctx context.Context, sessionID, messageID string) (*Record, error) {
	return decodeWith(h.ack(ctx, sessionID, messageID))
}

func (h *Host) ack(ctx context.Context, sessionID, messageID string) (*asktype.Ask, error) {
	callID, ok := strings.CutPrefix(messageID, replyPrefix)
	if !ok {
		return nil, Errorf(CodeNotFound, "no message %q", messageID)
	}
	a, err := h.Get(ctx, callID)
	if err != nil || a.SessionID != sessionID {
		return nil, Errorf(CodeNotFound, "no message %q in session %q", messageID, sessionID)
	}
	cur, err := h.store.AckReply(ctx, callID, h.clock.Now())
	switch {
	case err == nil:
		h.metrics.Transition("admitted")
		h.changed(cur)
		return cur, nil
	case errors.Is(err, store.ErrSettled) && len(cur.Reply) > 0:
		return cur, nil
	case errors.Is(err, store.ErrNoReply), errors.Is(err, store.ErrOpen), errors.Is(err, store.ErrSettled):
		return cur, Errorf(CodeNotFound, "no message %q is waiting", messageID)
	case errors.Is(err, store.ErrAborted):
		return cur, Errorf(CodeAskAborted, "the agent withdrew the question")
	}
	return cur, unavailable(err)
}

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

// Projection returns the session's timed questions: active in ask order,
// settled in settlement order. As the seed says, only timed calls appear;
// a blocking (untimed) ask is in neither half. The active questions are
// shared with the asks' decoded requests (Record.Request): read them only.
func (h *Host) Projection(ctx context.Context, sessionID string) (Projection, error) {
	asks, err := h.store.Session(ctx, sessionID)
	if err != nil {
		return Projection{}, unavailable(err)
	}
	p := Projection{Active: []PendingQuestion{}, Settled: []SettledQuestion{}}
	var settled []*asktype.Ask
	for _, a := range asks {
		if a.Deadline.IsZero() {
			continue
		}
		switch a.State {
		case asktype.Open, asktype.Continued:
			r, err := Decode(a)
			if err != nil {
				return Projection{}, err
			}
			p.Active = append(p.Active, PendingQuestion{CallID: a.CallID, Questions: r.Request.Questions, State: string(a.State)})
		case asktype.Settled:
			settled = append(settled, a)
		}
	}
	sort.SliceStable(settled, func(i, j int) bool {
		if !settled[i].SettledAt.Equal(settled[j].SettledAt) {
			return settled[i].SettledAt.Before(settled[j].SettledAt)
		}
		return settled[i].Seq < settled[j].Seq
	})
	for _, a := range settled {
		r, err := Decode(a)
		if err != nil {
			return Projection{}, err
		}
		answers := r.Settlement.Answers
		if answers == nil {
			answers = []AnswerItem{}
		}
		p.Settled = append(p.Settled, SettledQuestion{CallID: a.CallID, Answers: answers})
	}
	return p, nil
}
