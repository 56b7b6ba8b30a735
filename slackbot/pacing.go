package slackbot

import (
	"github.com/askslack/askslack/waterfall"
)

// PostQueue is the channels' queues of posts (mirror.Mirror.Turn and
// Forgo): Turn queues key in channel's queue ahead of the questions
// waiting there and calls run, holding the channel's turn, when it comes
// (run must not block); false: the queue is full. Forgo takes key out.
type PostQueue interface {
	Turn(channel, key, group string, run func()) bool
	Forgo(channel, key string)
}

// Turns is the surface's reminders as remind.Turner over q: a reminder
// waits for its turn in the channel it will be posted in, and Remind then
// posts it at once (the turn holds the channel's budget token).
func (s *Surface) Turns(q PostQueue) Turns { return Turns{s: s, q: q} }

// Turns gives reminders their channel's turn (see Surface.Turns).
type Turns struct {
	s *Surface
	q PostQueue
}

// Turn implements remind.Turner.
func (t Turns) Turn(r *waterfall.Record, n waterfall.Nudge, key string, run func()) bool {
	channel, _, _ := t.s.reminderPlace(r, n)
	return t.q.Turn(channel, key, turnGroup(r), run)
}

// Forgo implements remind.Turner.
func (t Turns) Forgo(r *waterfall.Record, n waterfall.Nudge, key string) {
	channel, _, _ := t.s.reminderPlace(r, n)
	t.q.Forgo(channel, key)
}

// turnGroup is whose turn a reminder takes among the channel's posts: its
// session's (the mirror's fairness unit), or its own.
func turnGroup(r *waterfall.Record) string {
	if r.SessionID != "" {
		return r.SessionID
	}
	return r.CallID
}
