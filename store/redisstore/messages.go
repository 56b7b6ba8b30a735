package redisstore

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The Messages role (store/messages.go): where each ask's chat message is,
// the post lease and its attempt, what the message shows, and the stale
// index the sweeps read.

// luaPosted tells whether the message's ts (ARGV[2]) is new: then the
// script records "posted" (after its bump).
const luaPosted = `
local function newPost()
  return ARGV[2] ~= '' and ARGV[2] ~= (redis.call('HGET', KEYS[1], 'ts') or '')
end
`

// setMessageScript records the Slack message of an ask.
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] channel, ARGV[2] ts,
// ARGV[3] Slack's refusal ("" if posted), ARGV[4] thread ts, ARGV[5]
// copies (JSON), ARGV[6] the surface, then audited's six.
var setMessageScript = redis.NewScript(luaHead + luaPosted + `
local posted = newPost()
set('ch', ARGV[1], 'ts', ARGV[2], 'refused', ARGV[3], 'thread', ARGV[4], 'copies', ARGV[5], 'surface', ARGV[6])
if posted then audit('posted') end
return result(0)
`)

// SetMessage implements store.Store.
func (r *Store) SetMessage(ctx context.Context, callID string, ref asktype.MessageRef) (*asktype.Ask, error) {
	thread, copies := refExtras(ref)
	return r.transition(ctx, setMessageScript, callID, auditArgs{at: r.clock.Now(), detail: store.PostedDetail(ref)},
		ref.Conversation, ref.ID, ref.Refused, thread, copies, ref.Surface)
}

// refuseScript records that the surface will never show the ask; an open
// untimed ask ends aborted (reason refused, audited as withdrawn), a timed
// one waits out its window (audited as refused).
// KEYS[1] ask, KEYS[2] its audit outbox. ARGV[1] channel, ARGV[2] reason,
// ARGV[3] at ms, ARGV[4] retention ms, ARGV[5] and ARGV[6] the audit
// details when it ends and when it waits, then audited's six.
var refuseScript = redis.NewScript(luaHead + `
local ends = state == 'open' and deadline == 0
if ends then
  set('ch', ARGV[1], 'ts', '', 'refused', ARGV[2], 'thread', '', 'copies', '', 'state', 'aborted', 'abortedAt', ARGV[3], 'abortReason', 'refused')
  audit('withdrawn', '', ARGV[5])
  redis.call('PEXPIREAT', KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[4]))
else
  set('ch', ARGV[1], 'ts', '', 'refused', ARGV[2], 'thread', '', 'copies', '')
  audit('refused', '', ARGV[6])
end
return result(0)
`)

// Refuse implements store.Store.
func (r *Store) Refuse(ctx context.Context, callID, channel, why string, at time.Time) (*asktype.Ask, error) {
	_, ends := store.RefusedPostDetail(why, true)
	_, waits := store.RefusedPostDetail(why, false)
	return r.transition(ctx, refuseScript, callID, auditArgs{at: at}, channel, why, ms(at), r.retention.Milliseconds(), ends, waits)
}

