package slackbot

import (
	"context"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// The handlers of the actions table. Each runs after its entry's gates, so
// it may assume what they checked: an answering handler has an allowed
// clicker and an active ask.

// pick answers a single-select question with the button's option.
func (b *Bot) pick(ctx context.Context, c *click) string {
	return b.answer(ctx, c, single(c.q, []string{c.q.Options[c.action.Option].Label}, ""))
}

// selectOne answers a lone question with the option chosen in its radio
// buttons or menu.
func (b *Bot) selectOne(ctx context.Context, c *click) string {
	oi, err := blocks.ParseOptionValue(c.act.SelectedOption.Value)
	if err != nil || oi >= len(c.q.Options) {
		return resultInvalid
	}
	return b.answer(ctx, c, single(c.q, []string{c.q.Options[oi].Label}, ""))
}

// submit settles what the message's controls hold in state.values.
func (b *Bot) submit(ctx context.Context, c *click) string {
	picked, err := blocks.FromState(c.action.CallID, c.req, stateValues(c.ic))
	if err != nil {
		b.log.Warn("bad state.values", "callId", c.action.CallID, "err", err)
		return resultInvalid
	}
	ans, any := batch(c.req, picked)
	if !any {
		b.tell(c.fb, textNothingPicked)
		return resultInvalid
	}
	return b.answer(ctx, c, ans)
}

// other opens the "Other…" modal for typed text (the batch modal for an
// ask-wide button).
func (b *Bot) other(ctx context.Context, c *click) string {
	v := b.view(c.ask)
	// The modal starts from what was already ticked in the message (or
	// the Home tab).
	v.Picked, _ = blocks.FromState(c.action.CallID, c.req, stateValues(c.ic))
	return b.openView(ctx, c, blocks.OtherModal(v, max(c.action.Question, 0), c.meta()))
}

// decline opens a plan review's "Decline with feedback…" modal.
func (b *Bot) decline(ctx context.Context, c *click) string {
	v := b.view(c.ask)
	if c.action.Question < 0 {
		return resultInvalid
	}
	return b.openView(ctx, c, blocks.DeclineModal(v, c.action.Question, c.meta()))
}

// preview opens an option's preview.
func (b *Bot) preview(ctx context.Context, c *click) string {
	v, ok := b.readable(c)
	if !ok {
		return resultInvalid
	}
	return b.openView(ctx, c, blocks.PreviewModal(v, c.action.Question, c.action.Option))
}

// fullPlan opens the question's full text and plan.
func (b *Bot) fullPlan(ctx context.Context, c *click) string {
	v, ok := b.readable(c)
	if !ok {
		return resultInvalid
	}
	return b.openView(ctx, c, blocks.DetailModal(v, c.action.Question))
}

// page shows another page of the detail modal the click came from.
func (b *Bot) page(ctx context.Context, c *click) string {
	v, ok := b.readable(c)
	if !ok {
		return resultInvalid
	}
	return b.updateView(ctx, c.ic, blocks.DetailPage(v, c.action.Question, c.action.Page))
}

// readable is the view a reading modal shows; reading needs a question.
func (b *Bot) readable(c *click) (waterfall.View, bool) {
	return b.view(c.ask), c.action.Question >= 0
}

// stateValues is the selection a block action carries: Slack sends a
// message's in the top-level state, and a view's (the Home tab, a modal)
// in view.state, with no top-level state (real Home-tab captures).
// Whichever Slack sent is read.
func stateValues(ic *slack.InteractionCallback) map[string]map[string]slack.BlockAction {
	switch {
	case ic.Container.Type == "view" && ic.View.State != nil:
		return ic.View.State.Values
	case ic.BlockActionState != nil:
		return ic.BlockActionState.Values
	case ic.View.State != nil:
		return ic.View.State.Values
	}
	return nil
}

// answer settles (or queues, when late) and tells the clicker what happened
// when it was not their answer that counted.
func (b *Bot) answer(ctx context.Context, c *click, ans waterfall.Answer) string {
	// Before the answer: the mirror job it starts may run at once.
	b.adoptClicked(ctx, c)
	b.offerClickURL(c)
	out, err := b.host.Answer(ctx, c.action.CallID, ans, c.respondent())
	if err == nil {
		switch {
		case out.Voted:
			b.tell(c.fb, votedText(out))
			return resultVoted
		case out.Queued:
			return resultQueued
		}
		return resultSettled
	}
	msg, result := refusal(c.req, out, err)
	if result == resultError {
		b.log.Error("answering failed", "callId", c.action.CallID, "err", err)
	}
	b.tell(c.fb, msg)
	return result
}

// answered tells a late clicker on a settled or withdrawn ask who answered.
func (b *Bot) answered(c *click) string {
	if c.ask.Phase == waterfall.PhaseAborted {
		b.tell(c.fb, textWithdrawn)
		return resultDuplicate
	}
	s := c.ask.Answered()
	if s == nil {
		return resultError
	}
	b.tell(c.fb, alreadyText(c.req, s, leadSettled))
	// The click came from a message that still had controls: make sure it
	// shows the answer.
	b.mirror.Kick(c.ask.CallID)
	return resultDuplicate
}
