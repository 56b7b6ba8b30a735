package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/archetype"
	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/store"
)

// Store is what a Dispatcher needs from persistence: the trail by position
// and the asks (the bodies), a lease per endpoint, its state (a note) and
// its dead letters and redeliveries (lists).
type Store interface {
	store.Reader
	store.AuditTail
	store.Leases
	store.Notes
	store.Lists
}

// Metrics counts what the dispatcher did, by endpoint.
type Metrics interface {
	// Attempt counts one delivery attempt: ok (a 2xx) or not.
	Attempt(endpoint string, ok bool)
	// DeadLetter counts an event given up on (dead-lettered).
	DeadLetter(endpoint string)
}

type noMetrics struct{}

func (noMetrics) Attempt(string, bool) {}
func (noMetrics) DeadLetter(string)    {}

// Options configure a Dispatcher. Endpoints and Secret are required.
type Options struct {
	Endpoints []Endpoint
	// Secret signs every delivery (ASKSLACK_WEBHOOK_SECRET); never logged.
	Secret string
	// Events are the event types sent (ASKSLACK_WEBHOOK_EVENTS); empty
	// sends every type.
	Events []string
	// Holder names this replica in the endpoints' leases.
	Holder string
	Clock  clock.Clock
	Logger *slog.Logger
	// Metrics counts attempts and dead letters; nil counts nothing.
	Metrics Metrics
	// HTTP sends the requests; nil is a client that follows no redirect.
	// Each request is cut after Timeout (default 10s) either way.
	HTTP    *http.Client
	Timeout time.Duration
	// Poll is how often a replica reads the trail while nothing happens,
	// and how often a replica without the lease tries to take it (default
	// 1s).
	Poll time.Duration
	// Lease is how long an endpoint's lease lasts unless renewed (default
	// 30s): a dead holder's endpoints are taken over within it. It is
	// renewed every third of it.
	Lease time.Duration
	// Backoff is the first retry's ceiling (default 1s), doubling with
	// each failure up to MaxBackoff (default 10m); each wait is drawn at
	// random below the ceiling (full jitter, internal/backoff). A 429's or
	// 503's Retry-After, when longer, is waited instead (capped at
	// MaxBackoff).
	Backoff, MaxBackoff time.Duration
	// MaxAge is how long an event is retried from its first failure
	// before it is dead-lettered (default 24h).
	MaxAge time.Duration
	// Jitter draws uniformly from [0, d] (backoff.Policy.Rand); nil is
	// math/rand. Tests make it deterministic.
	Jitter func(d time.Duration) time.Duration
	// MaxDead caps each endpoint's dead letters (default 1000; the oldest
	// go first), kept DeadTTL after the last (default 30 days).
	MaxDead int
	DeadTTL time.Duration
}

// Defaults of Options.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultPoll       = time.Second
	DefaultLease      = 30 * time.Second
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 10 * time.Minute
	DefaultMaxAge     = 24 * time.Hour
	DefaultMaxDead    = 1000
	DefaultDeadTTL    = 30 * 24 * time.Hour
)

const (
	// leaseName is the endpoint's lease (store.Leases, on the id leaseID).
	leaseName = "webhook"
	// batch is how many trail entries one read takes.
	batch = 100
	// stateTTL keeps an endpoint's state (its cursor) a year after its last
	// change; an endpoint idle that long starts again from now.
	stateTTL = 366 * 24 * time.Hour
	// maxAnswer is how much of a receiver's refusal is kept as its error.
	maxAnswer = 512
)

func leaseID(name string) string     { return "webhook/" + name }
func stateKey(name string) string    { return "webhook:" + name + ":state" }
func deadKey(name string) string     { return "webhook:" + name + ":dead" }
func redoKey(name string) string     { return "webhook:" + name + ":redeliver" }
func (d *Dispatcher) now() time.Time { return d.Clock.Now() }

// Letter is one event as an endpoint is sent it: its id, type, trail seq,
// ask and time, and the exact body, kept so a retry and a redelivery send
// the same bytes. A dead letter adds when it died, after how many attempts
// and the last error.
type Letter struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Seq       int64           `json:"seq"`
	CallID    string          `json:"callId,omitempty"`
	At        time.Time       `json:"at"`
	Body      json.RawMessage `json:"body"`
	DeadAt    time.Time       `json:"deadAt,omitzero"`
	Attempts  int             `json:"attempts,omitempty"`
	LastError string          `json:"lastError,omitempty"`
}

