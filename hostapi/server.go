// Package hostapi is the host HTTP API (POST /v1/asks and friends) over an
// engine.Host, and a Go client for it.
package hostapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/internal/startstop"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// Limits of the API.
const (
	maxBody    = 4 << 20
	maxWait    = 5 * time.Minute // longest ?waitMs a GET may hold
	maxWaitStr = "300000"
)

// Server serves the host API.
type Server struct {
	host       *engine.Host
	callers    *Callers
	principals map[string]string
	workspaces map[string]string                            // see Options.Workspaces
	served     func(ctx context.Context, team string) error // nil: one workspace
	log        *slog.Logger
	// draining is set when the process is shutting down: blocking asks
	// return 503 (re-attach elsewhere) instead of withdrawing the question.
	draining atomic.Bool
	// drained ends when the server drains; waiting calls end with it.
	drained   context.Context
	drainDone context.CancelFunc
	// attached counts this replica's waiters per ask; one loop renews
	// their attach marks (see grace.go).
	attachMu sync.Mutex
	attached map[string]int
	marked   map[string]bool // asks whose attach mark this replica wrote
	// pending holds the asks whose grace ran (on any replica) at the last
	// renewal; nil until the first one, or after it failed: unknown.
	pending  map[string]bool
	mux      *http.ServeMux
	metrics  Metrics
	leases   Leases
	graces   Graces
	lease    time.Duration
	notifier Notifier
	grace    time.Duration
	clock    clock.Clock
	// bg outlives requests: grace timers and asynchronous asks run under it
	// until Close.
	bg         context.Context
	stopBG     context.CancelFunc
	life       startstop.Base
	mu         sync.Mutex // guards closed against wg.Add after Stop
	closed     bool
	wg         sync.WaitGroup
	onGraceEnd func(callID, outcome string)
	parkAfter  time.Duration
	// parked are the connections of parked asks (park.go).
	parkedMu sync.Mutex
	parked   map[*watched]struct{}
	// webhooks is the webhook service (webhooks.go); nil when none.
	webhooks Webhooks
	// tokens are the personal agent tokens (tokens.go); nil when
	// askslack login is off, and loginOff says why.
	tokens   Tokens
	loginOff string
}

// Metrics counts asks by outcome.
type Metrics interface {
	Ask(outcome string, took time.Duration)
}

type noMetrics struct{}

func (noMetrics) Ask(string, time.Duration) {}

// Options configure the Server.
type Options struct {
	// Callers are the accepted bearer tokens, each with its caller's name
	// and role; nil or empty is development mode (loopback callers hold
	// every role).
	Callers *Callers
	// Principals binds agent callers to the principal their asks get
	// (ASKSLACK_CALLER_PRINCIPALS): an ask naming another one is refused.
	Principals map[string]string
	// Workspaces, when one deployment serves several Slack workspaces,
	// binds agent callers to their workspace (ASKSLACK_CALLER_WORKSPACES;
	// a personal token's is the one its owner signed in to); Served says
	// whether an installation serves a workspace. With Served nil the
	// deployment has one workspace and asks name none.
	Workspaces map[string]string
	Served     func(ctx context.Context, team string) error
	Logger     *slog.Logger
	Metrics    Metrics
	// Leases (the store's; required) and Lease let an attached wait stream
	// hold the wait's claim. Leases also tell every replica whether anybody
	// is attached to a blocking ask.
	Leases Leases
	Lease  time.Duration
	// Graces, when set, keeps each dropped caller's grace in the store, so
	// any replica withdraws the ask if the one that saw the drop dies before
	// its grace ends (every replica sweeps the due ones). Without it only
	// the replica that saw the drop decides.
	Graces Graces
	// Notifier posts POST /v1/notices; nil answers them NO_PROVIDER.
	Notifier Notifier
	// Grace is how long an ask whose blocking request went away waits for
	// the same callId to re-attach (on any replica) before it is withdrawn
	// (ASKSLACK_REATTACH_GRACE); 0 means 30s.
	Grace time.Duration
	// Clock is the time source for the grace, the leases and the long
	// polls; nil means real time. Tests inject one.
	Clock clock.Clock
	// OnGraceEnd, when set, learns how each grace ended (GraceWithdrawn,
	// GraceAttached, …). It must not block.
	OnGraceEnd func(callID, outcome string)
	// ParkAfter is how long a blocking ask waits in its HTTP handler
	// before its connection is taken over and it waits parked, at a
	// fraction of the memory (see park.go); 0 means 250ms, negative never.
	ParkAfter time.Duration
	// Webhooks is the webhook service the operators' /v1/webhooks routes
	// read and redeliver through (webhooks.go); nil when none is configured.
	Webhooks Webhooks
	// Tokens are the personal agent tokens (askslack login): their bearer
	// check, the device grant's endpoints and the operators' listing; nil
	// when login is off, and LoginOff is what askslack login is told.
	Tokens   Tokens
	LoginOff string
}

