package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// MemoryOptions turn on answer memory (waterfall/recall.go): what people
// chose is kept in the store's notes, shared by every replica, for For.
type MemoryOptions struct {
	Notes store.Notes
	// For is how long an answer is remembered (ASKSLACK_ANSWER_MEMORY).
	For time.Duration
}

// UseMemory turns on answer memory. Not safe to call concurrently with
// asks; call it while wiring.
func (h *Host) UseMemory(o MemoryOptions) {
	if o.Notes == nil || o.For <= 0 {
		return
	}
	h.memory = &o
}

// recallTimeout bounds reading what was answered before: a slow store
// costs a new ask its hint, never its question.
const recallTimeout = time.Second

// withRecall is req, a copy, with its Recall from what was answered
// before, and nothing a caller sent there.
func (h *Host) withRecall(ctx context.Context, req *waterfall.Request) *waterfall.Request {
	r := *req
	r.Recall = nil
	if h.memory == nil || !r.Recalls() {
		return &r
	}
	ctx, cancel := context.WithTimeout(ctx, recallTimeout)
	defer cancel()
	now := h.clock.Now()
	for i := range r.Questions {
		q := &r.Questions[i]
		key := waterfall.RecallKey(&r, q)
		if key == "" {
			continue
		}
		raw, err := h.memory.Notes.Remember(ctx, key, "", 0, now)
		if err != nil {
			h.log.Warn("reading answer memory failed: asking without the hint", "callId", r.CallID, "err", err)
			break
		}
		if raw == "" {
			continue
		}
		var rc waterfall.Recall
		if json.Unmarshal([]byte(raw), &rc) != nil || !rc.Offered(q) {
			continue
		}
		rc.Question = q.ID
		r.Recall = append(r.Recall, rc)
	}
	return &r
}

// remember keeps what settlement s chose on req's questions, replacing
// what was kept before: best effort, after the answer is stored.
func (h *Host) remember(ctx context.Context, req *waterfall.Request, s waterfall.Settlement) {
	if h.memory == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recallTimeout)
	defer cancel()
	now := h.clock.Now()
	for key, rc := range waterfall.Remembered(req, &s) {
		var err error
		if rc == nil {
			_, err = h.memory.Notes.Forget(ctx, key, now)
		} else {
			raw, _ := json.Marshal(rc)
			if later, ok := h.memory.Notes.(store.LaterNotes); ok {
				// With the store's next round trip (the message's render
				// mark, as a rule), not one of its own.
				later.PutLater(key, string(raw), h.memory.For, now)
				continue
			}
			err = h.memory.Notes.Put(ctx, key, string(raw), h.memory.For, now)
		}
		if err != nil {
			h.log.Warn("keeping an answer in memory failed", "callId", req.CallID, "err", err)
			return
		}
	}
}