// markRenderedScript raises the rendered version.
// KEYS[1] ask. ARGV[1] version. Returns {1} when missing, else {0, caught
// up (1 when the message now shows the latest version)}.
var markRenderedScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'rver', 'ver')
if not f[1] then return {1} end
if tonumber(f[1]) < tonumber(ARGV[1]) then redis.call('HSET', KEYS[1], 'rver', ARGV[1]) end
if tonumber(ARGV[1]) >= tonumber(f[2] or '0') then return {0, 1} end
return {0, 0}
`)

// MarkRendered implements store.Store. The ask leaves the stale index in
// the same round trip, just before the script; in the rare case the ask
// moved on meanwhile (another replica changed it while this one rendered,
// even between the two commands) it goes back in, so the message is fixed
// even if nobody here renders again.
func (r *Store) MarkRendered(ctx context.Context, callID string, ver int64) (bool, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return false, err
	}
	var res *redis.Cmd
	err = r.withScripts(ctx, func(ctx context.Context, p redis.Pipeliner, run scriptRunner) {
		// Off the index first, then the script: a transition another
		// replica makes between the two is then seen by the script (and
		// the ask goes back in below), never dropped from the index after
		// the script said the message was caught up.
		p.ZRem(ctx, r.k.stale(), callID)
		res = run(p, markRenderedScript, []string{r.k.ask(callID)}, ver)
	})
	if err != nil {
		return false, err
	}
	v, err := res.Int64Slice()
	if err != nil {
		return false, err
	}
	if len(v) > 0 && v[0] == codeNotFound {
		return false, store.ErrNotFound
	}
	if len(v) > 1 && v[1] == 1 {
		return true, nil
	}
	return false, r.markStale(ctx, callID)
}

// markStale files an ask whose message is behind in the stale index.
func (r *Store) markStale(ctx context.Context, callID string) error {
	return r.rdb.ZAdd(ctx, r.k.stale(), redis.Z{Score: float64(r.clock.Now().UnixMilli()), Member: callID}).Err()
}

// Stale implements store.Store. Entries that caught up or expired are pruned.
// Every entry it hands out moves to the back of the index (scored now, or
// just after the newest entry), so a message that cannot be fixed (its
// update keeps failing) comes back after the caller's lag instead of
// holding the oldest-N window and starving every entry behind it.
//
// It reads the stale index of the other schema too (keys.staleOther: what
// a replica of the other release writes during a rolling update), and
// moves what it lists from there into its own.
func (r *Store) Stale(ctx context.Context, before time.Time, limit int) ([]string, error) {
	var window, others *redis.StringSliceCmd
	var tail *redis.ZSliceCmd
	upTo := &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(before.UnixMilli(), 10), Count: int64(limit)}
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		window = p.ZRangeByScore(ctx, r.k.stale(), upTo)
		tail = p.ZRangeWithScores(ctx, r.k.stale(), -1, -1)
		others = p.ZRangeByScore(ctx, r.k.staleOther(), upTo)
		return nil
	}); err != nil {
		return nil, err
	}
	ids := window.Val()
	var moved []any // listed from the other schema's index
	fromOther := map[string]bool{}
	if o := others.Val(); len(o) > 0 {
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			seen[id] = true
		}
		for _, id := range o {
			moved = append(moved, id)
			fromOther[id] = true
			if !seen[id] && len(ids) < limit {
				ids = append(ids, id)
				seen[id] = true
			}
		}
	}
	if len(ids) == 0 {
		return ids, nil
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, r.k.ask(id), "ver", "rver", "ts", "refused", "state", "postAt")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := ids[:0]
	var done []any
	for i, c := range cmds {
		v := c.Val()
		str := func(j int) string { s, _ := v[j].(string); return s }
		ver, _ := strconv.ParseInt(str(0), 10, 64)
		rver, _ := strconv.ParseInt(str(1), 10, 64)
		postAt, _ := strconv.ParseInt(str(5), 10, 64)
		a := asktype.Ask{State: asktype.State(str(4)), Message: asktype.MessageRef{ID: str(2), Refused: str(3)}, PostAttempt: fromMs(postAt)}
		if v[0] == nil || rver >= ver || !a.NeedsMessageWork() {
			done = append(done, ids[i])
		} else {
			out = append(out, ids[i])
		}
	}
	back := r.clock.Now().UnixMilli()
	if t := tail.Val(); len(t) > 0 && int64(t[0].Score) >= back {
		back = int64(t[0].Score) + 1
	}
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if len(done) > 0 {
			p.ZRem(ctx, r.k.stale(), done...)
		}
		if len(moved) > 0 {
			// Off the other index, and what is still behind into this
			// one (below, not XX: it may not be there).
			p.ZRem(ctx, r.k.staleOther(), moved...)
		}
		for i, id := range out {
			z := redis.Z{Score: float64(back + int64(i)), Member: id}
			if fromOther[id] {
				p.ZAdd(ctx, r.k.stale(), z)
			} else {
				// XX: an entry removed meanwhile (caught up) stays removed.
				p.ZAddXX(ctx, r.k.stale(), z)
			}
		}
		return nil
	})
	if err != nil {
		r.log.Warn("store: updating the stale index failed", "err", err)
	}
	return out, nil
}

// Handoff implements store.Store: the asks are filed in the stale index
// scored 0, before any change's entry (store.HandoffBefore), and every
// replica is told on the change feed. A replica of an older release
// ignores the hint and lists them at its next sweep (any before).
func (r *Store) Handoff(ctx context.Context, callIDs []string) error {
	if len(callIDs) == 0 {
		return nil
	}
	zs := make([]redis.Z, len(callIDs))
	for i, id := range callIDs {
		zs[i] = redis.Z{Score: 0, Member: id}
	}
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, r.k.stale(), zs...)
		p.Publish(ctx, r.k.events(), store.HandoffTopic)
		return nil
	})
	return err
}

// HandedOff implements store.Store.
func (r *Store) HandedOff() (<-chan struct{}, func()) { return r.hub.Subscribe(store.HandoffTopic) }

// refExtras are the hash fields of a message's thread and copies (JSON,
// "" for none).
func refExtras(ref asktype.MessageRef) (thread, copies string) {
	if len(ref.Copies) > 0 {
		b, _ := json.Marshal(ref.Copies) // strings only: cannot fail
		copies = string(b)
	}
	return ref.Thread, copies
}

// leasePost names an ask's post lease.
const leasePost = "post"

// leaseKeep is how long a lease key outlives its lease (ms), as the lease
// scripts' 86400000: the holder and end in its value decide, and the key
// goes away on its own well after.
const leaseKeep = 86400000

// beginPostScript takes the post lease and records the first attempt.
// KEYS[1] ask, KEYS[2] its post lease. ARGV[1] holder, ARGV[2] now ms,
// ARGV[3] ttl ms. Returns {0, fields before} or {6, fields} when another
// holder has the lease, {1} when the ask is missing.
var beginPostScript = redis.NewScript(`
local r = redis.call('HGETALL', KEYS[1])
if #r == 0 then return {1} end
local cur = redis.call('GET', KEYS[2])
if cur then
  local sep = string.find(cur, '|', 1, true)
  if string.sub(cur, 1, sep - 1) ~= ARGV[1] and tonumber(ARGV[2]) < tonumber(string.sub(cur, sep + 1)) then
    table.insert(r, 1, 6)
    table.insert(r, 'pholder')
    table.insert(r, string.sub(cur, 1, sep - 1))
    table.insert(r, 'puntil')
    table.insert(r, string.sub(cur, sep + 1))
    return r
  end
