package mirror

import (
	"context"
	"errors"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// syncRetries bounds how often one replica retries a failed update before
// leaving it to the sweep.
const syncRetries = 6

// sync posts the ask's message if it has none, or re-renders it if it is
// behind the ask (or, with refresh, to show a fresh countdown on an open
// ask). A failed update leaves the answer standing and is retried with
// backoff. Replicas may race to render the same ask; whoever finishes
// re-reads it and renders again when it moved on meanwhile — even when
// another replica has marked the newer version rendered, since this
// render of an older one may have reached the message after that one (a
// response_url's reply lands when it lands) — so the last word is always
// the latest state.
func (m *Mirror) sync(ctx context.Context, callID string, refresh bool, attempt int) {
	for range 3 {
		a, err := m.read(ctx, callID)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				m.log.Warn("reading the ask to update its message failed", "callId", callID, "err", err)
				m.retryLater(callID, attempt)
			}
			return
		}
		if !a.Message.Posted() {
			if m.pacer.holdPost(ctx, a, attempt) {
				return // queued for its channel's turn (pace.go)
			}
			m.ensurePosted(ctx, a, attempt)
			return
		}
		if !m.due(ctx, a, refresh) {
			return
		}
		if m.unmetered(a) {
			m.pacer.dropUpdate(a.CallID) // a token for it now would go unused
		} else if m.pacer.holdUpdate(ctx, a, refresh, attempt) {
			return // queued for a chat.update token, or a refresh dropped
		}
		refresh = false
		if m.update(ctx, a, attempt) {
			return // the message shows the latest version
		}
	}
}

// read returns the ask as the transition that kicked this job left it
// (Changed), or reads it. The record a transition returned is current
// unless another replica changed the ask since, and that replica renders
// its own change; should both render, markRendered sees who finished last.
func (m *Mirror) read(ctx context.Context, callID string) (*asktype.Ask, error) {
	m.mu.Lock()
	a := m.known[callID]
	delete(m.known, callID)
	m.mu.Unlock()
	if a != nil {
		return a, nil
	}
	return m.st.Get(ctx, callID)
}

// due reports whether a's message needs rendering now: it is behind, or a
// countdown refresh of an open ask fits the shared budget.
func (m *Mirror) due(ctx context.Context, a *asktype.Ask, refresh bool) bool {
	if a.Rendered < a.Version || m.isBehind(a.CallID) {
		return true
	}
	if !refresh || a.State != asktype.Open {
		return false
	}
	ok, err := m.st.Take(ctx, countdownBucket, m.clock.Now())
	if err != nil || !ok {
		m.log.Debug("countdown update skipped: budget spent", "callId", a.CallID, "err", err)
		return false
	}
	return true
}

// unmetered reports whether a's message is behind and its update spends
// none of the paced budget (Replier).
func (m *Mirror) unmetered(a *asktype.Ask) bool {
	r, ok := m.surface.(Replier)
	return ok && a.Rendered < a.Version && r.Unmetered(a.Message)
}

// update renders a into its message; on failure it schedules a retry. It
// reports whether the message is done: false when the ask moved on while
// it rendered (render again) or the update failed (retry scheduled).
func (m *Mirror) update(ctx context.Context, a *asktype.Ask, attempt int) bool {
	r, err := waterfall.Decode(a)
	if err == nil {
		err = m.surface.Update(ctx, r)
	}
	if err != nil {
		m.pacer.cooldown(a, false, m.surface.RetryAfter(err))
		m.log.Warn("updating the question message failed", "callId", a.CallID, "attempt", attempt+1, "err", err)
		if attempt+1 < syncRetries && m.surface.Refusal(err) == "" && ctx.Err() == nil {
			m.retryLater(a.CallID, attempt)
		}
		return true
	}
	return m.markRendered(ctx, a)
}

// markRendered records that the message shows a's version (or that there
// is nothing to show), so the ask leaves the stale index. It reports false
// only when the ask has a newer version than a.
func (m *Mirror) markRendered(ctx context.Context, a *asktype.Ask) bool {
	up, err := m.st.MarkRendered(ctx, a.CallID, a.Version)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		m.log.Warn("recording the rendered version failed", "callId", a.CallID, "err", err)
		return true // the stale index keeps it; the sweep tries again
	}
	m.setBehind(a.CallID, !up && err == nil)
	return up || err != nil
}

// maxBehind bounds the asks a mirror remembers it rendered behind.
const maxBehind = 10000

// setBehind notes (or clears) that this mirror's last render of callID
// showed a version older than the ask's: its next look renders it again
// whatever the stored rendered version says (sync).
func (m *Mirror) setBehind(callID string, behind bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case !behind:
		delete(m.behind, callID)
	case len(m.behind) < maxBehind:
		if m.behind == nil {
			m.behind = map[string]struct{}{}
		}
		m.behind[callID] = struct{}{}
	}
}

func (m *Mirror) isBehind(callID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.behind[callID]
	return ok
}
