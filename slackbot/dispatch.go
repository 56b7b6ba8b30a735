package slackbot

import (
	"context"
	"errors"
	"runtime/debug"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Interaction results, as counted in metrics.
const (
	resultSettled   = "settled"
	resultQueued    = "queued"
	resultDuplicate = "duplicate"
	resultRefused   = "refused"
	resultInvalid   = "invalid"
	resultIgnored   = "ignored"
	resultRecorded  = "recorded"
	resultOpened    = "opened"
	resultError     = "error"
)

// tryAgain answers a click or submission that failed on our side (the
// store unreachable): the question is still there.
const tryAgain = "Sorry, your answer could not be recorded right now. Please try again in a moment."

// Handle dispatches one interaction, whichever transport brought it, and
// returns the acknowledgement payload (nil for an empty ack). It returns
// within Slack's 3 seconds: block actions are acknowledged at once and
// worked on in the background; a modal submission is validated and settled
// before the ack, because its ack is how field errors reach the modal.
func (b *Bot) Handle(ctx context.Context, ic *slack.InteractionCallback) (ack any) {
	defer func() {
		if r := recover(); r != nil {
			b.panicked("interaction", r, debug.Stack())
			ack = nil
		}
	}()
	switch ic.Type {
	case slack.InteractionTypeBlockActions:
		b.pool.submit("", func(ctx context.Context) { b.blockActions(ctx, ic) })
		return nil
	case slack.InteractionTypeViewSubmission:
		return b.viewSubmission(ctx, ic)
	case slack.InteractionTypeViewClosed:
		b.metrics.Interaction(string(ic.Type), resultIgnored) // closing the modal changes nothing
		return nil
	default:
		b.metrics.Interaction(string(ic.Type), resultIgnored)
		return nil
	}
}

// where returns the channel and message of a block action.
func where(ic *slack.InteractionCallback) (string, string) {
	ch := ic.Container.ChannelID
	if ch == "" {
		ch = ic.Channel.ID
	}
	ts := ic.Container.MessageTs
	if ts == "" {
		ts = ic.Message.Timestamp
	}
	return ch, ts
}

func (b *Bot) blockActions(ctx context.Context, ic *slack.InteractionCallback) {
	const kind = string(slack.InteractionTypeBlockActions)
	channel, ts := where(ic)
	for _, act := range ic.ActionCallback.BlockActions {
		a, err := blocks.DecodeAction(act)
		if errors.Is(err, blocks.ErrForeign) {
			b.metrics.Interaction(kind, resultIgnored)
			continue
		}
		if err != nil {
			b.log.Warn("undecodable action", "actionId", act.ActionID, "blockId", act.BlockID, "err", err)
			b.metrics.Interaction(kind, resultInvalid)
			continue
		}
		b.metrics.Interaction(kind, b.action(ctx, ic, act, a, channel, ts))
	}
}

// action handles one decoded action and returns its metrics result.
func (b *Bot) action(ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction, a blocks.Action, channel, ts string) string {
	user := ic.User.ID
	ask, err := b.host.Get(ctx, a.CallID)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			b.ephemeral(channel, user, "This question is no longer available; answers here are not delivered to the agent.")
			b.expire(ctx, a.CallID, channel, ts)
			return resultInvalid
		}
		b.log.Error("reading ask failed", "callId", a.CallID, "err", err)
		b.ephemeral(channel, user, tryAgain)
		return resultError
	}
	req, err := waterfall.DecodeRequest(ask)
	if err != nil {
		return resultError
	}
	q, err := blocks.Resolve(a, req)
	if err != nil {
		b.log.Warn("refusing an impossible action", "callId", a.CallID, "actionId", act.ActionID, "blockId", act.BlockID, "err", err)
		return resultInvalid
	}
	who := waterfall.Respondent{UserID: user, UserName: userName(ic.User), Surface: waterfall.SurfaceSlack, Channel: channel, MessageTS: ts}
	meta := blocks.Meta{CallID: a.CallID, Question: a.Question, Channel: channel, TS: ts}

	switch a.Kind {
	case blocks.KindFullPlan, blocks.KindPreview, blocks.KindPage:
		// Reading needs no permission and works in any state.
		v, err := b.view(ask)
		if err != nil || a.Question < 0 {
			return resultInvalid
		}
		switch a.Kind {
		case blocks.KindPreview:
			return b.openView(ctx, ic, blocks.PreviewModal(v, a.Question, a.Option))
		case blocks.KindPage:
			return b.updateView(ctx, ic, blocks.DetailPage(v, a.Question, a.Page))
		}
		return b.openView(ctx, ic, blocks.DetailModal(v, a.Question))
	case blocks.KindCheck:
		return resultRecorded // Slack keeps ticks in state.values; Submit reads them
	case blocks.KindSelect:
		if len(req.Questions) > 1 {
			return resultRecorded
		}
	}

	if ok, why := b.authz.Allowed(ctx, user, req); !ok {
		b.ephemeral(channel, user, why)
		return resultRefused
	}
	if !ask.State.Active() {
		return b.answered(ctx, ask, req, channel, user)
	}

	switch a.Kind {
	case blocks.KindPick:
		return b.answer(ctx, a.CallID, req, single(q, []string{q.Options[a.Option].Label}, ""), who, channel, user)
	case blocks.KindSelect:
		oi, err := blocks.ParseOptionValue(act.SelectedOption.Value)
		if err != nil || oi >= len(q.Options) {
			return resultInvalid
		}
		return b.answer(ctx, a.CallID, req, single(q, []string{q.Options[oi].Label}, ""), who, channel, user)
	case blocks.KindSubmit:
		var values map[string]map[string]slack.BlockAction
		if ic.BlockActionState != nil {
			values = ic.BlockActionState.Values
		}
		picked, err := blocks.FromState(a.CallID, req, values)
		if err != nil {
			b.log.Warn("bad state.values", "callId", a.CallID, "err", err)
			return resultInvalid
		}
		ans, any := batch(req, picked)
		if !any {
			b.ephemeral(channel, user, "Nothing is selected yet. Choose an answer first, or use “Other…” to type one.")
			return resultInvalid
		}
		return b.answer(ctx, a.CallID, req, ans, who, channel, user)
	case blocks.KindOther:
		v, err := b.view(ask)
		if err != nil {
			return resultError
		}
		// The modal starts from what was already ticked in the message.
		if ic.BlockActionState != nil {
			v.Picked, _ = blocks.FromState(a.CallID, req, ic.BlockActionState.Values)
		}
		return b.openView(ctx, ic, blocks.OtherModal(v, max(a.Question, 0), meta))
	case blocks.KindDecline:
		v, err := b.view(ask)
		if err != nil || a.Question < 0 {
			return resultInvalid
		}
		return b.openView(ctx, ic, blocks.DeclineModal(v, a.Question, meta))
	}
	return resultIgnored
}

