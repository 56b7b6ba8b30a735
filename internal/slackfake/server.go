package slackfake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askslack/askslack/internal/slacklimits"
)

// User is a workspace member known to the fake (users.info, users.lookupByEmail,
// and the "user" of interaction payloads).
type User struct {
	ID, Name, Email string
	TeamID          string // the user's home workspace; defaults to Options.TeamID
	// EnterpriseID is the user's Enterprise Grid organization (a Grid
	// user's id is org-wide); defaults to their home team's.
	EnterpriseID string
	// Teams are the other workspaces of the organization the user is a
	// member of (Grid), besides TeamID.
	Teams []string
}

// Options configure a Server. Zero values get the defaults noted.
type Options struct {
	// BotToken is the only token the Web API accepts (Authorization: Bearer or
	// form "token"); others get invalid_auth. Empty: any non-xapp token,
	// until an installation is registered (Install, OAuth): then only the
	// tokens issued to installations. It is the default team's installation.
	BotToken string
	// AppToken is the xapp- token apps.connections.open accepts. Empty: any xapp- token.
	AppToken string
	// SigningSecret signs HTTP interaction deliveries.
	SigningSecret string
	// InteractionURL is where HTTP interaction deliveries are POSTed; see SetInteractionURL.
	InteractionURL string
	// Users are the members users.info / users.lookupByEmail / conversations.open
	// know. If empty, any U…/W… id is accepted where a user id is expected.
	Users []User
	// UserGroups maps a user group id to its members' ids (usergroups.users.list).
	UserGroups map[string][]string
	// Channels are the channel ids that exist; posting elsewhere gives
	// channel_not_found. If empty, any C…/D…/G… id exists. DMs opened with
	// conversations.open always exist.
	Channels []string
	// TeamID defaults to "T0FAKE".
	TeamID string
	// TeamDomain defaults to "fake-workspace".
	TeamDomain string
	// BotUserID, BotID and AppID identify the app; default "U0FAKEBOT", "B0FAKEBOT", "A0FAKEAPP".
	BotUserID, BotID, AppID string
	// VerificationToken is the legacy "token" field of interaction payloads; default "fakeVerificationToken".
	VerificationToken string
	// TriggerTTL is how long a trigger_id stays valid for views.open/views.push; default 3s, like Slack.
	TriggerTTL time.Duration
	// AckTimeout is how long a delivery waits for the HTTP response or the
	// Socket Mode ack; default 3s, like Slack.
	AckTimeout time.Duration
	// PingInterval is how often Socket Mode connections get a WebSocket ping; default 10s.
	PingInterval time.Duration
	// Now is the clock for trigger expiry, timestamps and signatures; default time.Now.
	Now func() time.Time
	// Logf, if set, gets one line per API call and delivery.
	Logf func(format string, args ...any)
	// RateLimits, when above zero, enforces Slack's published rate limits
	// (internal/slacklimits: per method per workspace, per channel for
	// chat.postMessage) on a clock RateLimits times faster than Slack's, so
	// ×20 allows one post per 50 ms per channel. A call over a limit
	// answers HTTP 429, Retry-After in Slack seconds and
	// {"ok":false,"error":"ratelimited"}, and has no effect. Zero: off.
	RateLimits float64
	// OIDCClientID and OIDCClientSecret are the credentials of the app
	// using Sign in with Slack (oidc.go). Empty OIDCClientID: no such app,
	// so /openid/connect/authorize answers an error page and
	// openid.connect.token invalid_client_id. Empty OIDCClientSecret: any
	// secret is accepted.
	OIDCClientID, OIDCClientSecret string
	// OIDCRedirectURIs are the app's registered Redirect URLs. When set,
	// an authorize redirect_uri not among them (exactly) is refused with an
	// error page, as Slack does; when empty, any http(s) URL is accepted.
	OIDCRedirectURIs []string

	// Teams are the workspaces (teams.go). Empty: one, from TeamID and
	// TeamDomain. When set and TeamID is empty, the first is the default
	// team (TeamID, and what BotToken and an unnamed channel belong to).
	Teams []Team
	// ChannelTeams maps a channel id to the workspace that owns it; a
	// channel not named belongs to the default team.
	ChannelTeams map[string]string
	// SharedChannels maps a channel id to the other workspaces sharing it
	// (Slack Connect, or another workspace of the same Grid organization).
	SharedChannels map[string][]string
	// ClientID and ClientSecret are the app's OAuth credentials for
	// /oauth/v2/authorize and oauth.v2.access (oauth.go). Empty ClientID:
	// no OAuth (the authorize page says so, oauth.v2.access answers
	// invalid_client_id). Empty ClientSecret: any secret is accepted.
	ClientID, ClientSecret string
	// OAuthRedirectURIs are the app's registered Redirect URLs; when set,
	// an authorize redirect_uri must be one of them. Empty: any http(s) URL.
	OAuthRedirectURIs []string
	// TokenRotation: the app has token rotation on, so bot tokens expire
	// after TokenTTL and come with a refresh token.
	TokenRotation bool
	// TokenTTL is the expires_in of rotating tokens; default 12h, as Slack's.
	TokenTTL time.Duration
	// RefreshGrace is how long a refresh token keeps working after it was
	// used ("revoked after a short grace period", Slack's token rotation
	// page, which gives no figure); default 1 minute.
	RefreshGrace time.Duration
}

