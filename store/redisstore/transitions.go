package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The Reader and Transitions roles (store/transitions.go): reading an ask,
// creating it, and each state change as a script beside the method that runs
// it, with the indexes filed in the same round trip.

// createScript stores a new ask unless the call id exists, and takes its
// post lease for the poster named (see asktype.Ask.Poster); a new ask's
// "asked" event goes to its outbox.
// KEYS[1] ask hash, KEYS[2] its post lease, KEYS[3] its audit outbox.
// ARGV[1] request JSON, ARGV[2] session id, ARGV[3] seq, ARGV[4] created
// ms, ARGV[5] deadline ms (0 untimed), ARGV[6] poster ("" none), ARGV[7]
// lease until ms, ARGV[8] lease key TTL ms, ARGV[9] caller, ARGV[10] kind,
// ARGV[11] agent id, ARGV[12] agent session, then audited's six. Returns
// {2, fields} when it already existed; {0, fields but the request} when
// created, read before the post attempt is recorded (the caller has the
// request, and no attempt was made before).
var createScript = redis.NewScript(luaAsk + `
if redis.call('EXISTS', KEYS[1]) == 1 then
  local r = redis.call('HGETALL', KEYS[1])
  table.insert(r, 1, 2)
  return r
end
state, ver, sid, seq, caller, agent, asid = 'open', 1, ARGV[2], ARGV[3], ARGV[9], ARGV[11], ARGV[12]
local h = {'req', ARGV[1], 'sid', ARGV[2], 'state', 'open', 'seq', ARGV[3],
  'created', ARGV[4], 'deadline', ARGV[5], 'ver', 1, 'rver', 0, 'caller', ARGV[9],
  'kind', ARGV[10], 'agent', ARGV[11], 'asid', ARGV[12]}
if ARGV[6] ~= '' then
  redis.call('SET', KEYS[2], ARGV[6] .. '|' .. ARGV[7], 'PX', ARGV[8])
  table.insert(h, 'postAt')
  table.insert(h, ARGV[4])
end
redis.call('HSET', KEYS[1], unpack(h))
hint()
audit('asked')
return {0, 'sid', ARGV[2], 'state', 'open', 'seq', ARGV[3], 'created', ARGV[4], 'deadline', ARGV[5], 'ver', '1', 'rver', '0',
  'caller', ARGV[9], 'kind', ARGV[10], 'agent', ARGV[11], 'asid', ARGV[12]}
`)

