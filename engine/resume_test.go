package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// counting counts the store's creates: a re-attach stores the request again
// (Create finds it), which a parked ask's resume must not.
type counting struct {
	*store.Memory
	creates atomic.Int64
}

func (c *counting) Create(ctx context.Context, a *asktype.Ask) (*asktype.Ask, bool, error) {
	c.creates.Add(1)
	return c.Memory.Create(ctx, a)
}

// A blocking ask whose handler parks it (the waiting goroutine cut short, a
// new one waiting) resumes without storing the request again, and gets the
// answer given meanwhile.
func TestResumeWaitsWithoutStoringAgain(t *testing.T) {
	t.Parallel()
	st := &counting{Memory: store.NewMemory(0, nil)}
	seen := make(chan string, 4)
	h := engine.NewHost(st, waiting(seen), engine.HostOptions{Poll: 50 * time.Millisecond})
	ctx, cut := context.WithCancel(context.Background())
	first := askAsync(h, ctx, request("c1"))
	recv(t, seen)
	cut() // parked
	if r := recv(t, first); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("first wait: %v", r.err)
	}
	resumed := make(chan result, 1)
	go func() {
		r, err := h.Resume(context.Background(), request("c1"))
		resumed <- result{r, err}
	}()
	recv(t, seen) // the chain runs again, as for a re-attach
	if _, err := h.Answer(context.Background(), "c1", answerA(), waterfall.Respondent{UserID: "U1", Surface: waterfall.SurfaceSlack}); err != nil {
		t.Fatal(err)
	}
	r := recv(t, resumed)
	if r.err != nil || r.r.Pending() || len(r.r.Settlement.Answers) != 1 || r.r.Settlement.Answers[0].Selected[0] != "A" {
		t.Fatalf("resumed: %+v, %v", r.r, r.err)
	}
	if n := st.creates.Load(); n != 1 {
		t.Fatalf("%d creates, want 1: the resume stored the request again", n)
	}
	// Another caller's call id is refused, as a re-attach is.
	other := request("c1")
	other.Caller = "someone-else"
	if _, err := h.Resume(context.Background(), other); waterfall.CodeOf(err) != waterfall.CodeCallConflict {
		t.Fatalf("another caller's resume: %v", err)
	}
	// An ask never stored (the handler cut short before its create) is asked.
	ctx2, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _, _ = h.Resume(ctx2, request("c2")) }()
	if id := recv(t, seen); id != "c2" {
		t.Fatalf("asked %s", id)
	}
	if _, err := st.Get(context.Background(), "c2"); err != nil {
		t.Fatalf("c2 not stored: %v", err)
	}
}
