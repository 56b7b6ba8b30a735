package blocks

import (
	"fmt"
	"strings"

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

// recallLine says what was chosen last time: "Last time: *alice* chose
// *PostgreSQL* (yesterday at 10:01)", the date in each reader's time zone
// (a message is not re-rendered as days pass). The name is not a mention:
// a new message that mentions someone notifies them; an answer surface
// that named them is said beside it.
func recallLine(rc *waterfall.Recall) string {
	labels := make([]string, 0, len(rc.Selected))
	for _, l := range rc.Selected[:min(len(rc.Selected), 5)] {
		lbl, _ := strongFit(fold(l, 60), 60)
		labels = append(labels, lbl)
	}
	chose := strings.Join(labels, ", ")
	if n := len(rc.Selected) - len(labels); n > 0 {
		chose += fmt.Sprintf(" and %d more", n)
	}
	who := "*" + Escape(fold(rc.By, 40)) + "*"
	if rc.Via != "" {
		who += " (via " + Escape(fold(rc.Via, 40)) + ")"
	}
	return fmt.Sprintf(":leftwards_arrow_with_hook: Last time: %s chose %s (%s)", who, chose, slackDate(rc.At))
}