// Create implements store.Store, in one round trip: the script stores the
// ask unless its call id exists, and the same pipeline files it in the
// indexes (its session, the open and timed sets, the stale index that gets
// it posted) and reads its session's active count. The indexes live in
// other Cluster slots, so they cannot be in the script; they are written
// add-if-missing from the ask as asked, and Redis runs a pipeline's
// commands back to back. When the call id existed, its record decides: a
// re-attach repairs what a crash may have left out, and undoes what this
// pipeline filed that the record contradicts (an ended ask is not open).
// Readers of every index re-check the record and prune.
//
// A new ask over its session's cap (store.MaxSessionAsks active, after
// pruning ended ones) is deleted and unfiled again before anyone is told
// of it (a concurrent Create of the same call id may have seen it and then
// finds it gone, which it reports as withdrawn).
//
// Once the pipeline is sent, Create finishes whatever happens to the
// caller (see begin): the pipeline filed the ask from the request, and
// only the script, and then the record's say, make the indexes right.
func (r *Store) Create(ctx context.Context, a *asktype.Ask) (*asktype.Ask, bool, error) {
	if err := checkHolder(a.Poster.Holder); err != nil {
		return nil, false, err
	}
	ctx, err := begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer r.hub.Begin(a.CallID)()
	asked := *a
	asked.Seq, asked.State, asked.Version = r.nextSeq(a.Created), asktype.Open, 1 // as createScript stores it
	// Create's stale entry is scored half a millisecond off the clock so a
	// re-attach can tell it from any other (reindex).
	staleMark := float64(r.clock.Now().UnixMilli()) + 0.5
	var res *redis.Cmd
	var active *redis.Cmd
	err = r.withScripts(ctx, func(ctx context.Context, p redis.Pipeliner, run scriptRunner) {
		filed := r.fileAudit(ctx, p, a.CallID)
		// Filed open before the script, so no answer's removal (after its
		// own script, which needs this one's record) can come before it. An
		// ask never returns to open, so the open set needs no versions: an
		// add only here, removals whenever a snapshot says it left. NX: a
		// re-attach keeps the entry's score (the first create's seq).
		p.ZAddNX(ctx, r.k.byState(asktype.Open), redis.Z{Score: float64(asked.Seq), Member: a.CallID})
		res = run(p, createScript, []string{r.k.ask(a.CallID), r.k.lease(a.CallID, leasePost), r.k.outbox(a.CallID)}, r.audited(a.CallID,
			auditArgs{at: a.Created, detail: store.AskedDetail(a), filed: filed},
			string(a.Request), a.SessionID, asked.Seq, ms(a.Created), ms(a.Deadline),
			a.Poster.Holder, ms(a.Poster.Until), leaseKeyTTL(a), a.Caller, a.Kind, a.AgentID, a.AgentSession)...)
		// EVAL, not EVALSHA: a NOSCRIPT here would run the whole pipeline
		// again, and createScript would then find the ask it just made.
		active = r.index(ctx, p, evalRunner(ctx), &asked)
		p.ZAddNX(ctx, r.k.stale(), redis.Z{Score: staleMark, Member: a.CallID})
	})
	if err != nil {
		// The pipeline may have run and its reply been lost: a retry of the
		// same call id (the harness re-attaching) finds the record and
		// repairs what had to follow it.
		return nil, false, err
	}
	vals, err := res.Slice()
	if err != nil {
		return nil, false, err
	}
	cur, code, err := decode(a.CallID, vals)
	if err != nil {
		return nil, false, err
	}
	if code == codeOK {
		cur.Request = a.Request // the script does not send it back
	}
	if code != codeOK {
		r.hub.Record(cur)
		r.reindex(ctx, cur, staleMark)
		return cur, false, nil
	}
	if active != nil {
		if n, err := active.Int64(); err == nil && n > store.MaxSessionAsks {
			if err := r.refuseOverCap(ctx, cur); err != nil {
				return nil, false, err
			}
		}
	}
	r.hub.Changed(cur)
	r.kickChainer()
	if a.Poster.Holder != "" {
		out := *cur // the hub keeps cur; Poster is for this caller only
		out.Poster = asktype.PostLease{Holder: a.Poster.Holder, Until: time.UnixMilli(ms(a.Poster.Until))}
		return &out, true, nil
	}
	return cur, true, nil
}

// leaseKeyTTL is how long Create's post lease key lives (ms): the lease,
// then leaseKeep.
func leaseKeyTTL(a *asktype.Ask) int64 {
	if a.Poster.Holder == "" {
		return 0
	}
	return max(0, ms(a.Poster.Until)-ms(a.Created)) + leaseKeep
}

