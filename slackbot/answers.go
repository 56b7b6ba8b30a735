package slackbot

import (
	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// single is the answer batch of a one-question ask.
func single(q *waterfall.Question, selected []string, custom string) waterfall.Answer {
	return waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: q.ID, Selected: selected, Custom: custom}}}
}

// batch turns what state.values hold into an answer batch: one item per
// question, skipped ones empty. For a single-select question, typed text
// overrides a choice (the seed: custom means selected is empty). any is
// false when nothing at all was chosen or typed.
func batch(req *waterfall.Request, picked []waterfall.Picked) (waterfall.Answer, bool) {
	var ans waterfall.Answer
	any := false
	for qi, q := range req.Questions {
		it := waterfall.AnswerItem{ID: q.ID, Selected: picked[qi].Selected, Custom: picked[qi].Text}
		if it.Selected == nil {
			it.Selected = []string{}
		}
		if !q.MultiSelect && it.Custom != "" {
			it.Selected = []string{}
		}
		if !q.MultiSelect && len(it.Selected) > 1 {
			it.Selected = it.Selected[:1]
		}
		any = any || len(it.Selected) > 0 || it.Custom != ""
		ans.Answers = append(ans.Answers, it)
	}
	return ans, any
}

// userName is how Slack names the person in a payload.
func userName(u slack.User) string {
	if u.Name != "" {
		return u.Name
	}
	return u.Profile.DisplayName
}