// Call is one recorded Web API call (or "response_url" post).
type Call struct {
	Method string
	// Params are the form fields, or the top-level JSON fields with strings
	// unquoted and anything else as its JSON text. The token is left out.
	Params map[string]string
	Body   []byte
	// Status and Response are the call's outcome in Slack: a fault after
	// the effect (DelayNext, DropNext, FailAfterNext, a held reply)
	// changes what the client is answered, not these.
	Status   int
	Response []byte
	At       time.Time
	// Team is the installation the call's token belongs to: its team id,
	// or for an org-wide install its enterprise id ("" for calls not made
	// with a bot token, such as oauth.v2.access or a response_url post).
	Team string
	// Token is the token the call was made with.
	Token string
}

// OK reports whether the call's response was {"ok":true,…}.
func (c Call) OK() bool {
	var r struct{ OK bool }
	return json.Unmarshal(c.Response, &r) == nil && r.OK
}

// Error returns the "error" field of the call's response ("" when ok).
func (c Call) Error() string {
	var r struct{ Error string }
	_ = json.Unmarshal(c.Response, &r)
	return r.Error
}

// Message is a message as currently stored (after updates).
type Message struct {
	Channel, TS, Text string
	Blocks            json.RawMessage // as Slack stores them: block_id and action_id filled in
	Updated           int             // times updated
	ThreadTS          string
	// Broadcast: a thread reply also sent to the channel (reply_broadcast);
	// conversations.history lists it, as a "thread_broadcast".
	Broadcast bool
	User      string // poster; the bot's user id for bot messages
	// Metadata is the message's metadata ({"event_type","event_payload"}),
	// returned by conversations.history with include_all_metadata.
	Metadata json.RawMessage

	inst  string // the installation whose bot posted it ("" the implicit one)
	botID string // its bot's id, for a bot message of an installation
	team  string // the workspace it was posted from ("" the default team)
}

// Ephemeral is a message only one user sees (chat.postEphemeral or a response_url reply).
type Ephemeral struct {
	Channel, User, Text string
	Blocks              json.RawMessage
	TS                  string
	// ThreadTS is the thread it shows in (chat.postEphemeral's thread_ts);
	// "" at the top level of the conversation.
	ThreadTS string
}

// View is a modal opened with views.open or views.push.
type View struct {
	ID, Hash, TriggerID, UserID string
	// JSON is the view object as Slack returns it: the request's view plus
	// id, hash, state, root_view_id, … and block_id/action_id filled in.
	JSON       json.RawMessage
	RootID     string
	PreviousID string // the view below it in the stack, "" for a root
	Closed     bool
	Updated    int               // times updated (views.update, response_action update)
	Errors     map[string]string // the last response_action "errors" shown, by block_id

	inst string // the installation that opened it ("" the implicit one)
	team string // the workspace it was opened in ("" the default team)
}

