package mirror

import (
	"context"
	"slices"
	"time"

	"github.com/askslack/askslack/asktype"
)

// A replica that stops owes the messages it was keeping in step: updates
// queued for a chat.update token, posts queued for their channel's turn,
// retries not yet due, jobs cut short. It pays what it can before it goes
// and hands the rest over; dropping it left answered questions showing
// live buttons until another replica's sweep, a minute later, at every
// rolling update.
//
// Stop's budget (the service gives the message phase 10 s; Kubernetes'
// default grace is 30 s for the whole shutdown) is spent thus: until
// handoffMargin before its end, the lanes are drained — updates and posts
// go as the shared budget gives tokens, and up to updateReserve answered
// questions' updates go past it — and the pool finishes its jobs (retries
// that come due meanwhile run too). Then what is still owed is handed over
// (store.Messages.Handoff): filed first in the stale index, and every
// other replica, told on the change feed, sweeps it at once. The post
// leases this replica took at creation for posts still queued are given
// back first, so another replica can post them without waiting for the
// lease to run out.

// handoffMargin is what a stopping mirror keeps of its budget to hand over
// what it could not render.
const handoffMargin = 1500 * time.Millisecond

// drainWithout is the drain's length when Stop's ctx has no deadline.
const drainWithout = 8 * time.Second

func (m *Mirror) drain(ctx context.Context) {
	start := m.clock.Now()
	until := start.Add(drainWithout)
	if d, ok := ctx.Deadline(); ok {
		until = d.Add(-handoffMargin)
	}
	dctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	// The lanes hand their jobs to the pool and the pool's jobs queue
	// calls in the lanes: drain until both are quiet together.
	for {
		if !m.pacer.drain(dctx) || !m.pool.Idle(dctx) || m.pacer.empty() {
			break
		}
	}
	left := m.pacer.stop()
	m.pool.Stop(dctx)

	owed := append(left, m.takeOwed()...)
	// Create's leases no job used: the posts they were for wait no more
	// here, and the attempts Create recorded with them were never made.
	hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), handoffMargin)
	defer hcancel()
	for id, l := range m.takeAllFresh() {
		m.abandon(hctx, id, l.Holder)
		owed = append(owed, id)
	}
	slices.Sort(owed)
	owed = slices.Compact(owed)
	if len(owed) == 0 {
		m.log.Info("stopped with every message in step", "took", m.clock.Now().Sub(start).String())
		return
	}
	if err := m.st.Handoff(hctx, owed); err != nil {
		m.log.Warn("handing over the messages this replica could not bring up to date failed; other replicas' sweeps find them",
			"asks", len(owed), "err", err)
		return
	}
	m.log.Info("handed over the messages this replica could not bring up to date as it stopped", "asks", len(owed),
		"took", m.clock.Now().Sub(start).String())
}

// handOverLate hands over the job of an ask that changed, or whose retry
// came due, after this mirror stopped: the change's own stale entry waits
// for a sweep otherwise. Stop's order (the bot's interaction work before
// the mirror) makes it rare.
func (m *Mirror) handOverLate(callID string) {
	ctx, cancel := context.WithTimeout(context.Background(), handoffMargin)
	defer cancel()
	if err := m.st.Handoff(ctx, []string{callID}); err != nil {
		m.log.Warn("handing over a message after stopping failed; other replicas' sweeps find it", "callId", callID, "err", err)
		return
	}
	m.log.Info("handed over a message that changed after this replica stopped", "callId", callID)
}

// owe notes that callID's job must still run.
func (m *Mirror) owe(callID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owed == nil {
		m.owed = map[string]struct{}{}
	}
	m.owed[callID] = struct{}{}
}

// paid notes that callID's owed job runs.
func (m *Mirror) paid(callID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.owed, callID)
}

func (m *Mirror) takeOwed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.owed))
	for id := range m.owed {
		out = append(out, id)
	}
	clear(m.owed)
	return out
}

func (m *Mirror) takeAllFresh() map[string]asktype.PostLease {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.fresh
	m.fresh = nil
	return out
}
