package hostapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Dropped blocking asks and the re-attach grace.
//
// "Somebody is attached to this ask" is one lease per ask, named
// leaseAttach, that every blocking waiter on every replica holds under the
// same holder, attachedHolder:
//
//   - a waiter marks it (Acquire for grace) when it starts and renews it
//     every grace/3 while it waits;
//   - a waiter whose caller went away marks it once more for grace (which
//     never shortens another waiter's mark: every mark lasts exactly grace)
//     and starts a grace timer;
//   - at the end of the grace the timer tries to take the lease under a
//     holder of its own. That succeeds only when no waiter marked it during
//     the last grace — nobody is attached, on any replica — and then it
//     withdraws the ask (store.Abandoned) while holding the lease, so a
//     re-attach cannot slip in between the check and the withdrawal. When
//     the lease is held the timer tries again one grace later, so a waiter
//     lost with its replica is still noticed.
//
// An asynchronous ask (Prefer: respond-async) holds the lease under
// asyncHolder for a long time: nobody waits on it, and no timer withdraws it.
const (
	leaseAttach    = "attach"
	attachedHolder = "attached"
	asyncHolder    = "async"
	asyncTTL       = 90 * 24 * time.Hour
)

// Outcomes reported to Options.OnGraceEnd.
const (
	GraceWithdrawn = "withdrawn" // nobody re-attached: the ask was withdrawn
	GraceAttached  = "attached"  // somebody is attached: checked again one grace later
	GraceEnded     = "ended"     // the ask ended (or its window closed) meanwhile
	GraceAsync     = "async"     // the ask is asynchronous: it lives on
	GraceFailed    = "failed"    // the store failed: checked again one grace later
)

// attach registers a waiter of callID until the returned stop is called;
// renewMarks keeps its attach mark while anybody's grace on the ask runs.
// It marks the ask at once only when a grace on it may be running already
// (the caller re-attaching after a drop): a grace that starts later is
// seen by the next renewal, within grace/3, long before it can end. So an
// ask nobody dropped costs the store nothing for being waited on. It holds
// no goroutine per waiter.
func (s *Server) attach(callID string) (stop func()) {
	if s.gracePending(callID) {
		s.mark(callID)
	}
	s.attachMu.Lock()
	s.attached[callID]++
	s.attachMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.attachMu.Lock()
			if s.attached[callID]--; s.attached[callID] <= 0 {
				delete(s.attached, callID)
			}
			s.attachMu.Unlock()
		})
	}
}

// renewMarks renews, every grace/3, the attach marks of this replica's
// waiters. With graces in the store only the marks someone's grace is
// waiting on need renewing (a dropped caller of the same ask, on any
// replica): one look-up a period instead of a write per waiter, so open
// asks that nobody dropped cost the store nothing while they wait.
func (s *Server) renewMarks() {
	s.marksToRenew() // learn which graces run before the first waiter comes
	for s.tick(s.grace / 3) {
		for _, id := range s.marksToRenew() {
			s.mark(id)
		}
	}
}

// tick waits d and reports true, or false when the server closes first (the
// timer is stopped, so a closed server leaves none armed).
func (s *Server) tick(d time.Duration) bool {
	t := s.clock.NewTimer(d)
	select {
	case <-s.bg.Done():
		t.Stop()
		return false
	case <-t.C:
		return true
	}
}

// marksToRenew lists the asks whose marks renewMarks renews now.
func (s *Server) marksToRenew() []string {
	s.attachMu.Lock()
	ids := make([]string, 0, len(s.attached))
	for id := range s.attached {
		ids = append(ids, id)
	}
	s.attachMu.Unlock()
	if s.graces == nil {
		return ids
	}
	// Listed even with no waiters here: attach reads it.
	pending, err := s.graces.EndedGraces(s.bg, s.clock.Now().Add(2*s.grace), 10000)
	var running map[string]bool
	if err == nil {
		running = make(map[string]bool, len(pending))
		for _, id := range pending {
			running[id] = true
		}
	}
	s.attachMu.Lock()
	s.pending = running
	s.attachMu.Unlock()
	if err != nil {
		if s.bg.Err() == nil {
			s.log.Warn("listing running graces failed; renewing every mark", "err", err)
		}
		return ids
	}
	out := ids[:0]
	for _, id := range ids {
		if running[id] {
			out = append(out, id)
		}
	}
	return out
}