func (v *View) teamID(def string) string {
	if v.team != "" {
		return v.team
	}
	return def
}

// Transport selects how an interaction is delivered.
type Transport int

const (
	TransportAuto   Transport = iota // Socket Mode if a client is connected, else HTTP
	TransportHTTP                    // signed POST to the interaction URL
	TransportSocket                  // interactive envelope over Socket Mode
)

func (t Transport) String() string {
	switch t {
	case TransportHTTP:
		return "http"
	case TransportSocket:
		return "socket"
	}
	return "auto"
}

// Errors of the interaction helpers.
var (
	ErrNotFound         = errors.New("slackfake: not found")
	ErrNoControl        = errors.New("slackfake: no such control")
	ErrAmbiguous        = errors.New("slackfake: more than one control matches")
	ErrNoTransport      = errors.New("slackfake: no Socket Mode client connected and no interaction URL set")
	ErrAckTimeout       = errors.New("slackfake: no acknowledgement within the ack timeout")
	ErrClientValidation = errors.New("slackfake: Slack's client would not send this")
	ErrBadViewResponse  = errors.New("slackfake: Slack would reject this view_submission response")
)

type msgKey struct{ channel, ts string }

type trigger struct {
	team   string // the workspace of the payload it came with ("" the default)
	user   string
	viewID string // set when issued from an interaction inside a view
	issued time.Time
	used   bool
}

type failure struct {
	err        string
	retryAfter int
	status     int // the HTTP status; 0: what the error is answered with by default
}

type responseURL struct {
	inst              string // the installation serving the payload ("" the implicit one)
	channel, ts, user string
	issued            time.Time
	uses              int
}

// Server is a fake Slack: Web API, interaction sender, Socket Mode endpoint.
// All methods are safe for concurrent use.
type Server struct {
	opts      Options
	usersByID map[string]User
	limits    *slacklimits.Limiter // nil: no rate limits (see ratelimit.go)
	// teamLimits are the other installations' limiters; guarded by mu.
	teamLimits map[string]*slacklimits.Limiter

	startOnce sync.Once
	ln        net.Listener
	srv       *http.Server
	base      string // "http://127.0.0.1:PORT"
	wg        sync.WaitGroup
	stop      chan struct{}
	closeOnce sync.Once

	callTeam       string // Call.Team / Call.Token of the call being served
	callToken      string
	mu             sync.Mutex
	changed        chan struct{} // closed and replaced on every state change
	interactionURL string
	calls          []Call
	failures       map[string][]failure
	faults         map[string][]fault
	chaos          Chaos
	rnd            *mrand.Rand
	messages       map[msgKey]*Message
	msgOrder       []msgKey
	ephemerals     []Ephemeral
	views          map[string]*View
	viewOrder      []string
	triggers       map[string]*trigger
	responseURLs   map[string]*responseURL
	dms            map[string]string // user id → DM channel id
	userState      map[stateKey]map[string]map[string]map[string]any
	tickets        map[string]bool
	conns          []*sockConn
	rr             int
	lastTS         int64
	seq            int
	reach          reachState          // events, commands, Home tabs, reactions (events.go, home.go)
	members        map[string][]string // channel → its members, where SetMembers said
	holds          map[string][]*Hold  // method → calls to hold before they take effect
	scopes         []string            // the app's bot scopes (SetScopes); nil: not modelled
	mpims          map[string]bool     // group DMs opened with conversations.open
	botOutside     map[string]bool     // channels the bot is not in (RemoveBot)
	ws             teamState           // workspaces, installations, tokens (teams.go)
	caller         *install            // the installation of the Web API call being served
	dmTeams        map[string]string   // DM/group DM id → the workspace it was opened in
	dmInstalls     map[string]string   // DM/group DM id → the installation that opened it
	oidc           oidcState           // Sign in with Slack (oidc.go)
}

// SetMembers says who is in channel: chat.postEphemeral to anyone else
// answers user_not_in_channel, as on Slack. Channels never set have every
// known user as a member.
func (s *Server) SetMembers(channel string, userIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members == nil {
		s.members = map[string][]string{}
	}
	s.members[channel] = slices.Clone(userIDs)
}

