package slackbot

import (
	"context"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// RuleNotices posts, in the session's thread, a one-line notice of each ask
// a standing rule answered (ASKSLACK_RULE_NOTICES=thread), so the people
// following a session see what was allowed or denied without them. Only
// with session threads (ASKSLACK_THREADS=session): in the channel itself
// the notices would be the noise rules exist to remove.
type RuleNotices struct {
	s   *Surface
	sem chan struct{}
}

// maxNoticePosts bounds the notices being posted at once; beyond it a
// notice is dropped (logged): they are for information only.
const maxNoticePosts = 8

// NewRuleNotices returns the notices of surface s.
func NewRuleNotices(s *Surface) *RuleNotices {
	return &RuleNotices{s: s, sem: make(chan struct{}, maxNoticePosts)}
}

// Answered implements engine.RuleOptions.Answered: it never blocks.
func (n *RuleNotices) Answered(a *waterfall.Record, r asktype.Rule) {
	req := a.Request
	if n.s.keeper == nil || a.SessionID == "" {
		return // no session threads
	}
	select {
	case n.sem <- struct{}{}:
	default:
		n.s.log.Warn("rule notice dropped: too many being posted", "callId", a.CallID, "rule", r.ID)
		return
	}
	go func() {
		defer func() { <-n.sem }()
		ctx, cancel := context.WithTimeout(forAsk(context.Background(), req), 30*time.Second)
		defer cancel()
		if err := n.post(ctx, a, req, r); err != nil {
			n.s.log.Warn("posting a rule notice failed", "callId", a.CallID, "rule", r.ID, "slackError", SlackError(err), "err", err)
		}
	}()
}

func (n *RuleNotices) post(ctx context.Context, a *waterfall.Record, req *waterfall.Request, r asktype.Rule) error {
	rt := n.s.route(ctx, req)
	if rt.channel == "" {
		return nil
	}
	thread, _, err := n.s.threadOf(ctx, rt.channel, a, req)
	if err != nil || thread == "" {
		return err
	}
	answer := "Allowed"
	if r.Effect == "deny" {
		answer = "Denied"
	}
	what := req.Permission.Tool
	if p := req.Permission.Command + req.Permission.Path; p != "" {
		what = p
	}
	item := blocks.RuleItem{ID: r.ID, Effect: r.Effect, Match: waterfall.GrammarRule(r).String(), By: r.GrantedBy}
	m := chatMessage(rt.channel, blocks.Message{Text: blocks.RuleNotice(req.Agent.ID, answer, item, what)})
	m.ThreadTS = thread
	return call(ctx, n.s.caller, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		_, _, err := n.s.chat.PostMessage(ctx, m)
		return err
	})
}
