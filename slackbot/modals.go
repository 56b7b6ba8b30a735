package slackbot

import (
	"context"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// openView opens a modal with the interaction's trigger, which expires 3 s
// after Slack sent it: this runs before anything slow. From inside a modal
// the new one is pushed onto the stack instead.
func (b *Bot) openView(ctx context.Context, c *click, v slack.ModalViewRequest) string {
	ic := c.ic
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	method, open := "views.open", b.api.OpenViewContext
	if ic.Container.Type == "view" && !fromHome(ic) {
		method, open = "views.push", b.api.PushViewContext
	}
	err := b.call(ctx, method, func(ctx context.Context) error {
		_, err := open(ctx, ic.TriggerID, v)
		return err
	})
	if err != nil {
		b.log.Warn("opening a modal failed", "slackError", SlackError(err), "err", err)
		b.tell(c.fb, textNoModal)
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

// viewSubmission settles what an "Other…", batch or decline modal holds.
// Its ack is the answer's only way back to the person: field errors keep
// the modal open and say what is wrong; an empty ack closes it.
func (b *Bot) viewSubmission(ctx context.Context, ic *slack.InteractionCallback) any {
	result, resp := b.submission(ctx, ic)
	b.metrics.Interaction(string(slack.InteractionTypeViewSubmission), result)
	if resp == nil {
		return nil // not a typed nil: the transports send an empty ack for nil
	}
	return resp
}

// submission handles one modal submission and returns its metrics result
// and the field errors to show (nil closes the modal).
func (b *Bot) submission(ctx context.Context, ic *slack.InteractionCallback) (string, *slack.ViewSubmissionResponse) {
	if blocks.IsRuleCallback(ic.View.CallbackID) {
		return b.ruleSubmission(ctx, ic) // rules.go
	}
	decline, edit := ic.View.CallbackID == blocks.CallbackDecline, ic.View.CallbackID == blocks.CallbackEdit
	if !decline && !edit && ic.View.CallbackID != blocks.CallbackOther {
		return resultIgnored, nil
	}
	meta, err := blocks.DecodeMeta(ic.View.PrivateMetadata)
	if err != nil {
		return resultInvalid, nil
	}
	ask, err := b.host.Current(ctx, meta.CallID)
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			return resultInvalid, errorsFor(ic, meta, textGoneModal)
		}
		b.log.Error("reading ask failed", "callId", meta.CallID, "err", err)
		return resultError, errorsFor(ic, meta, tryAgain)
	}
	req := ask.Request
	// Question -1 is the whole batch; a decline names its plan question.
	if meta.Question >= len(req.Questions) || meta.Question < -1 || ((decline || edit) && meta.Question < 0) {
		return resultInvalid, nil
	}
	who := waterfall.Respondent{UserID: ic.User.ID, UserName: userName(ic.User), Surface: waterfall.SurfaceSlack, Channel: meta.Channel, MessageTS: meta.TS}
	if ok, why := b.authz.Allowed(ctx, ic.User.ID, req); !ok {
		// The submission is acknowledged within Slack's 3 seconds: the
		// record is written in the background.
		r := waterfall.RefusedClick(ask, who, why)
		b.pool.Submit("", func(ctx context.Context) { b.refused(ctx, r) })
		return resultRefused, errorsFor(ic, meta, why)
	}
	var ans waterfall.Answer
	var why string
	if edit {
		ans, why = editAnswer(req, meta, ic.View.State)
	} else {
		ans, why = modalAnswer(req, meta, decline, ic.View.State)
	}
	if why != "" {
		return resultInvalid, errorsFor(ic, meta, why)
	}
	out, err := b.host.Answer(ctx, meta.CallID, ans, who)
	if err != nil {
		msg, result := refusal(req, out, err)
		if result == resultError {
			b.log.Error("answering failed", "callId", meta.CallID, "err", err)
		}
		return result, errorsFor(ic, meta, msg)
	}
	switch {
	case out.Voted:
		return resultVoted, nil // the message shows the vote
	case out.Queued:
		return resultQueued, nil
	}
	return resultSettled, nil
}

// modalAnswer is the answer a submitted modal holds, or why it holds none
// (shown under its text input). A decline's feedback is the plan question's
// answer, the batch's other questions stay skipped; an "Other…" modal for
// one question needs its text; the batch modal needs any answer.
func modalAnswer(req *waterfall.Request, meta blocks.Meta, decline bool, state *slack.ViewState) (waterfall.Answer, string) {
	var values map[string]map[string]slack.BlockAction
	if state != nil {
		values = state.Values
	}
	picked, err := blocks.FromState(meta.CallID, req, values)
	if err != nil {
		return waterfall.Answer{}, textNotOffered
	}
	ans, any := waterfall.AnswerOf(req, picked)
	switch {
	case decline:
		text := picked[meta.Question].Text
		if text == "" {
			return waterfall.Answer{}, textNoFeedback
		}
		ans.Answers[meta.Question] = waterfall.AnswerItem{ID: req.Questions[meta.Question].ID, Selected: []string{}, Custom: text}
	case meta.Question >= 0:
		if picked[meta.Question].Text == "" {
			return waterfall.Answer{}, textNoText
		}
	case !any:
		return waterfall.Answer{}, textNoAnswers
	}
	return ans, ""
}

// editAnswer is the allow an Edit & allow form holds: Allow, with the
// fields as edited (the Host keeps only what changed).
func editAnswer(req *waterfall.Request, meta blocks.Meta, state *slack.ViewState) (waterfall.Answer, string) {
	if !req.Editable() {
		return waterfall.Answer{}, textNoEdit
	}
	var values map[string]map[string]slack.BlockAction
	if state != nil {
		values = state.Values
	}
	edited, ok := blocks.EditedValues(meta.CallID, req.Permission, values)
	if !ok {
		return waterfall.Answer{}, textNotOffered
	}
	return waterfall.Answer{Answers: []waterfall.AnswerItem{{ID: waterfall.PermissionQuestionID,
		Selected: []string{waterfall.PermissionAllow}, Edited: edited}}}, ""
}

// errorsFor shows msg under the modal's text input (the first question's
// in the batch modal), or under the first field of an Edit & allow form.
func errorsFor(ic *slack.InteractionCallback, meta blocks.Meta, msg string) *slack.ViewSubmissionResponse {
	block := blocks.TextBlockID(meta.CallID, max(meta.Question, 0))
	if ic.View.CallbackID == blocks.CallbackEdit && ic.View.State != nil {
		block = blocks.FirstEditBlock(meta.CallID, ic.View.State.Values)
	}
	return slack.NewErrorsViewSubmissionResponse(map[string]string{block: truncate(msg, 150)})
}

func truncate(s string, n int) string { return blocks.Truncate(strings.TrimSpace(s), n) }