// refuseOverCap deletes and unfiles a just-created ask when its session
// already had store.MaxSessionAsks active asks (after pruning ended ones),
// returning store.ErrSessionFull; nil when there is room after all.
func (r *Store) refuseOverCap(ctx context.Context, a *asktype.Ask) error {
	n, err := r.pruneActive(ctx, a.SessionID)
	if err != nil || n <= store.MaxSessionAsks {
		return err
	}
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, r.k.ask(a.CallID), r.k.lease(a.CallID, leasePost))
		for _, k := range []string{r.k.active(a.SessionID), r.k.session(a.SessionID), r.k.byState(asktype.Open),
			r.k.deadlines(), r.k.claims(), r.k.stale()} {
			p.ZRem(ctx, k, a.CallID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return store.ErrSessionFull
}

// reindex repairs, for a call id that existed, what a crash right after
// its create left out (the indexes whose readers re-check the record, the
// stale entry that gets it posted), and undoes what Create's pipeline
// filed from the request that the record contradicts: the gauges' open
// set and the timed sets hold only open (timed) asks, and the stale index
// only a message that is behind — Create's entry (scored staleMark) is
// dropped when the message is up to date (0: no Create's entry; every re-attach of a posted ask
// filed it, and the mirror's sweep read each a minute later: a burst of
// 10,000 re-attached asks kept it reading for 25 minutes).
func (r *Store) reindex(ctx context.Context, cur *asktype.Ask, staleMark float64) {
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if cur.State != asktype.Open {
			p.ZRem(ctx, r.k.byState(asktype.Open), cur.CallID)
		}
		if cur.State != asktype.Open || cur.Deadline.IsZero() {
			p.ZRem(ctx, r.k.deadlines(), cur.CallID)
			p.ZRem(ctx, r.k.claims(), cur.CallID)
		}
		if cur.State.Active() {
			r.index(ctx, p, evalRunner(ctx), cur)
		}
		if cur.Rendered < cur.Version && cur.NeedsMessageWork() {
			p.ZAddNX(ctx, r.k.stale(), redis.Z{Score: float64(r.clock.Now().UnixMilli()), Member: cur.CallID})
		} else if staleMark != 0 {
			// Only Create's own entry: one a transition filed since (its
			// score a whole millisecond) is that transition's to keep.
			p.Eval(ctx, dropMarkedScript, []string{r.k.stale()}, cur.CallID, strconv.FormatFloat(staleMark, 'f', 1, 64))
		}
		return nil
	}); err != nil {
		r.log.Warn("store: re-indexing an existing ask failed", "callId", cur.CallID, "err", err)
	}
}

// dropMarkedScript removes a member of a sorted set while its score is the
// one given. KEYS[1] the set. ARGV[1] member, ARGV[2] score.
const dropMarkedScript = `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`

// nextSeq orders asks by creation without a shared counter (a round trip
// per ask): creation time in microsecond-sized steps, strictly increasing
// within this process. Seq orders the asks of one session, which one agent
// creates one after another; asks created in the same millisecond on two
// replicas are concurrent, and either order is right. (Exact in a float64
// sorted-set score until the year 2255.)
func (r *Store) nextSeq(created time.Time) int64 {
	n := created.UnixMilli() * 1000
	for {
		last := r.lastSeq.Load()
		next := max(n, last+1)
		if r.lastSeq.CompareAndSwap(last, next) {
			return next
		}
	}
}

// Get implements store.Store.
func (r *Store) Get(ctx context.Context, callID string) (*asktype.Ask, error) {
	m, err := r.rdb.HGetAll(ctx, r.k.ask(callID)).Result()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, store.ErrNotFound
	}
	a, err := fromMap(callID, m)
	if err == nil {
		r.hub.Record(a)
	}
	return a, err
}

// Current returns the ask as this replica last saw it (a transition's
// result, a read) when the change feed has announced nothing newer since,
// and reads it otherwise. It is for waiters holding Changes(callID): only
// watched asks are remembered, and a change another replica made moments
// ago may not be announced yet (its hint wakes the waiter when it is).
func (r *Store) Current(ctx context.Context, callID string) (*asktype.Ask, error) {
	if a, ok := r.hub.Latest(callID); ok {
		return a, nil
	}
	return r.Get(ctx, callID)
}

// settleScript moves an open ask to settled ("answered"), or, when the
// answer comes at or past the deadline, closes the window instead (open →
// continued, as expireScript does) and returns 7: the answer is late.
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] settlement JSON, ARGV[2]
// at ms, ARGV[3] retention ms, then audited's six.
var settleScript = redis.NewScript(luaHead + `
if state ~= 'open' then return result(2) end
if deadline > 0 and tonumber(ARGV[2]) >= deadline then
  set('state', 'continued')
  audit('continued', '', 'the window closed: an answer came late')
  redis.call('PEXPIREAT', KEYS[1], deadline + tonumber(ARGV[3]))
  return result(7)
end
set('state', 'settled', 'settlement', ARGV[1], 'settledAt', ARGV[2])
audit('answered')
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]))
return result(0)
`)

