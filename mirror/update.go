package mirror

import (
	"context"
	"errors"

	"github.com/askslack/askslack/store"
)

// syncRetries bounds how often one replica retries a failed update before
// leaving it to the sweep.
const syncRetries = 6

// sync posts the ask's message if it has none, or re-renders it if it is
// behind the ask (or, with refresh, to show a fresh countdown on an open
// ask). A failed update leaves the answer standing and is retried with
// backoff. Replicas may race to render the same ask; whoever finishes
// re-reads it and renders again when it moved on meanwhile, so the last
// word is always the latest state.
func (m *Mirror) sync(ctx context.Context, callID string, refresh bool, attempt int) {
	for range 3 {
		a, err := m.st.Get(ctx, callID)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				m.log.Warn("reading the ask to update its message failed", "callId", callID, "err", err)
				m.retryLater(callID, attempt)
			}
			return
		}
		if !a.Message.Posted() {
			m.ensurePosted(ctx, a, attempt)
			return
		}
		if !m.due(ctx, a, refresh) {
			return
		}
		refresh = false
		if !m.update(ctx, a, attempt) {
			return
		}
		cur, err := m.st.Get(ctx, callID)
		if err != nil || cur.Version == a.Version {
			return
		}
	}
}

// due reports whether a's message needs rendering now: it is behind, or a
// countdown refresh of an open ask fits the shared budget.
func (m *Mirror) due(ctx context.Context, a *store.Ask, refresh bool) bool {
	if a.Rendered < a.Version {
		return true
	}
	if !refresh || a.State != store.Open {
		return false
	}
	ok, err := m.st.Take(ctx, countdownBudget, countdownPerMinute, countdownBurst, m.clock.Now())
	if err != nil || !ok {
		m.log.Debug("countdown update skipped: budget spent", "callId", a.CallID, "err", err)
		return false
	}
	return true
}

// update renders a into its message; on failure it schedules a retry.
func (m *Mirror) update(ctx context.Context, a *store.Ask, attempt int) bool {
	if err := m.surface.Update(ctx, a); err != nil {
		m.log.Warn("updating the question message failed", "callId", a.CallID, "attempt", attempt+1, "err", err)
		if attempt+1 < syncRetries && m.surface.Refusal(err) == "" && ctx.Err() == nil {
			m.retryLater(a.CallID, attempt)
		}
		return false
	}
	m.markRendered(ctx, a)
	return true
}

// markRendered records that the message shows a's version (or that there
// is nothing to show), so the ask leaves the stale index.
func (m *Mirror) markRendered(ctx context.Context, a *store.Ask) {
	if err := m.st.MarkRendered(ctx, a.CallID, a.Version); err != nil && !errors.Is(err, store.ErrNotFound) {
		m.log.Warn("recording the rendered version failed", "callId", a.CallID, "err", err)
	}
}
