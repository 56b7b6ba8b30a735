package waterfall

// SingleAnswer is the answer batch of a one-question ask.
func SingleAnswer(q *Question, selected []string, custom string) Answer {
	return Answer{Answers: []AnswerItem{{ID: q.ID, Selected: selected, Custom: custom}}}
}

// AnswerOf turns what a surface's controls hold into an answer batch: one item per
// question, skipped ones empty. For a single-select question, typed text
// overrides a choice (the seed: custom means selected is empty). any is
// false when nothing at all was chosen or typed.
func AnswerOf(req *Request, picked []Picked) (Answer, bool) {
	var ans Answer
	any := false
	for qi, q := range req.Questions {
		it := AnswerItem{ID: q.ID, Selected: picked[qi].Selected, Custom: picked[qi].Text}
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