// memberLocked reports whether userID is in channel.
func (s *Server) memberLocked(channel, userID string) bool {
	m, set := s.members[channel]
	return !set || slices.Contains(m, userID)
}

// New returns a Server; call Start (or StartAt) to serve.
func New(opts Options) *Server {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	teamGiven := opts.TeamID != ""
	def(&opts.TeamID, "T0FAKE")
	def(&opts.TeamDomain, "fake-workspace")
	def(&opts.BotUserID, "U0FAKEBOT")
	def(&opts.BotID, "B0FAKEBOT")
	def(&opts.AppID, "A0FAKEAPP")
	def(&opts.VerificationToken, "fakeVerificationToken")
	if opts.TriggerTTL == 0 {
		opts.TriggerTTL = 3 * time.Second
	}
	if opts.AckTimeout == 0 {
		opts.AckTimeout = 3 * time.Second
	}
	if opts.PingInterval == 0 {
		opts.PingInterval = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TokenTTL == 0 {
		opts.TokenTTL = 12 * time.Hour
	}
	if opts.RefreshGrace == 0 {
		opts.RefreshGrace = time.Minute
	}
	s := &Server{
		opts:           opts,
		limits:         newLimiter(opts),
		usersByID:      map[string]User{},
		stop:           make(chan struct{}),
		changed:        make(chan struct{}),
		interactionURL: opts.InteractionURL,
		failures:       map[string][]failure{},
		faults:         map[string][]fault{},
		messages:       map[msgKey]*Message{},
		views:          map[string]*View{},
		triggers:       map[string]*trigger{},
		responseURLs:   map[string]*responseURL{},
		dms:            map[string]string{},
		userState:      map[stateKey]map[string]map[string]map[string]any{},
		tickets:        map[string]bool{},
		dmTeams:        map[string]string{},
		dmInstalls:     map[string]string{},
	}
	s.initTeams(teamGiven)
	for _, u := range opts.Users {
		if u.TeamID == "" {
			u.TeamID = s.opts.TeamID
		}
		if u.EnterpriseID == "" {
			u.EnterpriseID = s.teamLocked(u.TeamID).EnterpriseID
		}
		s.usersByID[u.ID] = u
	}
	return s
}

// Start serves on 127.0.0.1 at a free port.
func (s *Server) Start() error { return s.StartAt("127.0.0.1:0") }

// StartAt serves on addr (host:port).
func (s *Server) StartAt(addr string) error {
	err := errors.New("slackfake: already started")
	s.startOnce.Do(func() {
		var ln net.Listener
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			return
		}
		s.ln = ln
		s.base = "http://" + ln.Addr().String()
		mux := http.NewServeMux()
		mux.HandleFunc("/api/", s.handleAPI)
		mux.HandleFunc("/link/", s.handleSocket)
		mux.HandleFunc("/actions/", s.handleResponseURL)
		mux.HandleFunc("/_fake/", s.handleControl)
		// Sign in with Slack (oidc.go): the two Web API methods are routed
		// ahead of "/api/" because they take the app's client credentials
		// or a user's access token, never the bot token.
		mux.HandleFunc("/api/openid.connect.token", s.handleOIDCToken)
		mux.HandleFunc("/api/openid.connect.userInfo", s.handleOIDCUserInfo)
		mux.HandleFunc("GET /openid/connect/authorize", s.handleOIDCAuthorize)
		mux.HandleFunc("GET /openid/connect/keys", s.handleOIDCKeys)
		mux.HandleFunc("GET /.well-known/openid-configuration", s.handleOIDCDiscovery)
		// OAuth v2 (oauth.go): the app's install flow, and token refresh.
		mux.HandleFunc("/api/oauth.v2.access", s.handleOAuthAccess)
		mux.HandleFunc("GET /oauth/v2/authorize", s.handleOAuthAuthorize)
		s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		s.wg.Go(func() { _ = s.srv.Serve(ln) })
	})
	return err
}

