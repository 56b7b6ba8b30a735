package store

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Memory's Timers (timers.go).

// memTimers is Memory's part of Timers; guarded by Memory.mu. Times are
// kept in milliseconds, as Redis keeps them.
type memTimers map[string]map[string]time.Time

// Arm implements Timers.
func (m *Memory) Arm(_ context.Context, timer, callID string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.timers == nil {
		m.timers = memTimers{}
	}
	if m.timers[timer] == nil {
		m.timers[timer] = map[string]time.Time{}
	}
	if _, ok := m.timers[timer][callID]; !ok {
		m.timers[timer][callID] = msTime(at)
	}
	return nil
}

// Fired implements Timers.
func (m *Memory) Fired(_ context.Context, timer string, now time.Time, limit int) ([]Timer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Timer
	for id, at := range m.timers[timer] {
		if !at.After(now) {
			out = append(out, Timer{CallID: id, At: at})
		}
	}
	slices.SortFunc(out, func(a, b Timer) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.CallID, b.CallID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Move implements Timers.
func (m *Memory) Move(_ context.Context, timer, callID string, from, to time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.timers[timer][callID]
	if !ok || !at.Equal(msTime(from)) {
		return false, nil
	}
	if to.IsZero() {
		delete(m.timers[timer], callID)
	} else {
		m.timers[timer][callID] = msTime(to)
	}
	return true, nil
}
