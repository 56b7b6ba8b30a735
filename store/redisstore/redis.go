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
	"math/rand/v2"
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
	schema    int // the schema written (Options.Schema)
	retention time.Duration
	log       *slog.Logger
	clock     clock.Clock
	hub       store.Hub

	life startstop.Base // runs the change feed's listener and the audit chainer

	lastSeq atomic.Int64  // see nextSeq
	filings atomic.Uint64 // see filedFraction

	// The audit chainer (audit.go).
	auditRetention time.Duration
	chainLease     time.Duration
	holder         string        // this store's name in the chainer's lease
	chainKick      chan struct{} // a transition happened here
	chainMu        sync.Mutex    // one pass at a time in this process
	auditFault     func(step string) error

	riders riders // best-effort writes for the next pipeline (riders.go)
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
	// Schema is the stored schema this store writes (ASKSLACK_STORE_SCHEMA):
	// 0 or 1 schema 1, what every release so far writes; 2 the shape the
	// next release writes (the stale index under a hash tag of its own),
	// which raises the schema marker to version 2 with min reader 2, so
	// releases that cannot read it (fc987cc and older) refuse the store.
	// This release reads both (SchemaReads).
	Schema int
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
	if opts.Schema == 0 {
		opts.Schema = 1
	}
	if opts.Schema < 1 || opts.Schema > SchemaReads {
		return nil, fmt.Errorf("store: schema %d: this release writes schema 1 or 2", opts.Schema)
	}
	r := &Store{rdb: rdb, k: keys{prefix: opts.Prefix, schema2: opts.Schema == 2}, schema: opts.Schema, retention: opts.Retention, log: opts.Logger, clock: clock.OrReal(opts.Clock),
		auditRetention: opts.AuditRetention, chainLease: opts.ChainLease, holder: newHolder(), chainKick: make(chan struct{}, 1),
		auditFault: opts.AuditFault}
	r.filings.Store(rand.Uint64()) // filedFraction: replicas start apart
	return r, nil
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

// Stop ends the change feed and the chainer and waits for both, until ctx
// ends. Safe twice and before Start. The Redis client is the caller's to
// close.
func (r *Store) Stop(ctx context.Context) error {
	r.flushRiders(ctx)
	return r.life.Halt(ctx, nil)
}

// Ping implements store.Store.
func (r *Store) Ping(ctx context.Context) error { return r.rdb.Ping(ctx).Err() }

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
// one message for the ask and its session, "a:<callId>|<version>|<sessionId>"
// ("a:<callId>|<version>" for an ask without a session), which fc987cc
// already reads (feed.go): one PUBLISH a transition instead of two, each
// forwarded to every node of a Cluster. Every script that uses it
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
// chainer (audit.go) moves outboxes into the one chain. The event also
// carries ("f") the score its pipeline filed the ask with in the chainer's
// pending index (fileAudit): a chainer that reads that score and finds the
// event knows the filing's script has landed, and forgets the ask once it
// is chained instead of looking again later. Every script that uses it
// takes, before hint's two, the filing's score, the outbox's TTL (ms), the
// time, who and the detail (appended by audited).
const luaAsk = `
local state, ver, sid, seq, caller, agent, asid, deadline
local function hint()
  local feed, id = ARGV[#ARGV], ARGV[#ARGV - 1]
  if sid and sid ~= '' then
    redis.call('PUBLISH', feed, 'a:' .. id .. '|' .. ver .. '|' .. sid)
  else
    redis.call('PUBLISH', feed, 'a:' .. id .. '|' .. ver)
  end
end
local function audit(ev, who, detail)
  local ob = KEYS[#KEYS]
  local n = redis.call('RPUSH', ob, (seq or '') .. ':' .. ver .. '|' .. cjson.encode({at = ARGV[#ARGV - 4], ev = ev,
    c = caller or '', a = agent or '', as = asid or '', w = who or ARGV[#ARGV - 3], d = detail or ARGV[#ARGV - 2],
    f = ARGV[#ARGV - 6]}))
  if n == 1 then redis.call('PEXPIRE', ob, ARGV[#ARGV - 5]) end
end
`

// auditArgs are what a transition tells luaAudit: when, who answered (nil
// for nobody), a detail, and the score fileAudit filed the ask with in the
// same pipeline ("" for none).
type auditArgs struct {
	at     time.Time
	who    *asktype.AuditRespondent
	detail string
	filed  string
}

// audited appends what luaAudit and luaHint need to a script's arguments.
func (r *Store) audited(callID string, ev auditArgs, args ...any) []any {
	who := ""
	if ev.who != nil {
		b, _ := json.Marshal(ev.who) // strings only: cannot fail
		who = string(b)
	}
	return append(args, ev.filed, r.auditRetention.Milliseconds(), ms(ev.at), who, ev.detail, callID, r.k.events())
}

// answerArgs are the audit arguments of an answer: who gave it, read from
// the settlement or reply JSON here rather than in Lua.
func answerArgs(raw json.RawMessage, at time.Time) auditArgs {
	who, detail := store.AuditRespondentOf(raw)
	return auditArgs{at: at, who: who, detail: detail}
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
	// Best-effort writes waiting (PutLater) ride the first send, after
	// what the caller queued: only once, whatever a second run does.
	riding := r.takeRiders()
	for _, eval := range []bool{false, true} {
		run := func(p redis.Pipeliner, s *redis.Script, keys []string, args ...any) *redis.Cmd {
			if eval {
				return s.Eval(ctx, p, keys, args...)
			}
			return s.EvalSha(ctx, p, keys, args...)
		}
		var rode []*redis.StatusCmd
		cmds, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			fill(ctx, p, run)
			if riding != nil {
				rode = r.queueRiders(ctx, p, riding)
				riding = nil
			}
			return nil
		})
		r.ridersDone(rode)
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

// pipelinedScripts run inside pipelines (EVALSHA); withScripts loads them
// again when Redis has lost them.
var pipelinedScripts = []*redis.Script{createScript, markRenderedScript, finishPostScript, settleScript, claimWaitScript,
	expireScript, continueScript, abortScript, queueReplyScript, ackReplyScript, setMessageScript, refuseScript, outboxTrimScript, fileScript, voteScript}

// evalRunner queues scripts with EVAL (their whole source): for a script
// in a pipeline whose other script must not run twice.
func evalRunner(ctx context.Context) scriptRunner {
	return func(p redis.Pipeliner, s *redis.Script, keys []string, args ...any) *redis.Cmd {
		return s.Eval(ctx, p, keys, args...)
	}
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

// checkHolder refuses a lease holder that would break the "holder|untilMs"
// value of a lease key.
func checkHolder(holder string) error {
	if strings.Contains(holder, "|") {
		return fmt.Errorf("store: lease holder %q must not contain '|'", holder)
	}
	return nil
}

func fromMs(n int64) time.Time { return store.FromMillis(n) }
