package blocks

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// FromState reads every question's choices and text from the state.values
// of a message (block_actions) or a modal (view_submission). Slack sends the
// current value of each stateful element, so this works whichever replica
// saw the earlier ticks. Option values are indexes into the stored request,
// so the labels returned are always the offered ones, never truncated.
func FromState(callID string, req *waterfall.Request, values map[string]map[string]slack.BlockAction) ([]waterfall.Picked, error) {
	out := make([]waterfall.Picked, len(req.Questions))
	for qi := range req.Questions {
		q := &req.Questions[qi]
		for _, bid := range []string{blockID(callID, qi), ChoiceBlockID(callID, qi)} {
			for aid, act := range values[bid] {
				if aid != actionID(KindCheck, -1) && aid != actionID(KindSelect, -1) && aid != InputChoices {
					continue
				}
				opts := act.SelectedOptions
				if act.SelectedOption.Value != "" {
					opts = append(opts, act.SelectedOption)
				}
				out[qi].Touched = true
				for _, o := range opts {
					oi, err := ParseOptionValue(o.Value)
					if err != nil || oi >= len(q.Options) {
						return nil, fmt.Errorf("blocks: question %q: unknown option value %q", q.ID, o.Value)
					}
					out[qi].Selected = appendUnique(out[qi].Selected, q.Options[oi].Label)
				}
			}
		}
		if act, ok := values[TextBlockID(callID, qi)][InputText]; ok {
			out[qi].Touched = true
			out[qi].Text = strings.TrimSpace(act.Value)
		}
	}
	return out, nil
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
