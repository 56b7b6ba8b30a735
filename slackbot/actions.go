package slackbot

import (
	"context"
	"errors"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// The handlers of the actions table. Each runs after its entry's gates, so
// it may assume what they checked: an answering handler has an allowed
// clicker and an active ask.

// answerClick answers with what the click gives: a pick's option, a lone
// select's choice, or what Submit finds in the controls.
func (b *Bot) answerClick(ctx context.Context, c *click) string {
	switch err := c.read.Unreadable; {
	case errors.Is(err, blocks.ErrNothingPicked):
		b.tell(c.fb, textNothingPicked)
		return resultInvalid
	case err != nil:
		b.log.Warn("unreadable answer", "callId", c.read.CallID, "kind", c.read.Kind, "err", err)
		return resultInvalid
	}
	return b.answer(ctx, c, c.read.Answer)
}

// other opens the "Other…" modal for typed text (the batch modal for an
// ask-wide button).
func (b *Bot) other(ctx context.Context, c *click) string {
	v := b.view(c.ask)
	// The modal starts from what was already ticked in the message (or
	// the Home tab).
	v.Picked = c.read.Picked
	return b.openView(ctx, c, blocks.OtherModal(v, max(c.read.Question, 0), c.meta()))
}

// decline opens a plan review's "Decline with feedback…" modal.
func (b *Bot) decline(ctx context.Context, c *click) string {
	v := b.view(c.ask)
	if c.read.Question < 0 {
		return resultInvalid
	}
	return b.openView(ctx, c, blocks.DeclineModal(v, c.read.Question, c.meta()))
}

// edit opens a tool permission's "Edit & allow…" form. Only an ask whose
// agent takes an edited input renders the button; a click from an older
// message of one that does not is refused.
func (b *Bot) edit(ctx context.Context, c *click) string {
	if !c.req.Editable() {
		return resultInvalid
	}
	return b.openView(ctx, c, blocks.EditModal(b.view(c.ask), c.meta()))
}

// preview opens an option's preview.
func (b *Bot) preview(ctx context.Context, c *click) string {
	v, ok := b.readable(c)
	if !ok {
		return resultInvalid
	}
	return b.openView(ctx, c, blocks.PreviewModal(v, c.read.Question, c.read.Option))
}

// fullPlan opens the question's full text and plan.
func (b *Bot) fullPlan(ctx context.Context, c *click) string {
	v, ok := b.readable(c)
	if !ok {
		return resultInvalid
	}
	return b.openView(ctx, c, blocks.DetailModal(v, c.read.Question))
}

// page shows another page of the detail modal the click came from.
func (b *Bot) page(ctx context.Context, c *click) string {
	v, ok := b.readable(c)
	if !ok {
		return resultInvalid
	}
	return b.updateView(ctx, c.ic, blocks.DetailPage(v, c.read.Question, c.read.Page))
}

// readable is the view a reading modal shows; reading needs a question.
func (b *Bot) readable(c *click) (waterfall.View, bool) {
	return b.view(c.ask), c.read.Question >= 0
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
	out, err := b.host.AnswerRecord(ctx, c.ask, ans, c.respondent())
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
		b.log.Error("answering failed", "callId", c.read.CallID, "err", err)
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
	b.tell(c.fb, blocks.AlreadyAnswered(c.req, s, false))
	// The click came from a message that still had controls: make sure it
	// shows the answer.
	b.mirror.Kick(c.ask.CallID)
	return resultDuplicate
}
