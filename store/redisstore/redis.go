// Package redisstore is the production store.Store: every replica sees the
// same asks in Redis (single node, Sentinel or Cluster), each transition is
// one Lua script next to the Go method that runs it, and a change made by one
// replica wakes waiters on all of them through one pub/sub channel. Only this
// package and the binary link go-redis.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/store"
)

// Store is the shared store: every replica sees the same asks, and a change
// made by one wakes waiters on all of them through a pub/sub channel.
type Store struct {
	rdb       redis.UniversalClient
	k         keys
	retention time.Duration
	log       *slog.Logger
	clock     clock.Clock
	hub       store.Hub

	life startstop.Base // runs the change feed's listener and the audit chainer

	lastSeq atomic.Int64 // see nextSeq

	// The audit chainer (audit.go).
	auditRetention time.Duration
	chainLease     time.Duration
	holder         string        // this store's name in the chainer's lease
	chainKick      chan struct{} // a transition happened here
	chainMu        sync.Mutex    // one pass at a time in this process
	auditFault     func(step string) error
}

// Options configure NewRedis.
type Options struct {
	// Prefix starts every key; tests give each test its own. Default "askslack".
	Prefix string
	// Retention is how long settled and aborted asks are kept.
	Retention time.Duration
	Logger    *slog.Logger
	// Clock stamps the message-bookkeeping index (when an ask last
	// changed) and times the audit chain's retention and lease; nil means
	// real time. Transitions take their time as arguments.
	Clock clock.Clock
	// AuditRetention is how long the audit trail is kept
	// (ASKSLACK_AUDIT_RETENTION); 0 means store.DefaultAuditRetention.
	AuditRetention time.Duration
	// ChainLease is how long a chainer's lease lasts unrenewed: how long
	// the chain waits for a replica that died mid-pass; 0 means 5s.
	ChainLease time.Duration
	// AuditFault is a test hook: called after a chainer's steps
	// ("appended": the chain append ran, the outbox trim did not); an
	// error stops the pass there, as if the replica died. nil in
	// production.
	AuditFault func(step string) error
}