// expire replaces the controls of a message whose ask is gone (retention
// ran out) with a note, so nobody else clicks in vain.
func (b *Bot) expire(ctx context.Context, callID, channel, ts string) {
	if channel == "" || ts == "" {
		return
	}
	msg := blocks.Render(blocks.View{CallID: callID, Phase: waterfall.PhaseExpired})
	err := b.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, channel, ts, msgOptions(msg)...)
		return err
	})
	if err != nil {
		b.log.Warn("marking an expired question's message failed", "callId", callID, "slackError", SlackError(err), "err", err)
	}
}

// single is the answer batch of a one-question ask.
func single(q *waterfall.Question, selected []string, custom string) waterfall.Answer {
	return waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: q.ID, Selected: selected, Custom: custom}}}
}

// batch turns what state.values hold into an answer batch: one item per
// question, skipped ones empty. For a single-select question, typed text
// overrides a choice (the seed: custom means selected is empty). any is
// false when nothing at all was chosen or typed.
func batch(req *waterfall.Request, picked []blocks.Picked) (waterfall.Answer, bool) {
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

// answer settles (or queues, when late) and tells the clicker what happened
// when it was not their answer that counted.
func (b *Bot) answer(ctx context.Context, callID string, req *waterfall.Request, ans waterfall.Answer, who waterfall.Respondent, channel, user string) string {
	out, err := b.host.Answer(ctx, callID, ans, who)
	if err == nil {
		if out.Queued {
			return resultQueued
		}
		return resultSettled
	}
	msg, result := b.refusal(req, out, err)
	b.ephemeral(channel, user, msg)
	return result
}

// refusal explains a failed answer to the person who gave it.
func (b *Bot) refusal(req *waterfall.Request, out waterfall.Outcome, err error) (string, string) {
	switch waterfall.CodeOf(err) {
	case waterfall.CodeAlreadySettled:
		return alreadyText(req, out.Settlement, "Already answered"), resultDuplicate
	case waterfall.CodeReplyQueued:
		return alreadyText(req, out.Settlement, "An answer is already on its way to the agent"), resultDuplicate
	case waterfall.CodeAskAborted:
		return "The agent withdrew this question; no answer is needed.", resultDuplicate
	case waterfall.CodeBadAnswer:
		return "That answer doesn't fit the question: " + err.Error(), resultInvalid
	}
	b.log.Error("answering failed", "err", err)
	return tryAgain, resultError
}

func alreadyText(req *waterfall.Request, s *waterfall.Settlement, lead string) string {
	if s == nil {
		return lead + "."
	}
	by := "someone"
	if s.Respondent.UserID != "" && s.Respondent.Surface == waterfall.SurfaceSlack {
		by = "<@" + s.Respondent.UserID + ">"
	} else if s.Respondent.UserName != "" {
		by = blocks.Escape(s.Respondent.UserName)
	}
	return lead + " by " + by + ": " + blocks.Escape(blocks.AnswerText(req, s))
}

// answered tells a late clicker on a settled or withdrawn ask who answered.
func (b *Bot) answered(ctx context.Context, ask *store.Ask, req *waterfall.Request, channel, user string) string {
	if ask.State == store.Aborted {
		b.ephemeral(channel, user, "The agent withdrew this question; no answer is needed.")
		return resultDuplicate
	}
	s, err := waterfall.DecodeSettlement(ask)
	if err != nil {
		return resultError
	}
	b.ephemeral(channel, user, alreadyText(req, &s, "Already answered"))
	// The click came from a message that still had controls: make sure it
	// shows the answer.
	b.Changed(ask)
	return resultDuplicate
}

// openView opens a modal with the interaction's trigger, which expires 3 s
// after Slack sent it: this runs before anything slow. From inside a modal
// the new one is pushed onto the stack instead.
func (b *Bot) openView(ctx context.Context, ic *slack.InteractionCallback, v slack.ModalViewRequest) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	method, open := "views.open", b.api.OpenViewContext
	if ic.Container.Type == "view" {
		method, open = "views.push", b.api.PushViewContext
	}
	err := b.call(ctx, method, func(ctx context.Context) error {
		_, err := open(ctx, ic.TriggerID, v)
		return err
	})
	if err != nil {
		b.log.Warn("opening a modal failed", "slackError", SlackError(err), "err", err)
		ch, _ := where(ic)
		b.ephemeral(ch, ic.User.ID, "Sorry, the form could not be opened in time. Please click again.")
		return resultError
	}
	return resultOpened
}

