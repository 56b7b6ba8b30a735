package blocks

import (
	"errors"
	"slices"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// ReadClick reads every kind of click in one pass: what it records, the
// answer it gives, and why a payload holds no answer.
func TestReadClick(t *testing.T) {
	t.Parallel()
	lone := &waterfall.Request{CallID: "c1", Questions: []waterfall.Question{{ID: "db", Question: "Which?",
		Options: []waterfall.Option{{Label: "PostgreSQL"}, {Label: "MySQL"}}}}}
	two := &waterfall.Request{CallID: "c2", Questions: []waterfall.Question{lone.Questions[0],
		{ID: "files", Question: "Files?", MultiSelect: true, Options: []waterfall.Option{{Label: "a.go"}, {Label: "b.go"}}}}}
	ticked := map[string]map[string]slack.BlockAction{blockID("c2", 1): {actionID(KindCheck, -1): {
		SelectedOptions: []slack.OptionBlockObject{{Value: OptionValue(1)}}}}}
	badTick := map[string]map[string]slack.BlockAction{blockID("c2", 1): {actionID(KindCheck, -1): {
		SelectedOptions: []slack.OptionBlockObject{{Value: "9"}}}}}
	selected := func(v string) *slack.BlockAction {
		return &slack.BlockAction{SelectedOption: slack.OptionBlockObject{Value: v}}
	}
	for _, tc := range []struct {
		name    string
		a       Action
		act     *slack.BlockAction
		state   map[string]map[string]slack.BlockAction
		req     *waterfall.Request
		err     bool
		records bool
		bad     error // Unreadable (errAny: any error)
		want    []string
	}{
		{name: "pick", a: Action{Kind: KindPick, CallID: "c1", Question: 0, Option: 1}, req: lone, want: []string{"MySQL"}},
		{name: "pick out of range", a: Action{Kind: KindPick, CallID: "c1", Question: 0, Option: 2}, req: lone, err: true},
		{name: "question out of range", a: Action{Kind: KindPick, CallID: "c1", Question: 3, Option: 0}, req: lone, err: true},
		{name: "lone select", a: Action{Kind: KindSelect, CallID: "c1", Question: 0, Option: -1}, act: selected("0"), req: lone, want: []string{"PostgreSQL"}},
		{name: "lone select, unknown option", a: Action{Kind: KindSelect, CallID: "c1", Question: 0, Option: -1}, act: selected("7"), req: lone, bad: errAny},
		{name: "lone select, not a number", a: Action{Kind: KindSelect, CallID: "c1", Question: 0, Option: -1}, act: selected("x"), req: lone, bad: errAny},
		{name: "select in a batch records", a: Action{Kind: KindSelect, CallID: "c2", Question: 0, Option: -1}, act: selected("0"), req: two, records: true},
		{name: "check records", a: Action{Kind: KindCheck, CallID: "c2", Question: 1, Option: -1}, req: two, records: true},
		{name: "submit", a: Action{Kind: KindSubmit, CallID: "c2", Question: -1, Option: -1}, state: ticked, req: two, want: []string{"b.go"}},
		{name: "submit nothing", a: Action{Kind: KindSubmit, CallID: "c2", Question: -1, Option: -1}, req: two, bad: ErrNothingPicked},
		{name: "submit bad state", a: Action{Kind: KindSubmit, CallID: "c2", Question: -1, Option: -1}, state: badTick, req: two, bad: errAny},
		{name: "other", a: Action{Kind: KindOther, CallID: "c2", Question: -1, Option: -1}, state: ticked, req: two},
		{name: "preview reads nothing", a: Action{Kind: KindPreview, CallID: "c1", Question: 0, Option: 0}, req: lone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			act := tc.act
			if act == nil {
				act = &slack.BlockAction{}
			}
			c, err := ReadClick(tc.a, act, tc.state, tc.req)
			if (err != nil) != tc.err {
				t.Fatalf("ReadClick error %v, want error %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if c.Records != tc.records {
				t.Fatalf("Records %v; want %v", c.Records, tc.records)
			}
			switch {
			case tc.bad == errAny && c.Unreadable == nil, tc.bad != errAny && !errors.Is(c.Unreadable, tc.bad):
				t.Fatalf("Unreadable %v, want %v", c.Unreadable, tc.bad)
			}
			if tc.want != nil {
				var got []string
				for _, it := range c.Answer.Answers {
					got = append(got, it.Selected...)
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("answer %+v, want selected %v", c.Answer, tc.want)
				}
			}
			if tc.a.Kind == KindOther && (len(c.Picked) != 2 || !slices.Equal(c.Picked[1].Selected, []string{"b.go"})) {
				t.Fatalf("Other… starts from %+v, want b.go ticked", c.Picked)
			}
		})
	}
}

var errAny = errors.New("any error")

func TestAlreadyAnsweredEscapesWhoAndWhat(t *testing.T) {
	t.Parallel()
	req := &waterfall.Request{Questions: []waterfall.Question{{ID: "q", Question: "?", Options: []waterfall.Option{{Label: "<!channel>"}}}}}
	s := &waterfall.Settlement{Answer: waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: "q", Selected: []string{"<!channel>"}}}},
		Respondent: waterfall.Respondent{UserName: "<b>", Surface: waterfall.SurfaceAPI}}
	if got, want := AlreadyAnswered(req, s, false), "Already answered by &lt;b&gt;: &lt;!channel&gt;"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := AlreadyAnswered(req, nil, true); got != "An answer is already on its way to the agent." {
		t.Fatalf("queued, nobody: %q", got)
	}
}