// New returns a store on rdb (single node, Sentinel or Cluster). Call
// Start to receive change hints from other replicas.
func New(rdb redis.UniversalClient, opts Options) (*Store, error) {
	if opts.Prefix == "" {
		opts.Prefix = "askslack"
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, fmt.Errorf("store: key prefix %q must not contain braces (they are Cluster hash tags)", opts.Prefix)
	}
	if opts.Retention <= 0 {
		opts.Retention = store.DefaultRetention
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.AuditRetention <= 0 {
		opts.AuditRetention = store.DefaultAuditRetention
	}
	if opts.ChainLease <= 0 {
		opts.ChainLease = 5 * time.Second
	}
	return &Store{rdb: rdb, k: keys{opts.Prefix}, retention: opts.Retention, log: opts.Logger, clock: clock.OrReal(opts.Clock),
		auditRetention: opts.AuditRetention, chainLease: opts.ChainLease, holder: newHolder(), chainKick: make(chan struct{}, 1),
		auditFault: opts.AuditFault}, nil
}

// Start subscribes to change hints published by every replica and starts
// the audit chainer. It returns once the subscription is confirmed; Stop
// ends both. It also warns when
// Redis may evict keys (maxmemory-policy other than noeviction). A Start
// that failed may be retried; a second Start after one succeeded is an
// error; after Stop, Start does nothing.
func (r *Store) Start(ctx context.Context) error {
	var ps *redis.PubSub
	return r.life.Launch(ctx, func(ctx context.Context) error {
		ps = r.rdb.Subscribe(context.WithoutCancel(ctx), r.k.events())
		if _, err := ps.Receive(ctx); err != nil {
			_ = ps.Close()
			return fmt.Errorf("store: subscribe to change feed: %w", err)
		}
		r.checkEviction(ctx)
		return nil
	}, func(ctx context.Context) {
		listened := make(chan struct{})
		go r.listen(ps, listened)
		r.runChainer(ctx)
		_ = ps.Close() // closes the channel listen ranges over
		<-listened
	})
}

func (r *Store) listen(ps *redis.PubSub, done chan<- struct{}) {
	defer close(done)
	// ChannelWithSubscriptions reports each (re)subscription: after a
	// reconnect, hints published meanwhile are lost, so wake everyone.
	for m := range ps.ChannelWithSubscriptions(redis.WithChannelSize(1024)) {
		switch m := m.(type) {
		case *redis.Message:
			r.hint(m.Payload)
		case *redis.Subscription:
			r.hub.Forget()
		}
	}
}

// hint hands one change-feed message to the hub: "a:<callId>|<version>"
// from a transition script, any other topic as it is. It also reads the
// ask's and its session's hint in one message, "a:<callId>|<version>|<sessionId>",
// which a later release will publish instead of two (three PUBLISHes an ask,
// each forwarded to every node of a Cluster): replicas must read it before
// any replica sends it, so a rolling update to that release never has a
// replica deaf to the other's hints.
func (r *Store) hint(payload string) {
	if id, rest, ok := strings.Cut(payload, "|"); ok && strings.HasPrefix(id, "a:") {
		ver, session, both := strings.Cut(rest, "|")
		if n, err := strconv.ParseInt(ver, 10, 64); err == nil {
			r.hub.Announce(id[2:], n)
			if both && session != "" {
				r.hub.Publish(store.SessionTopic(session))
			}
			return
		}
	}
	r.hub.Publish(payload)
}

// Stop ends the change feed and the chainer and waits for both, until ctx
// ends. Safe twice and before Start. The Redis client is the caller's to
// close.
func (r *Store) Stop(ctx context.Context) error {
	return r.life.Halt(ctx, nil)
}

// Ping implements store.Store.
func (r *Store) Ping(ctx context.Context) error { return r.rdb.Ping(ctx).Err() }

// Changes implements store.Store.
func (r *Store) Changes(callID string) (<-chan struct{}, func()) {
	return r.hub.Subscribe(store.AskTopic(callID))
}

// Heard implements store.Store.
func (r *Store) Heard(callID string) int64 { return r.hub.Heard(callID) }

// SessionChanges implements store.Store.
func (r *Store) SessionChanges(sessionID string) (<-chan struct{}, func()) {
	return r.hub.Subscribe(store.SessionTopic(sessionID))
}

// Result codes shared by the transition scripts. Each script returns
// {code, <HGETALL of the ask>}; the Go method maps the code to a sentinel.
const (
	codeOK       = 0
	codeNotFound = 1
	codeState    = 2 // wrong state: the sentinel follows from the state field
	codeNotDue   = 3
	codeQueued   = 4
	codeNoReply  = 5
	codeHeld     = 6
	codeLate     = 7 // an answer at or past the deadline: the script continued the ask
	codeSame     = 8 // FinishPost: the message was recorded already; nothing changed
)

// luaHead is shared by the transition scripts. It reads, in one HMGET, the
// fields every transition needs (the state, the version, what the hint and
// the audit event name, the deadline) into locals (luaAsk), and returns
// {1} when the ask is missing. result(code) returns the code followed by
// the ask's fields; set(field, value, ...) writes fields with the next
// version in one HSET (every change bumps the version: the mirror renders
// what is behind); audit() records the transition's event (luaAsk).
const luaHead = luaAsk + `
local function result(code)
  if code == 0 or code == 7 then hint() end
  local r = redis.call('HGETALL', KEYS[1])
  table.insert(r, 1, code)
  return r
end
local function set(...)
  ver = ver + 1
  redis.call('HSET', KEYS[1], 'ver', ver, ...)
end
do
  local f = redis.call('HMGET', KEYS[1], 'state', 'ver', 'sid', 'seq', 'caller', 'agent', 'asid', 'deadline')
  state, ver, sid, seq, caller, agent, asid, deadline = f[1], tonumber(f[2] or '0'), f[3], f[4], f[5], f[6], f[7], tonumber(f[8] or '0')
end
if not state then return {1} end
`

// luaAsk declares the ask's fields a script keeps in locals (luaHead reads
// them; createScript has them as arguments), and the two things every
// transition does with them:
//
// hint() publishes the change hint of the ask in KEYS[1] from inside the
// script, so the hint is ordered with the change and costs no round trip:
// "a:<callId>|<version>" and "s:<sessionId>". Every script that uses it
// takes the call id and the feed's channel as its last two arguments
// (appended by hinted). PUBLISH names no key, so this is fine in Cluster.
//
// audit(event, who, detail) records the transition's audit event in the
// same script, so no step escapes the trail: it appends it to the ask's
// outbox (the last of KEYS, in the ask's slot) as "<seq>:<ver>|<JSON>":
// the ask's seq tells incarnations of one call id apart, and its version,
// which every audited transition bumps first, numbers the ask's events. The
// JSON carries what the ask holds (caller, agent id and session) and what
// the Go method passed: when (ms), who answered (JSON, "" for nobody) and a
// detail; who and detail default to the arguments. Call it after set() and
// before PEXPIREAT (a record past its retention is gone after that). The
// chainer (audit.go) moves outboxes into the one chain. Every script that
// uses it takes, before hint's two, the outbox's TTL (ms), the time, who
// and the detail (appended by audited).
const luaAsk = `
local state, ver, sid, seq, caller, agent, asid, deadline
local function hint()
  local feed, id = ARGV[#ARGV], ARGV[#ARGV - 1]
  redis.call('PUBLISH', feed, 'a:' .. id .. '|' .. ver)
  if sid and sid ~= '' then redis.call('PUBLISH', feed, 's:' .. sid) end
end
local function audit(ev, who, detail)
  local ob = KEYS[#KEYS]
  local n = redis.call('RPUSH', ob, (seq or '') .. ':' .. ver .. '|' .. cjson.encode({at = ARGV[#ARGV - 4], ev = ev,
    c = caller or '', a = agent or '', as = asid or '', w = who or ARGV[#ARGV - 3], d = detail or ARGV[#ARGV - 2]}))
  if n == 1 then redis.call('PEXPIRE', ob, ARGV[#ARGV - 5]) end
end
`

// auditArgs are what a transition tells luaAudit: when, who answered (nil
// for nobody), and a detail.
type auditArgs struct {
	at     time.Time
	who    *asktype.AuditRespondent
	detail string
}

// audited appends what luaAudit and luaHint need to a script's arguments.
func (r *Store) audited(callID string, ev auditArgs, args ...any) []any {
	who := ""
	if ev.who != nil {
		b, _ := json.Marshal(ev.who) // strings only: cannot fail
		who = string(b)
	}
	return append(args, r.auditRetention.Milliseconds(), ms(ev.at), who, ev.detail, callID, r.k.events())
}

// answerArgs are the audit arguments of an answer: who gave it, read from
// the settlement or reply JSON here rather than in Lua.
func answerArgs(raw json.RawMessage, at time.Time) auditArgs {
	who, detail := store.AuditRespondentOf(raw)
	return auditArgs{at: at, who: who, detail: detail}
}

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
		r.fileAudit(ctx, p, a.CallID)
		// Filed open before the script, so no answer's removal (after its
		// own script, which needs this one's record) can come before it. An
		// ask never returns to open, so the open set needs no versions: an
		// add only here, removals whenever a snapshot says it left. NX: a
		// re-attach keeps the entry's score (the first create's seq).
		p.ZAddNX(ctx, r.k.byState(asktype.Open), redis.Z{Score: float64(asked.Seq), Member: a.CallID})
		res = run(p, createScript, []string{r.k.ask(a.CallID), r.k.lease(a.CallID, leasePost), r.k.outbox(a.CallID)}, r.audited(a.CallID,
			auditArgs{at: a.Created, detail: store.AskedDetail(a)},
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

// withScripts runs a pipeline that holds scripts, sent with EVALSHA (the
// script's hash) through the runner fill is given, with the context fill
// is given. When Redis does not know a script (it failed over or
// restarted, or its script cache was flushed) it has run the pipeline's
// other commands and not the script, so the pipeline runs again with EVAL,
// which carries the script itself and always works, whatever else flushes
// meanwhile. That second run completes a transition half applied, so it
// runs whatever happens to the caller (see begin). Pipelines built this
// way must be safe to run twice.
func (r *Store) withScripts(ctx context.Context, fill func(ctx context.Context, p redis.Pipeliner, run scriptRunner)) error {
	for _, eval := range []bool{false, true} {
		run := func(p redis.Pipeliner, s *redis.Script, keys []string, args ...any) *redis.Cmd {
			if eval {
				return s.Eval(ctx, p, keys, args...)
			}
			return s.EvalSha(ctx, p, keys, args...)
		}
		cmds, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			fill(ctx, p, run)
			return nil
		})
		if err == nil || eval || !noScript(cmds) {
			return err
		}
		ctx = context.WithoutCancel(ctx)
		// Load them for next time; this run carries them anyway.
		go r.loadScripts(ctx)
	}
	return nil
}

// begin is where a write to Redis starts. It returns ctx's error when the
// caller has gone already, and nothing is sent; otherwise ctx without its
// cancellation, for the write to use to its end. Once a write has sent
// anything Redis may have applied it, and only the rest of the write makes
// the record and its indexes agree: the script run again after NOSCRIPT
// (the pipeline's index writes ran without it), the index writes that
// follow a script, a stale entry put back after the pipeline dropped it.
// A caller that goes away (a dropped connection cancels ctx) must not stop
// it in between. go-redis's own timeouts bound each round trip.
func begin(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// scriptRunner queues a script in a pipeline (see withScripts).
type scriptRunner func(p redis.Pipeliner, s *redis.Script, keys []string, args ...any) *redis.Cmd

func noScript(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			return true
		}
	}
	return false
}