// NewServer returns the API handler over host.
func NewServer(host *engine.Host, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	if opts.Lease <= 0 {
		opts.Lease = 15 * time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = 30 * time.Second
	}
	opts.Clock = clock.OrReal(opts.Clock)
	if opts.ParkAfter == 0 {
		opts.ParkAfter = 250 * time.Millisecond
	}
	if opts.Leases == nil {
		// The attach marks and re-attach graces live in the store, where
		// every replica sees them: there is no stand-in of its own.
		panic("hostapi: Options.Leases is required (the store)")
	}
	s := &Server{host: host, callers: opts.Callers, principals: opts.Principals, workspaces: opts.Workspaces, served: opts.Served, log: opts.Logger, attached: map[string]int{}, marked: map[string]bool{}, mux: http.NewServeMux(),
		metrics: opts.Metrics, leases: opts.Leases, lease: opts.Lease, grace: opts.Grace, clock: opts.Clock, onGraceEnd: opts.OnGraceEnd, notifier: opts.Notifier, graces: opts.Graces, parkAfter: opts.ParkAfter, parked: map[*watched]struct{}{}}
	s.webhooks = opts.Webhooks
	s.tokens, s.loginOff = opts.Tokens, opts.LoginOff
	s.bg, s.stopBG = context.WithCancel(context.Background())
	s.drained, s.drainDone = context.WithCancel(context.Background())
	s.mux.HandleFunc("POST /v1/asks", s.ask)
	s.mux.HandleFunc("GET /v1/asks/{callId}", s.get)
	s.mux.HandleFunc("DELETE /v1/asks/{callId}", s.abort)
	s.mux.HandleFunc("POST /v1/asks/{callId}/answer", s.answer)
	s.mux.HandleFunc("GET /v1/asks/{callId}/wait", s.attachWait)
	s.mux.HandleFunc("POST /v1/asks/{callId}/continue", s.goOn)
	s.mux.HandleFunc("POST /v1/notices", s.notice)
	s.mux.HandleFunc("GET /v1/sessions/{sessionId}/questions", s.projection)
	s.mux.HandleFunc("GET /v1/sessions/{sessionId}/messages", s.messages)
	s.mux.HandleFunc("POST /v1/sessions/{sessionId}/messages/{id}/ack", s.ack)
	s.mux.HandleFunc("GET /v1/audit", s.audit)
	s.mux.HandleFunc("GET /v1/rules", s.rules)
	s.mux.HandleFunc("DELETE /v1/rules/{id}", s.revokeRule)
	s.mux.HandleFunc("GET /v1/webhooks", s.listWebhooks)
	s.mux.HandleFunc("GET /v1/webhooks/{name}/dead", s.deadLetters)
	s.mux.HandleFunc("POST /v1/webhooks/{name}/redeliver", s.redeliver)
	s.mux.HandleFunc("GET /v1/whoami", s.whoami)
	s.mux.HandleFunc("GET /v1/tokens", s.listTokens)
	s.mux.HandleFunc("DELETE /v1/tokens/{id}", s.revokeToken)
	return s
}

// Drain makes blocking calls return at once with 503 UNAVAILABLE so callers
// re-attach to another replica; the questions themselves stay open.
func (s *Server) Drain() {
	if s.draining.CompareAndSwap(false, true) {
		s.drainDone()
	}
}

