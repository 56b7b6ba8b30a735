package slackfake

import (
	"context"
	"errors"
	"testing"

	"github.com/slack-go/slack"
)

// A tick makes no Web API call, yet what the person's client shows
// changed: WaitUntil wakes (a page following the fake must re-render), and
// MessageState holds it. ClickBlockButton tells apart two blocks with the
// same action (one "Other…" per question); ClickViewButton sends a click
// from a modal as Slack does; DM names the conversation once opened.
func TestClientView(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	opt := func(text string) *slack.OptionBlockObject { return slack.NewOptionBlockObject(text, pt(text), nil) }
	other := func() *slack.ButtonBlockElement { return slack.NewButtonBlockElement("other", "other", pt("Other…")) }
	_, ts, err := api.PostMessageContext(ctx, "C0Q", slack.MsgOptionText("q", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("q0", slack.NewCheckboxGroupsBlockElement("pick", opt("a.go"), opt("b.go")), other()),
		slack.NewActionBlock("q1", other()),
	))
	if err != nil {
		t.Fatal(err)
	}

	woke, waiting := make(chan struct{}), make(chan struct{})
	go func() {
		first := true
		_ = s.WaitUntil(ctx, func() bool {
			if first {
				// WaitUntil took the change signal before this call:
				// from here on only a change wakes it.
				first = false
				close(waiting)
				return false
			}
			st := s.MessageState("C0Q", ts, alice.ID)
			e, _ := st["q0"].(map[string]any)["pick"].(map[string]any)
			list, _ := e["selected_options"].([]any)
			return len(list) == 1
		})
		close(woke)
	}()
	<-waiting
	if _, err := s.Select(ctx, alice, "C0Q", ts, "q0", []string{"b.go"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	<-got
	select {
	case <-woke:
	case <-ctx.Done():
		t.Fatal("a tick did not wake WaitUntil")
	}
	if st := s.MessageState("C0Q", ts, bob.ID); len(st["q0"].(map[string]any)["pick"].(map[string]any)["selected_options"].([]any)) != 0 {
		t.Fatalf("bob sees alice's tick: %v", st)
	}

	if _, err := s.ClickButtonByAction(ctx, alice, "C0Q", ts, "other", "", Delivery{}); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("two Other… buttons by action alone: %v, want ErrAmbiguous", err)
	}
	if _, err := s.ClickBlockButton(ctx, alice, "C0Q", ts, "q1", "other", Delivery{}); err != nil {
		t.Fatal(err)
	}
	if d := <-got; d.ic.ActionCallback.BlockActions[0].BlockID != "q1" {
		t.Fatalf("clicked block %q, want q1", d.ic.ActionCallback.BlockActions[0].BlockID)
	}

	modal := slack.ModalViewRequest{Type: slack.VTModal, Title: pt("Plan"), Close: pt("Close"), Blocks: slack.Blocks{BlockSet: []slack.Block{
		slack.NewActionBlock("pages", slack.NewButtonBlockElement("next", "2", pt("Next page"))),
	}}}
	v, err := api.OpenViewContext(ctx, s.IssueTrigger(alice.ID), modal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClickViewButton(ctx, bob, v.ID, "pages", "next", Delivery{}); !errors.Is(err, ErrClientValidation) {
		t.Fatalf("bob clicks in alice's modal: %v", err)
	}
	if _, err := s.ClickViewButton(ctx, alice, v.ID, "pages", "next", Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.ic.Container.Type != "view" || d.ic.View.ID != v.ID || d.ic.ActionCallback.BlockActions[0].Value != "2" || d.ic.Message.Timestamp != "" {
		t.Fatalf("a modal click arrived as %+v", d.ic)
	}
	// Its trigger may push onto the modal's stack.
	if _, err := api.PushViewContext(ctx, d.ic.TriggerID, modal); err != nil {
		t.Fatalf("views.push with the click's trigger: %v", err)
	}

	if _, open := s.DM(alice.ID); open {
		t.Fatal("a DM before any was opened")
	}
	ch, _, _, err := api.OpenConversationContext(context.Background(), &slack.OpenConversationParameters{Users: []string{alice.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if dm, open := s.DM(alice.ID); !open || dm != ch.ID {
		t.Fatalf("DM(alice) = %q, %v; conversations.open said %q", dm, open, ch.ID)
	}
}
