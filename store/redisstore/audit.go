package redisstore

import (
	"container/heap"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/store"
)

// The audit trail in Redis: one hash chain across every replica, in
// Redis Cluster too.
//
// A Lua script touches one Cluster slot, and an ask's transition script
// touches its ask's {callId} slot, so it cannot append to a chain that
// lives anywhere else. Instead:
//
//  1. Each transition script appends its event to the ask's outbox (a list
//     in the ask's slot: keys.outbox), in the same script as the
//     transition, so no step escapes the trail (luaAudit in redis.go). The
//     pipeline that runs the script files the call id in the pending index
//     (a sorted set in the chain's slot), before the script.
//  2. A chainer, on any replica, moves outboxes into the chain: one stream
//     (keys.chain) and its head (seq and hash of the last entry) under the
//     {audit} hash tag, so every chain script touches that one slot. It
//     holds a short lease (one chainer at a time), reads the due call ids
//     and their outboxes, orders the events (an ask's in its own order,
//     asks merged by time), computes each entry's hash in Go, and appends
//     them with chainAppendScript, which checks that the head it extends is
//     the head the hashes were computed from: two chainers (a lease that
//     lapsed under a stalled one) can never fork the chain, the later one
//     starts over. The same script records, per call id, the last event
//     chained ("marks", in the chain's slot); then the chainer trims the
//     outboxes. A chainer that dies between the append and the trim leaves
//     events in outboxes that are in the chain already: the next chainer
//     reads the marks in the same script that gives it the head, and skips
//     them. Events that change no ask (Append) go to an inbox list in the
//     chain's slot, which the append script consumes atomically.
//  3. The pending index never loses an outbox: every filing's score is
//     its own (fileAudit), and the event its script appends carries it. A
//     call id leaves the index once a pass that read score s found the
//     event stamped s in the outbox, chained and trimmed it, and the score
//     is still s (forgetLanded): that filing's script has landed and none
//     came since. Otherwise (a script that lands after its filing, as a
//     pipeline's commands to two Cluster nodes race; a refused transition;
//     an event of a release before the stamp) it leaves only after a
//     chainer saw its outbox empty twice, at least chainCool apart (a
//     share of chainSpread more, by call id), with no filing in between,
//     so that event is still picked up.
//
// Every replica kicks its chainer after its own transitions (a burst
// shares one pass); a replica that finds the lease held leaves the work to
// the holder, and every chainer looks every chainTick anyway. Each chain
// pass costs 3-4 round trips for up to chainBatch asks; the transitions
// themselves gain commands in their existing round trip, not round trips.
//
// The stream's entry ids are the events' times (ms, never going back), so
// ASKSLACK_AUDIT_RETENTION trims it with XTRIM MINID, and ?since= reads
// from a time. The head outlives trimming: the chain goes on from it.

var _ store.Store = (*Store)(nil)

// Audit keys. The chain's share one {audit} hash tag: one Cluster slot.
func (k keys) outbox(callID string) string { return k.ask(callID) + ":audit" }

// chain is the stream of chained entries (field "e": the entry's JSON).
func (k keys) chain() string { return k.prefix + ":{audit}:chain" }

// chainHead is a hash: seq and hash of the last entry, ms of its stream id.
func (k keys) chainHead() string { return k.prefix + ":{audit}:head" }

// auditPending is a sorted set of call ids whose outbox may hold events,
// scored by when they were filed (ms; x.5: cooling, see above).
func (k keys) auditPending() string { return k.prefix + ":{audit}:pending" }

// auditMarks is a hash: call id → "<ask seq>:<n>", the last event of that
// ask chained.
func (k keys) auditMarks() string { return k.prefix + ":{audit}:marks" }

// auditInbox is a list of events that change no ask, waiting to be chained.
func (k keys) auditInbox() string { return k.prefix + ":{audit}:inbox" }

// chainLease is the chainer's lease: its holder, with a TTL.
func (k keys) chainLease() string { return k.prefix + ":{audit}:lease" }

