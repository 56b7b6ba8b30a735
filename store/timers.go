package store

import (
	"context"
	"time"
)

// Timers are named schedules of asks shared by every replica: an entry
// fires at its time on whichever replica looks first, and Move, which
// only succeeds from the time the caller read, lets exactly one of the
// replicas racing on an entry act on it. Reminders are one such schedule.
type Timers interface {
	// Arm schedules callID on timer at at, unless it is scheduled already
	// (arming again changes nothing, so every post attempt may arm).
	Arm(ctx context.Context, timer, callID string, at time.Time) error
	// Fired lists up to limit entries of timer due at or before now,
	// earliest first.
	Fired(ctx context.Context, timer string, now time.Time, limit int) ([]Timer, error)
	// Move reschedules callID on timer from from (as Fired returned it) to
	// to, or removes it when to is zero. It reports false, changing
	// nothing, when the entry is gone or no longer at from: another caller
	// moved it first.
	Move(ctx context.Context, timer, callID string, from, to time.Time) (bool, error)
}

// Timer is one entry of a schedule.
type Timer struct {
	CallID string
	At     time.Time
}
