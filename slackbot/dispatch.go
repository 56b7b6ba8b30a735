package slackbot

import (
	"context"
	"errors"
	"runtime/debug"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/workspace"
)

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
	if ic.Type == slack.InteractionTypeBlockActions || ic.Type == slack.InteractionTypeViewSubmission {
		var ok bool
		if ctx, ok = b.interaction(ctx, ic); !ok {
			b.metrics.Interaction(string(ic.Type), resultRefused)
			return nil
		}
	}
	switch ic.Type {
	case slack.InteractionTypeBlockActions:
		wctx := ctx
		b.pool.Submit("", func(ctx context.Context) { b.blockActions(workspace.Carry(ctx, wctx), ic) })
		return nil
	case slack.InteractionTypeViewSubmission:
		return b.viewSubmission(ctx, ic)
	default:
		// Closing a modal (view_closed) changes nothing; other types are not ours.
		b.metrics.Interaction(string(ic.Type), resultIgnored)
		return nil
	}
}

// where returns the channel and message of a block action; both are empty
// for an action inside a modal.
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
	for _, act := range ic.ActionCallback.BlockActions {
		fb := feedbackFor(ic)
		fb.from = ctx
		result := b.route(ctx, ic, act, fb)
		b.metrics.Interaction(kind, result)
		if fb.home && (fb.notice != "" || result != resultOpened && result != resultRecorded) {
			// The tab shows what it showed when published: after an answer
			// (or a click on a question answered or gone meanwhile) it is
			// re-published with what the person may answer now, keeping
			// what they ticked in the questions still on it, and what they
			// are told about their click at the top.
			b.publishHome(ctx, ic.User.ID, homePublish{state: stateValues(ic), notice: fb.notice, hash: ic.View.Hash})
		}
	}
}

// route runs one block action through the dispatch tables: by its action
// id when it belongs to no ask (standalone), else by the kind its ids
// decode to (actions). It returns the metrics result.
func (b *Bot) route(ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction, fb *feedback) string {
	if run, ok := standalone[act.ActionID]; ok {
		return run(b, ctx, ic, act, fb)
	}
	a, err := blocks.DecodeAction(act)
	if errors.Is(err, blocks.ErrForeign) {
		return resultIgnored
	}
	if err != nil {
		b.log.Warn("undecodable action", "actionId", act.ActionID, "blockId", act.BlockID, "err", err)
		return resultInvalid
	}
	return b.action(ctx, ic, act, a, fb)
}

// standalone routes the block actions that belong to no ask, by action id:
// Enter in the rule form's match field, a rule listing's Revoke, a
// connected agent's Revoke. Each decides for itself who may use it.
var standalone = map[string]func(b *Bot, ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction, fb *feedback) string{
	blocks.RuleMatchInput:    (*Bot).refreshRuleFormAction, // rules.go
	blocks.RevokeAction:      (*Bot).revokeClick,           // rules.go
	blocks.AgentRevokeAction: (*Bot).agentRevokeClick,      // agents.go
}

// fromHome reports whether a block action came from the App Home tab: Slack
// sends the view (type "home") instead of a message.
func fromHome(ic *slack.InteractionCallback) bool {
	return ic.Container.Type == "view" && ic.View.Type == slack.VTHomeTab
}

// feedback is where what a clicker is told goes: an ephemeral in the
// conversation of the message they clicked, or, for a click on their Home
// tab, a notice at the top of the tab re-published after the click. A Home
// click names no conversation, and an ephemeral in the question's channel
// would be invisible from the Home tab (and refused, user_not_in_channel,
// for someone who is not in that channel).
type feedback struct {
	channel, user string
	// thread is the thread of the message clicked, when it is a reply (a
	// session's thread): the ephemeral shows there, where the person is.
	thread string
	home   bool
	// notice is what the re-published Home tab says (the last thing told).
	notice string
	// from carries the click's workspace (several workspaces): what the
	// clicker is told goes out with its token.
	from context.Context
}