// loadScripts loads the scripts that run inside pipelines.
func (r *Store) loadScripts(ctx context.Context) {
	for _, s := range pipelinedScripts {
		if err := s.Load(ctx, r.rdb).Err(); err != nil {
			if errors.Is(err, redis.ErrClosed) {
				return // shutting down: nothing will run them
			}
			r.log.Warn("store: loading a script failed; pipelines send it whole meanwhile", "err", err)
			return
		}
	}
}

// index files an active ask, as its record says, under its session and,
// when it is an open timed ask, as a wait to expire and to claim. Every
// write is add-if-missing, so re-indexing is harmless. It returns the
// session's active count after (nil without a session).
func (r *Store) index(ctx context.Context, p redis.Pipeliner, run scriptRunner, a *asktype.Ask) *redis.Cmd {
	var active *redis.Cmd
	if a.SessionID != "" {
		ttl := r.retention.Milliseconds()
		if !a.Deadline.IsZero() {
			ttl += max(0, a.Deadline.Sub(a.Created).Milliseconds())
		}
		inActive := "0"
		if a.State.Active() {
			inActive = "1"
		}
		active = run(p, sessionIndexScript, []string{r.k.session(a.SessionID), r.k.active(a.SessionID)},
			a.Seq, a.CallID, inActive, ttl, sessionTTLSlack.Milliseconds())
	}
	if a.State == asktype.Open && !a.Deadline.IsZero() {
		p.ZAddNX(ctx, r.k.deadlines(), redis.Z{Score: float64(a.Deadline.UnixMilli()), Member: a.CallID})
		p.ZAddNX(ctx, r.k.claims(), redis.Z{Score: 0, Member: a.CallID})
	}
	return active
}