// state is an endpoint's delivery state, stored as a note (stateKey) and
// written only by the lease holder.
type state struct {
	// URL hashes the endpoint's URL (another one starts from now).
	URL string `json:"url"`
	// Pos and Seq are the cursor: the position and seq of the last trail
	// entry handled (delivered, dead-lettered, or carrying no event).
	Pos string `json:"pos"`
	Seq int64  `json:"seq"`
	// Head is the event being delivered while it fails, with its retries.
	Head        *head     `json:"head,omitempty"`
	LastOK      time.Time `json:"lastOk,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	Holder      string    `json:"holder,omitempty"`
}

// head is the event an endpoint is sent next.
type head struct {
	Letter
	// Pos is the trail position after the event ("" for a redelivery).
	Pos string `json:"pos,omitempty"`
	// Redo is the redelivery list's value it came from ("" from the trail).
	Redo     string    `json:"redo,omitempty"`
	First    time.Time `json:"first,omitzero"` // its first failed attempt
	Attempts int       `json:"attempts"`
	Next     time.Time `json:"next,omitzero"` // not before this
}

// endpoint is one endpoint's run: what only its goroutine touches, and its
// lag under mu for the metrics.
type endpoint struct {
	Endpoint
	kick    chan struct{}
	holding bool
	renewAt time.Time
	st      *state
	buf     []store.TrailEntry // trail entries read ahead of the cursor

	mu      sync.Mutex
	held    bool
	waiting time.Time // the time of the event waiting to be delivered; zero when caught up
}

// Dispatcher delivers the webhooks of every configured endpoint, each in
// its own goroutine, on whichever replica holds the endpoint's lease (see
// the package comment). Status, DeadLetters and Redeliver read and change
// what the store keeps, from any replica.
type Dispatcher struct {
	archetype.Archetype
	st     Store
	opts   Options
	http   *http.Client
	events map[string]bool
	eps    []*endpoint
	life   startstop.Base
	wg     sync.WaitGroup
}

// New returns a Dispatcher over st; nothing runs until Start.
func New(st Store, opts Options) *Dispatcher {
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.Timeout, DefaultTimeout)
	def(&opts.Poll, DefaultPoll)
	def(&opts.Lease, DefaultLease)
	def(&opts.Backoff, DefaultBackoff)
	def(&opts.MaxBackoff, DefaultMaxBackoff)
	def(&opts.MaxAge, DefaultMaxAge)
	def(&opts.DeadTTL, DefaultDeadTTL)
	if opts.MaxDead <= 0 {
		opts.MaxDead = DefaultMaxDead
	}
	if opts.Holder == "" {
		opts.Holder = "webhooks"
	}
	hc := opts.HTTP
	if hc == nil {
		// A receiver that redirects is answered nothing: the 3xx is a
		// failure, retried, so the operator fixes the URL rather than
		// askslack signing bodies for wherever a redirect points.
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	d := &Dispatcher{Archetype: archetype.Of(opts.Logger, opts.Clock), st: st, opts: opts, http: hc}
	if len(opts.Events) > 0 {
		d.events = map[string]bool{}
		for _, e := range opts.Events {
			d.events[e] = true
		}
	}
	for _, e := range opts.Endpoints {
		d.eps = append(d.eps, &endpoint{Endpoint: e, kick: make(chan struct{}, 1)})
	}
	return d
}

// Start runs one delivery loop per endpoint until Stop.
func (d *Dispatcher) Start(ctx context.Context) error {
	return d.life.Launch(ctx, nil, func(ctx context.Context) {
		for _, ep := range d.eps {
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				d.run(ctx, ep)
			}()
		}
		d.wg.Wait()
	})
}

// Stop ends the loops (an attempt in flight is abandoned, and counts for
// nothing) and gives the leases back so another replica takes over at
// once. Safe twice and before Start.
func (d *Dispatcher) Stop(ctx context.Context) error {
	return d.life.Halt(ctx, nil)
}

// run is one endpoint's loop: a step, then a wait until the next is due,
// a redelivery's kick, or Stop.
func (d *Dispatcher) run(ctx context.Context, ep *endpoint) {
	defer d.release(ep)
	for ctx.Err() == nil {
		wait := d.step(ctx, ep)
		if wait <= 0 {
			continue
		}
		t := d.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-ep.kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// release gives the lease back when the loop ends.
func (d *Dispatcher) release(ep *endpoint) {
	ep.setHeld(false, time.Time{})
	if !ep.holding {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := d.st.Release(ctx, leaseID(ep.Name), leaseName, d.opts.Holder); err != nil {
		d.Logger.Warn("webhooks: giving the endpoint's lease back failed; another replica takes over when it lapses", "endpoint", ep.Name, "err", err)
	}
}

func (ep *endpoint) setHeld(held bool, waiting time.Time) {
	ep.mu.Lock()
	ep.held, ep.waiting = held, waiting
	ep.mu.Unlock()
}

// step does what is due for ep and returns how long to wait before the
// next step (0: at once).
func (d *Dispatcher) step(ctx context.Context, ep *endpoint) time.Duration {
	now := d.now()
	if !d.hold(ctx, ep, now) {
		return d.opts.Poll
	}
	st := ep.st
	if st.Head == nil {
		h, err := d.next(ctx, ep)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				d.Logger.Warn("webhooks: reading what to deliver failed; retrying", "endpoint", ep.Name, "err", err)
			}
			return d.opts.Poll
		case h == nil:
			ep.setHeld(true, time.Time{})
			return d.opts.Poll
		}
		st.Head = h
	}
	h := st.Head
	ep.setHeld(true, h.At)
	if h.Next.After(now) {
		return min(h.Next.Sub(now), ep.renewAt.Sub(now))
	}
	retryAfter, err := d.send(ctx, ep, h)
	if ctx.Err() != nil {
		return 0 // stopping: the attempt counts for nothing
	}
	now = d.now()
	if err == nil {
		d.opts.Metrics.Attempt(ep.Name, true)
		st.LastOK = now
		return d.finish(ctx, ep, h, nil)
	}
	d.opts.Metrics.Attempt(ep.Name, false)
	st.LastError, st.LastErrorAt = err.Error(), now
	if h.Attempts == 0 {
		h.First = now
	}
	h.Attempts++
	if now.Sub(h.First) >= d.opts.MaxAge {
		return d.finish(ctx, ep, h, err)
	}
	wait := backoff.Policy{Base: d.opts.Backoff, Max: d.opts.MaxBackoff, Rand: d.opts.Jitter}.Delay(h.Attempts, retryAfter)
	h.Next = now.Add(wait)
	d.Logger.Debug("webhooks: delivery failed; retrying", "endpoint", ep.Name, "id", h.ID, "type", h.Type, "seq", h.Seq,
		"attempts", h.Attempts, "in", wait.String(), "err", err)
	if h.Attempts == 1 {
		d.Logger.Warn("webhooks: delivery failed; retrying with backoff", "endpoint", ep.Name, "url", ep.Redacted(), "id", h.ID, "err", err)
	}
	d.save(ctx, ep)
	return wait
}

// finish ends h: delivered (failed nil) or dead-lettered after its last
// failure. The cursor (or the redelivery list) moves past it.
func (d *Dispatcher) finish(ctx context.Context, ep *endpoint, h *head, failed error) time.Duration {
	now := d.now()
	if failed != nil {
		l := h.Letter
		l.DeadAt, l.Attempts, l.LastError = now, h.Attempts, failed.Error()
		raw := marshal(&l)
		if err := d.st.ListPush(ctx, deadKey(ep.Name), string(raw), d.opts.MaxDead, d.opts.DeadTTL, now); err != nil {
			d.Logger.Warn("webhooks: storing a dead letter failed; retrying", "endpoint", ep.Name, "id", h.ID, "err", err)
			return d.opts.Poll
		}
		d.opts.Metrics.DeadLetter(ep.Name)
		d.Logger.Error("webhooks: an event failed for too long; it is in the endpoint's dead letters (askslack webhooks dead)",
			"endpoint", ep.Name, "url", ep.Redacted(), "id", h.ID, "type", h.Type, "seq", h.Seq, "attempts", h.Attempts,
			"since", h.First.UTC().Format(time.RFC3339), "err", failed)
	}
	if h.Redo != "" {
		if _, err := d.st.ListRemove(ctx, redoKey(ep.Name), h.Redo, now); err != nil {
			// It stays queued: sent again later, with the same id.
			d.Logger.Warn("webhooks: taking a redelivered event off its list failed", "endpoint", ep.Name, "id", h.ID, "err", err)
		}
	} else {
		ep.st.Pos, ep.st.Seq = h.Pos, h.Seq
	}
	ep.st.Head = nil
	ep.setHeld(true, time.Time{})
	d.save(ctx, ep)
	return 0
}

// hold takes or renews ep's lease when due; on taking it, it loads the
// endpoint's state. It reports whether this replica delivers for ep now.
func (d *Dispatcher) hold(ctx context.Context, ep *endpoint, now time.Time) bool {
	if ep.holding && now.Before(ep.renewAt) {
		return true
	}
	_, err := d.st.Acquire(ctx, leaseID(ep.Name), store.Claim{Name: leaseName, Hold: store.Hold{Holder: d.opts.Holder, TTL: d.opts.Lease, Now: now}})
	if err != nil {
		if !errors.Is(err, store.ErrHeld) && ctx.Err() == nil {
			d.Logger.Warn("webhooks: taking the endpoint's lease failed; retrying", "endpoint", ep.Name, "err", err)
		}
		if ep.holding {
			d.Logger.Info("webhooks: another replica delivers to this endpoint now", "endpoint", ep.Name)
		}
		ep.holding, ep.st, ep.buf = false, nil, nil
		ep.setHeld(false, time.Time{})
		return false
	}
	if !ep.holding {
		st, err := d.load(ctx, ep, now)
		if err != nil {
			if ctx.Err() == nil {
				d.Logger.Warn("webhooks: reading the endpoint's state failed; retrying", "endpoint", ep.Name, "err", err)
			}
			return false
		}
		ep.st, ep.buf, ep.holding = st, nil, true
		d.Logger.Info("webhooks: this replica delivers to the endpoint", "endpoint", ep.Name, "url", ep.Redacted(), "after", st.Seq)
	}
	ep.renewAt = now.Add(d.opts.Lease / 3)
	return true
}

// load reads ep's state; an endpoint never seen (or seen with another URL)
// starts at the end of the trail: from now, not from the beginning of
// history.
func (d *Dispatcher) load(ctx context.Context, ep *endpoint, now time.Time) (*state, error) {
	raw, err := d.st.Remember(ctx, stateKey(ep.Name), "", stateTTL, now)
	if err != nil {
		return nil, err
	}
	if raw != "" {
		var st state
		err := json.Unmarshal([]byte(raw), &st)
		switch {
		case err != nil:
			d.Logger.Error("webhooks: the endpoint's stored state is unreadable; starting from now", "endpoint", ep.Name, "err", err)
		case st.URL != ep.urlHash():
			d.Logger.Info("webhooks: the endpoint's URL changed; the new one gets events from now", "endpoint", ep.Name)
		default:
			return &st, nil
		}
	}
	pos, seq, err := d.st.AuditEnd(ctx)
	if err != nil {
		return nil, err
	}
	st := &state{URL: ep.urlHash(), Pos: pos, Seq: seq}
	ep.st = st
	if err := d.put(ctx, ep); err != nil {
		return nil, err
	}
	d.Logger.Info("webhooks: a new endpoint: it gets the events from now on", "endpoint", ep.Name, "after", seq)
	return st, nil
}

// save stores ep's state; a failure is logged (the state in memory goes
// on, and the next save carries it).
func (d *Dispatcher) save(ctx context.Context, ep *endpoint) {
	if err := d.put(ctx, ep); err != nil && ctx.Err() == nil {
		d.Logger.Warn("webhooks: storing the endpoint's cursor failed; events may be sent again (same ids)", "endpoint", ep.Name, "err", err)
	}
}

func (d *Dispatcher) put(ctx context.Context, ep *endpoint) error {
	ep.st.Holder = d.opts.Holder
	return d.st.Put(ctx, stateKey(ep.Name), string(marshal(ep.st)), stateTTL, d.now())
}

// next finds ep's next event: a redelivery first, else the next trail
// entry that carries an event this dispatcher sends. Entries that carry
// none move the cursor (stored once the read is done).
func (d *Dispatcher) next(ctx context.Context, ep *endpoint) (*head, error) {
	now := d.now()
	redo, err := d.st.ListRange(ctx, redoKey(ep.Name), 1, now)
	if err != nil {
		return nil, err
	}
	if len(redo) > 0 {
		var l Letter
		if err := json.Unmarshal([]byte(redo[0]), &l); err != nil || len(l.Body) == 0 {
			d.Logger.Error("webhooks: dropping an unreadable redelivery", "endpoint", ep.Name, "err", err)
			_, err := d.st.ListRemove(ctx, redoKey(ep.Name), redo[0], now)
			return nil, err
		}
		l.DeadAt, l.Attempts, l.LastError = time.Time{}, 0, ""
		return &head{Letter: l, Redo: redo[0]}, nil
	}
	st, moved := ep.st, false
	defer func() {
		if moved {
			d.save(ctx, ep)
		}
	}()
	for {
		if len(ep.buf) == 0 {
			if ep.buf, err = d.st.AuditFrom(ctx, st.Pos, batch); errors.Is(err, store.ErrBadCursor) {
				// Not a position of this store (REDIS_URL changed under
				// the same state): what it pointed at is gone.
				d.Logger.Error("webhooks: the endpoint's cursor is not a position of this store; starting from now", "endpoint", ep.Name)
				if st.Pos, st.Seq, err = d.st.AuditEnd(ctx); err != nil {
					return nil, err
				}
				moved = true
				continue
			}
			if err != nil || len(ep.buf) == 0 {
				return nil, err
			}
			if first := ep.buf[0].Seq; st.Seq > 0 && first > st.Seq+1 {
				d.Logger.Error("webhooks: audit entries were trimmed before the endpoint got them (ASKSLACK_AUDIT_RETENTION); their events are lost",
					"endpoint", ep.Name, "from", st.Seq+1, "to", first-1)
			}
		}
		e := ep.buf[0]
		typ, _, ok := TypeOf(e.Event)
		if !ok || (d.events != nil && !d.events[typ]) {
			ep.buf = ep.buf[1:]
			st.Pos, st.Seq, moved = e.Pos, e.Seq, true
			continue
		}
		var a *asktype.Ask
		if e.CallID != "" && typ != RuleGranted && typ != RuleRevoked {
			if a, err = d.st.Get(ctx, e.CallID); errors.Is(err, store.ErrNotFound) {
				a, err = nil, nil // past retention: the body goes without the ask
			} else if err != nil {
				return nil, err // the entry stays first in the buffer
			}
		}
		ep.buf = ep.buf[1:]
		b, _ := BodyOf(ep.Name, &e.AuditEntry, a)
		return &head{Letter: Letter{ID: b.ID, Type: b.Type, Seq: e.Seq, CallID: e.CallID, At: b.CreatedAt, Body: b.Marshal()}, Pos: e.Pos}, nil
	}
}

// marshal is v's JSON with <, > and & as they are: a body kept in a letter
// or the state reads back byte for byte (json.Marshal would escape them
// inside it, and a retry would send other bytes).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings, numbers, times and valid JSON: cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// StatusError is a receiver's answer other than 2xx.
type StatusError struct {
	Status int
	Answer string // the start of the receiver's answer
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("HTTP %d", e.Status)
	if e.Status/100 == 3 {
		s += " (a redirect: askslack follows none; point ASKSLACK_WEBHOOKS at the final URL)"
	}
	if e.Answer != "" {
		s += ": " + e.Answer
	}
	return s
}

// send makes one attempt at h, signed now (both header sets); the
// Retry-After of a 429 or 503.
func (d *Dispatcher) send(ctx context.Context, ep *endpoint, h *head) (time.Duration, error) {
	// The request's budget is real time, not the Clock's: it bounds I/O.
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(h.Body))
	if err != nil {
		return 0, errors.New("the URL does not make a request")
	}
	ts := d.now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "askslack-webhooks")
	req.Header.Set(HeaderStdID, h.ID)
	req.Header.Set(HeaderStdTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderStdSignature, Sign(d.opts.Secret, h.ID, ts, h.Body))
	// The deprecated set beside it, until it is dropped (docs/webhooks.md).
	req.Header.Set(HeaderID, h.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, SignLegacy(d.opts.Secret, ts, h.Body))
	resp, err := d.http.Do(req)
	if err != nil {
		// url.Error quotes the URL, which may hold a token: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("no answer within %s", d.opts.Timeout)
		}
		return 0, fmt.Errorf("POST failed: %v", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // reuse the connection
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	var after time.Duration
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		after = backoff.RetryAfter(resp.Header, d.now())
	}
	return after, &StatusError{Status: resp.StatusCode, Answer: strings.TrimSpace(strings.ToValidUTF8(string(answer), ""))}
}

// Lags are, for each endpoint this replica delivers to, how long the event
// it is delivering has waited since it happened (0 when caught up). The
// metric: a replica without an endpoint's lease reports nothing for it.
func (d *Dispatcher) Lags() map[string]time.Duration {
	out := map[string]time.Duration{}
	now := d.now()
	for _, ep := range d.eps {
		ep.mu.Lock()
		if ep.held {
			out[ep.Name] = 0
			if !ep.waiting.IsZero() {
				out[ep.Name] = max(0, now.Sub(ep.waiting))
			}
		}
		ep.mu.Unlock()
	}
	return out
}

// Names are the endpoints' names, in configuration order.
func (d *Dispatcher) Names() []string {
	out := make([]string, 0, len(d.eps))
	for _, ep := range d.eps {
		out = append(out, ep.Name)
	}
	return out
}

func (d *Dispatcher) endpoint(name string) *endpoint {
	i := slices.IndexFunc(d.eps, func(ep *endpoint) bool { return ep.Name == name })
	if i < 0 {
		return nil
	}
	return d.eps[i]
}