func feedbackFor(ic *slack.InteractionCallback) *feedback {
	ch, ts := where(ic)
	thread := ic.Container.ThreadTs
	if thread == "" {
		thread = ic.Message.ThreadTimestamp
	}
	if thread == ts {
		thread = "" // the thread's parent is clicked at the top level
	}
	return &feedback{channel: ch, thread: thread, user: ic.User.ID, home: fromHome(ic)}
}

// tell tells the clicker text, where they are.
func (b *Bot) tell(f *feedback, text string) {
	if f.home {
		f.notice = text
		return
	}
	b.ephemeralIn(f.from, f.channel, f.thread, f.user, text)
}

// actionHandler is what the dispatcher does with one kind of action, after
// the click is read (load) and its gates passed (action).
type actionHandler struct {
	// permission: only allowed responders (the Authorizer) may use it.
	// Reading kinds need none: anyone who sees the message may read it.
	permission bool
	// active: it answers or starts answering, so it needs an open or
	// continued ask; on any other the clicker is told who answered.
	active bool
	// run decides and does the work, and returns the metrics result.
	run func(b *Bot, ctx context.Context, c *click) string
}

// actions routes every kind blocks renders. A kind missing here is ignored.
// A checkbox tick, or a select in a batch, only records a choice Slack keeps
// for Submit (blocks.Click.Records): it stops before the gates.
var actions = map[blocks.Kind]actionHandler{
	blocks.KindPick:     {permission: true, active: true, run: (*Bot).answerClick},
	blocks.KindSelect:   {permission: true, active: true, run: (*Bot).answerClick},
	blocks.KindCheck:    {},
	blocks.KindSubmit:   {permission: true, active: true, run: (*Bot).answerClick},
	blocks.KindOther:    {permission: true, active: true, run: (*Bot).other},
	blocks.KindDecline:  {permission: true, active: true, run: (*Bot).decline},
	blocks.KindEdit:     {permission: true, active: true, run: (*Bot).edit},
	blocks.KindPreview:  {run: (*Bot).preview},
	blocks.KindFullPlan: {run: (*Bot).fullPlan},
	blocks.KindPage:     {run: (*Bot).page},
	// Who may grant is openRuleForm's own gate (rule admins, and who may
	// answer the ask).
	blocks.KindAllowRule: {active: true, run: (*Bot).openRuleForm},
	blocks.KindDenyRule:  {active: true, run: (*Bot).openRuleForm},
}

// click is one block action read against its stored ask.
type click struct {
	ic  *slack.InteractionCallback
	act *slack.BlockAction
	// read is what the click means (blocks.ReadClick): the action, its
	// question, the answer it gives or the choice it records.
	read blocks.Click
	ask  *waterfall.Record
	req  *waterfall.Request
	// channel and ts locate the message clicked (the question's message,
	// for a click on the Home tab); empty inside a modal.
	channel, ts string
	// fb is where the clicker is told what happened.
	fb *feedback
}

func (c *click) user() string { return c.ic.User.ID }

func (c *click) respondent() waterfall.Respondent {
	return waterfall.Respondent{UserID: c.user(), UserName: userName(c.ic.User), Surface: waterfall.SurfaceSlack, Channel: c.channel, MessageTS: c.ts}
}

// meta is what a modal opened from this click carries back on submission.
func (c *click) meta() blocks.Meta {
	return blocks.Meta{CallID: c.read.CallID, Question: c.read.Question, Channel: c.channel, TS: c.ts}
}

