package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// storeTimed stores a timed ask of request(id) directly, as a replica that
// then died would have: nobody waits on it and nobody expired it.
func storeTimed(t *testing.T, st store.Store, id string, created, deadline time.Time) {
	t.Helper()
	req := request(id)
	req.TimeoutMs = ms(deadline.Sub(created))
	raw, _ := json.Marshal(req)
	if _, created, err := st.Create(context.Background(), &asktype.Ask{CallID: id, SessionID: "s1", Request: raw, Created: created, Deadline: deadline}); err != nil || !created {
		t.Fatal(created, err)
	}
}

// The deadline decides lateness on every path: an answer at or after it is
// queued as a steered message even when no replica expired the ask.
func TestAnswerPastAnUnexpiredDeadlineIsQueued(t *testing.T) {
	h, st := setup(t, nil)
	ctx := context.Background()
	now := time.Now()
	storeTimed(t, st, "c1", now.Add(-2*time.Minute), now.Add(-time.Minute))
	out, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack})
	if err != nil || !out.Queued {
		t.Fatalf("Answer past the deadline = %+v, %v; want it queued as a late reply", out, err)
	}
	a, _ := st.Get(ctx, "c1")
	if a.State != asktype.Continued || len(a.Reply) == 0 || a.Settlement != nil {
		t.Fatalf("ask = %s, reply %s, settlement %s; want continued with a queued reply", a.State, a.Reply, a.Settlement)
	}
	if msgs, err := h.Messages(ctx, "s1", 0); err != nil || len(msgs) != 1 || msgs[0].CallID != "c1" {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}
	// Inside the window it still settles.
	storeTimed(t, st, "c2", now, now.Add(time.Hour))
	if out, err := h.Answer(ctx, "c2", answerA(), waterfall.Respondent{UserID: "U1"}); err != nil || out.Queued {
		t.Fatalf("Answer in the window = %+v, %v", out, err)
	}
}

// noSession fails any read of a whole session: polling for late answers
// must read only the queued replies.
type noSession struct {
	*store.Memory
	t *testing.T
}

func (s noSession) Session(ctx context.Context, id string) ([]*asktype.Ask, error) {
	s.t.Error("Messages read every ask of the session")
	return s.Memory.Session(ctx, id)
}

func TestMessagesReadOnlyQueuedReplies(t *testing.T) {
	t.Parallel()
	st := store.NewMemory(0, nil)
	h := engine.NewHost(noSession{st, t}, nil, engine.HostOptions{Poll: 50 * time.Millisecond})
	ctx := context.Background()
	now := time.Now()
	for i := range 3 {
		storeTimed(t, st, fmt.Sprintf("c%d", i), now.Add(-2*time.Minute), now.Add(-time.Minute))
	}
	if _, err := h.Answer(ctx, "c1", answerA(), waterfall.Respondent{UserID: "U1"}); err != nil {
		t.Fatal(err)
	}
	msgs, err := h.Messages(ctx, "s1", 0)
	if err != nil || len(msgs) != 1 || msgs[0].CallID != "c1" {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}
}

func TestFullSessionRefusesNewAsksClearly(t *testing.T) {
	h, st := setup(t, nil)
	ctx := context.Background()
	for i := range store.MaxSessionAsks {
		if _, _, err := st.Create(ctx, &asktype.Ask{CallID: fmt.Sprintf("old%d", i), SessionID: "s1", Request: json.RawMessage(`{}`), Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.Ask(ctx, request("new"))
	if !errors.Is(err, waterfall.ErrSessionFull) || !strings.Contains(err.Error(), "s1") {
		t.Fatalf("Ask in a full session: %v; want SESSION_FULL naming the session", err)
	}
}
