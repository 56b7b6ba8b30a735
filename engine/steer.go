package engine

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Messages returns the steered messages waiting for the session's agent to
// admit them, oldest first. With wait > 0 it long-polls until at least one
// is waiting or wait passes.
func (h *Host) Messages(ctx context.Context, sessionID string, wait time.Duration) ([]waterfall.SteeredMessage, error) {
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

func (h *Host) pending(ctx context.Context, sessionID string) ([]waterfall.SteeredMessage, error) {
	// Only the session's queued replies are read, never its whole history.
	asks, err := h.store.Replies(ctx, sessionID)
	if err != nil {
		return nil, unavailable(err)
	}
	msgs := []waterfall.SteeredMessage{}
	for _, a := range asks {
		if a.State != asktype.Continued || len(a.Reply) == 0 || a.SessionID != sessionID {
			continue
		}
		r, err := waterfall.Decode(a)
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
func (h *Host) Ack(ctx context.Context, sessionID, messageID string) (*waterfall.Record, error) {
	r, _, err := h.Admit(ctx, sessionID, messageID)
	return r, err
}

// Admit is Ack that also reports whether this call admitted the message
// (first) or it had been admitted before: of two deliverers racing for one
// message, only the first passes it to the agent.
func (h *Host) Admit(ctx context.Context, sessionID, messageID string) (_ *waterfall.Record, first bool, _ error) {
	a, first, err := h.ack(ctx, sessionID, messageID)
	r, err := decodeWith(a, err)
	return r, first && err == nil, err
}

func (h *Host) ack(ctx context.Context, sessionID, messageID string) (*asktype.Ask, bool, error) {
	callID, ok := waterfall.CallIDOf(messageID)
	if !ok {
		return nil, false, waterfall.Errorf(waterfall.CodeNotFound, "no message %q", messageID)
	}
	a, err := h.Get(ctx, callID)
	if err != nil || a.SessionID != sessionID {
		return nil, false, waterfall.Errorf(waterfall.CodeNotFound, "no message %q in session %q", messageID, sessionID)
	}
	cur, err := h.store.AckReply(ctx, callID, h.clock.Now())
	switch {
	case err == nil:
		h.metrics.Transition("admitted")
		h.changed(cur)
		return cur, true, nil
	case errors.Is(err, store.ErrSettled) && len(cur.Reply) > 0:
		return cur, false, nil
	case errors.Is(err, store.ErrNoReply), errors.Is(err, store.ErrOpen), errors.Is(err, store.ErrSettled):
		return cur, false, waterfall.Errorf(waterfall.CodeNotFound, "no message %q is waiting", messageID)
	case errors.Is(err, store.ErrAborted):
		return cur, false, waterfall.Errorf(waterfall.CodeAskAborted, "the agent withdrew the question")
	}
	return cur, false, unavailable(err)
}

// Projection returns the session's timed questions: active in ask order,
// settled in settlement order. As the seed says, only timed calls appear;
// a blocking (untimed) ask is in neither half. The active questions are
// shared with the asks' decoded requests (Record.Request): read them only.
func (h *Host) Projection(ctx context.Context, sessionID string) (waterfall.Projection, error) {
	asks, err := h.store.Session(ctx, sessionID)
	if err != nil {
		return waterfall.Projection{}, unavailable(err)
	}
	p := waterfall.Projection{Active: []waterfall.PendingQuestion{}, Settled: []waterfall.SettledQuestion{}}
	var settled []*asktype.Ask
	for _, a := range asks {
		if a.Deadline.IsZero() {
			continue
		}
		switch a.State {
		case asktype.Open, asktype.Continued:
			r, err := waterfall.Decode(a)
			if err != nil {
				return waterfall.Projection{}, err
			}
			p.Active = append(p.Active, waterfall.PendingQuestion{CallID: a.CallID, Questions: r.Request.Questions, State: string(a.State)})
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
		r, err := waterfall.Decode(a)
		if err != nil {
			return waterfall.Projection{}, err
		}
		answers := r.Settlement.Answers
		if answers == nil {
			answers = []waterfall.AnswerItem{}
		}
		p.Settled = append(p.Settled, waterfall.SettledQuestion{CallID: a.CallID, Answers: answers})
	}
	return p, nil
}
