package slackbot

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store"
)

// racedBook lets "another replica" record a session's thread between
// this replica's read (none yet) and its write.
type racedBook struct {
	ThreadBook
	other func() string // posts the other replica's parent; returns its ts
	done  bool
}

func (k *racedBook) Remember(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error) {
	if value != "" && !k.done {
		k.done = true
		if _, err := k.ThreadBook.Remember(ctx, key, k.other(), ttl, now); err != nil {
			return "", err
		}
	}
	return k.ThreadBook.Remember(ctx, key, value, ttl, now)
}

func threadedAsk(t *testing.T, st store.Store, callID, session string) *asktype.Ask {
	t.Helper()
	req := yesNo(callID)
	req.Agent.SessionID = session
	raw, _ := json.Marshal(req)
	a, _, err := st.Create(context.Background(), &asktype.Ask{CallID: callID, SessionID: session, Request: raw, Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fakeInC1 is the project's fake Slack with one channel, C1, and a client
// of it.
func fakeInC1(t *testing.T) (*slackfake.Server, *slack.Client) {
	t.Helper()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-test", Channels: []string{"C1"}})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	return fake, slack.New("xoxb-test", slack.OptionAPIURL(fake.APIURL()))
}

// Two replicas start a session's thread at once: the one that records it
// second deletes its own parent and posts into the winner's thread.
func TestSessionThreadRaceKeepsOneParent(t *testing.T) {
	t.Parallel()
	fake, api := fakeInC1(t)
	st := testStore(t)
	var winner string
	k := &racedBook{ThreadBook: st, other: func() string {
		_, ts, err := api.PostMessage("C1", slack.MsgOptionText("the other replica's parent", false))
		if err != nil {
			t.Error(err)
		}
		winner = ts
		return ts
	}}
	s := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: k})
	ctx := context.Background()

	a := threadedAsk(t, st, "race-1", "sess-1")
	ref, err := s.Post(ctx, rec(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if ref.Thread != winner || ref.Thread == "" {
		t.Fatalf("posted in thread %q; want the winner's %q", ref.Thread, winner)
	}
	if n := len(fake.Calls("chat.delete")); n != 1 {
		t.Fatalf("%d chat.delete calls; want the losing parent deleted", n)
	}
	parents := 0
	for _, m := range fake.Messages() {
		if m.ThreadTS == "" {
			parents++
		}
	}
	if parents != 1 {
		t.Fatalf("%d top-level messages; want one parent", parents)
	}
	if q, _ := fake.Message("C1", ref.ID); q.Broadcast {
		t.Fatal("the loser broadcast its question; the replica that started the thread broadcasts its own")
	}
}

// A question whose post answer was lost is found again in its session's
// thread (conversations.replies), where conversations.history cannot see
// a reply that was not broadcast.
func TestFindLooksInTheSessionThread(t *testing.T) {
	t.Parallel()
	fake, api := fakeInC1(t)
	st := testStore(t)
	s := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: st})
	ctx := context.Background()
	since := time.Now()
	if _, err := s.Post(ctx, rec(t, threadedAsk(t, st, "find-1", "sess-f"))); err != nil {
		t.Fatal(err)
	}
	second := threadedAsk(t, st, "find-2", "sess-f")
	posted, err := s.Post(ctx, rec(t, second))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := fake.Message("C1", posted.ID); m.Broadcast {
		t.Fatal("the session's second question was broadcast")
	}
	// A fresh replica: nothing cached.
	s2 := NewSurface(api, SurfaceOptions{Channel: "C1", Threads: st})
	found, ok, err := s2.Find(ctx, rec(t, second), since)
	if err != nil || !ok || found.ID != posted.ID || found.Thread != posted.Thread {
		t.Fatalf("Find = %+v %v %v; want %+v", found, ok, err, posted)
	}
}