// sessionTTLSlack is how much longer than an ask needs sessionIndexScript
// makes a session's indexes live when it extends them: a busy session's
// asks then extend them once in that while, not each.
const sessionTTLSlack = time.Hour

// sessionIndexScript files an ask in its session's index and, when active,
// its active index (add-if-missing), makes both live at least ARGV[4] ms
// (when shorter, ARGV[4] + ARGV[5]; never shortening them), and returns the
// active count.
// KEYS[1] the session's index, KEYS[2] its active index (one slot: the
// session's hash tag). ARGV[1] seq (the score), ARGV[2] call id, ARGV[3]
// "1" to file it active, ARGV[4] TTL ms, ARGV[5] slack ms.
var sessionIndexScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[2])
if ARGV[3] == '1' then redis.call('ZADD', KEYS[2], 'NX', ARGV[1], ARGV[2]) end
local want = tonumber(ARGV[4])
for _, k in ipairs(KEYS) do
  local ttl = redis.call('PTTL', k)
  if ttl ~= -2 and ttl < want then redis.call('PEXPIRE', k, want + tonumber(ARGV[5])) end
end
return redis.call('ZCARD', KEYS[2])
`)

// extendTTL makes KEYS[1] live at least ARGV[1] ms from now (never
// shortens it). Sent with EVAL, not EVALSHA, because it runs in pipelines.
const extendTTL = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
if ttl < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1
`

// pruneActive drops entries of the session's active index whose ask ended,
// expired or belongs to another session, and returns how many remain.
func (r *Store) pruneActive(ctx context.Context, sessionID string) (int64, error) {
	key := r.k.active(sessionID)
	ids, err := r.rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return 0, err
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, r.k.ask(id), "state", "sid")
		}
		return nil
	}); err != nil {
		return 0, err
	}
	var gone []any
	for i, c := range cmds {
		v := c.Val()
		state, _ := v[0].(string)
		sid, _ := v[1].(string)
		if !asktype.State(state).Active() || sid != sessionID {
			gone = append(gone, ids[i])
		}
	}
	if len(gone) > 0 {
		if err := r.rdb.ZRem(ctx, key, gone...).Err(); err != nil {
			return 0, err
		}
	}
	return int64(len(ids) - len(gone)), nil
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
		r.fileAudit(ctx, p, callID)
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