end
redis.call('SET', KEYS[2], ARGV[1] .. '|' .. (tonumber(ARGV[2]) + tonumber(ARGV[3])), 'PX', tonumber(ARGV[3]) + 86400000)
local f = redis.call('HMGET', KEYS[1], 'ts', 'refused', 'state', 'postAt')
local active = f[3] == 'open' or f[3] == 'continued'
if (not f[1] or f[1] == '') and (not f[2] or f[2] == '') and active and not f[4] then
  redis.call('HSET', KEYS[1], 'postAt', ARGV[2])
end
table.insert(r, 1, 0)
return r
`)

// abandonPostScript releases a post lease its holder still holds and
// forgets the ask's post attempt. KEYS[1] ask, KEYS[2] lease. ARGV[1]
// holder.
var abandonPostScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[2])
if not cur or string.sub(cur, 1, #ARGV[1] + 1) ~= ARGV[1] .. '|' then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[1], 'postAt')
return 1
`)

// AbandonPost implements store.Store.
func (r *Store) AbandonPost(ctx context.Context, callID, holder string) error {
	if err := checkHolder(holder); err != nil {
		return err
	}
	return abandonPostScript.Run(ctx, r.rdb, []string{r.k.ask(callID), r.k.lease(callID, leasePost)}, holder).Err()
}

// BeginPost implements store.Store.
func (r *Store) BeginPost(ctx context.Context, callID string, h store.Hold) (*asktype.Ask, error) {
	if err := checkHolder(h.Holder); err != nil {
		return nil, err
	}
	res, err := beginPostScript.Run(ctx, r.rdb, []string{r.k.ask(callID), r.k.lease(callID, leasePost)},
		h.Holder, ms(h.Now), h.TTL.Milliseconds()).Slice()
	if err != nil {
		return nil, err
	}
	a, code, err := decode(callID, res)
	if err != nil {
		return nil, err
	}
	if code == codeHeld {
		// The script appended the holder's lease after the ask's fields.
		if n := len(res); n >= 5 {
			holder, _ := res[n-3].(string)
			until, _ := res[n-1].(string)
			if u, err := strconv.ParseInt(until, 10, 64); err == nil {
				a.Poster = asktype.PostLease{Holder: holder, Until: fromMs(u)}
			}
		}
		return a, store.ErrHeld
	}
	return a, nil
}

