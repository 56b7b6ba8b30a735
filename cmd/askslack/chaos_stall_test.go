package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/slackfake"
)

// chaosStall is how long an ask of the chaos run may make no progress
// before it counts as lost. The run has no wall-clock budget of its own: a
// loaded machine makes every step slower, and the run takes as long as its
// work does; an ask that is really lost stops moving, and is caught
// chaosStall after its last step. Healthy steps (a post, a click's
// settlement, a window closing) take seconds even on a busy machine.
const chaosStall = 90 * time.Second

// stallWatch is the chaos run's budget: a deadline per ask that moves with
// the ask's own progress. Progress is what the system did for the ask, as
// seen from outside: its message posted or changed in Slack, a new version
// of the ask seen by its watcher. Clicks are the test's own doing, not
// progress: an ask whose clicks are acknowledged and change nothing is
// stuck. A click no replica acknowledged in time is no verdict either way
// (an overloaded machine answers late; a replica that hangs for good is
// the test binary's -timeout, with every goroutine's stack), so it counts
// as a change. Until its message is posted an ask waits in its channel's
// queue, so a post or update in that channel is progress for it too. Step is one deterministic round a
// test drives with its own clock.
type stallWatch struct {
	stall    time.Duration
	seen     map[string]string    // callId → what was seen of it at its last progress
	last     map[string]time.Time // callId → when it last progressed
	reported map[string]bool
}

func newStallWatch(stall time.Duration) *stallWatch {
	return &stallWatch{stall: stall, seen: map[string]string{}, last: map[string]time.Time{}, reported: map[string]bool{}}
}

// watched is what can be seen of one ask whose agent still waits.
type watched struct {
	id string
	// seen is a fingerprint of its observable state (message, version).
	seen string
	// channel is where it is asked; posted, whether its message is up.
	channel string
	posted  bool
}

// Step takes what can be seen at now of the asks still waiting, and
// chanMoved (each channel's last post or update), and returns the asks
// that made no progress for the stall, each with the time it has been
// still; they are forgotten (reported once).
func (w *stallWatch) Step(now time.Time, asks []watched, chanMoved map[string]time.Time) map[string]time.Duration {
	lost := map[string]time.Duration{}
	for _, a := range asks {
		if w.reported[a.id] {
			continue
		}
		if prev, ok := w.seen[a.id]; !ok || prev != a.seen {
			w.seen[a.id], w.last[a.id] = a.seen, now
			continue
		}
		last := w.last[a.id]
		if m := chanMoved[a.channel]; !a.posted && m.After(last) {
			last = m
		}
		if still := now.Sub(last); still > w.stall {
			lost[a.id] = still
			w.reported[a.id] = true
		}
	}
	return lost
}

// watchChaos runs the watch over the run's asks every second until ctx
// ends: an ask that stops moving is recorded as lost and its agent's call
// is cancelled, so the run ends and reports it.
func watchChaos(ctx context.Context, t *testing.T, f *slackfake.Server, asks []*chaosAsk) {
	w := newStallWatch(chaosStall)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		msgs := map[string]string{}
		for _, m := range f.Messages() {
			if mm := askBlockID.FindStringSubmatch(string(m.Blocks)); mm != nil {
				sum := sha256.Sum256(append([]byte(m.TS+m.Text), m.Blocks...))
				msgs[mm[1]] += fmt.Sprintf("%x", sum[:8])
			}
		}
		moved := map[string]time.Time{}
		for _, method := range []string{"chat.postMessage", "chat.update"} {
			for _, c := range f.Calls(method) {
				if ch := c.Params["channel"]; c.At.After(moved[ch]) {
					moved[ch] = c.At
				}
			}
		}
		var live []watched
		byID := map[string]*chaosAsk{}
		for _, a := range asks {
			if !a.waiting.Load() {
				continue
			}
			id := a.req.CallID
			byID[id] = a
			ch := a.req.Channel
			if ch == "" {
				ch = testChannel
			}
			live = append(live, watched{id: id, seen: fmt.Sprintf("%s v%d u%d", msgs[id], a.version.Load(), a.unheard.Load()), channel: ch,
				posted: msgs[id] != ""})
		}
		lost := w.Step(time.Now(), live, moved)
		ids := make([]string, 0, len(lost))
		for id := range lost {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			a := byID[id]
			a.lost.Store(fmt.Sprintf("no progress for %s (version %d, message posted: %v)", lost[id].Round(time.Second), a.version.Load(), msgs[id] != ""))
			t.Logf("%s is lost: %s", id, a.lost.Load())
			if a.stop != nil {
				a.stop()
			}
		}
	}
}

// The chaos run's budget follows the work: an ask that keeps moving,
// however slowly, is never lost, whatever the run's length; one that stops
// is lost chaosStall after its last step, posted or not; an unposted ask
// waits as long as its channel's queue moves.
func TestChaosBudgetFollowsTheWork(t *testing.T) {
	w := newStallWatch(90 * time.Second)
	t0 := time.Unix(1_800_000_000, 0)
	moved := map[string]time.Time{}
	step := 0
	seen := map[string]string{"slow": "posted", "stuck": "posted", "queued": "", "forgotten": "", "unheard": "posted"}
	var lostAt = map[string]time.Duration{}
	// Twenty minutes, far past any fixed budget, in 10 s rounds: "slow"
	// changes every 80 s, "queued" waits unposted in a channel that moves
	// every 30 s, "unheard" is clicked every 40 s and no replica answers in
	// time, "forgotten" waits unposted in a channel that never does,
	// "stuck" was posted and never changes again.
	for now := t0; now.Before(t0.Add(20 * time.Minute)); now = now.Add(10 * time.Second) {
		if step%8 == 0 {
			seen["slow"] = fmt.Sprint("v", step)
		}
		if step%4 == 0 { // a click nobody acknowledged
			seen["unheard"] = fmt.Sprint("posted u", step)
		}
		if step%3 == 0 {
			moved["busy"] = now
		}
		step++
		var asks []watched
		for id, s := range seen {
			ch := map[string]string{"queued": "busy", "forgotten": "idle"}[id]
			asks = append(asks, watched{id: id, seen: s, channel: ch, posted: s != ""})
		}
		for id := range w.Step(now, asks, moved) {
			if _, twice := lostAt[id]; twice {
				t.Errorf("%s reported lost twice", id)
			}
			lostAt[id] = now.Sub(t0)
		}
	}
	for id, want := range map[string]time.Duration{"stuck": 100 * time.Second, "forgotten": 100 * time.Second} {
		if got, ok := lostAt[id]; !ok || got != want {
			t.Errorf("%s lost at %v (%v); want at %v", id, got, ok, want)
		}
	}
	for _, id := range []string{"slow", "queued", "unheard"} {
		if got, ok := lostAt[id]; ok {
			t.Errorf("%s, still moving, was lost at %v", id, got)
		}
	}
}