// The chainer's pace.
const (
	chainBatch  = 256                    // asks (and inbox events) per pass
	chainCool   = 30 * time.Second       // an emptied outbox is looked at again after this, then forgotten
	chainSpread = 2 * time.Minute        // and a share of this, by call id: a burst's second looks spread out
	chainSkew   = 5 * time.Second        // filings this far in the future (a replica's clock ahead) are due
	chainDelay  = 50 * time.Millisecond  // a kick waits this long for the rest of its burst
	chainTick   = time.Second            // every chainer looks this often while there is work,
	chainIdle   = 8 * time.Second        // and this often after passes that found none
	chainWait   = 250 * time.Millisecond // Audit waits for another replica's pass this long at most, per try
	// auditScan bounds the stream entries one filtered page reads.
	auditScan = 5000
)

// fileAudit files callID for the chainer, in the pipeline of a transition
// and before its script: a filing whose script never runs costs a look at
// an empty outbox, while a script without its filing would wait for the
// ask's next transition. It returns the score filed, which the script's
// event carries (auditArgs.filed): the time (ms) and a fraction that tells
// this filing from another of the same millisecond (filedFraction).
func (r *Store) fileAudit(ctx context.Context, p redis.Pipeliner, callID string) string {
	score := float64(r.clock.Now().UnixMilli()) + r.filedFraction()
	p.ZAdd(ctx, r.k.auditPending(), redis.Z{Score: score, Member: callID})
	return strconv.FormatFloat(score, 'f', -1, 64)
}

// filedFraction is a filing's fraction of a millisecond: n/4096 (exact in
// a float64 score for millisecond times until the year 2248), never 0 (a
// filing of a release before the stamp), nor one half (x.5 marks a cooling
// entry), counted on from a random start per store so that two replicas
// rarely share one. A shared one matters only when both file the same ask
// in the same millisecond and a chain pass reads the ask between their
// two scripts: the second event then waits for the ask's next filing.
func (r *Store) filedFraction() float64 {
	for {
		n := r.filings.Add(1) % 4096
		if n != 0 && n != 2048 {
			return float64(n) / 4096
		}
	}
}

// kickChainer asks this replica's chainer for a pass soon.
func (r *Store) kickChainer() {
	select {
	case r.chainKick <- struct{}{}:
	default:
	}
}

// runChainer chains on kicks and on a timer until ctx ends. The timer is
// chainTick while there is work and doubles, up to chainIdle, while passes
// find none: an idle replica's chainer costs a script every chainIdle, not
// every second (issue 31), and its own transitions kick it at once. What
// waits for the timer — another replica's filings when that replica died
// before chaining them, the second look chainCool after a chaining — is due
// no later than chainIdle after it would have been.
func (r *Store) runChainer(ctx context.Context) {
	every := chainTick
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.chainKick:
			select { // let the rest of the burst join this pass
			case <-ctx.Done():
				return
			case <-time.After(chainDelay):
			}
		case <-t.C:
		}
		idle, err := r.drain(ctx, false)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("store: chaining audit events failed; retrying", "err", err)
			every = chainTick
		case idle:
			every = min(2*every, chainIdle)
		default:
			every = chainTick
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(every)
	}
}

// drain runs chain passes until nothing is due; idle reports that the
// first found nothing to do. When another replica holds the lease it
// leaves the work to it, unless wait: then it waits for the lease for a
// while (Audit reading its own writes).
func (r *Store) drain(ctx context.Context, wait bool) (idle bool, err error) {
	r.chainMu.Lock()
	defer r.chainMu.Unlock()
	deadline := time.Now().Add(r.chainLease + chainWait)
	for first := true; ; first = false {
		res, err := r.chainPass(ctx)
		switch {
		case err != nil:
			return false, err
		case res == passHeld:
			if !wait || time.Now().After(deadline) {
				return false, nil
			}
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		case res == passIdle:
			return first, nil
		case res == passDone:
			return false, nil
		}
	}
}

