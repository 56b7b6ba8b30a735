package slackfake

import (
	"encoding/json"
	"slices"
	"strings"
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

// views.publish with a hash replaces the tab only when the hash is the
// current one (hash_conflict otherwise, as on Slack); HoldNext lets a later
// publish overtake an earlier one.
func TestPublishHashAndHold(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	home := func(text string) slack.HomeTabViewRequest {
		return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: []slack.Block{slack.NewSectionBlock(md(text), nil, nil)}}}
	}
	first, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: alice.ID, View: home("one")})
	if err != nil {
		t.Fatal(err)
	}
	hold := s.HoldNext("views.publish")
	late := make(chan error, 1)
	go func() {
		_, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: alice.ID, View: home("old"), Hash: &first.Hash})
		late <- err
	}()
	<-hold.Arrived()
	second, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: alice.ID, View: home("new"), Hash: &first.Hash})
	if err != nil || second.Hash == first.Hash {
		t.Fatalf("publish with the current hash: %+v %v", second, err)
	}
	hold.Release()
	if err := <-late; slackErr(err) != "hash_conflict" {
		t.Fatalf("the overtaken publish: %v; want hash_conflict", err)
	}
	if v, _ := s.Home(alice.ID); !strings.Contains(string(v.JSON), `"new"`) || v.Hash != second.Hash {
		t.Fatalf("home %s", v.JSON)
	}
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: alice.ID, View: home("any")}); err != nil {
		t.Fatalf("a publish without a hash always goes: %v", err)
	}
}

// With scopes set, the fake answers what Slack answers an app installed
// with them: reading a group DM needs mpim:history, posting where the bot
// is not needs chat:write.public (public channels only).
func TestScopesAndMembership(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ctx := testCtx(t)
	mpim := s.OpenGroupDM(alice.ID, "U0BOB")
	s.SetScopes("chat:write", "channels:history")
	_, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: mpim})
	if slackErr(err) != "missing_scope" {
		t.Fatalf("history of a group DM without mpim:history: %v", err)
	}
	if _, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C0Q"}); err != nil {
		t.Fatalf("history of a public channel with channels:history: %v", err)
	}
	s.RemoveBot("C0OUT")
	if _, _, err := api.PostMessageContext(ctx, "C0OUT", slack.MsgOptionText("hi", false)); slackErr(err) != "not_in_channel" {
		t.Fatalf("post where the bot is not: %v", err)
	}
	s.SetScopes("chat:write", "chat:write.public")
	if _, _, err := api.PostMessageContext(ctx, "C0OUT", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatalf("chat:write.public posts in a public channel: %v", err)
	}
	s.RemoveBot("G0PRIV")
	if _, _, err := api.PostMessageContext(ctx, "G0PRIV", slack.MsgOptionText("hi", false)); slackErr(err) != "not_in_channel" {
		t.Fatalf("chat:write.public does not reach a private channel: %v", err)
	}
}
