package slackfake

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/slack-go/slack"
)

// A click in a Home tab arrives as Slack sends one (real captures): the
// selection under view.state.values, no top-level state, no message, no
// channel, no response_url; container {type: view}. Ticks are kept until
// the tab is published again, and a new publish starts from its initial
// options.
func TestHomeClickShape(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	opt := func(text string) *slack.OptionBlockObject { return slack.NewOptionBlockObject(text, pt(text), nil) }
	publish := func(initial ...string) {
		t.Helper()
		boxes := slack.NewCheckboxGroupsBlockElement("pick", opt("a.go"), opt("b.go"))
		for _, i := range initial {
			boxes.InitialOptions = append(boxes.InitialOptions, opt(i))
		}
		radio := slack.NewRadioButtonsBlockElement("one", opt("red"), opt("blue"))
		home := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewActionBlock("files", boxes),
			slack.NewActionBlock("colour", radio),
			slack.NewActionBlock("go", slack.NewButtonBlockElement("submit", "go", pt("Submit"))),
		}}}
		if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: alice.ID, View: home}); err != nil {
			t.Fatal(err)
		}
	}
	publish()
	if _, err := s.ToggleHomeCheckbox(ctx, alice, "files", "b.go", Delivery{}); err != nil {
		t.Fatal(err)
	}
	tick := <-got
	if a := tick.ic.ActionCallback.BlockActions; len(a) != 1 || a[0].Type != "checkboxes" || len(a[0].SelectedOptions) != 1 {
		t.Fatalf("tick action %+v", a)
	}
	if _, err := s.SelectHome(ctx, alice, "colour", []string{"blue"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	<-got
	if _, err := s.ClickHome(ctx, alice, "", "Submit", Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(d.payload), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"state", "message", "channel", "response_url"} {
		if _, has := raw[k]; has {
			t.Errorf("a Home-tab click carries %q; Slack sends none", k)
		}
	}
	ic := d.ic
	if ic.Container.Type != "view" || ic.View.Type != slack.VTHomeTab || ic.View.Hash == "" || ic.BlockActionState != nil {
		t.Fatalf("container %+v view type %q hash %q top-level state %v", ic.Container, ic.View.Type, ic.View.Hash, ic.BlockActionState)
	}
	vals := ic.View.State.Values
	if got := selectedValues(vals["files"]["pick"].SelectedOptions); !slices.Equal(got, []string{"b.go"}) {
		t.Fatalf("view.state ticks %v", got)
	}
	if got := vals["colour"]["one"].SelectedOption.Value; got != "blue" {
		t.Fatalf("view.state radio %q", got)
	}

	publish("a.go")
	if _, err := s.ClickHome(ctx, alice, "", "Submit", Delivery{}); err != nil {
		t.Fatal(err)
	}
	vals = (<-got).ic.View.State.Values
	if got := selectedValues(vals["files"]["pick"].SelectedOptions); !slices.Equal(got, []string{"a.go"}) {
		t.Fatalf("after a new publish the tab starts from its initial options, got %v", got)
	}
	if got := vals["colour"]["one"].SelectedOption.Value; got != "" {
		t.Fatalf("after a new publish the radio is unset, got %q", got)
	}
}