// Settle implements store.Store, in one round trip: the hot path of every
// answer. Whatever the script decides, the ask is not open afterwards (it
// settles, its window closes, or it had left "open" already), so the open
// and timed indexes drop it in the same pipeline; it is filed as stale
// before the change, so its message is fixed even if this replica dies
// before rendering it (a refused answer leaves an entry Stale prunes). The
// session's active index is pruned when the session nears its cap.
func (r *Store) Settle(ctx context.Context, callID string, settlement json.RawMessage, at time.Time) (*asktype.Ask, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return nil, err
	}
	defer r.hub.Begin(callID)()
	a, code, err := r.settling(ctx, callID, settleScript, answerArgs(settlement, at), string(settlement), ms(at), r.retention.Milliseconds())
	if err != nil {
		return nil, err
	}
	if code == codeLate {
		r.notify(ctx, a) // continued: filed under its new state
	}
	if code == codeOK || code == codeLate {
		r.kickChainer()
	}
	return r.outcome(a, code)
}

// settling runs a script that leaves the ask not open (it settles, its
// window closes, or it had left "open" already) in the hot path's one round
// trip: filed as stale before the change, its audit outbox filed, dropped
// from the open and timed indexes in the same pipeline (Settle, and a vote
// that settles at once). It returns the script's ask and result code. The
// caller has begun (ctx must finish; see begin) and holds the hub's Begin.
func (r *Store) settling(ctx context.Context, callID string, script *redis.Script, ev auditArgs, args ...any) (*asktype.Ask, int, error) {
	var res *redis.Cmd
	err := r.withScripts(ctx, func(ctx context.Context, p redis.Pipeliner, run scriptRunner) {
		r.fileStale(ctx, p, callID)
		ev.filed = r.fileAudit(ctx, p, callID)
		res = run(p, script, []string{r.k.ask(callID), r.k.outbox(callID)}, r.audited(callID, ev, args...)...)
		p.ZRem(ctx, r.k.byState(asktype.Open), callID)
		if !r.untimed(callID) {
			p.ZRem(ctx, r.k.deadlines(), callID)
			p.ZRem(ctx, r.k.claims(), callID)
		}
	})
	if err != nil {
		return nil, 0, err
	}
	vals, err := res.Slice()
	if err != nil {
		return nil, 0, err
	}
	return decode(callID, vals)
}

// untimed reports that this process has seen the ask untimed: an ask
// never gains a deadline, so any record of it without one says it is in
// neither timed index.
func (r *Store) untimed(callID string) bool {
	a, ok := r.hub.Latest(callID)
	return ok && a.Deadline.IsZero()
}

// expireScript moves an open timed ask past its deadline to continued; the
// continued ask is kept until retention after its deadline.
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] now ms, ARGV[2] retention
// ms, then audited's six. Returns 3 when the deadline is later.
var expireScript = redis.NewScript(luaHead + `
if state ~= 'open' then return result(2) end
if deadline == 0 or tonumber(ARGV[1]) < deadline then return result(3) end
set('state', 'continued')
audit('continued')
redis.call('PEXPIREAT', KEYS[1], deadline + tonumber(ARGV[2]))
return result(0)
`)

// Expire implements store.Store.
func (r *Store) Expire(ctx context.Context, callID string, now time.Time) (*asktype.Ask, error) {
	return r.transition(ctx, expireScript, callID, auditArgs{at: now, detail: "the window closed"}, ms(now), r.retention.Milliseconds())
}