type passResult int

const (
	passMore passResult = iota // a full batch (or a lost race): look again
	passDone                   // it did what was due, and gave the lease up
	passIdle                   // nothing was due
	passHeld                   // another chainer holds the lease
)

// chainTakeScript takes (or renews) the chainer's lease and reads a pass's
// work: due call ids, inbox events, the marks of those ids and the head.
// With nothing due it releases the lease.
// KEYS[1] lease, KEYS[2] pending, KEYS[3] marks, KEYS[4] inbox, KEYS[5]
// head. ARGV[1] holder, ARGV[2] lease ms, ARGV[3] due until (ms), ARGV[4]
// batch. Returns {1, holder} when another holds the lease, {2} when nothing
// is due, else {0, {id, score, …}, {event, …}, {mark, …}, {seq, hash, ms}}.
var chainTakeScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return {1, cur} end
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[3], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
local inbox = redis.call('LRANGE', KEYS[4], 0, tonumber(ARGV[4]) - 1)
if #due == 0 and #inbox == 0 then
  if cur then redis.call('DEL', KEYS[1]) end
  return {2}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local ids = {}
for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
local marks = {}
if #ids > 0 then marks = redis.call('HMGET', KEYS[3], unpack(ids)) end
for i = 1, #marks do marks[i] = marks[i] or '' end
local head = redis.call('HMGET', KEYS[5], 'seq', 'hash', 'ms')
for i = 1, 3 do head[i] = head[i] or '' end
return {0, due, inbox, marks, head}
`)

// chainAppendScript appends a pass's entries to the chain, if the head is
// still the one they were linked to, and does the pass's bookkeeping; a
// pass that took all that was due gives the lease up (no idle round trip
// to do it).
// KEYS[1] head, KEYS[2] chain, KEYS[3] marks, KEYS[4] pending, KEYS[5]
// inbox, KEYS[6] lease. ARGV[1] the head hash the entries extend ("" for
// none), ARGV[2] new head seq, ARGV[3] new head hash, ARGV[4] trim before
// (ms), ARGV[5] inbox events consumed, ARGV[6] entries E, ARGV[7] marks M,
// ARGV[8] pending updates P, ARGV[9] holder to release the lease for (""
// to keep it), then E pairs (at ms, entry JSON), M pairs (call id,
// mark), P triples (call id, score read, new score or "" to forget it and
// its mark; applied when its score is still the one read). Returns {1} when
// the head moved (nothing done), {0} otherwise.
var chainAppendScript = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'hash', 'ms')
if (h[1] or '') ~= ARGV[1] then return {1} end
local last = tonumber(h[2] or '0')
local top = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if #top > 0 then
  local ms = tonumber(string.match(top[1][1], '^(%d+)'))
  if ms > last then last = ms end
end
local E, M, P = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local i = 10
for k = 1, E do
  local at = tonumber(ARGV[i])
  if at < last then at = last end
  redis.call('XADD', KEYS[2], at .. '-*', 'e', ARGV[i + 1])
  last = at
  i = i + 2
end
if E > 0 then
  redis.call('HSET', KEYS[1], 'seq', ARGV[2], 'hash', ARGV[3], 'ms', last)
  redis.call('XTRIM', KEYS[2], 'MINID', ARGV[4])
end
for k = 1, M do
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
  i = i + 2
end
for k = 1, P do
  local s = redis.call('ZSCORE', KEYS[4], ARGV[i])
  if s and tonumber(s) == tonumber(ARGV[i + 1]) then
    if ARGV[i + 2] == '' then
      redis.call('ZREM', KEYS[4], ARGV[i])
      redis.call('HDEL', KEYS[3], ARGV[i])
    else
      redis.call('ZADD', KEYS[4], ARGV[i + 2], ARGV[i])
    end
  end
  i = i + 3
end
if tonumber(ARGV[5]) > 0 then redis.call('LTRIM', KEYS[5], tonumber(ARGV[5]), -1) end
if ARGV[9] ~= '' and redis.call('GET', KEYS[6]) == ARGV[9] then redis.call('DEL', KEYS[6]) end
return {0}
`)