// pipelinedScripts run inside pipelines (EVALSHA); withScripts loads them
// again when Redis has lost them.
var pipelinedScripts = []*redis.Script{createScript, markRenderedScript, finishPostScript, settleScript, claimWaitScript,
	expireScript, continueScript, abortScript, queueReplyScript, ackReplyScript, setMessageScript, refuseScript, outboxTrimScript, fileScript, voteScript}

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
func (r *Store) Stale(ctx context.Context, before time.Time, limit int) ([]string, error) {
	var window *redis.StringSliceCmd
	var tail *redis.ZSliceCmd
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		window = p.ZRangeByScore(ctx, r.k.stale(), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(before.UnixMilli(), 10), Count: int64(limit),
		})
		tail = p.ZRangeWithScores(ctx, r.k.stale(), -1, -1)
		return nil
	}); err != nil {
		return nil, err
	}
	ids := window.Val()
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
		for i, id := range out {
			// XX: an entry removed meanwhile (caught up) stays removed.
			p.ZAddXX(ctx, r.k.stale(), redis.Z{Score: float64(back + int64(i)), Member: id})
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
		r.fileAudit(ctx, p, callID)
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

// evalRunner queues scripts with EVAL (their whole source): for a script
// in a pipeline whose other script must not run twice.
func evalRunner(ctx context.Context) scriptRunner {
	return func(p redis.Pipeliner, s *redis.Script, keys []string, args ...any) *redis.Cmd {
		return s.Eval(ctx, p, keys, args...)
	}
}

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

// Session implements store.Store. Entries whose ask has expired, or whose record
// names another session, are pruned.
func (r *Store) Session(ctx context.Context, sessionID string) ([]*asktype.Ask, error) {
	skey := r.k.session(sessionID)
	ids, err := r.rdb.ZRange(ctx, skey, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	return r.sessionAsks(ctx, skey, sessionID, ids, func(*asktype.Ask) bool { return true })
}

// Replies implements store.Store. It reads the session's reply index and the asks
// it names, pruning entries whose ask no longer has a queued reply.
func (r *Store) Replies(ctx context.Context, sessionID string) ([]*asktype.Ask, error) {
	key := r.k.replies(sessionID)
	ids, err := r.rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	return r.sessionAsks(ctx, key, sessionID, ids, func(a *asktype.Ask) bool {
		return a.State == asktype.Continued && len(a.Reply) > 0
	})
}

// readAll reads the records of the asks ids name, in one round trip (an
// empty map for an ask that is gone).
func (r *Store) readAll(ctx context.Context, ids []string) ([]map[string]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, r.k.ask(id))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(cmds))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// sessionAsks reads the asks an index of sessionID names (in index order),
// keeps those whose record says they belong to the session and pass keep,
// and prunes the rest from the index.
func (r *Store) sessionAsks(ctx context.Context, index, sessionID string, ids []string, keep func(*asktype.Ask) bool) ([]*asktype.Ask, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	recs, err := r.readAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*asktype.Ask, 0, len(ids))
	var gone []any
	for i, m := range recs {
		if len(m) == 0 || m["sid"] != sessionID {
			gone = append(gone, ids[i])
			continue
		}
		a, err := fromMap(ids[i], m)
		if err != nil {
			return nil, err
		}
		if !keep(a) {
			gone = append(gone, ids[i])
			continue
		}
		out = append(out, a)
	}
	if len(gone) > 0 {
		r.rdb.ZRem(ctx, index, gone...)
	}
	return out, nil
}

// Due implements store.Store. Entries for asks that are not open timed waits (as
// their record says) are pruned.
func (r *Store) Due(ctx context.Context, until time.Time, limit int) ([]string, error) {
	ids, err := r.rdb.ZRangeByScore(ctx, r.k.deadlines(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(until.UnixMilli(), 10), Count: int64(limit),
	}).Result()
	if err != nil || len(ids) == 0 {
		return ids, err
	}
	return r.openTimed(ctx, ids)
}

// openTimed keeps the ids whose ask is open and timed, and drops the others
// from the timed indexes.
func (r *Store) openTimed(ctx context.Context, ids []string) ([]string, error) {
	cmds := make([]*redis.SliceCmd, len(ids))
	if _, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, r.k.ask(id), "state", "deadline")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := ids[:0:0]
	for i, c := range cmds {
		v := c.Val()
		state, _ := v[0].(string)
		deadline, _ := v[1].(string)
		if state == string(asktype.Open) && deadline != "" && deadline != "0" {
			out = append(out, ids[i])
		} else {
			r.unindex(ctx, ids[i], state)
		}
	}
	return out, nil
}