// Close stops the server and drops Socket Mode connections. Safe to call twice
// and before Start.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		if s.srv != nil {
			_ = s.srv.Close()
		}
		s.mu.Lock()
		conns := s.conns
		s.conns = nil
		s.mu.Unlock()
		for _, c := range conns {
			c.close()
		}
		s.wg.Wait()
	})
}

// URL is the server's base URL, e.g. "http://127.0.0.1:PORT".
func (s *Server) URL() string { return s.base }

// APIURL is the Web API base with a trailing slash, for slack.OptionAPIURL and SLACK_API_URL.
func (s *Server) APIURL() string { return s.base + "/api/" }

// SetInteractionURL sets where HTTP interaction deliveries go.
func (s *Server) SetInteractionURL(u string) {
	s.mu.Lock()
	s.interactionURL = u
	s.mu.Unlock()
}

// Options returns the options in effect (with defaults filled in).
func (s *Server) Options() Options { return s.opts }

// FailNext makes the next n calls to method fail with the Slack error err:
// "ratelimited" answers HTTP 429 with Retry-After: retryAfter, "internal_error"
// answers HTTP 500, anything else {"ok":false,"error":err} with 200.
// method "response_url" targets response_url posts.
func (s *Server) FailNext(method string, n int, err string, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{err: err, retryAfter: retryAfter})
	}
}

// fault changes how the response of a call that took effect reaches the
// client: held back for delay, never sent (the connection is closed), or
// replaced by an error.
type fault struct {
	delay time.Duration
	drop  bool
	fail  *failure // answered instead of the call's own reply
	reply *Hold    // the call took effect; its answer waits for Release
}

// Chaos makes Slack unreliable for a soak test: each call to one of
// Methods fails with HTTP 500 internal_error (no effect) with probability
// FailRate, and otherwise takes effect and answers after a random latency
// in [0, MaxLatency) — with probability FailAfterRate that answer is HTTP
// 500 internal_error too, though the call took effect (see FailAfterNext).
type Chaos struct {
	Methods       []string
	MaxLatency    time.Duration
	FailRate      float64
	FailAfterRate float64
	Seed          uint64
}

// SetChaos turns chaos on (or off, with a zero Chaos).
func (s *Server) SetChaos(c Chaos) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chaos = c
	s.rnd = mrand.New(mrand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
}

// chaosLocked draws the fate of one call: fail before the effect, or a
// latency after it, and whether its answer is an error all the same.
func (s *Server) chaosLocked(method string) (fail bool, latency time.Duration, failAfter bool) {
	if s.rnd == nil || !slices.Contains(s.chaos.Methods, method) {
		return false, 0, false
	}
	if s.rnd.Float64() < s.chaos.FailRate {
		return true, 0, false
	}
	if s.chaos.MaxLatency > 0 {
		latency = time.Duration(s.rnd.Int64N(int64(s.chaos.MaxLatency)))
	}
	if s.chaos.FailAfterRate > 0 {
		failAfter = s.rnd.Float64() < s.chaos.FailAfterRate
	}
	return false, latency, failAfter
}

// DelayNext makes the next n calls to method take effect at once but hold
// their response back for d: a slow Slack whose work is already done.
func (s *Server) DelayNext(method string, n int, d time.Duration) {
	s.addFaults(method, n, fault{delay: d})
}

// DropNext makes the next n calls to method take effect but never answer:
// the connection is closed without a response, as when a proxy or the
// network loses the reply. The client cannot tell whether the call worked.
func (s *Server) DropNext(method string, n int) {
	s.addFaults(method, n, fault{drop: true})
}

// FailAfterNext makes the next n calls to method take effect and then
// answer the Slack error err all the same, as Slack's internal_error and
// fatal_error may ("It's possible some aspect of the operation succeeded
// before the error was raised", Slack's method pages): a message posted
// or updated whose client is told the call failed, and which a retry
// would post twice. status is the HTTP status of that answer; 0 means
// what FailNext answers for err (HTTP 500 for "internal_error", else
// 200 with {"ok":false,"error":err}). The recorded Call keeps the effect's
// outcome (see Call).
func (s *Server) FailAfterNext(method string, n int, err string, status int) {
	s.addFaults(method, n, fault{fail: &failure{err: err, status: status}})
}