// continueScript closes an open timed ask's window now: as expireScript,
// but before the deadline too, which then becomes now (the agent went on).
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] now ms, ARGV[2] retention
// ms, then audited's six.
var continueScript = redis.NewScript(luaHead + `
if state ~= 'open' then return result(2) end
if deadline == 0 then return result(3) end
if tonumber(ARGV[1]) < deadline then
  deadline = tonumber(ARGV[1])
  set('state', 'continued', 'deadline', ARGV[1])
else
  set('state', 'continued')
end
audit('continued')
redis.call('PEXPIREAT', KEYS[1], deadline + tonumber(ARGV[2]))
return result(0)
`)

// Continue implements store.Store. The audit detail says whether the
// window closed at its deadline or the agent went on before it.
func (r *Store) Continue(ctx context.Context, callID string, now time.Time) (*asktype.Ask, error) {
	detail := "the window closed"
	if a, err := r.Get(ctx, callID); err == nil && now.Before(a.Deadline) {
		detail = store.ContinuedEarly
	}
	return r.transition(ctx, continueScript, callID, auditArgs{at: now, detail: detail}, ms(now), r.retention.Milliseconds())
}

// abortScript withdraws an open or continued ask.
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] at ms, ARGV[2] retention
// ms, ARGV[3] reason, ARGV[4] the audit event (withdrawn, abandoned), then
// audited's six.
var abortScript = redis.NewScript(luaHead + `
if state ~= 'open' and state ~= 'continued' then return result(2) end
set('state', 'aborted', 'abortedAt', ARGV[1], 'abortReason', ARGV[3])
audit(ARGV[4])
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]))
return result(0)
`)

// Abort implements store.Store.
func (r *Store) Abort(ctx context.Context, callID string, at time.Time, why asktype.AbortReason) (*asktype.Ask, error) {
	ev, detail := store.AbortEvent(why, store.ActorOf(ctx))
	return r.transition(ctx, abortScript, callID, auditArgs{at: at, detail: detail}, ms(at), r.retention.Milliseconds(), string(why), ev)
}

// queueReplyScript records a late answer on a continued ask.
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] reply JSON, ARGV[2] at
// ms, then audited's six. Returns 4 when one is queued.
var queueReplyScript = redis.NewScript(luaHead + `
if state ~= 'continued' then return result(2) end
if redis.call('HEXISTS', KEYS[1], 'reply') == 1 then return result(4) end
set('reply', ARGV[1], 'replyAt', ARGV[2])
audit('queued')
return result(0)
`)

// QueueReply implements store.Store.
func (r *Store) QueueReply(ctx context.Context, callID string, reply json.RawMessage, at time.Time) (*asktype.Ask, error) {
	return r.transition(ctx, queueReplyScript, callID, answerArgs(reply, at), string(reply), ms(at))
}

// ackReplyScript settles a continued ask with its queued reply.
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] at ms, ARGV[2] retention
// ms, then audited's six. Returns 5 when no reply.
var ackReplyScript = redis.NewScript(luaHead + `
if state ~= 'continued' then return result(2) end
local reply = redis.call('HGET', KEYS[1], 'reply')
if not reply then return result(5) end
set('state', 'settled', 'settlement', reply, 'settledAt', ARGV[1])
audit('delivered')
redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]))
return result(0)
`)

// AckReply implements store.Store.
func (r *Store) AckReply(ctx context.Context, callID string, at time.Time) (*asktype.Ask, error) {
	return r.transition(ctx, ackReplyScript, callID, auditArgs{at: at}, ms(at), r.retention.Milliseconds())
}