// outboxTrimScript drops from the front of an outbox the events a pass
// chained (or found chained), named by their "<ask seq>:<n>": a pass reads
// a prefix of the list, transitions only append, and another chainer may
// have trimmed part of it already.
// KEYS[1] outbox. ARGV the names. Returns how many it dropped.
var outboxTrimScript = redis.NewScript(`
local done = {}
for i = 1, #ARGV do done[ARGV[i]] = true end
local head = redis.call('LRANGE', KEYS[1], 0, #ARGV - 1)
local n = 0
for _, el in ipairs(head) do
  local sep = string.find(el, '|', 1, true)
  if not sep or not done[string.sub(el, 1, sep - 1)] then break end
  n = n + 1
end
if n > 0 then redis.call('LTRIM', KEYS[1], n, -1) end
return n
`)

// coolUntil is when a pass looks again at an ask it chained (the score,
// x.5 for cooling): chainCool from now, and a share of chainSpread of its
// own, so that a burst of asks chained together is not looked at again
// together (10,000 asks opened at once cost Redis a herd of commands half
// a minute later, issue 46).
func coolUntil(now time.Time, callID string) string {
	h := fnv.New32a()
	h.Write([]byte(callID))
	spread := time.Duration(h.Sum32()%uint32(chainSpread/time.Millisecond)) * time.Millisecond
	return strconv.FormatInt(now.Add(chainCool+spread).UnixMilli(), 10) + ".5"
}

// forgetScript drops chained asks from the pending index, and their
// marks, while each one's score is still the one its pass read: nothing
// was filed since. A pass runs it once the outboxes are trimmed.
// KEYS[1] pending, KEYS[2] marks. ARGV pairs (call id, score read).
var forgetScript = redis.NewScript(`
for i = 1, #ARGV, 2 do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s and tonumber(s) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
  end
end
return 0
`)

// outboxEvent is an event as luaAudit writes it.
type outboxEvent struct {
	At     string `json:"at"`
	Event  string `json:"ev"`
	Caller string `json:"c"`
	Agent  string `json:"a"`
	ASID   string `json:"as"`
	Who    string `json:"w"`
	Detail string `json:"d"`
	Filed  string `json:"f"` // the pending index's score its pipeline filed (fileAudit); "" before the stamp
}

// mark names one event of one ask: "<ask seq>:<n>".
type mark struct {
	askSeq string
	n      int64
}

func parseMark(s string) (mark, bool) {
	seq, n, ok := strings.Cut(s, ":")
	v, err := strconv.ParseInt(n, 10, 64)
	return mark{seq, v}, ok && err == nil
}

// covers reports whether the mark m (the last event chained) covers e.
func (m mark) covers(e mark) bool { return m.askSeq == e.askSeq && e.n <= m.n }

// pendingAsk is one due call id of a pass.
type pendingAsk struct {
	id     string
	score  string
	mark   mark
	marked bool
	events []asktype.AuditEntry // not yet chained, in the ask's order
	names  []string             // every outbox event read (to trim)
	last   string               // the last event's name, for its mark
	landed bool                 // an event read carries score: the filing read has its event here
}