// Start runs the server's background work until Stop: renewing the marks
// of asynchronous asks, probing parked connections, and sweeping the
// re-attach graces other replicas left.
func (s *Server) Start(ctx context.Context) error {
	return s.life.Launch(ctx, nil, func(context.Context) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		s.goBG(s.renewMarks)
		if s.parkAfter > 0 {
			s.goBG(s.probeParked)
		}
		if s.graces != nil {
			s.goBG(s.sweepGraces)
		}
	})
}

// goBG runs f in the background until Stop; the caller holds s.mu.
func (s *Server) goBG(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Stop ends the background work, the grace timers and the background chains
// of asynchronous asks this server started, and waits for them until ctx
// ends. The asks themselves stay as they are. Call it after the HTTP server
// has shut down (Drain first). Safe twice and before Start.
func (s *Server) Stop(ctx context.Context) error {
	var waitErr error
	err := s.life.Halt(ctx, func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.stopBG()
		waited := make(chan struct{})
		go func() {
			s.wg.Wait()
			close(waited)
		}()
		select {
		case <-waited:
		case <-ctx.Done():
			waitErr = ctx.Err()
		}
	})
	return cmp.Or(waitErr, err)
}

// ServeHTTP identifies the caller and routes; each route checks the
// caller's role and, for an agent, that the ask or session is its own.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.deviceRoute(w, r) {
		return // askslack login's endpoints: no bearer yet
	}
	c, handled := s.personal(w, r)
	if handled {
		return
	}
	if c.Token == nil {
		var ok bool
		if c, ok = s.callers.Identify(r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="askslack"`)
			writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", s.unauthorized())
			return
		}
	}
	s.mux.ServeHTTP(w, r.WithContext(withCaller(r.Context(), c)))
}

// unauthorized is the 401 of a request without a valid token.
func (s *Server) unauthorized() string {
	why := "a valid bearer token is required (ASKSLACK_API_TOKENS, ASKSLACK_ANSWER_TOKENS or ASKSLACK_ADMIN_TOKENS), or call from loopback when none is configured"
	if s.tokens != nil {
		why = "a valid bearer token is required: run `askslack login` to connect this machine, or use a token of ASKSLACK_API_TOKENS, ASKSLACK_ANSWER_TOKENS or ASKSLACK_ADMIN_TOKENS"
	}
	return why
}

// callCtx ends when the caller goes away or the server drains; s.draining
// tells the two apart afterwards (only a caller that went away withdraws).
// (context.AfterFunc: no goroutine per waiting call).
func (s *Server) callCtx(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.drained, cancel)
	return ctx, func() { stop(); cancel() }
}

// ask is POST /v1/asks. A blocking ask waits for its outcome; a caller that
// goes away has not withdrawn the question: it waits the grace for the same
// callId to re-attach (see grace.go). With Prefer: respond-async it returns
// 202 at once and the question lives until answered, withdrawn or retention.
func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c, ok := s.require(w, r, RoleAgent, whyAgentsAsk)
	if !ok {
		return
	}
	var req waterfall.Request
	if err := decodeBody(w, r, &req); err != nil {
		s.fail(w, err)
		return
	}
	req.Caller = c.Name
	if err := s.bindPrincipal(c, &req); err != nil {
		s.metrics.Ask("rejected", time.Since(start))
		s.fail(w, err)
		return
	}
	if err := s.bindWorkspace(r.Context(), c, &req); err != nil {
		s.metrics.Ask("rejected", time.Since(start))
		s.fail(w, err)
		return
	}
	if s.draining.Load() {
		s.fail(w, waterfall.Errorf(waterfall.CodeUnavailable, "this replica is shutting down; send the same request again to re-attach"))
		return
	}
	waits(w)
	if err := waterfall.Validate(&req); err != nil {
		s.metrics.Ask(outcomeOf(err), time.Since(start))
		s.fail(w, err)
		return
	}
	if preferAsync(r) {
		s.askAsync(w, r, &req)
		return
	}
	ctx, cancel := s.callCtx(r)
	defer cancel()
	stop := s.attach(req.CallID)
	pctx, unpark := s.parkable(ctx)
	res, err := s.host.Ask(pctx, &req)
	unpark()
	if parked(pctx, err) && r.Context().Err() == nil && !s.draining.Load() {
		if s.park(w, &req, start, stop) {
			return // the parked waiter answers on the connection
		}
		res, err = s.host.Ask(ctx, &req) // the connection cannot be taken over: wait here
	}
	stop()
	s.respond(w, &req, start, res, err)
}

// respond writes a blocking ask's outcome (nothing when its caller went
// away: the ask waits the grace) and counts it.
func (s *Server) respond(w http.ResponseWriter, req *waterfall.Request, start time.Time, res waterfall.Result, err error) {
	switch {
	case err == nil:
		s.release(req.CallID)
		outcome := "answered"
		if res.Pending() {
			outcome = "pending"
		}
		s.metrics.Ask(outcome, time.Since(start))
		writeJSON(w, http.StatusOK, res)
	case errors.Is(err, context.Canceled) && s.draining.Load():
		s.detach(req.CallID)
		s.metrics.Ask("detached", time.Since(start))
		w.Header().Set("Retry-After", "1")
		s.fail(w, waterfall.Errorf(waterfall.CodeUnavailable, "this replica is shutting down; the question stays open; send the same request again to re-attach"))
	case errors.Is(err, context.Canceled):
		// The caller went away: not a withdrawal. The question waits the
		// grace for the same callId to come back, on any replica.
		s.detach(req.CallID)
		s.metrics.Ask("detached", time.Since(start))
	default:
		if c := waterfall.CodeOf(err); c == waterfall.CodeAskAborted || c == waterfall.CodeNoProvider {
			s.release(req.CallID)
		}
		s.metrics.Ask(outcomeOf(err), time.Since(start))
		s.fail(w, err)
	}
}

// preferAsync reports whether the request carries Prefer: respond-async
// (RFC 7240).
func preferAsync(r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(strings.SplitN(p, ";", 2)[0]), "respond-async") {
				return true
			}
		}
	}
	return false
}

// askAsync stores the ask, kicks its answerer chain in the background (so
// the question is posted with nobody waiting) and answers 202 with its
// status and Location.
func (s *Server) askAsync(w http.ResponseWriter, r *http.Request, req *waterfall.Request) {
	start := time.Now()
	a, err := s.host.Open(s.bg, req)
	if err == nil {
		err = s.markAsync(r.Context(), req.CallID)
	}
	if err != nil {
		s.metrics.Ask(outcomeOf(err), time.Since(start))
		s.fail(w, err)
		return
	}
	st := statusOf(a)
	s.metrics.Ask("async", time.Since(start))
	w.Header().Set("Location", "/v1/asks/"+url.PathEscape(req.CallID))
	w.Header().Set("Preference-Applied", "respond-async")
	writeJSON(w, http.StatusAccepted, st)
}

func outcomeOf(err error) string {
	switch waterfall.CodeOf(err) {
	case waterfall.CodeAskAborted:
		return "aborted"
	case waterfall.CodeNoProvider:
		return "no_provider"
	case waterfall.CodeEmptyQuestions, waterfall.CodeBadRequest, waterfall.CodeBadTimeout, waterfall.CodeDelegatedCaller, waterfall.CodeCallConflict:
		return "rejected"
	}
	return "error"
}

// Status is the JSON of GET /v1/asks/{callId}.
type Status struct {
	CallID    string               `json:"callId"`
	State     string               `json:"state"`
	Agent     waterfall.Agent      `json:"agent"`
	Questions []waterfall.Question `json:"questions"`
	Created   time.Time            `json:"created"`
	Deadline  *time.Time           `json:"deadline,omitempty"`
	// Answers and Respondent are set once the ask is settled.
	Answers    []waterfall.AnswerItem `json:"answers,omitempty"`
	Respondent *waterfall.Respondent  `json:"respondent,omitempty"`
	// Reply is a late answer waiting for the agent to admit it.
	Reply   *waterfall.SteeredMessage `json:"reply,omitempty"`
	Version int64                     `json:"version"`
}

// statusOf is the Status of an ask's record. Where the ask is shown (the
// surface's message) is not part of it: that is the surface's business.
func statusOf(r *waterfall.Record) Status {
	st := Status{CallID: r.CallID, State: string(r.State), Agent: r.Request.Agent, Questions: r.Request.Questions,
		Created: r.Created, Version: r.Version, Reply: r.Reply}
	if !r.Deadline.IsZero() {
		d := r.Deadline
		st.Deadline = &d
	}
	if r.Settlement != nil {
		st.Answers, st.Respondent = r.Settlement.Answers, &r.Settlement.Respondent
	}
	return st
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	callID := r.PathValue("callId")
	wait, err := waitParam(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	a, err := s.mine(r, callerOf(r), callID)
	if err == nil && wait > 0 {
		// Wait for a change from the version the caller has seen
		// (?version=), else from the current one — in any state.
		ver := a.Version
		if v := r.URL.Query().Get("version"); v != "" {
			n, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil {
				s.fail(w, waterfall.Errorf(waterfall.CodeBadRequest, "version must be an integer"))
				return
			}
			ver = n
		}
		waits(w)
		ctx, cancel := s.callCtx(r) // a draining replica answers long polls at once
		ctx, stop := clock.WithTimeout(ctx, s.clock, wait)
		a, err = s.host.WaitChange(ctx, callID, ver)
		stop()
		cancel()
	}
	s.writeStatus(w, a, err)
}

func (s *Server) abort(w http.ResponseWriter, r *http.Request) {
	c, ok := s.require(w, r, RoleAgent|RoleAdmin, whyNoWithdraw)
	if !ok {
		return
	}
	callID := r.PathValue("callId")
	why, err := abortReason(r.URL.Query().Get("reason"))
	var a *waterfall.Record
	if err == nil {
		a, err = s.mine(r, c, callID)
	}
	if err == nil {
		a, err = s.host.Withdraw(store.WithActor(r.Context(), c.Name), callID, why)
	}
	s.writeStatus(w, a, err)
}

// goOn is POST /v1/asks/{callId}/continue: the agent went on without the
// answer before the window closed (its own prompt timed out). The question
// turns continued now, and an answer given later is queued for the agent's
// session as a steered message. Only the agent that asked may say so.
func (s *Server) goOn(w http.ResponseWriter, r *http.Request) {
	c, ok := s.require(w, r, RoleAgent, whyAgentsGoOn)
	if !ok {
		return
	}
	callID := r.PathValue("callId")
	a, err := s.mine(r, c, callID)
	if err == nil {
		a, err = s.host.Continue(store.WithActor(r.Context(), c.Name), callID)
	}
	s.writeStatus(w, a, err)
}

// Withdrawal reasons a harness may give (DELETE /v1/asks/{callId}?reason=).
const (
	// ReasonElsewhere: the agent's own prompt (its terminal) was
	// answered first; the message says so instead of "withdrawn".
	ReasonElsewhere = "answered-elsewhere"
)

// abortReason maps the reason query parameter to the stored reason; none
// is a plain withdrawal.
func abortReason(q string) (asktype.AbortReason, error) {
	switch q {
	case "":
		return asktype.Withdrawn, nil
	case ReasonElsewhere:
		return asktype.Elsewhere, nil
	}
	return "", waterfall.Errorf(waterfall.CodeBadRequest, "reason must be empty or %q", ReasonElsewhere)
}

// writeStatus answers with the ask's Status, or with err.
func (s *Server) writeStatus(w http.ResponseWriter, a *waterfall.Record, err error) {
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, statusOf(a))
}

// AnswerBody is the JSON of POST /v1/asks/{callId}/answer.
type AnswerBody struct {
	Answers    []waterfall.AnswerItem `json:"answers"`
	Respondent *waterfall.Respondent  `json:"respondent,omitempty"`
}

// AnswerResult is what POST /v1/asks/{callId}/answer returns. Continued is
// the seed's answer() result: true while the late reply waits for the agent
// to admit it.
type AnswerResult struct {
	State     string `json:"state"`
	Continued bool   `json:"continued"`
	MessageID string `json:"messageId,omitempty"`
}

// answer is POST /v1/asks/{callId}/answer, for answer surfaces only: the
// respondent is the surface (its token's name); a respondent in the body
// is kept as the surface's claim of who answered, shown with its name.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	c, ok := s.require(w, r, RoleAnswer, whyPeopleAnswer)
	if !ok {
		return
	}
	var body AnswerBody
	if err := decodeBody(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	who := waterfall.Respondent{Surface: waterfall.SurfaceAPI, UserName: c.Name}
	if b := body.Respondent; b != nil && (b.UserID != "" || b.UserName != "") {
		who.Claim = &waterfall.Claimant{UserID: b.UserID, UserName: b.UserName}
	}
	callID := r.PathValue("callId")
	out, err := s.host.Answer(r.Context(), callID, waterfall.Answer{Answers: body.Answers}, who)
	if err != nil {
		s.fail(w, err)
		return
	}
	res := AnswerResult{State: string(out.Record.State), Continued: out.Queued}
	if out.Queued {
		res.MessageID = waterfall.MessageID(callID)
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) projection(w http.ResponseWriter, r *http.Request) {
	p, err := s.host.Projection(r.Context(), sessionOf(r, callerOf(r)))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// Messages is the JSON of GET /v1/sessions/{sessionId}/messages.
type Messages struct {
	Messages []waterfall.SteeredMessage `json:"messages"`
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	wait, err := waitParam(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	if wait > 0 {
		waits(w)
	}
	ctx, cancel := s.callCtx(r)
	defer cancel()
	msgs, err := s.host.Messages(ctx, sessionOf(r, callerOf(r)), wait)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, Messages{Messages: msgs})
}

func (s *Server) ack(w http.ResponseWriter, r *http.Request) {
	c, ok := s.require(w, r, RoleAgent, whyAgentsAck)
	if !ok {
		return
	}
	a, first, err := s.host.Admit(r.Context(), sessionOf(r, c), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	// first: this acknowledgement admitted the message; false when it had
	// been acknowledged before. A deliverer that may race another (two
	// hooks, two replicas of a harness) passes the text on only when first.
	writeJSON(w, http.StatusOK, map[string]any{"acked": true, "first": first, "callId": a.CallID, "state": a.State})
}

// waits lifts the server's read deadline (http.Server.ReadTimeout) from a
// request that has been read and now waits: a blocking ask, a long poll, a
// wait stream. Left in place, the deadline would fire during the wait and
// cancel the request as if its caller had gone.
func waits(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

func waitParam(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("waitMs")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || time.Duration(n)*time.Millisecond > maxWait {
		return 0, waterfall.Errorf(waterfall.CodeBadRequest, "waitMs must be an integer from 0 to %s", maxWaitStr)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// decodeBody reads a JSON body into v, mapping a malformed timeoutMs to
// BAD_TIMEOUT and anything else malformed to BAD_REQUEST.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return waterfall.Errorf(waterfall.CodeBadRequest, "request body too large (max %d bytes)", maxBody)
	case err != nil:
		return waterfall.Errorf(waterfall.CodeBadRequest, "reading the request body: %v", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "timeoutMs" {
			return waterfall.Errorf(waterfall.CodeBadTimeout, "timeoutMs must be an integer number of milliseconds")
		}
		return waterfall.Errorf(waterfall.CodeBadRequest, "malformed JSON body: %v", err)
	}
	return nil
}

// statusFor maps the seed's codes to HTTP statuses.
func statusFor(code string) int {
	switch code {
	case waterfall.CodeEmptyQuestions, waterfall.CodeBadRequest, waterfall.CodeBadTimeout, waterfall.CodeBadAnswer:
		return http.StatusBadRequest
	case waterfall.CodeDelegatedCaller, waterfall.CodeForbidden, waterfall.CodePrincipalMismatch:
		return http.StatusForbidden
	case waterfall.CodeNotFound:
		return http.StatusNotFound
	case waterfall.CodeCallerNotLive, waterfall.CodeReplyQueued, waterfall.CodeCallConflict,
		waterfall.CodeAlreadySettled, waterfall.CodeAskAborted, waterfall.CodeNotContinued:
		return http.StatusConflict
	case waterfall.CodeSessionFull:
		return http.StatusTooManyRequests
	case waterfall.CodeNoProvider, waterfall.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	var e *waterfall.Error
	if !errors.As(err, &e) {
		s.log.Error("host API internal error", "err", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", "internal error")
		return
	}
	if e.Code == waterfall.CodeUnavailable {
		s.log.Warn("host API: store unavailable", "err", err)
	}
	writeError(w, statusFor(e.Code), e.Code, e.Message)
}

// ErrorBody is the JSON of every error: {"error":{"code","message"}}.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b ErrorBody
	b.Error.Code, b.Error.Message = code, msg
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