// finishPostScript records the posted message ("posted" when its ts is
// new), releases the post lease and marks the message rendered when it
// shows the current version. A message other than the one recorded is
// kept among its copies (a new version; nothing when it is there
// already), never written over it. Holder store.Adopted changes nothing
// when the message is recorded already; a post's reply naming the message
// recorded already (adopted from a click) changes nothing but the lease.
// KEYS[1] ask, KEYS[2] its post lease, KEYS[3] its audit outbox. ARGV[1]
// channel, ARGV[2] ts, ARGV[3] shown version (0: unknown), ARGV[4] holder,
// ARGV[5] thread ts, ARGV[6] copies (JSON), ARGV[7] the surface, then
// audited's six.
var finishPostScript = redis.NewScript(luaHead + `
local function unchanged()
  local r = redis.call('HGETALL', KEYS[1])
  table.insert(r, 1, ` + strconv.Itoa(codeSame) + `)
  return r
end
local function release()
  local cur = redis.call('GET', KEYS[2])
  if cur and string.sub(cur, 1, #ARGV[4] + 1) == ARGV[4] .. '|' then redis.call('DEL', KEYS[2]) end
end
local m = redis.call('HMGET', KEYS[1], 'ch', 'ts', 'refused', 'thread', 'copies', 'surface', 'rver')
if (m[2] or '') ~= '' and ARGV[2] ~= '' and ((m[1] or '') ~= ARGV[1] or m[2] ~= ARGV[2]) then
  -- Another message of the ask than the one recorded (posted twice, or
  -- a click came from one the record did not know): never written over
  -- the recorded one, but kept among its copies, so renders reach it.
  local copies = {}
  if (m[5] or '') ~= '' then copies = cjson.decode(m[5]) end
  local n = #copies
  local function keep(c)
    if (c.ts or '') == '' or ((m[1] or '') == c.channel and m[2] == c.ts) then return end
    for _, k in ipairs(copies) do
      if k.channel == c.channel and k.ts == c.ts then return end
    end
    c.copies = nil
    table.insert(copies, c)
  end
  local this = {channel = ARGV[1], ts = ARGV[2]}
  if ARGV[5] ~= '' then this.thread = ARGV[5] end
  if ARGV[7] ~= '' then this.surface = ARGV[7] end
  keep(this)
  if ARGV[6] ~= '' then
    for _, c in ipairs(cjson.decode(ARGV[6])) do keep(c) end
  end
  release()
  if #copies == n then return unchanged() end
  set('copies', cjson.encode(copies))
  audit('posted')
  return result(0)
end
if ARGV[4] == '` + asktype.Adopted + `' and (m[2] or '') ~= '' then return unchanged() end
local shown = tonumber(ARGV[3])
if (m[1] or '') == ARGV[1] and (m[2] or '') == ARGV[2] and (m[3] or '') == '' and (m[4] or '') == ARGV[5]
  and (m[5] or '') == ARGV[6] and (m[6] or '') == ARGV[7] then
  -- The record names this very message already (a click on it came
  -- first): nothing changed, so no new version for the message to catch
  -- up with, only the lease to give back. When the adoption is all that
  -- happened since the version posted, the message shows the latest.
  if shown > 0 and ver == shown + 1 and tonumber(m[7] or '0') < ver then
    redis.call('HSET', KEYS[1], 'rver', ver)
  end
  release()
  return unchanged()
end
local posted = ARGV[2] ~= '' and ARGV[2] ~= (m[2] or '')
-- The message shows the version it was posted from; when that is the one
-- before this change, it shows the latest once this is recorded.
if shown > 0 and ver == shown then
  set('ch', ARGV[1], 'ts', ARGV[2], 'refused', '', 'thread', ARGV[5], 'copies', ARGV[6], 'surface', ARGV[7], 'rver', ver + 1)
else
  set('ch', ARGV[1], 'ts', ARGV[2], 'refused', '', 'thread', ARGV[5], 'copies', ARGV[6], 'surface', ARGV[7])
end
if posted then audit('posted') end
release()
return result(0)
`)

// FinishPost implements store.Store. It changes no state, so of the
// indexes only the stale one moves: the ask leaves it in the same round
// trip, and goes back in when the message turns out to be behind.
func (r *Store) FinishPost(ctx context.Context, callID, holder string, ref asktype.MessageRef, shown int64) (*asktype.Ask, error) {
	ctx, err := begin(ctx)
	if err != nil {
		return nil, err
	}
	defer r.hub.Begin(callID)()
	thread, copies := refExtras(ref)
	var res *redis.Cmd
	err = r.withScripts(ctx, func(ctx context.Context, p redis.Pipeliner, run scriptRunner) {
		filed := r.fileAudit(ctx, p, callID)
		// Off the index before the script, as in MarkRendered.
		p.ZRem(ctx, r.k.stale(), callID)
		res = run(p, finishPostScript, []string{r.k.ask(callID), r.k.lease(callID, leasePost), r.k.outbox(callID)},
			r.audited(callID, auditArgs{at: r.clock.Now(), detail: store.PostedDetail(ref), filed: filed}, ref.Conversation, ref.ID, shown, holder, thread, copies, ref.Surface)...)
	})
	if err != nil {
		return nil, err
	}
	vals, err := res.Slice()
	if err != nil {
		return nil, err
	}
	a, code, err := decode(callID, vals)
	if err != nil {
		return nil, err
	}
	if code == codeSame {
		// Nothing changed: no wake-ups, nothing to chain. The pipeline's
		// ZREM took a behind message off the stale index: file it again.
		r.hub.Record(a)
		if a.Rendered < a.Version && a.NeedsMessageWork() {
			if err := r.markStale(ctx, callID); err != nil {
				r.log.Warn("store: filing a stale message failed", "callId", callID, "err", err)
			}
		}
		return a, nil
	}
	r.hub.Changed(a)
	r.kickChainer()
	if a.Rendered < a.Version {
		if err := r.markStale(ctx, callID); err != nil {
			r.log.Warn("store: filing a stale message failed", "callId", callID, "err", err)
		}
	}
	return a, nil
}