// acquireScript takes or renews a lease stored as "holder|untilMs".
// KEYS[1] lease key. ARGV[1] holder, ARGV[2] now ms, ARGV[3] ttl ms.
// Returns {0, holder} when held by ARGV[1] now, {6, holder} when another
// holder's lease has not ended. The key itself lives a day past the lease so
// abandoned leases are collected; "now" comes from the caller's clock.
var acquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local sep = string.find(cur, '|', 1, true)
  local holder = string.sub(cur, 1, sep - 1)
  local untilMs = tonumber(string.sub(cur, sep + 1))
  if holder ~= ARGV[1] and tonumber(ARGV[2]) < untilMs then return {6, holder} end
end
local untilMs = tonumber(ARGV[2]) + tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. untilMs, 'PX', tonumber(ARGV[3]) + 86400000)
return {0, ARGV[1]}
`)

// Acquire implements store.Store.
func (r *Store) Acquire(ctx context.Context, callID string, c store.Claim) (string, error) {
	name, holder, ttl, now := c.Name, c.Holder, c.TTL, c.Now
	if err := checkHolder(holder); err != nil {
		return "", err
	}
	res, err := acquireScript.Run(ctx, r.rdb, []string{r.k.lease(callID, name)}, holder, ms(now), ttl.Milliseconds()).Slice()
	if err != nil {
		return "", err
	}
	cur, _ := res[1].(string)
	if res[0] == int64(codeHeld) {
		return cur, store.ErrHeld
	}
	if name == store.LeaseWait {
		// XX: only asks still indexed as open timed waits are tracked.
		err = r.rdb.ZAddXX(ctx, r.k.claims(), redis.Z{Score: float64(now.Add(ttl).UnixMilli()), Member: callID}).Err()
	}
	return cur, err
}

// releaseScript deletes a lease if ARGV[1] holds it.
// KEYS[1] lease key. ARGV[1] holder. Returns 1 when released.
var releaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and string.sub(cur, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)

// Release implements store.Store. A released wait is offered for takeover at once.
func (r *Store) Release(ctx context.Context, callID, name, holder string) error {
	n, err := releaseScript.Run(ctx, r.rdb, []string{r.k.lease(callID, name)}, holder).Int()
	if err != nil || n == 0 || name != store.LeaseWait {
		return err
	}
	// XX: only a wait still indexed as open is offered; letting go of an
	// ended wait wakes nobody.
	ch, err := r.rdb.ZAddArgs(ctx, r.k.claims(), redis.ZAddArgs{XX: true, Ch: true, Members: []redis.Z{{Score: 0, Member: callID}}}).Result()
	if err != nil || ch == 0 {
		return err
	}
	return r.rdb.Publish(ctx, r.k.events(), store.ReleasedTopic).Err()
}

// Released implements store.Store.
func (r *Store) Released() (<-chan struct{}, func()) { return r.hub.Subscribe(store.ReleasedTopic) }

// Unclaimed implements store.Store. Entries for asks no longer open are pruned.
func (r *Store) Unclaimed(ctx context.Context, now time.Time, limit int) ([]string, error) {
	ids, err := r.rdb.ZRangeByScore(ctx, r.k.claims(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(limit),
	}).Result()
	if err != nil || len(ids) == 0 {
		return ids, err
	}
	return r.openTimed(ctx, ids)
}

// NextLapse implements store.Store: the lowest lease end in the claims
// index after after (0 is "nobody holds it"; ended asks leave the index).
func (r *Store) NextLapse(ctx context.Context, after time.Time) (time.Time, error) {
	zs, err := r.rdb.ZRangeByScoreWithScores(ctx, r.k.claims(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(after.UnixMilli(), 10), Max: "+inf", Count: 1,
	}).Result()
	if err != nil || len(zs) == 0 {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(zs[0].Score)), nil
}

// luaRefill brings a bucket's tokens up to now: with now, rate (tokens a
// minute) and burst set, it reads KEYS[1]'s tokens and at into locals of
// those names.
const luaRefill = `local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or burst)
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or now)
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 60000)
  at = now
end
`

// takeScript takes a token from a bucket refilled continuously.
// KEYS[1] budget hash. ARGV[1] now ms, ARGV[2] tokens per minute, ARGV[3] burst.
// Returns 1 when a token was taken, 0 when the budget is spent.
var takeScript = redis.NewScript(`
local now, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
` + luaRefill + `local took = 0
if tokens >= 1 then
  tokens = tokens - 1
  took = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at)
