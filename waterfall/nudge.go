package waterfall

import "time"

// Nudge is one reminder of an ask, as the reminder service (package
// remind) hands it to the surface that sends it.
type Nudge struct {
	Step, Steps int           // 1-based, of how many
	Waited      time.Duration // since the ask was created
	// Escalate, when set, makes this the escalation: mention these ids
	// (instead of the ask's people).
	Escalate []string
}