// chainPass is one round of the chainer (see the comment at the top).
func (r *Store) chainPass(ctx context.Context) (passResult, error) {
	now := r.clock.Now()
	res, err := chainTakeScript.Run(ctx, r.rdb, []string{r.k.chainLease(), r.k.auditPending(), r.k.auditMarks(), r.k.auditInbox(), r.k.chainHead()},
		r.holder, r.chainLease.Milliseconds(), ms(now.Add(chainSkew)), chainBatch).Slice()
	if err != nil {
		return 0, err
	}
	switch code, _ := res[0].(int64); code {
	case 1:
		return passHeld, nil
	case 2:
		return passIdle, nil
	}
	due, inbox, marks, head := strs(res[1]), strs(res[2]), strs(res[3]), strs(res[4])
	asks := make([]*pendingAsk, 0, len(due)/2)
	for i := 0; i+1 < len(due); i += 2 {
		p := &pendingAsk{id: due[i], score: due[i+1]}
		if i/2 < len(marks) {
			p.mark, p.marked = parseMark(marks[i/2])
		}
		asks = append(asks, p)
	}
	// A pass's work finishes once begun: the caller going away must not
	// leave it between the append and the trim more often than a crash.
	ctx = context.WithoutCancel(ctx)
	if err := r.readOutboxes(ctx, asks); err != nil {
		return 0, err
	}
	var lists [][]asktype.AuditEntry
	for _, p := range asks {
		if len(p.events) > 0 {
			lists = append(lists, p.events)
		}
	}
	consumed := len(inbox)
	if len(inbox) > 0 {
		direct := make([]asktype.AuditEntry, 0, len(inbox))
		for _, raw := range inbox {
			var e asktype.AuditEntry
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				e = asktype.AuditEntry{At: now, Event: "unreadable", Detail: truncate(raw, 500)}
			}
			direct = append(direct, e)
		}
		lists = append(lists, direct)
	}
	entries := mergeByTime(lists)
	seq, _ := strconv.ParseInt(head[0], 10, 64)
	prev := head[1]
	full := len(asks) == chainBatch || len(inbox) == chainBatch
	release := r.holder
	if full {
		release = ""
	}
	args := []any{head[1], "", "", max(0, ms(now.Add(-r.auditRetention))), consumed, len(entries), 0, len(asks), release}
	for i := range entries {
		args = append(args, ms(entries[i].At), linked(&entries[i], seq, prev))
		seq, prev = entries[i].Seq, entries[i].Hash
	}
	args[1], args[2] = strconv.FormatInt(seq, 10), prev
	nmarks := 0
	for _, p := range asks {
		if p.last != "" {
			args = append(args, p.id, p.last)
			nmarks++
		}
	}
	args[6] = nmarks
	npending := 0
	for _, p := range asks {
		if p.landed {
			continue // forgotten once trimmed, below
		}
		next := coolUntil(now, p.id) // look again after chainCool, and a spread
		if len(p.names) == 0 && strings.HasSuffix(p.score, ".5") {
			next = "" // empty twice, chainCool apart: forget it
		}
		args = append(args, p.id, p.score, next)
		npending++
	}
	args[7] = npending
	res, err = chainAppendScript.Run(ctx, r.rdb, []string{r.k.chainHead(), r.k.chain(), r.k.auditMarks(), r.k.auditPending(), r.k.auditInbox(), r.k.chainLease()}, args...).Slice()
	if err != nil {
		return 0, err
	}
	if code, _ := res[0].(int64); code == 1 {
		return passMore, nil // another chainer extended the chain meanwhile: start over from its head
	}
	if err := r.fault("appended"); err != nil {
		return 0, err
	}
	if err := r.trimOutboxes(ctx, asks); err != nil {
		return 0, err
	}
	if err := r.forgetLanded(ctx, asks); err != nil {
		return 0, err
	}
	if full {
		return passMore, nil
	}
	return passDone, nil
}

// linked links e after the entry seq, prev (store.Link) and
// returns its JSON as stored: the canonical JSON the hash covers with the
// hash added, which is what json.Marshal of the entry decodes as (one
// encoding per entry instead of two).
func linked(e *asktype.AuditEntry, seq int64, prev string) string {
	e.At = fromMs(ms(e.At)).UTC()
	e.Seq, e.Prev = seq+1, prev
	c := e.Canonical()
	sum := sha256.Sum256(c)
	e.Hash = hex.EncodeToString(sum[:])
	return string(c[:len(c)-1]) + `,"hash":"` + e.Hash + `"}`
}