redis.call('PEXPIRE', KEYS[1], 3600000)
return took
`)

// drainScript empties a bucket until a moment: tokens 0, refilling from
// the later of then and where it stood. KEYS[1] budget hash. ARGV[1]
// until ms.
var drainScript = redis.NewScript(`
local till = tonumber(ARGV[1])
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or till)
redis.call('HSET', KEYS[1], 'tokens', '0', 'at', math.max(at, till))
redis.call('PEXPIRE', KEYS[1], 3600000)
return 1
`)

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

// takeTurnScript registers the caller's groups as waiting for a bucket and,
// when a token is free, gives it to the group whose turn it is: among the
// waiting groups of the most urgent class, the one served longest ago
// (never served first; ties by name).
// KEYS[1] budget hash, KEYS[2] waiting (group → until ms), KEYS[3] served
// (group → ms), KEYS[4] class (group → class). ARGV[1] now ms, ARGV[2]
// tokens per minute, ARGV[3] burst, ARGV[4] registration ms, ARGV[5] the
// number of groups that left, then those groups, then the caller's groups
// as name, class pairs.
// Returns {group, 1} when the caller's group took the token, {"", 1} when a
// token is free for another's, {"", 0} when none is.
var takeTurnScript = redis.NewScript(`
local now, rate, burst, wait = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local left = tonumber(ARGV[5])
for i = 6, 5 + left do
  redis.call('ZREM', KEYS[2], ARGV[i])
  redis.call('HDEL', KEYS[4], ARGV[i])
end
local mine = {}
for i = 6 + left, #ARGV, 2 do
  redis.call('ZADD', KEYS[2], now + wait, ARGV[i])
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  mine[ARGV[i]] = true
end
for _, g in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('HDEL', KEYS[4], g)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 3600000)
for _, k in ipairs({KEYS[2], KEYS[3], KEYS[4]}) do redis.call('PEXPIRE', k, 3600000) end
` + luaRefill + `redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at)
redis.call('PEXPIRE', KEYS[1], 3600000)
if tokens < 1 then return {'', 0} end
local due, dueClass, dueAt = nil, nil, nil
for _, g in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local c = tonumber(redis.call('HGET', KEYS[4], g) or '0')
  local s = tonumber(redis.call('ZSCORE', KEYS[3], g) or '0')
  if due == nil or c < dueClass or (c == dueClass and (s < dueAt or (s == dueAt and g < due))) then
    due, dueClass, dueAt = g, c, s
  end