// transition runs one of the audited transition scripts on the ask (KEYS:
// the ask, its outbox), filing the ask for the chainer in the same round
// trip, then files it under its new state (notify).
func (r *Store) transition(ctx context.Context, s *redis.Script, callID string, ev auditArgs, args ...any) (*asktype.Ask, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return nil, err
	}
	defer r.hub.Begin(callID)()
	var cmd *redis.Cmd
	err = r.withScripts(ctx, func(ctx context.Context, p redis.Pipeliner, run scriptRunner) {
		// Filed as stale with the change, in its round trip, never after
		// it: a replica that dies (or loses Redis) once the script has run
		// must not leave the message behind with nothing listing it. A
		// transition the script refuses leaves an entry Stale prunes.
		r.fileStale(ctx, p, callID)
		ev.filed = r.fileAudit(ctx, p, callID)
		cmd = run(p, s, []string{r.k.ask(callID), r.k.outbox(callID)}, r.audited(callID, ev, args...)...)
	})
	if err != nil {
		return nil, err
	}
	res, err := cmd.Slice()
	if err != nil {
		return nil, err
	}
	a, code, err := decode(callID, res)
	if err != nil {
		return nil, err
	}
	if code == codeOK || code == codeLate {
		r.notify(ctx, a)
		r.kickChainer()
	}
	return r.outcome(a, code)
}

// outcome tells the hub what a transition script returned and maps its
// code to the method's result.
func (r *Store) outcome(a *asktype.Ask, code int) (*asktype.Ask, error) {
	switch code {
	case codeOK:
		r.hub.Changed(a)
		return a, nil
	case codeLate:
		r.hub.Changed(a)
		return a, store.ErrContinued
	}
	r.hub.Record(a)
	switch code {
	case codeState:
		if !a.State.Active() {
			r.unindex(context.Background(), a.CallID, string(a.State))
		}
		return a, store.StateError(a.State)
	case codeNotDue:
		return a, store.ErrNotDue
	case codeQueued:
		return a, store.ErrReplyQueued
	case codeNoReply:
		return a, store.ErrNoReply
	case codeVotesMoved:
		return a, store.ErrVotesMoved
	}
	return nil, fmt.Errorf("store: unexpected script result %d", code)
}

// notify drops an ask that left "open" from the timed indexes, files it
// under its state for the gauges and in its session's active and reply
// indexes, and publishes a change hint for the ask and its session.
func (r *Store) notify(ctx context.Context, a *asktype.Ask) {
	err := r.withScripts(ctx, func(ctx context.Context, p redis.Pipeliner, run scriptRunner) {
		r.notifyIn(ctx, p, run, a)
	})
	if err != nil {
		// Waiters also re-read on a timer, so a lost hint only delays them.
		r.log.Warn("store: publishing change hint failed", "callId", a.CallID, "err", err)
	}
}

func (r *Store) notifyIn(ctx context.Context, p redis.Pipeliner, run scriptRunner, a *asktype.Ask) {
	if a.State != asktype.Open {
		// An ask never returns to open: a snapshot that left it is right
		// to drop it, however late it lands (Create files it, before its
		// script; nothing else does).
		p.ZRem(ctx, r.k.byState(asktype.Open), a.CallID)
		if !a.Deadline.IsZero() {
			p.ZRem(ctx, r.k.deadlines(), a.CallID)
			p.ZRem(ctx, r.k.claims(), a.CallID)
			// Only a timed ask is ever continued. This pipeline runs after
			// the script and may carry an older snapshot than another
			// replica's, landing after it (an expire's racing an
			// answer's): the continued set is written only from a newer
			// version than the last written, so a late snapshot never
			// counts an ended ask as continued, nor drops a newer entry.
			r.file(ctx, p, run, asktype.Continued, a, a.State == asktype.Continued)
		}
	}
	if a.SessionID != "" {
		if !a.State.Active() {
			p.ZRem(ctx, r.k.active(a.SessionID), a.CallID)
		}
		// A queued reply leaves only by the ask ending (admitted or
		// withdrawn), so only an ended ask is dropped from the reply index:
		// this pipeline runs after the script and may carry an older
		// snapshot (an expire's, racing the reply's) that must not undo
		// a newer entry. Readers prune what the record contradicts.
		switch {
		case a.State == asktype.Continued && len(a.Reply) > 0:
			p.ZAddNX(ctx, r.k.replies(a.SessionID), redis.Z{Score: float64(a.ReplyAt.UnixMilli()), Member: a.CallID})
			p.Eval(ctx, extendTTL, []string{r.k.replies(a.SessionID)}, r.retention.Milliseconds())
		case !a.State.Active():
			p.ZRem(ctx, r.k.replies(a.SessionID), a.CallID)
		}
	}
}

