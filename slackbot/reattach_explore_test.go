package slackbot

// Deterministic reproductions of the ways a message fell behind its ask in
// runs from outside (issue 50): two requests with one callId at once (an
// agent's request dropped and re-sent while the first is being stored),
// the first request's record reaching the mirror only after the re-sent
// one's job posted the question.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store"
)

// opCreate holds Create's return, after the ask is stored: the record it
// returns (carrying the poster's lease) reaches the mirror only when the
// gate is released.
const opCreate = "create"

// opBegin is BeginPost: a job taking the post lease.
const opBegin = "begin"

func (s *gatedStore) BeginPost(ctx context.Context, callID string, h store.Hold) (a *asktype.Ask, err error) {
	s.g.pass(ctx, opBegin, s.replica, func() { a, err = s.Store.BeginPost(ctx, callID, h) })
	if errors.Is(err, store.ErrHeld) {
		s.g.mu.Lock()
		s.g.log = append(s.g.log, "held@"+s.replica)
		s.g.mu.Unlock()
	}
	return a, err
}

// heldBegins counts the BeginPosts told another job holds the lease.
func (gs *gates) heldBegins() int {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	n := 0
	for _, op := range gs.log {
		if strings.HasPrefix(op, "held@") {
			n++
		}
	}
	return n
}

func (s *gatedStore) Create(ctx context.Context, a *asktype.Ask) (cur *asktype.Ask, created bool, err error) {
	cur, created, err = s.Store.Create(ctx, a)
	s.g.pass(ctx, opCreate, s.replica, func() {})
	return cur, created, err
}

// A blocking ask re-sent with its callId while the first request's Create
// has stored it but not returned (so its record, with this replica's post
// lease, reaches the mirror last) is posted once, and once answered its
// one message shows the answer — on the replica that created it and on
// the other, paced or not.
func TestReattachWhileCreateReturnsPostsOnce(t *testing.T) {
	t.Parallel()
	for _, paced := range []bool{false, true} {
		for on := range 2 {
			name := fmt.Sprintf("paced=%v/reattach_on_%s", paced, []string{"A", "B"}[on])
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b := setupExplore(t, paced)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				id := "reattach-" + strings.ReplaceAll(name, "/", "-")
				first, second := b.replicas[0], b.replicas[on]
				held := b.g.arm(opCreate, first.name)
				go func() { _, _ = first.host.Ask(ctx, yesNo(id)) }()
				select {
				case <-held.arrived:
				case <-ctx.Done():
					t.Fatal("the first request's Create never stored the ask")
				}
				// The re-sent request finds the ask stored; its record reaches
				// the mirror first, and the question is posted and recorded.
				begin := b.g.arm(opBegin, second.name)
				go func() { _, _ = second.host.Ask(ctx, yesNo(id)) }()
				// The re-sent request's job tries to take the post lease the
				// first request's Create holds; it either posts (and records
				// the message) or is told the lease is held.
				select {
				case <-begin.arrived:
				case <-ctx.Done():
					t.Fatal("the re-sent request's job never tried to post")
				}
				begin.release()
				<-begin.done
				if err := waitCond(ctx, func() bool {
					a, err := b.base.Get(ctx, id)
					return err == nil && a.Message.Posted() || b.g.heldBegins() > 0
				}); err != nil {
					t.Fatal("the re-sent request's job neither posted nor waited for the lease")
				}
				// Only now does the first request's record, with the lease,
				// reach the mirror.
				held.release()
				<-held.done
				b.settleAndCheck(ctx, t, id)
			})
		}
	}
}

// settleAndCheck clicks Yes on the first message of id, sweeps both
// replicas, and fails unless the end state comes: one message, posted
// once, showing the answer, the store agreeing it shows the latest.
func (b *exploreBundle) settleAndCheck(ctx context.Context, t *testing.T, id string) {
	t.Helper()
	var msgs []slackfake.Message
	if err := waitCond(ctx, func() bool { msgs = b.messagesOf(id); return len(msgs) > 0 }); err != nil {
		t.Fatal("the question was never posted")
	}
	if _, err := b.fake.ClickButtonIn(ctx, msgs[0], alice, "Yes", slackfake.Delivery{To: b.replicas[0].url}); err != nil {
		t.Fatalf("click: %v", err)
	}
	for _, r := range b.replicas {
		r.mirror.Sweep(ctx, time.Now().Add(time.Hour))
	}
	var problems []string
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
	defer wcancel()
	_ = waitCond(wctx, func() bool { problems = b.endProblems(ctx, t, id, true); return len(problems) == 0 })
	if len(problems) > 0 {
		t.Errorf("store ops %v\n  %s", b.g.log, strings.Join(problems, "\n  "))
	}
}

// messagesOf is the fake's messages that show ask id.
func (b *exploreBundle) messagesOf(id string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range b.fake.Messages() {
		if strings.Contains(string(m.Blocks), "ask/"+id+"/") {
			out = append(out, m)
		}
	}
	return out
}
