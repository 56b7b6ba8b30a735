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
	// Unposted, on the escalation, counts the reminders before it that
	// were not posted by its time (their channel had no turn for them, or
	// Slack failed): they are dropped, and the page says so.
	Unposted int
}