// action handles one decoded action, top to bottom, and returns its metrics
// result: read the click against its ask (load), authorize the clicker,
// check the ask still takes answers, then decide and do it (the handler),
// telling the clicker once what became of it.
func (b *Bot) action(ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction, a blocks.Action, fb *feedback) string {
	h, ok := actions[a.Kind]
	if !ok {
		return resultIgnored
	}
	c, result := b.load(ctx, ic, act, a, fb)
	if c == nil {
		return result
	}
	if c.read.Records {
		return resultRecorded
	}
	if h.permission {
		if ok, why := b.authz.Allowed(ctx, c.user(), c.req); !ok {
			b.refused(ctx, waterfall.RefusedClick(c.ask, c.respondent(), why))
			b.tell(c.fb, why)
			return resultRefused
		}
	}
	if h.active && !c.ask.State.Active() {
		return b.answered(c)
	}
	return h.run(b, ctx, c)
}

// load reads the ask an action names and the click against it. On failure
// it returns nil and the metrics result, having told the clicker whatever
// they need to know.
func (b *Bot) load(ctx context.Context, ic *slack.InteractionCallback, act *slack.BlockAction, a blocks.Action, fb *feedback) (*click, string) {
	channel, ts := where(ic)
	// The message's own ask (its metadata) decides which ask a click in
	// it is about: a block naming another one is refused, and nothing is
	// read or changed — neither that ask answered from this message, nor
	// this message marked expired because that ask is gone.
	own := messageCall(ic)
	if own != "" && own != a.CallID {
		b.log.Warn("refusing a click whose block names another ask than its message",
			"callId", a.CallID, "messageCallId", own, "channel", channel, "ts", ts, "user", ic.User.ID)
		return nil, resultInvalid
	}
	// Current, not Get: what the click does next (settle, queue a reply)
	// is an atomic transition that decides against the stored ask.
	ask, err := b.host.Current(ctx, a.CallID)
	if err == nil && fromHome(ic) {
		// An answer from Home is the message's answer: it names the message.
		channel, ts = ask.Message.Conversation, ask.Message.ID
	}
	if err != nil {
		if waterfall.CodeOf(err) == waterfall.CodeNotFound {
			b.tell(fb, textGone)
			if own == a.CallID {
				// Only a message known to be this ask's is marked expired.
				b.expire(ctx, a.CallID, channel, ts)
			}
			return nil, resultInvalid
		}
		b.log.Error("reading ask failed", "callId", a.CallID, "err", err)
		b.tell(fb, tryAgain)
		return nil, resultError
	}
	if own == "" && ts != "" && !fromHome(ic) && ask.Message.Posted() && !ask.Message.Shows(channel, ts) {
		// No metadata to go by: the stored ask says where its messages are.
		b.log.Warn("refusing a click whose block names another ask than its message",
			"callId", a.CallID, "messageCallId", "", "channel", channel, "ts", ts, "user", ic.User.ID)
		return nil, resultInvalid
	}
	read, err := blocks.ReadClick(a, act, stateValues(ic), ask.Request)
	if err != nil {
		b.log.Warn("refusing an impossible action", "callId", a.CallID, "actionId", act.ActionID, "blockId", act.BlockID, "err", err)
		return nil, resultInvalid
	}
	return &click{ic: ic, act: act, read: read, ask: ask, req: ask.Request, channel: channel, ts: ts, fb: fb}, ""
}

// messageCall is the ask a block action's message belongs to, from the
// message's metadata; "" when the payload carries none (a Home tab or a
// modal has no message).
func messageCall(ic *slack.InteractionCallback) string {
	md := ic.Message.Metadata
	if md.EventType != metaEvent {
		return ""
	}
	id, _ := md.EventPayload["callId"].(string)
	return id
}

// expire replaces the controls of a message whose ask is gone (retention
// ran out) with a note, so nobody else clicks in vain.
func (b *Bot) expire(ctx context.Context, callID, channel, ts string) {
	if channel == "" || ts == "" {
		return
	}
	msg := blocks.Render(waterfall.View{CallID: callID, Phase: waterfall.PhaseExpired})
	err := b.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := b.api.UpdateMessageContext(ctx, channel, ts, msgOptions(msg)...)
		return err
	})
	if err != nil {
		b.log.Warn("marking an expired question's message failed", "callId", callID, "slackError", SlackError(err), "err", err)
	}
}