// updateView replaces the modal the interaction came from (paging through a
// long plan), guarded by the view's hash against a concurrent update.
func (b *Bot) updateView(ctx context.Context, ic *slack.InteractionCallback, v slack.ModalViewRequest) string {
	if ic.View.ID == "" {
		return resultInvalid
	}
	err := b.call(ctx, "views.update", func(ctx context.Context) error {
		_, err := b.api.UpdateViewContext(ctx, v, "", ic.View.Hash, ic.View.ID)
		return err
	})
	if err != nil {
		b.log.Warn("updating a modal failed", "slackError", SlackError(err), "err", err)
		return resultError
	}
	return resultOpened
}

func (b *Bot) viewSubmission(ctx context.Context, ic *slack.InteractionCallback) any {
	const kind = string(slack.InteractionTypeViewSubmission)
	if ic.View.CallbackID != blocks.CallbackOther && ic.View.CallbackID != blocks.CallbackDecline {
		b.metrics.Interaction(kind, resultIgnored)
		return nil
	}
	meta, err := blocks.DecodeMeta(ic.View.PrivateMetadata)
	if err != nil {
		b.metrics.Interaction(kind, resultInvalid)
		return nil
	}
	ask, err := b.host.Get(ctx, meta.CallID)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			b.metrics.Interaction(kind, resultInvalid)
			return errorsFor(meta, "This question is no longer available.")
		}
		b.log.Error("reading ask failed", "callId", meta.CallID, "err", err)
		b.metrics.Interaction(kind, resultError)
		return errorsFor(meta, tryAgain)
	}
	req, err := waterfall.DecodeRequest(ask)
	// Question -1 is the whole batch; a decline names its plan question.
	if err != nil || meta.Question >= len(req.Questions) || meta.Question < -1 ||
		(ic.View.CallbackID == blocks.CallbackDecline && meta.Question < 0) {
		b.metrics.Interaction(kind, resultInvalid)
		return nil
	}
	if ok, why := b.authz.Allowed(ctx, ic.User.ID, req); !ok {
		b.metrics.Interaction(kind, resultRefused)
		return errorsFor(meta, why)
	}
	var values map[string]map[string]slack.BlockAction
	if ic.View.State != nil {
		values = ic.View.State.Values
	}
	picked, err := blocks.FromState(meta.CallID, req, values)
	if err != nil {
		b.metrics.Interaction(kind, resultInvalid)
		return errorsFor(meta, "That choice is not one of the offered options.")
	}
	var ans waterfall.Answer
	switch {
	case ic.View.CallbackID == blocks.CallbackDecline:
		text := picked[meta.Question].Text
		if text == "" {
			b.metrics.Interaction(kind, resultInvalid)
			return errorsFor(meta, "Say what should change, so the agent can revise the plan.")
		}
		ans, _ = batch(req, picked) // other questions of a batch stay skipped
		ans.Answers[meta.Question] = waterfall.AnswerItem{ID: req.Questions[meta.Question].ID, Selected: []string{}, Custom: text}
	case meta.Question >= 0:
		if picked[meta.Question].Text == "" {
			b.metrics.Interaction(kind, resultInvalid)
			return errorsFor(meta, "Type an answer, or close this window to go back.")
		}
		ans, _ = batch(req, picked)
	default:
		var any bool
		if ans, any = batch(req, picked); !any {
			b.metrics.Interaction(kind, resultInvalid)
			return slack.NewErrorsViewSubmissionResponse(map[string]string{
				blocks.TextBlockID(meta.CallID, 0): "Answer at least one question, or close this window to go back.",
			})
		}
	}
	who := waterfall.Respondent{UserID: ic.User.ID, UserName: userName(ic.User), Surface: waterfall.SurfaceSlack, Channel: meta.Channel, MessageTS: meta.TS}
	out, err := b.host.Answer(ctx, meta.CallID, ans, who)
	if err != nil {
		msg, result := b.refusal(req, out, err)
		b.metrics.Interaction(kind, result)
		return errorsFor(meta, msg)
	}
	if out.Queued {
		b.metrics.Interaction(kind, resultQueued)
	} else {
		b.metrics.Interaction(kind, resultSettled)
	}
	return nil // closes the modal
}

// errorsFor shows msg under the modal's text input.
func errorsFor(meta blocks.Meta, msg string) *slack.ViewSubmissionResponse {
	return slack.NewErrorsViewSubmissionResponse(map[string]string{
		blocks.TextBlockID(meta.CallID, max(meta.Question, 0)): truncate(msg, 150),
	})
}

func truncate(s string, n int) string { return blocks.Truncate(strings.TrimSpace(s), n) }

func userName(u slack.User) string {
	if u.Name != "" {
		return u.Name
	}
	return u.Profile.DisplayName
}
