package blocks

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// The quorum phase: an open (or continued) ask that needs more than one
// approval shows its votes as they come, under its controls —
// "Approved by alice · 1 of 2 — waiting for one more" — and an ask that
// got its quorum names everyone who approved.

// withVotes adds the votes line to an open ask's message (when the ask
// needs a quorum and the line fits Slack's caps).
func withVotes(m Message, v waterfall.View) Message {
	if !v.Votes.Quorum() {
		return m
	}
	line := votesLine(v.Votes)
	bs := append(append([]slack.Block{}, m.Blocks...), note(blockID(v.CallID, -1)+"/votes", line))
	if fitsMessage(bs) {
		m.Blocks = bs
	}
	// The text is escaped already; the count needs no escaping.
	if extra := " (" + votesPlain(v.Votes) + ")"; len(m.Text)+len(extra) <= maxFallbackBytes && runes(m.Text)+runes(extra) <= maxFallbackText {
		m.Text += extra
	}
	return m
}

// votesLine is the mrkdwn votes line.
func votesLine(t waterfall.Votes) string {
	wait := "waiting for " + moreOf(t.Missing())
	if w := t.Waiting(); len(w) > 0 {
		wait += " (from " + idsLine(w) + ")"
	}
	if len(t.Approved) == 0 {
		return fmt.Sprintf(":busts_in_silhouette: Needs %d approvals from different people · 0 of %d — %s. Any decline ends it.", t.Need, t.Need, wait)
	}
	who := make([]string, len(t.Approved))
	for i, r := range t.Approved {
		who[i] = respondent(r)
	}
	return fmt.Sprintf(":white_check_mark: Approved by %s · %d of %d — %s", strings.Join(who, ", "), len(t.Approved), t.Need, wait)
}

// votesPlain is the votes line for the fallback text.
func votesPlain(t waterfall.Votes) string {
	return fmt.Sprintf("%d of %d approvals", len(t.Approved), t.Need)
}

func moreOf(n int) string {
	if n == 1 {
		return "one more"
	}
	return fmt.Sprintf("%d more", n)
}

// idsLine mentions user and user group ids (validated as Slack ids when
// the ask was stored; anything else is left out).
func idsLine(ids []string) string {
	var out []string
	for _, id := range ids {
		switch {
		case IsUserID(id):
			out = append(out, "<@"+id+">")
		case strings.HasPrefix(id, "S") && IsUserID("U"+id[1:]):
			out = append(out, "<!subteam^"+id+">")
		}
	}
	return strings.Join(out, ", ")
}

// approvedStatus is the answered message's status for an ask that got its
// quorum: every approver named, then the usual line.
func approvedStatus(s *waterfall.Settlement, status string) string {
	if s == nil || len(s.Approvers) < 2 {
		return status
	}
	who := make([]string, len(s.Approvers))
	for i, r := range s.Approvers {
		who[i] = respondent(r)
	}
	return fmt.Sprintf(":busts_in_silhouette: Approved by %s (%d approvals). %s", strings.Join(who, ", "), len(who), status)
}

// quorumReminder is a reminder's line for a quorum ask: how many approvals
// it still needs, who gave theirs, and a mention of each named approver
// still missing (ids only, never agent text).
func quorumReminder(t waterfall.Votes, what, who string, waited time.Duration) string {
	line := ":hourglass: Still waiting for " + moreOf(t.Missing()) + " approval of " + what + " from " + who + " (asked " + Span(waited) + " ago"
	if len(t.Approved) > 0 {
		names := make([]string, len(t.Approved))
		for i, r := range t.Approved {
			names[i] = bold(fold(plainName(r), maxAttr))
		}
		line += "; approved by " + strings.Join(names, ", ")
	}
	line += fmt.Sprintf(", %d of %d)", len(t.Approved), t.Need)
	if w := idsLine(t.Waiting()); w != "" {
		line += ". Still missing: " + w
	}
	return line + "."
}