// fileStale files callID in the stale index (scored now), in the
// pipeline of a change to it: the sweep finds its message should this
// replica never render the change.
func (r *Store) fileStale(ctx context.Context, p redis.Pipeliner, callID string) {
	p.ZAdd(ctx, r.k.stale(), redis.Z{Score: float64(r.clock.Now().UnixMilli()), Member: callID})
}

// fileScript writes one ask's membership of a state set (the gauges, the
// listings) unless a newer version of the ask was written there already;
// it drops version records older than ARGV[6] of asks no longer in the set
// (a late pipeline lands within seconds, not an hour).
// KEYS[1] the state set, KEYS[2] its versions hash, KEYS[3] its filed-at
// set (all in one slot: keys.filedVersions). ARGV[1] callId, ARGV[2]
// version, ARGV[3] "1" to file, "0" to drop, ARGV[4] seq (the score),
// ARGV[5] now ms, ARGV[6] how long versions are kept, ms. Returns 1 when
// written, 0 when a newer version was.
var fileScript = redis.NewScript(`
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', tonumber(ARGV[5]) - tonumber(ARGV[6]), 'LIMIT', 0, 16)
for _, id in ipairs(old) do
  if redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZADD', KEYS[3], ARGV[5], id) -- still filed: kept, looked at again later
  else
    redis.call('HDEL', KEYS[2], id)
    redis.call('ZREM', KEYS[3], id)
  end
end
local v = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if v >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return 1
`)

// fileKeep is how long fileScript keeps the version of an ask no longer
// in a state set.
const fileKeep = time.Hour

// file queues fileScript: a in state set s (in) or not, as of a.Version.
func (r *Store) file(ctx context.Context, p redis.Pipeliner, run scriptRunner, s asktype.State, a *asktype.Ask, in bool) {
	flag := "0"
	if in {
		flag = "1"
	}
	run(p, fileScript, []string{r.k.byState(s), r.k.filedVersions(s), r.k.filedAt(s)},
		a.CallID, a.Version, flag, a.Seq, r.clock.Now().UnixMilli(), fileKeep.Milliseconds())
}

// unindex drops an ask that is not an open timed wait from the timed
// indexes, and from the state indexes unless state (its record's) is
// active.
func (r *Store) unindex(ctx context.Context, callID string, state string) {
	_, _ = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, r.k.deadlines(), callID)
		p.ZRem(ctx, r.k.claims(), callID)
		if !asktype.State(state).Active() {
			p.ZRem(ctx, r.k.byState(asktype.Open), callID)
			p.ZRem(ctx, r.k.byState(asktype.Continued), callID)
		}
		return nil
	})
}

// Versions implements store.Store: one pipelined HGET of each ask's
// version.
func (r *Store) Versions(ctx context.Context, callIDs []string) ([]int64, error) {
	cmds := make([]*redis.StringCmd, len(callIDs))
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range callIDs {
			cmds[i] = p.HGet(ctx, r.k.ask(id), "ver")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]int64, len(callIDs))
	for i, c := range cmds {
		if v, err := c.Int64(); err == nil {
			out[i] = v
		}
	}
	return out, nil
}

// Counts implements store.Store. The state indexes are written after each
// transition; an entry left behind by a crash in between is corrected the
// next time anything touches that ask.
func (r *Store) Counts(ctx context.Context) (store.Counts, error) {
	var o, c, d *redis.IntCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		o = p.ZCard(ctx, r.k.byState(asktype.Open))
		c = p.ZCard(ctx, r.k.byState(asktype.Continued))
		d = p.ZCard(ctx, r.k.deadlines())
		return nil
	})
	return store.Counts{Open: o.Val(), Continued: c.Val(), TimedOpen: d.Val()}, err
}
