package slackbot

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// Each failed answer is told as the clicker needs it and counted once;
// only a failure on our side is an error (and "try again").
func TestRefusal(t *testing.T) {
	req := yesNo("c1")
	won := &waterfall.Settlement{
		Answer:     waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"Yes"}}}},
		Respondent: waterfall.Respondent{UserID: "U0BOB", Surface: waterfall.SurfaceSlack},
	}
	for _, tc := range []struct {
		code       string
		out        waterfall.Outcome
		msg, class string
	}{
		{waterfall.CodeAlreadySettled, waterfall.Outcome{Settlement: won}, "Already answered by <@U0BOB>: Yes", resultDuplicate},
		{waterfall.CodeAlreadySettled, waterfall.Outcome{}, "Already answered.", resultDuplicate},
		{waterfall.CodeReplyQueued, waterfall.Outcome{Settlement: won}, "An answer is already on its way to the agent by <@U0BOB>: Yes", resultDuplicate},
		{waterfall.CodeAskAborted, waterfall.Outcome{}, textWithdrawn, resultDuplicate},
		{waterfall.CodeBadAnswer, waterfall.Outcome{}, "That answer doesn't fit the question: ", resultInvalid},
		{waterfall.CodeUnavailable, waterfall.Outcome{}, tryAgain, resultError},
	} {
		msg, class := refusal(req, tc.out, waterfall.Errorf(tc.code, "x"))
		if !strings.HasPrefix(msg, tc.msg) || class != tc.class {
			t.Errorf("%s: %q %s, want %q %s", tc.code, msg, class, tc.msg, tc.class)
		}
	}
	if msg, class := refusal(req, waterfall.Outcome{}, errors.New("boom")); msg != tryAgain || class != resultError {
		t.Errorf("a plain error: %q %s", msg, class)
	}
}

// A submitted modal's answer: a decline's feedback answers the plan
// question; an Other… modal needs its text; the batch modal needs anything.
func TestModalAnswer(t *testing.T) {
	two := twoQuestions("c1")
	text := func(qi int, s string) *slack.ViewState {
		return &slack.ViewState{Values: map[string]map[string]slack.BlockAction{
			blocks.TextBlockID("c1", qi): {blocks.InputText: {Type: "plain_text_input", Value: s}},
		}}
	}
	for _, tc := range []struct {
		name     string
		question int
		decline  bool
		state    *slack.ViewState
		custom   []string // each question's custom text
		why      string
	}{
		{"other with text", 1, false, text(1, "mine"), []string{"", "mine"}, ""},
		{"other without text", 1, false, nil, nil, textNoText},
		{"batch with text", -1, false, text(0, "mine"), []string{"mine", ""}, ""},
		{"batch empty", -1, false, nil, nil, textNoAnswers},
		{"decline with feedback", 0, true, text(0, "smaller"), []string{"smaller", ""}, ""},
		{"decline without feedback", 0, true, nil, nil, textNoFeedback},
	} {
		ans, why := modalAnswer(two, blocks.Meta{CallID: "c1", Question: tc.question}, tc.decline, tc.state)
		if why != tc.why {
			t.Errorf("%s: why %q, want %q", tc.name, why, tc.why)
			continue
		}
		var custom []string
		for _, it := range ans.Answers {
			custom = append(custom, it.Custom)
		}
		if !slices.Equal(custom, tc.custom) {
			t.Errorf("%s: custom %q, want %q", tc.name, custom, tc.custom)
		}
	}
}