// gracePending reports whether a grace on callID may be running: it was
// at the last renewal, or that is unknown (no graces in the store, no
// renewal yet, the last one failed).
func (s *Server) gracePending(callID string) bool {
	if s.graces == nil {
		return true
	}
	s.attachMu.Lock()
	defer s.attachMu.Unlock()
	return s.pending == nil || s.pending[callID]
}

// mark records that a waiter is attached to callID now; it reports the
// holder when someone else holds the lease (an async ask, a grace timer).
func (s *Server) mark(callID string) string {
	ctx, cancel := context.WithTimeout(s.bg, 5*time.Second)
	defer cancel()
	cur, err := s.leases.Acquire(ctx, callID, store.Claim{Name: leaseAttach, Hold: store.Hold{Holder: attachedHolder, TTL: s.grace, Now: s.clock.Now()}})
	if err != nil && !errors.Is(err, store.ErrHeld) && s.bg.Err() == nil {
		s.log.Warn("marking a blocking ask attached failed", "callId", callID, "err", err)
	}
	if errors.Is(err, store.ErrHeld) {
		return cur
	}
	if err == nil {
		s.attachMu.Lock()
		s.marked[callID] = true
		s.attachMu.Unlock()
	}
	return ""
}

// Graces keeps the graces of dropped callers where every replica sees
// them (the store).
type Graces = store.Graces

// detach starts the grace of a blocking ask whose caller went away.
func (s *Server) detach(callID string) {
	if s.mark(callID) == asyncHolder {
		return
	}
	s.remember(callID)
	s.attachMu.Lock()
	if s.pending != nil {
		// A re-attach here marks at once. Copied: renewals read the map
		// they published without the lock.
		p := maps.Clone(s.pending)
		p[callID] = true
		s.pending = p
	}
	s.attachMu.Unlock()
	s.log.Debug("a blocking ask's caller went away; waiting for a re-attach", "callId", callID, "grace", s.grace.String())
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		for {
			t := s.clock.NewTimer(s.grace)
			select {
			case <-s.bg.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if out := s.decide(callID); out != GraceAttached && out != GraceFailed {
				return
			}
		}
	}()
}

// decide settles a grace that ended (graceEnd), keeps the store's record
// of it in step and reports the outcome.
func (s *Server) decide(callID string) string {
	out := s.graceEnd(callID)
	if out == GraceAttached || out == GraceFailed {
		s.remember(callID) // look again one grace later, whoever is still up
	} else if s.graces != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.bg), 5*time.Second)
		defer cancel()
		if err := s.graces.EndGrace(ctx, callID); err != nil {
			s.log.Warn("forgetting a decided grace failed", "callId", callID, "err", err)
		}
	}
	if s.onGraceEnd != nil {
		s.onGraceEnd(callID, out)
	}
	return out
}

// remember records in the store that callID's grace ends one grace from now.
func (s *Server) remember(callID string) {
	if s.graces == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.bg, 5*time.Second)
	defer cancel()
	if err := s.graces.StartGrace(ctx, callID, s.clock.Now().Add(s.grace)); err != nil && s.bg.Err() == nil {
		s.log.Warn("recording a dropped caller's grace failed; only this replica will decide it", "callId", callID, "err", err)
	}
}

