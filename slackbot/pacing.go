package slackbot

import (
	"context"
	"errors"
)

// SetPostGate makes reminders ask gate before they post in a channel
// (mirror.Mirror.MayPost): questions waiting for the channel's rate limit
// go first, and a reminder spends the channel's shared budget like a
// question. Call it before the surface is used.
func (s *Surface) SetPostGate(gate func(ctx context.Context, channel string) bool) {
	s.mayPost = gate
}

// errReminderPaced postpones a reminder (remind retries it after its
// lease) while questions wait for the channel's budget or the budget is
// spent.
var errReminderPaced = errors.New("slackbot: the channel's chat.postMessage budget is spent or questions wait; the reminder waits")