// readOutboxes reads the outbox of each ask, in one round trip, and keeps
// the events its mark does not cover.
func (r *Store) readOutboxes(ctx context.Context, asks []*pendingAsk) error {
	if len(asks) == 0 {
		return nil
	}
	cmds := make([]*redis.StringSliceCmd, len(asks))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, a := range asks {
			cmds[i] = p.LRange(ctx, r.k.outbox(a.id), 0, -1)
		}
		return nil
	}); err != nil {
		return err
	}
	for i, a := range asks {
		score, err := strconv.ParseFloat(a.score, 64)
		if err != nil {
			score = -1
		}
		for _, el := range cmds[i].Val() {
			name, raw, _ := strings.Cut(el, "|")
			a.names = append(a.names, name)
			var ev outboxEvent
			readable := json.Unmarshal([]byte(raw), &ev) == nil
			if readable && ev.Filed != "" {
				if f, err := strconv.ParseFloat(ev.Filed, 64); err == nil && f == score {
					a.landed = true
				}
			}
			m, ok := parseMark(name)
			if ok && a.marked && a.mark.covers(m) {
				continue // chained by a pass that died before trimming
			}
			a.events = append(a.events, outboxEntry(a.id, raw, ev, readable))
			a.last = name
		}
	}
	return nil
}

// forgetLanded drops from the pending index the asks whose filing read
// had its event in the outbox (pendingAsk.landed), now that the pass has
// chained and trimmed them: no script of that filing can land later, so
// no second look is needed (a later filing changed the score, and the
// ask stays). An ask whose event did not carry the score read (a filing
// whose script had not landed yet, or refused; an older release's event)
// cools and is looked at again, as before.
func (r *Store) forgetLanded(ctx context.Context, asks []*pendingAsk) error {
	var args []any
	for _, p := range asks {
		if p.landed {
			args = append(args, p.id, p.score)
		}
	}
	if len(args) == 0 {
		return nil
	}
	return forgetScript.Run(ctx, r.rdb, []string{r.k.auditPending(), r.k.auditMarks()}, args...).Err()
}

// outboxEntry turns an outbox event (raw, decoded as ev when readable)
// into an entry; one that cannot be read is still chained, as such, so
// nothing goes missing silently.
func outboxEntry(callID, raw string, ev outboxEvent, readable bool) asktype.AuditEntry {
	if !readable {
		return asktype.AuditEntry{CallID: callID, Event: "unreadable", Detail: truncate(raw, 500)}
	}
	at, _ := strconv.ParseInt(ev.At, 10, 64)
	e := asktype.AuditEntry{At: fromMs(at), CallID: callID, Event: ev.Event, Caller: ev.Caller, Detail: ev.Detail}
	if ev.Agent != "" || ev.ASID != "" {
		e.Agent = &asktype.AuditAgent{ID: ev.Agent, SessionID: ev.ASID}
	}
	if ev.Who != "" {
		var who asktype.AuditRespondent
		if json.Unmarshal([]byte(ev.Who), &who) == nil {
			e.Respondent = &who
		}
	}
	return e
}

// trimOutboxes drops what a pass chained from the asks' outboxes.
func (r *Store) trimOutboxes(ctx context.Context, asks []*pendingAsk) error {
	return r.withScripts(ctx, func(ctx context.Context, p redis.Pipeliner, run scriptRunner) {
		for _, a := range asks {
			if len(a.names) > 0 {
				names := make([]any, len(a.names))
				for i, n := range a.names {
					names[i] = n
				}
				run(p, outboxTrimScript, []string{r.k.outbox(a.id)}, names...)
			}
		}
	})
}

// fault runs the test hook (Options.AuditFault) after a chainer step.
func (r *Store) fault(step string) error {
	if r.auditFault == nil {
		return nil
	}
	return r.auditFault(step)
}

