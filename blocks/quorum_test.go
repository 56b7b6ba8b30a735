package blocks

import (
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// A quorum ask's reminder says what it still needs and pings only the
// named approvers still missing; an ordinary reminder stays as it was.
func TestQuorumReminderNamesTheMissingApprovers(t *testing.T) {
	plan := planQ("1. Deploy.", "Approve", "Decline")
	v := view(request(plan))
	v.Votes = waterfall.Votes{Need: 2, Approvers: []string{"U0ALICE", "U0BOB", "S0OPS"},
		Approved: []waterfall.Respondent{{UserID: "U0ALICE", UserName: "alice <!channel>", Surface: waterfall.SurfaceSlack}}}
	m := Reminder(v, "", 20*time.Minute, false)
	for _, want := range []string{"Still waiting for one more approval", "approved by *alice &lt;!channel&gt;*", "1 of 2", "Still missing: <@U0BOB>, <!subteam^S0OPS>."} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("reminder %q lacks %q", m.Text, want)
		}
	}
	if strings.Contains(m.Text, "<@U0ALICE>") || strings.Contains(m.Text, "<!channel>") {
		t.Errorf("reminder %q pings someone who approved, or agent text", m.Text)
	}
	plain := Reminder(view(request(plan)), "", 20*time.Minute, false)
	if !strings.Contains(plain.Text, "Still waiting for an answer") {
		t.Errorf("ordinary reminder changed: %q", plain.Text)
	}
	esc := Reminder(v, "<!subteam^S0ESC> ", 20*time.Minute, true)
	if !strings.Contains(esc.Text, "escalating") {
		t.Errorf("escalation changed: %q", esc.Text)
	}
}
