package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// codeVotesMoved: the ask holds another number of votes than the decision
// saw (store.ErrVotesMoved).
const codeVotesMoved = 8

// voteScript applies one decided answer (store.Votes): it records the vote
// and, when the decision settles, settles an open ask or queues the late
// reply of a continued one, in one step with the vote, the audit event
// and the hint. The votes are a JSON array in the ask's "votes" field, and
// their number in "nvotes", which the decision's count is checked against.
// An answer at or past an open ask's deadline closes the window instead,
// as settleScript does, and returns 7.
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] the state the decision
// saw, ARGV[2] the votes it saw, ARGV[3] the vote's JSON entry, ARGV[4]
// "1" to settle, ARGV[5] the settlement (or reply) JSON, ARGV[6] at ms,
// ARGV[7] retention ms, then audited's six.
var voteScript = redis.NewScript(luaHead + `
if state ~= ARGV[1] then return result(2) end
if state == 'open' then
  if deadline > 0 and tonumber(ARGV[6]) >= deadline then
    set('state', 'continued')
    audit('continued', '', 'the window closed: an answer came late')
    redis.call('PEXPIREAT', KEYS[1], deadline + tonumber(ARGV[7]))
    return result(7)
  end
end
local held = redis.call('HMGET', KEYS[1], 'nvotes', 'votes', 'reply')
if state ~= 'open' and held[3] then return result(4) end
local n = tonumber(held[1] or '0')
if n ~= tonumber(ARGV[2]) then return result(8) end
local votes = held[2]
if not votes or votes == '' then
  votes = '[' .. ARGV[3] .. ']'
else
  votes = string.sub(votes, 1, -2) .. ',' .. ARGV[3] .. ']'
end
if ARGV[4] ~= '1' then
  set('votes', votes, 'nvotes', n + 1)
  audit('voted')
elseif state == 'open' then
  set('votes', votes, 'nvotes', n + 1, 'state', 'settled', 'settlement', ARGV[5], 'settledAt', ARGV[6])
  audit('answered')
  redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[6]) + tonumber(ARGV[7]))
else
  set('votes', votes, 'nvotes', n + 1, 'reply', ARGV[5], 'replyAt', ARGV[6])
  audit('queued')
end
return result(0)
`)

// Vote implements store.Votes. The answer that settles an open ask with
// no vote before it (the default policy: every answer) is the hot path of
// every click: one round trip, the pipeline Settle sends (the ask leaves
// the open and timed indexes with it, and is filed stale first). Every
// other vote (one that waits, one that completes a count, a continued
// ask's) is a transition like QueueReply's.
func (r *Store) Vote(ctx context.Context, callID string, p store.VoteParams) (*asktype.Ask, error) {
	entry, err := store.VoteEntry(p)
	if err != nil {
		return nil, err
	}
	settle := "0"
	if p.Settle {
		settle = "1"
	}
	who, detail := store.VoteAudit(p)
	ev := auditArgs{at: p.At, who: who, detail: detail}
	args := []any{string(p.State), p.Seen, string(entry), settle, string(p.Settlement), ms(p.At), r.retention.Milliseconds()}
	if !p.Settle || p.State != asktype.Open || p.Seen != 0 {
		return r.transition(ctx, voteScript, callID, ev, args...)
	}
	ctx, err = begin(ctx)
	if err != nil {
		return nil, err
	}
	defer r.hub.Begin(callID)()
	a, code, err := r.settling(ctx, callID, voteScript, ev, args...)
	if err != nil {
		return nil, err
	}
	switch {
	case code == codeLate:
		r.notify(ctx, a) // continued: filed under its new state
	case a.State == asktype.Open:
		r.refile(ctx, a)
	}
	if code == codeOK || code == codeLate {
		r.kickChainer()
	}
	return r.outcome(a, code)
}

// refile puts back an ask the hot path's pipeline dropped from the open
// and timed indexes although the script left it open: a vote decided on no
// votes found some (replicas running different policies for a moment,
// while a quorum setting rolls out). The state set is written directly,
// not through fileScript: the version it last filed may be the ask's
// current one, and only this pipeline's own ZREM took the entry out.
func (r *Store) refile(ctx context.Context, a *asktype.Ask) {
	r.reindex(ctx, a, 0)
	if err := r.rdb.ZAdd(ctx, r.k.byState(asktype.Open), redis.Z{Score: float64(a.Seq), Member: a.CallID}).Err(); err != nil {
		r.log.Warn("store: re-filing an open ask failed", "callId", a.CallID, "err", err)
	}
}
