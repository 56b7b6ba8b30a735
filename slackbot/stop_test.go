package slackbot

// A replica that stops with message updates queued behind the shared
// chat.update budget renders them before it exits, or hands them to
// another replica at once (issue 50: a rolling update left answered
// questions live for a minute, until the sweep).

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// answerMany posts n asks on replica 0, waits until each message shows its
// question, then answers them all at once from another surface (no click,
// so no response_url: every update is a chat.update, paced), and returns
// their ids.
func (b *exploreBundle) answerMany(ctx context.Context, t *testing.T, prefix string, n int) []string {
	t.Helper()
	r := b.replicas[0]
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		if _, err := r.host.Open(ctx, yesNo(ids[i])); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if err := waitCond(ctx, func() bool {
			a, err := b.base.Get(ctx, id)
			return err == nil && a.Message.Posted() && a.Rendered >= a.Version
		}); err != nil {
			t.Fatalf("%s was never posted", id)
		}
	}
	for _, id := range ids {
		if _, err := r.host.Answer(ctx, id, waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"Yes"}}}},
			waterfall.Respondent{UserID: "U0API", Surface: "api"}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// live lists the asks of ids whose message still has buttons, or whose
// store record says the message is behind.
func (b *exploreBundle) live(ctx context.Context, t *testing.T, ids []string) []string {
	var out []string
	for _, id := range ids {
		a, err := b.base.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := b.fake.Message(a.Message.Conversation, a.Message.ID)
		if !ok || hasButtons(m) || a.Rendered < a.Version {
			out = append(out, fmt.Sprintf("%s (rendered %d of %d)", id, a.Rendered, a.Version))
		}
	}
	return out
}

// Answered questions whose updates wait for the shared budget when their
// replica is told to stop are all rendered by the time Stop returns.
func TestStoppingReplicaRendersTheUpdatesItQueued(t *testing.T) {
	t.Parallel()
	b := setupExplore(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := b.answerMany(ctx, t, "drain", 24)
	stop, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if err := b.replicas[0].mirror.Stop(stop); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if live := b.live(ctx, t, ids); len(live) > 0 {
		t.Fatalf("%d of %d answered questions still live after their replica stopped: %s", len(live), len(ids),
			strings.Join(live, ", "))
	}
}

// What a stopping replica cannot render within its drain it hands over:
// another replica renders it at once, with no sweep due.
func TestStoppingReplicaHandsOverWhatItCouldNotRender(t *testing.T) {
	t.Parallel()
	b := setupExplore(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The other replica runs (setupExplore started it: its sweep loop
	// listens for handoffs); its periodic sweep is a minute away.
	ids := b.answerMany(ctx, t, "handoff", 24)
	// A drain with no time in it: everything queued is handed over.
	stop, scancel := context.WithTimeout(ctx, 1600*time.Millisecond) // the mirror keeps 1.5 s to hand over
	defer scancel()
	_ = b.replicas[0].mirror.Stop(stop)
	var live []string
	if err := waitCond(ctx, func() bool { live = b.live(ctx, t, ids); return len(live) == 0 }); err != nil {
		t.Fatalf("%d of %d answered questions still live after their replica stopped and handed them over: %s",
			len(live), len(ids), strings.Join(live, ", "))
	}
}
