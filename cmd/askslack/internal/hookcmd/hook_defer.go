package hookcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/hook"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// deferred is --defer, for headless runs (claude -p): the callId comes from
// the hook input, so a resumed session's hook finds the question it asked
// before. A question already answered is returned at once without a second
// post; one still open is waited on; an unanswered wait prints the defer
// decision (PreToolUse; nothing for other events) and leaves the question
// open in Slack, where a late answer waits for the next run.
func (h *hookRun) deferred(ctx context.Context, p *hook.Plan) error {
	id := p.Request.CallID
	st, err := h.client.Get(ctx, id, 0)
	switch {
	case waterfall.CodeOf(err) == waterfall.CodeNotFound:
		return h.deferredAsk(ctx, p)
	case err != nil:
		return h.unreachable(err)
	}
	st, err = h.watch(ctx, st, time.Now().Add(h.wait))
	if serr := silenced(ctx); serr != nil {
		return serr // the question stays open for the next run
	}
	if ctx.Err() != nil {
		h.withdraw(id, "")
		return nil
	}
	if err != nil {
		return err
	}
	if s, ok := h.answerOf(ctx, st); ok {
		return h.print(p, s)
	}
	if st.State == "aborted" {
		fmt.Fprintln(h.errw, "askslack hook: the question was withdrawn in Slack; the agent decides")
		return nil
	}
	return h.printDefer(p)
}

func (h *hookRun) deferredAsk(ctx context.Context, p *hook.Plan) error {
	res, err := h.post(ctx, p.Request)
	switch {
	case silenced(ctx) != nil:
		return silenced(ctx)
	case ctx.Err() != nil:
		h.withdraw(p.Request.CallID, "")
		return nil
	case err != nil:
		return h.unreachable(err)
	case !res.Pending:
		return h.print(p, res.Settlement)
	}
	return h.printDefer(p)
}

func (h *hookRun) printDefer(p *hook.Plan) error {
	if !p.Deferrable {
		return nil // only PreToolUse can defer; the question stays open anyway
	}
	_, err := fmt.Fprintf(h.out, "%s\n", hook.Defer())
	return err
}

// answerOf is the answer a stored question holds: its settlement, or a late
// answer queued for the agent, which is admitted (acknowledged) here so the
// question settles in Slack.
func (h *hookRun) answerOf(ctx context.Context, st hostapi.Status) (waterfall.Settlement, bool) {
	switch {
	case st.State == "settled" && st.Respondent != nil:
		return waterfall.Settlement{Answer: waterfall.Answer{Answers: st.Answers}, Respondent: *st.Respondent}, true
	case st.State == "continued" && st.Reply != nil:
		if err := h.client.Ack(ctx, st.Agent.SessionID, st.Reply.ID); err != nil {
			fmt.Fprintln(h.errw, "askslack hook: acknowledging the late answer failed:", err)
		}
		return st.Reply.Settlement(), true
	}
	return waterfall.Settlement{}, false
}

// watch waits until the question has an answer, is withdrawn, or until.
// An open question is long-polled; a continued one waits on its session's
// late-answer queue, re-reading the question at least every few seconds.
func (h *hookRun) watch(ctx context.Context, st hostapi.Status, until time.Time) (hostapi.Status, error) {
	for {
		if st.State == "settled" || st.State == "aborted" || st.Reply != nil || !time.Now().Before(until) {
			return st, nil
		}
		left := min(time.Until(until), 5*time.Minute)
		if st.State == "open" {
			if _, err := h.client.Get(ctx, st.CallID, left); err != nil {
				return st, err
			}
		} else if msgs, err := h.client.Messages(ctx, st.Agent.SessionID, left); err != nil {
			return st, err
		} else if len(msgs) > 0 && !hasReply(msgs, st.CallID) {
			// Someone else's late answer is waiting in this session: don't spin on it.
			select {
			case <-ctx.Done():
			case <-time.After(min(2*time.Second, left)):
			}
		}
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		var err error
		if st, err = h.client.Get(ctx, st.CallID, 0); err != nil {
			return st, err
		}
	}
}

func hasReply(msgs []waterfall.SteeredMessage, callID string) bool {
	for _, m := range msgs {
		if m.CallID == callID {
			return true
		}
	}
	return false
}