// sweepGraces decides, every half grace, the graces the store says have
// ended: those of replicas that died before deciding them, and any this
// replica's own timer has not reached yet (the lease makes a double
// decision harmless).
func (s *Server) sweepGraces() {
	for s.tick(s.grace / 2) {
		ids, err := s.graces.EndedGraces(s.bg, s.clock.Now(), 100)
		if err != nil && s.bg.Err() == nil {
			s.log.Warn("listing ended graces failed", "err", err)
		}
		for _, id := range ids {
			s.decide(id)
		}
	}
}

// graceEnd withdraws callID if nobody attached to it during the last grace.
func (s *Server) graceEnd(callID string) string {
	ctx, cancel := context.WithTimeout(s.bg, 10*time.Second)
	defer cancel()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	holder := "grace-" + hex.EncodeToString(b)
	cur, err := s.leases.Acquire(ctx, callID, store.Claim{Name: leaseAttach, Hold: store.Hold{Holder: holder, TTL: 30 * time.Second, Now: s.clock.Now()}})
	switch {
	case errors.Is(err, store.ErrHeld) && cur == asyncHolder:
		return GraceAsync
	case errors.Is(err, store.ErrHeld):
		return GraceAttached
	case err != nil:
		s.log.Warn("checking whether anybody re-attached failed; checking again later", "callId", callID, "err", err)
		return GraceFailed
	}
	defer func() { _ = s.leases.Release(context.WithoutCancel(ctx), callID, leaseAttach, holder) }()
	a, err := s.host.Get(ctx, callID)
	switch {
	case waterfall.CodeOf(err) == waterfall.CodeNotFound:
		return GraceEnded
	case err != nil:
		s.log.Warn("reading an abandoned ask failed; checking again later", "callId", callID, "err", err)
		return GraceFailed
	case a.State != asktype.Open:
		return GraceEnded
	case !a.Deadline.IsZero() && !s.clock.Now().Before(a.Deadline):
		// The window has closed: whoever comes back gets pending, and a
		// late answer still reaches the session.
		return GraceEnded
	}
	_, err = s.host.Withdraw(ctx, callID, asktype.Abandoned)
	switch {
	case err == nil:
		s.log.Info("withdrew an ask whose caller went away and did not re-attach", "callId", callID, "grace", s.grace)
		return GraceWithdrawn
	case waterfall.CodeOf(err) == waterfall.CodeAlreadySettled, waterfall.CodeOf(err) == waterfall.CodeNotFound:
		return GraceEnded
	}
	s.log.Warn("withdrawing an abandoned ask failed; trying again later", "callId", callID, "err", err)
	return GraceFailed
}

// release drops the attach mark of an ask that ended, if this replica
// wrote one: nobody needs it.
func (s *Server) release(callID string) {
	s.attachMu.Lock()
	marked := s.marked[callID]
	delete(s.marked, callID)
	s.attachMu.Unlock()
	if !marked {
		return
	}
	ctx, cancel := context.WithTimeout(s.bg, 5*time.Second)
	defer cancel()
	_ = s.leases.Release(ctx, callID, leaseAttach, attachedHolder)
}

// markAsync makes callID live on with nobody attached.
func (s *Server) markAsync(ctx context.Context, callID string) error {
	_, err := s.leases.Acquire(ctx, callID, store.Claim{Name: leaseAttach, Hold: store.Hold{Holder: asyncHolder, TTL: asyncTTL, Now: s.clock.Now()}})
	if errors.Is(err, store.ErrHeld) {
		// Another asynchronous request, or waiters: take it over from them.
		if err = s.leases.Release(ctx, callID, leaseAttach, attachedHolder); err == nil {
			_, err = s.leases.Acquire(ctx, callID, store.Claim{Name: leaseAttach, Hold: store.Hold{Holder: asyncHolder, TTL: asyncTTL, Now: s.clock.Now()}})
		}
		if errors.Is(err, store.ErrHeld) {
			err = nil // already async, or a grace timer deciding right now
		}
	}
	return err
}