end
if due == nil or not mine[due] then return {'', 1} end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - 1))
redis.call('ZADD', KEYS[3], now, due)
return {due, 1}
`)

// TakeTurn implements store.Store.
func (r *Store) TakeTurn(ctx context.Context, t store.Turn) (string, bool, error) {
	args := []any{t.Now.UnixMilli(), t.Bucket.PerMinute, t.Bucket.Burst, max(t.Wait.Milliseconds(), 1), len(t.Left)}
	for _, g := range t.Left {
		args = append(args, g)
	}
	for _, g := range t.Groups {
		args = append(args, g.Name, g.Class)
	}
	n := t.Bucket.Name
	res, err := takeTurnScript.Run(ctx, r.rdb, []string{r.k.budget(n), r.k.turnWaiting(n), r.k.turnServed(n), r.k.turnClass(n)}, args...).Slice()
	if err != nil {
		return "", false, err
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("store: bad take-turn result %v", res)
	}
	g, _ := res[0].(string)
	free, _ := res[1].(int64)
	return g, free == 1, nil
}

// Drain implements store.Store.
func (r *Store) Drain(ctx context.Context, b asktype.Bucket, until time.Time) error {
	return drainScript.Run(ctx, r.rdb, []string{r.k.budget(b.Name)}, until.UnixMilli()).Err()
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

// Take implements store.Store.
func (r *Store) Take(ctx context.Context, bk asktype.Bucket, now time.Time) (bool, error) {
	budget, perMinute, burst := bk.Name, bk.PerMinute, bk.Burst
	n, err := takeScript.Run(ctx, r.rdb, []string{r.k.budget(budget)}, now.UnixMilli(), perMinute, burst).Int()
	return n == 1, err
}

// refExtras are the hash fields of a message's thread and copies (JSON,
// "" for none).
func refExtras(ref asktype.MessageRef) (thread, copies string) {
	if len(ref.Copies) > 0 {
		b, _ := json.Marshal(ref.Copies) // strings only: cannot fail
		copies = string(b)
	}
	return ref.Thread, copies
}

// decode turns a script result {code, field, value, …} into an ask.
func decode(callID string, res []any) (*asktype.Ask, int, error) {
	if len(res) == 0 {
		return nil, 0, errors.New("store: empty script result")
	}
	code, ok := res[0].(int64)
	if !ok {
		return nil, 0, fmt.Errorf("store: bad script result %v", res[0])
	}
	if code == codeNotFound {
		return nil, int(code), store.ErrNotFound
	}
	m := make(map[string]string, len(res)/2)
	for i := 1; i+1 < len(res); i += 2 {
		k, _ := res[i].(string)
		v, _ := res[i+1].(string)
		m[k] = v
	}
	a, err := fromMap(callID, m)
	return a, int(code), err
}

func fromMap(callID string, m map[string]string) (*asktype.Ask, error) {
	a := &asktype.Ask{
		CallID:       callID,
		SessionID:    m["sid"],
		Caller:       m["caller"],
		Kind:         m["kind"],
		AgentID:      m["agent"],
		AgentSession: m["asid"],
		State:        asktype.State(m["state"]),
		Message:      asktype.MessageRef{Surface: m["surface"], Conversation: m["ch"], ID: m["ts"], Refused: m["refused"], Thread: m["thread"]},
		AbortReason:  asktype.AbortReason(m["abortReason"]),
	}
	if v, ok := m["req"]; ok {
		a.Request = json.RawMessage(v)
	}
	if v := m["copies"]; v != "" {
		if err := json.Unmarshal([]byte(v), &a.Message.Copies); err != nil {
			return nil, fmt.Errorf("store: ask %s: bad message copies: %w", callID, err)
		}
	}
	if v, ok := m["settlement"]; ok {
		a.Settlement = json.RawMessage(v)
	}
	if v, ok := m["reply"]; ok {
		a.Reply = json.RawMessage(v)
	}
	if v := m["votes"]; v != "" {
		if err := json.Unmarshal([]byte(v), &a.Votes); err != nil {
			return nil, fmt.Errorf("store: ask %s: bad votes: %w", callID, err)
		}
	}
	var err error
	num := func(f string) int64 {
		v, ok := m[f]
		if !ok || v == "" {
			return 0
		}
		n, e := strconv.ParseInt(v, 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("store: ask %s: field %s: %w", callID, f, e)
		}
		return n
	}
	a.Seq, a.Version, a.Rendered = num("seq"), num("ver"), num("rver")
	a.Created, a.Deadline = fromMs(num("created")), fromMs(num("deadline"))
	a.SettledAt, a.ReplyAt, a.AbortedAt = fromMs(num("settledAt")), fromMs(num("replyAt")), fromMs(num("abortedAt"))
	a.PostAttempt = fromMs(num("postAt"))
	return a, err
}

// ms and fromMs are store.Millis and store.FromMillis, short for the scripts' arguments.
func ms(t time.Time) int64 { return store.Millis(t) }

// leasePost names an ask's post lease.
const leasePost = "post"

// leaseKeep is how long a lease key outlives its lease (ms), as the lease
// scripts' 86400000: the holder and end in its value decide, and the key
// goes away on its own well after.
const leaseKeep = 86400000

// checkHolder refuses a lease holder that would break the "holder|untilMs"
// value of a lease key.
func checkHolder(holder string) error {
	if strings.Contains(holder, "|") {
		return fmt.Errorf("store: lease holder %q must not contain '|'", holder)
	}
	return nil
}

func fromMs(n int64) time.Time { return store.FromMillis(n) }

// StartGrace implements store.Store.
func (r *Store) StartGrace(ctx context.Context, callID string, until time.Time) error {
	return r.rdb.ZAdd(ctx, r.k.detached(), redis.Z{Score: float64(until.UnixMilli()), Member: callID}).Err()
}

// EndedGraces implements store.Store.
func (r *Store) EndedGraces(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return r.rdb.ZRangeByScore(ctx, r.k.detached(), &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: int64(limit),
	}).Result()
}

// EndGrace implements store.Store.
func (r *Store) EndGrace(ctx context.Context, callID string) error {
	return r.rdb.ZRem(ctx, r.k.detached(), callID).Err()
}

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
		r.fileAudit(ctx, p, callID)
		// Off the index before the script, as in MarkRendered.
		p.ZRem(ctx, r.k.stale(), callID)
		res = run(p, finishPostScript, []string{r.k.ask(callID), r.k.lease(callID, leasePost), r.k.outbox(callID)},
			r.audited(callID, auditArgs{at: r.clock.Now(), detail: store.PostedDetail(ref)}, ref.Conversation, ref.ID, shown, holder, thread, copies, ref.Surface)...)
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