// HoldReplyNext lets the next call to method take effect at once and holds
// its answer back until the returned Hold is released (or the client gives
// up): Slack has posted the message, people can see and click it, and the
// bot does not know yet. Arrived is closed once the call took effect.
func (s *Server) HoldReplyNext(method string) *Hold {
	h := newHold()
	s.addFaults(method, 1, fault{reply: h})
	return h
}

// Hold is a call held back before it takes effect (HoldNext), or a reply
// held back after it (HoldReplyNext, where ReleaseLost loses it instead
// and ReleaseFailed answers an error instead).
type Hold struct {
	arrived, release chan struct{}
	abandoned        chan struct{} // the caller went away while held
	once, gone       sync.Once
	lost             bool     // set before release is closed
	fail             *failure // set before release is closed
}

func newHold() *Hold {
	return &Hold{arrived: make(chan struct{}), release: make(chan struct{}), abandoned: make(chan struct{})}
}

// Abandoned is closed when the held call's caller gave up waiting (its
// request was cancelled, say by a client timeout) before the release.
func (h *Hold) Abandoned() <-chan struct{} { return h.abandoned }

// Arrived is closed when the held call has reached the fake.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held call take effect and answer. Safe twice.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// ReleaseLost ends a held reply (HoldReplyNext) by closing the connection
// without it: the call took effect and the client never learns so.
func (h *Hold) ReleaseLost() {
	h.once.Do(func() { h.lost = true; close(h.release) })
}

// ReleaseFailed ends a held reply (HoldReplyNext) by answering the Slack
// error err with HTTP status (0: as FailAfterNext) instead: the call took
// effect and the client is told it failed.
func (h *Hold) ReleaseFailed(err string, status int) {
	h.once.Do(func() { h.fail = &failure{err: err, status: status}; close(h.release) })
}

// HoldNext holds the next call to method before it takes effect, until
// the returned Hold is released (or the client gives up): calls made
// meanwhile go ahead, so a test can make an earlier request land after a
// later one, as two replicas' requests may.
func (s *Server) HoldNext(method string) *Hold {
	h := newHold()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == nil {
		s.holds = map[string][]*Hold{}
	}
	s.holds[method] = append(s.holds[method], h)
	return h
}

// takeHold pops the hold waiting for method's next call, if any.
func (s *Server) takeHold(method string) *Hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.holds[method]
	if len(q) == 0 {
		return nil
	}
	s.holds[method] = q[1:]
	return q[0]
}

func (s *Server) addFaults(method string, n int, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], f)
	}
}

func (s *Server) takeFaultLocked(method string) fault {
	q := s.faults[method]
	if len(q) == 0 {
		return fault{}
	}
	s.faults[method] = q[1:]
	return q[0]
}

// Calls returns the recorded calls to method, or all calls for "".
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// WaitFor blocks until a call to method ("" = any) matching pred (nil = any)
// has been recorded, including calls recorded before WaitFor was called, and
// returns the first such call.
func (s *Server) WaitFor(ctx context.Context, method string, pred func(Call) bool) (Call, error) {
	var found Call
	err := s.WaitUntil(ctx, func() bool {
		for _, c := range s.Calls(method) {
			if pred == nil || pred(c) {
				found = c
				return true
			}
		}
		return false
	})
	if err != nil {
		return Call{}, fmt.Errorf("waiting for a %q call: %w", method, err)
	}
	return found, nil
}

