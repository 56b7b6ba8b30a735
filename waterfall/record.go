package waterfall

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/askslack/askslack/asktype"
)

// Phase is where an ask stands as a person sees it: the stored state,
// refined by what became of a late answer. The Slack message, the render
// subcommand and the tests all speak of an ask in these terms.
type Phase int

// Phases of one ask, in the order a timed ask may pass through them.
const (
	PhaseOpen      Phase = iota // waiting for an answer
	PhaseContinued              // the agent's window closed; late answers are still delivered
	PhaseQueued                 // a late answer was sent to the agent, not yet admitted
	PhaseDelivered              // the agent admitted the late answer
	PhaseSettled                // answered inside the window
	PhaseAborted                // the agent withdrew the question
	// PhaseExpired: askslack no longer holds the ask (its retention ran out,
	// or it was never stored), so nothing can be answered. Decode never
	// returns it: there is no stored ask to decode.
	PhaseExpired
)

var phaseNames = [...]string{"open", "continued", "queued", "delivered", "settled", "aborted", "expired"}

// String returns the phase's lower-case name ("open", "continued", …).
func (p Phase) String() string {
	if p >= 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// ParsePhase reverses Phase.String.
func ParsePhase(s string) (Phase, bool) {
	for i, n := range phaseNames {
		if n == s {
			return Phase(i), true
		}
	}
	return 0, false
}

// Record is an ask as the rest of askslack reads it — the Slack message, the
// HTTP API's status, the session projection, the steered-message queue: the
// stored ask with its JSON decoded once and its Phase derived once. State,
// Version, Deadline, Created and the message reference are read from Ask.
type Record struct {
	// Ask is the stored ask the record was decoded from; its fields
	// (CallID, State, Version, Deadline, Message, …) read as the record's.
	*asktype.Ask
	// Request is what the agent asked. It is shared with every other reader
	// of the same ask (Decode caches it): never modify it or anything it
	// points to.
	Request *Request
	Phase   Phase
	// Settlement is the answer that settled the ask (PhaseSettled, and
	// PhaseDelivered where it is the admitted late answer); nil otherwise.
	// Like Request, it is shared with every other reader (Decode caches
	// it): never modify it.
	Settlement *Settlement
	// Reply is the late answer waiting for the agent to admit it
	// (PhaseQueued); nil otherwise.
	Reply *SteeredMessage
}

// Answered is the answer the ask shows: the settlement, or the late answer
// on its way to the agent; nil while nobody has answered (or the agent
// withdrew the question).
func (r *Record) Answered() *Settlement {
	switch {
	case r.Settlement != nil:
		return r.Settlement
	case r.Reply != nil:
		s := r.Reply.Settlement()
		return &s
	}
	return nil
}

// Abandoned reports whether an aborted ask was withdrawn because its caller
// went away and never came back, rather than by the agent.
func (r *Record) Abandoned() bool {
	return r.Phase == PhaseAborted && r.Ask.AbortReason == asktype.Abandoned
}

// TokenRevoked reports whether an aborted ask was withdrawn because the
// personal agent token that made it was revoked.
func (r *Record) TokenRevoked() bool {
	return r.Phase == PhaseAborted && r.Ask.AbortReason == asktype.Revoked
}

// AnsweredElsewhere reports whether an aborted ask was withdrawn because
// the agent's own prompt (its terminal) was answered first.
func (r *Record) AnsweredElsewhere() bool {
	return r.Phase == PhaseAborted && r.Ask.AbortReason == asktype.Elsewhere
}

// Decode reads a stored ask: its request (from a small cache: requests never
// change once stored, so each is decoded about once per process), its
// settlement or queued reply, and its phase. It fails when the stored JSON
// does not decode, when a settled ask has no settlement, and for a state it
// does not know.
func Decode(a *asktype.Ask) (*Record, error) {
	if a == nil {
		return nil, errors.New("waterfall: no ask to decode")
	}
	req, err := requests.get(a)
	if err != nil {
		return nil, err
	}
	r := &Record{Ask: a, Request: req}
	switch a.State {
	case asktype.Open:
		r.Phase = PhaseOpen
	case asktype.Continued:
		r.Phase = PhaseContinued
		if len(a.Reply) > 0 {
			m, err := decodeReply(a)
			if err != nil {
				return nil, err
			}
			r.Phase, r.Reply = PhaseQueued, &m
		}
	case asktype.Settled:
		s, err := settled(a)
		if err != nil {
			return nil, err
		}
		r.Phase, r.Settlement = PhaseSettled, s
		if !a.ReplyAt.IsZero() {
			r.Phase = PhaseDelivered // the settlement is the admitted late answer
		}
	case asktype.Aborted:
		r.Phase = PhaseAborted
	default:
		return nil, fmt.Errorf("waterfall: ask %s is in unknown state %q", a.CallID, a.State)
	}
	return r, nil
}

// DecodeRequest returns the request stored with an ask. Like
// Record.Request, it is shared with every other reader of the ask and must
// not be modified.
func DecodeRequest(a *asktype.Ask) (*Request, error) { return requests.get(a) }

// DecodeSettlement returns the answer that settled an ask. Its slices are
// shared with the ask's other readers (Decode caches it): never modify
// them.
func DecodeSettlement(a *asktype.Ask) (Settlement, error) {
	s, err := settled(a)
	if err != nil {
		return Settlement{}, err
	}
	return *s, nil
}

// settled is the cached settlement of a settled ask.
func settled(a *asktype.Ask) (*Settlement, error) {
	if len(a.Settlement) == 0 {
		return nil, fmt.Errorf("waterfall: ask %s has no settlement", a.CallID)
	}
	return settlements.get(a)
}

func decodeReply(a *asktype.Ask) (SteeredMessage, error) {
	var m SteeredMessage
	if len(a.Reply) == 0 {
		return m, fmt.Errorf("waterfall: ask %s has no reply", a.CallID)
	}
	if err := json.Unmarshal(a.Reply, &m); err != nil {
		return m, fmt.Errorf("waterfall: queued reply of %s: %w", a.CallID, err)
	}
	return m, nil
}

// Bounds of the request cache: a few thousand open asks' worth, and never
// more than a few megabytes of request JSON however large the requests.
const (
	maxCachedRequests     = 2048
	maxCachedRequestBytes = 8 << 20
)

// Bounds of the settlement cache: an answer is read a few times right
// after it settles (the waiter, the mirror, the Home tabs, the host API)
// and seldom later, so the newest thousand are plenty.
const (
	maxCachedSettlements     = 1024
	maxCachedSettlementBytes = 2 << 20
)

// requests is the process's cache of decoded requests.
var requests = newRequestCache(maxCachedRequests, maxCachedRequestBytes)

// settlements is the process's cache of decoded settlements: a settled
// ask's settlement never changes, and each of its readers decoded it anew.
var settlements = newDecodedCache(maxCachedSettlements, maxCachedSettlementBytes,
	func(a *asktype.Ask) json.RawMessage { return a.Settlement },
	func(a *asktype.Ask) (*Settlement, error) {
		s := new(Settlement)
		// A settled late reply stores the whole steered message; its answers
		// and respondent fields decode the same way.
		if err := json.Unmarshal(a.Settlement, s); err != nil {
			return nil, fmt.Errorf("waterfall: settlement of %s: %w", a.CallID, err)
		}
		return s, nil
	})

func newRequestCache(maxItems, maxBytes int) *decodedCache[Request] {
	return newDecodedCache(maxItems, maxBytes,
		func(a *asktype.Ask) json.RawMessage { return a.Request },
		func(a *asktype.Ask) (*Request, error) {
			req := new(Request)
			if err := json.Unmarshal(a.Request, req); err != nil {
				return nil, fmt.Errorf("waterfall: stored request for %s: %w", a.CallID, err)
			}
			req.Caller = a.Caller // a call id keeps its caller: the cached request may carry it
			return req, nil
		})
}

// decodedCache is a least-recently-used cache of values decoded from a
// stored ask's JSON (its request, its settlement), bounded by entries and
// by the size of their JSON, safe for concurrent use. An entry is keyed by
// callId and the identity of the stored JSON (its length and a hash with a
// per-process random seed), never by version: the JSON does not change
// once stored, while the ask's version moves with every transition. A
// callId reused after its ask was gone, with other content, is another
// key. Cached values are shared by every reader: never modified.
type decodedCache[T any] struct {
	seed     maphash.Seed
	maxItems int
	maxBytes int
	raw      func(a *asktype.Ask) json.RawMessage
	decode   func(a *asktype.Ask) (*T, error)

	mu    sync.Mutex
	bytes int
	lru   *list.List // of *decodedEntry[T], most recently used first
	byKey map[decodedKey]*list.Element
}

type decodedKey struct {
	callID string
	size   int
	sum    uint64
}

type decodedEntry[T any] struct {
	key decodedKey
	v   *T
}

func newDecodedCache[T any](maxItems, maxBytes int, raw func(*asktype.Ask) json.RawMessage, decode func(*asktype.Ask) (*T, error)) *decodedCache[T] {
	return &decodedCache[T]{seed: maphash.MakeSeed(), maxItems: maxItems, maxBytes: maxBytes, raw: raw, decode: decode,
		lru: list.New(), byKey: map[decodedKey]*list.Element{}}
}

// get returns a's decoded value, decoding it on a miss. Two goroutines
// missing at once both decode; both get the value cached first.
func (c *decodedCache[T]) get(a *asktype.Ask) (*T, error) {
	raw := c.raw(a)
	k := decodedKey{callID: a.CallID, size: len(raw), sum: maphash.Bytes(c.seed, raw)}
	c.mu.Lock()
	if e, ok := c.byKey[k]; ok {
		c.lru.MoveToFront(e)
		v := e.Value.(*decodedEntry[T]).v
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	v, err := c.decode(a)
	if err != nil {
		return nil, err
	}
	return c.put(k, v), nil
}

// put caches v under k, unless another goroutine got there first, and
// returns the cached value; it evicts the least recently used entries
// beyond the bounds. A value whose JSON is larger than the whole byte
// bound is not cached.
func (c *decodedCache[T]) put(k decodedKey, v *T) *T {
	if k.size > c.maxBytes {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*decodedEntry[T]).v
	}
	c.byKey[k] = c.lru.PushFront(&decodedEntry[T]{key: k, v: v})
	c.bytes += k.size
	for c.lru.Len() > c.maxItems || c.bytes > c.maxBytes {
		old := c.lru.Remove(c.lru.Back()).(*decodedEntry[T])
		delete(c.byKey, old.key)
		c.bytes -= old.key.size
	}
	return v
}

// len is how many values are cached (for tests).
func (c *decodedCache[T]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