// mergeByTime merges lists into one, each list's own order kept, the
// earliest head first.
func mergeByTime(lists [][]asktype.AuditEntry) []asktype.AuditEntry {
	if len(lists) == 1 {
		return lists[0]
	}
	h := &heads{}
	n := 0
	for i, l := range lists {
		n += len(l)
		if len(l) > 0 {
			*h = append(*h, head{l, i})
		}
	}
	heap.Init(h)
	out := make([]asktype.AuditEntry, 0, n)
	for h.Len() > 0 {
		l := &(*h)[0]
		out = append(out, l.rest[0])
		if len(l.rest) == 1 {
			heap.Pop(h)
		} else {
			l.rest = l.rest[1:]
			heap.Fix(h, 0)
		}
	}
	return out
}

// head is what is left of one list, and the list's place among them (ties
// go to the earlier list: the asks' outboxes before the inbox).
type head struct {
	rest  []asktype.AuditEntry
	order int
}

type heads []head

func (h heads) Len() int { return len(h) }
func (h heads) Less(i, j int) bool {
	a, b := h[i].rest[0].At, h[j].rest[0].At
	return a.Before(b) || (a.Equal(b) && h[i].order < h[j].order)
}
func (h heads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)   { *h = append(*h, x.(head)) }
func (h *heads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Append implements store.Audit: the event waits in the inbox (the chain's
// slot) for the next chain pass, which this replica's chainer runs soon.
func (r *Store) Append(ctx context.Context, e asktype.AuditEntry) error {
	e.Seq, e.Prev, e.Hash = 0, "", ""
	b, err := json.Marshal(&e)
	if err != nil {
		return err
	}
	if err := r.rdb.RPush(ctx, r.k.auditInbox(), b).Err(); err != nil {
		return err
	}
	r.kickChainer()
	return nil
}

var streamID = regexp.MustCompile(`^\d{1,20}-\d{1,20}$`)

// Audit implements store.Audit. A first page (no cursor) first chains what
// is due (waiting a moment for another replica's pass); then it reads the
// stream: from after
// the cursor (a stream id), or from Since (entry ids are times, never
// earlier than their entry's at).
func (r *Store) Audit(ctx context.Context, q asktype.AuditQuery) ([]asktype.AuditEntry, string, error) {
	if q.Cursor != "" && !streamID.MatchString(q.Cursor) {
		return nil, "", store.ErrBadCursor
	}
	if q.Cursor == "" { // a first page: later ones read on from it
		if _, err := r.drain(ctx, true); err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			r.log.Warn("store: chaining audit events before a read failed; reading what is chained", "err", err)
		}
	}
	start := "-"
	switch {
	case q.Cursor != "":
		start = "(" + q.Cursor
	case !q.Since.IsZero() && q.Since.UnixMilli() > 0:
		start = strconv.FormatInt(q.Since.UnixMilli(), 10)
	}
	limit := store.PageSize(q)
	chunk := int64(limit + 1)
	if q.CallID != "" || !q.Since.IsZero() {
		chunk = 1000
	}
	out := []asktype.AuditEntry{}
	var ids []string
	scanned := 0
	for {
		msgs, err := r.rdb.XRangeN(ctx, r.k.chain(), start, "+", chunk).Result()
		if err != nil {
			return nil, "", err
		}
		for _, m := range msgs {
			scanned++
			raw, _ := m.Values["e"].(string)
			var e asktype.AuditEntry
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				// Shown as it is: the verifier reports it (its hash cannot match).
				e = asktype.AuditEntry{Event: "unreadable", Detail: truncate(raw, 500)}
			}
			if !store.Matches(q, &e) {
				continue
			}
			if len(out) == limit {
				return out, ids[len(ids)-1], nil
			}
			out, ids = append(out, e), append(ids, m.ID)
		}
		if int64(len(msgs)) < chunk {
			return out, "", nil
		}
		start = "(" + msgs[len(msgs)-1].ID
		if scanned >= auditScan {
			return out, msgs[len(msgs)-1].ID, nil // the caller reads on from here
		}
	}
}

// strs reads a script's array of strings.
func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// newHolder names this store's chainer in the lease.
func newHolder() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
