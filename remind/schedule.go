// Package remind nudges people about questions nobody answers: at each
// offset of a schedule after an ask was created (ASKSLACK_REMIND=15m,1h),
// while the ask is still waiting, a reply in the question's thread
// mentions its people again; one interval after the last reminder the
// escalation group (ASKSLACK_ESCALATE) is mentioned, once.
//
// The schedule lives in the store as a timer every replica reads, so a
// reminder survives the replica that scheduled it; of the replicas that
// see a reminder due, the one that moves its timer first sends it (the
// timer moves one lease ahead while it sends — never past the escalation's
// time — so a replica that dies mid-send leaves it to another). Reminders
// share a Slack budget, stop the moment the ask is answered or withdrawn,
// and skip to the latest due step after an outage instead of sending a
// burst of stale ones.
//
// With a Turner (the mirror's pacing), a reminder waits for its turn at
// the front of its channel's queue of posts, not for a lease, and the
// sweep goes on meanwhile. Nothing at the escalation step waits for
// Slack: an Escalator (Sender.EscalateTo; pager pages the on-call) acts
// at its time whether or not the reminders before it could be posted —
// those not posted by then are dropped, and the Escalator is told how
// many (waterfall.Nudge.Unposted) — and the Slack mention, if any, follows
// when the channel's turn comes. With an Escalator the schedule has an
// escalation step even when nobody is to be mentioned.
package remind

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Schedule is when an ask's reminders fire, counted from its creation,
// and whom the last word escalates to.
type Schedule struct {
	// After lists the reminders' offsets, ascending and positive.
	After []time.Duration
	// Escalate names user or user-group ids mentioned once, one interval
	// (the gap between the last two reminders) after the last reminder.
	Escalate []string
}

// ParseOffsets reads a list such as "15m,1h" (Go durations, ascending).
func ParseOffsets(list []string) ([]time.Duration, error) {
	var out []time.Duration
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration such as 15m or 1h", s)
		}
		if d < time.Second {
			return nil, fmt.Errorf("%q is under a second", s)
		}
		if len(out) > 0 && d <= out[len(out)-1] {
			return nil, fmt.Errorf("%q does not come after %s: list the offsets in ascending order", s, out[len(out)-1])
		}
		out = append(out, d)
	}
	if len(out) > maxSteps {
		return nil, fmt.Errorf("%d reminders; at most %d", len(out), maxSteps)
	}
	return out, nil
}

// maxSteps bounds a schedule: more reminders than this are spam.
const maxSteps = 10

// ErrEscalateAlone refuses an escalation with no reminders to follow.
var ErrEscalateAlone = errors.New("an escalation fires one interval after the last reminder: it needs ASKSLACK_REMIND")

// Validate checks s.
func (s Schedule) Validate() error {
	if len(s.After) == 0 && len(s.Escalate) > 0 {
		return ErrEscalateAlone
	}
	if !slices.IsSorted(s.After) {
		return errors.New("reminder offsets must ascend")
	}
	return nil
}

// step is one nudge of the schedule.
type step struct {
	at       time.Duration // after creation
	escalate bool
}

// steps lists the nudges in order: the reminders, then the escalation
// (when someone is to be mentioned, or escalate: an Escalator acts then).
func (s Schedule) steps(escalate bool) []step {
	out := make([]step, 0, len(s.After)+1)
	for _, d := range s.After {
		out = append(out, step{at: d})
	}
	if n := len(s.After); n > 0 && (len(s.Escalate) > 0 || escalate) {
		gap := s.After[n-1]
		if n > 1 {
			gap -= s.After[n-2]
		}
		out = append(out, step{at: s.After[n-1] + gap, escalate: true})
	}
	return out
}

// due returns the index of the latest step due at age, or -1.
func due(steps []step, age time.Duration) int {
	k := -1
	for i, st := range steps {
		if st.at <= age {
			k = i
		}
	}
	return k
}
