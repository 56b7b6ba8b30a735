package blocks

import (
	"fmt"
	"strings"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// Answer memory (waterfall/recall.go): a question asked before says what
// was chosen last time, and offers that first. It is a hint: nothing is
// preselected.

// recallOf is what was chosen last time for question qi of v, or nil: only
// while the ask takes answers, only options it still offers.
func recallOf(v waterfall.View, qi int) *waterfall.Recall {
	if v.Request == nil || len(v.Request.Recall) == 0 || !v.Request.Recalls() || qi < 0 || qi >= len(v.Request.Questions) {
		return nil
	}
	q := &v.Request.Questions[qi]
	rc := v.Request.Recalled(q.ID)
	if !rc.Offered(q) {
		return nil
	}
	return rc
}

// recalledFirst is q's option indexes with rc's choices first, in the
// order the agent gave them.
func recalledFirst(q *waterfall.Question, rc *waterfall.Recall) []int {
	out := make([]int, 0, len(q.Options))
	if rc != nil {
		for oi, o := range q.Options {
			if contains(rc.Selected, o.Label) {
				out = append(out, oi)
			}
		}
	}
	for oi, o := range q.Options {
		if rc == nil || !contains(rc.Selected, o.Label) {
			out = append(out, oi)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// recallLine says what was chosen last time: "Last time: *alice* chose
// *PostgreSQL* (2 days ago)". The name is not a mention: a new message
// that mentions someone notifies them.
func recallLine(rc *waterfall.Recall, now time.Time) string {
	labels := make([]string, 0, len(rc.Selected))
	for _, l := range rc.Selected[:min(len(rc.Selected), 5)] {
		lbl, _ := strongFit(fold(l, 60), 60)
		labels = append(labels, lbl)
	}
	chose := strings.Join(labels, ", ")
	if n := len(rc.Selected) - len(labels); n > 0 {
		chose += fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf(":leftwards_arrow_with_hook: Last time: *%s* chose %s (%s)", Escape(fold(rc.By, 60)), chose, ago(now.Sub(rc.At)))
}

// ago says how long ago d was, coarsely.
func ago(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return "just now"
	case d < 2*time.Hour:
		return fmt.Sprintf("%d minutes ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}