// WaitMessage blocks until a stored message satisfies pred and returns it.
func (s *Server) WaitMessage(ctx context.Context, pred func(Message) bool) (Message, error) {
	var found Message
	err := s.WaitUntil(ctx, func() bool {
		for _, m := range s.Messages() {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitUntil calls cond now and after every change of the fake's state (a call,
// a message, a connection, …) until it returns true or ctx ends. cond may call
// the Server's methods.
func (s *Server) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// notifyLocked wakes WaitUntil callers; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Message returns the current state of a stored message.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[msgKey{channel, ts}]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Messages returns all stored messages in posting order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.msgOrder))
	for _, k := range s.msgOrder {
		out = append(out, *s.messages[k])
	}
	return out
}

// AddMessage stores a message posted by someone else (userID), e.g. a human
// message the bot must not be able to update.
func (s *Server) AddMessage(channel, userID, text string) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{Channel: channel, TS: s.nextTSLocked(), Text: text, User: userID}
	if s.multiLocked() {
		if u, ok := s.user(userID); ok {
			m.team = u.TeamID // posted from the person's own workspace
		}
	}
	s.storeMessageLocked(m)
	return *m
}

func (s *Server) storeMessageLocked(m *Message) {
	k := msgKey{m.Channel, m.TS}
	s.messages[k] = m
	s.msgOrder = append(s.msgOrder, k)
	s.notifyLocked()
}

func (s *Server) deleteMessageLocked(k msgKey) {
	delete(s.messages, k)
	s.msgOrder = slices.DeleteFunc(s.msgOrder, func(o msgKey) bool { return o == k })
	s.notifyLocked()
}

// Ephemerals returns every ephemeral message sent, in order.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemerals)
}

// View returns a view by id.
func (s *Server) View(id string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.views[id]
	if !ok {
		return View{}, false
	}
	return v.copy(), true
}

// Views returns all views ever opened, in order.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]View, 0, len(s.viewOrder))
	for _, id := range s.viewOrder {
		out = append(out, s.views[id].copy())
	}
	return out
}

func (v *View) copy() View {
	c := *v
	if v.Errors != nil {
		c.Errors = make(map[string]string, len(v.Errors))
		for k, e := range v.Errors {
			c.Errors[k] = e
		}
	}
	return c
}

// IssueTrigger registers and returns a fresh trigger_id for userID, as if the
// user had just clicked something; it is valid for views.open for TriggerTTL.
func (s *Server) IssueTrigger(userID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issueTriggerLocked(userID, "")
}

func (s *Server) issueTriggerLocked(userID, viewID string) string {
	return s.issueTriggerForLocked("", userID, viewID)
}

// issueTriggerForLocked issues a trigger_id that came with a payload from
// workspace team ("" the default): a modal opened with it is in that workspace.
func (s *Server) issueTriggerForLocked(team, userID, viewID string) string {
	s.seq++
	id := fmt.Sprintf("%d.%d.%s", 1388105719000+s.seq, 1379717998065, randHex(16))
	s.triggers[id] = &trigger{team: team, user: userID, viewID: viewID, issued: s.opts.Now()}
	return id
}

// useTriggerLocked consumes a trigger; it returns the Slack error for a bad one.
func (s *Server) useTriggerLocked(id string) (*trigger, string) {
	t, ok := s.triggers[id]
	switch {
	case !ok:
		return nil, "invalid_trigger_id"
	case t.used:
		return nil, "exchanged_trigger_id"
	case s.opts.Now().Sub(t.issued) > s.opts.TriggerTTL:
		return nil, "expired_trigger_id"
	}
	t.used = true
	return t, ""
}

// nextTSLocked returns a unique, increasing message timestamp in Slack's
// "1700000000.000100" form.
func (s *Server) nextTSLocked() string {
	us := s.opts.Now().UnixMicro()
	if us <= s.lastTS {
		us = s.lastTS + 1
	}
	s.lastTS = us
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

// newIDLocked returns a Slack-looking id with the prefix, e.g. "V0000000001".
func (s *Server) newIDLocked(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%010X", prefix, s.seq)
}

func (s *Server) user(id string) (User, bool) {
	if u, ok := s.usersByID[id]; ok {
		return u, true
	}
	if len(s.usersByID) == 0 && (strings.HasPrefix(id, "U") || strings.HasPrefix(id, "W")) {
		return User{ID: id, Name: strings.ToLower(id), TeamID: s.opts.TeamID}, true
	}
	return User{}, false
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randAlnum returns n random letters and digits, like Slack's generated block_ids ("XTkTR").
func randAlnum(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b)
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
