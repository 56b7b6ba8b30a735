package slackfake

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Delivery says how to deliver one interaction.
type Delivery struct {
	Transport Transport
	// HTTP only: leave out X-Slack-Signature and X-Slack-Request-Timestamp,
	// sign with a wrong secret, or sign with a timestamp 6 minutes old.
	Unsigned, BadSignature, Stale bool
	// RetryNum > 0 marks a retry: X-Slack-Retry-Num / X-Slack-Retry-Reason
	// headers over HTTP, retry_attempt / retry_reason in a Socket Mode envelope.
	RetryNum    int
	RetryReason string // default "http_timeout"
	// To, over HTTP, is the interaction URL of this one delivery: the
	// replica a load balancer in front of several would pick. Empty means
	// the URL set with SetInteractionURL.
	To string
}

// Response is the app's answer to a delivery.
type Response struct {
	Transport Transport // the transport used
	Status    int       // HTTP status; 200 for a Socket Mode ack
	// Body is the HTTP response body, or the Socket Mode ack's "payload" JSON
	// (nil when the ack had none).
	Body []byte
}

// Deliver sends an interaction payload (any JSON-marshalable value, or JSON
// bytes) to the app and waits for its acknowledgement, at most AckTimeout.
// It does not interpret the answer; see SubmitView for that.
func (s *Server) Deliver(ctx context.Context, payload any, d Delivery) (Response, error) {
	raw, typ, err := typedJSON(payload)
	if err != nil {
		return Response{}, fmt.Errorf("slackfake: payload is not a JSON object: %w", err)
	}
	t := d.Transport
	if t == TransportAuto {
		t = TransportHTTP
		if s.SocketClients() > 0 {
			t = TransportSocket
		}
	}
	s.logf("slackfake: deliver %s over %s", typ, t)
	if t == TransportSocket {
		return s.deliverSocket(ctx, raw, typ, d)
	}
	return s.deliverHTTP(ctx, raw, d)
}

// Sign returns the X-Slack-Signature for body at timestamp ts:
// "v0=" + hex(HMAC-SHA256(secret, "v0:"+ts+":"+body)).
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// deliveryClient has a transport of its own: httptest.Server.Close closes
// the idle connections of http.DefaultTransport, and a test server closing
// in a parallel test would then break a delivery about to reuse one
// ("http: CloseIdleConnections called").
var deliveryClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}

func (s *Server) deliverHTTP(ctx context.Context, raw []byte, d Delivery) (Response, error) {
	s.mu.Lock()
	target := s.interactionURL
	s.mu.Unlock()
	if d.To != "" {
		target = d.To
	}
	if target == "" {
		return Response{}, ErrNoTransport
	}
	body := []byte("payload=" + url.QueryEscape(string(raw)))
	return s.postSigned(ctx, target, "application/x-www-form-urlencoded", body, d)
}

// postSigned POSTs body to target as Slack does: signed (unless d says
// otherwise), with retry headers, waiting at most AckTimeout for the answer.
func (s *Server) postSigned(ctx context.Context, target, contentType string, body []byte, d Delivery) (Response, error) {
	actx, cancel := context.WithTimeout(ctx, s.opts.AckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, target, strings.NewReader(string(body)))
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	if !d.Unsigned {
		ts := s.opts.Now().Unix()
		if d.Stale {
			ts -= 6 * 60
		}
		secret := s.opts.SigningSecret
		if d.BadSignature {
			secret += "-wrong"
		}
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("X-Slack-Signature", Sign(secret, ts, body))
	}
	if d.RetryNum > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(d.RetryNum))
		req.Header.Set("X-Slack-Retry-Reason", retryReason(d))
	}
	resp, err := deliveryClient.Do(req)
	if err != nil {
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			return Response{Transport: TransportHTTP}, fmt.Errorf("%w (%s over HTTP)", ErrAckTimeout, s.opts.AckTimeout)
		}
		return Response{Transport: TransportHTTP}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			return Response{Transport: TransportHTTP}, fmt.Errorf("%w (%s over HTTP)", ErrAckTimeout, s.opts.AckTimeout)
		}
		return Response{Transport: TransportHTTP}, err
	}
	s.logf("slackfake: HTTP delivery answered %d %s", resp.StatusCode, b)
	return Response{Transport: TransportHTTP, Status: resp.StatusCode, Body: b}, nil
}

func retryReason(d Delivery) string {
	if d.RetryReason != "" {
		return d.RetryReason
	}
	return "http_timeout"
}

// sockConn is one Socket Mode connection.
type sockConn struct {
	ws            *websocket.Conn
	wmu           sync.Mutex
	done          chan struct{}
	closeOnce     sync.Once
	pending       map[string]chan json.RawMessage // envelope id → ack; guarded by Server.mu
	disconnecting bool                            // sent a disconnect frame; guarded by Server.mu
}

func (c *sockConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *sockConn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

var upgrader = websocket.Upgrader{
	// slack-go's client sends Origin: https://api.slack.com.
	CheckOrigin: func(*http.Request) bool { return true },
}

// handleSocket is the Socket Mode WebSocket endpoint (the URL apps.connections.open returns).
func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket]
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &sockConn{ws: ws, done: make(chan struct{}), pending: map[string]chan json.RawMessage{}}

	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		_ = ws.Close()
		return
	default:
	}
	hello := map[string]any{
		"type":            "hello",
		"num_connections": len(s.activeConnsLocked()) + 1,
		"debug_info":      map[string]any{"host": "fakeslack", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	}
	if err := c.write(marshal(hello)); err != nil {
		s.mu.Unlock()
		c.close()
		return
	}
	s.conns = append(s.conns, c)
	s.notifyLocked()
	s.wg.Go(func() { s.readLoop(c) })
	s.wg.Go(func() { s.pingLoop(c) })
	s.mu.Unlock()
	s.logf("slackfake: Socket Mode client connected")
}

func (s *Server) readLoop(c *sockConn) {
	defer s.dropConn(c)
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			s.logf("slackfake: ignoring Socket Mode frame %s", data)
			continue
		}
		s.mu.Lock()
		ch := c.pending[ack.EnvelopeID]
		delete(c.pending, ack.EnvelopeID)
		s.mu.Unlock()
		if ch == nil {
			s.logf("slackfake: ack for unknown or late envelope %s", ack.EnvelopeID)
			continue
		}
		if string(ack.Payload) == "null" {
			ack.Payload = nil
		}
		ch <- ack.Payload
	}
}

// pingLoop sends WebSocket pings; slack-go's client reconnects if none comes for 30 s.
func (s *Server) pingLoop(c *sockConn) {
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(10*time.Second)); err != nil {
				c.close()
				return
			}
		}
	}
}

func (s *Server) dropConn(c *sockConn) {
	c.close()
	s.mu.Lock()
	s.conns = slices.DeleteFunc(s.conns, func(o *sockConn) bool { return o == c })
	s.notifyLocked()
	s.mu.Unlock()
	s.logf("slackfake: Socket Mode client gone")
}

func (s *Server) activeConnsLocked() []*sockConn {
	var out []*sockConn
	for _, c := range s.conns {
		if !c.disconnecting {
			out = append(out, c)
		}
	}
	return out
}

// SocketClients is the number of connected Socket Mode clients that can get deliveries.
func (s *Server) SocketClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.activeConnsLocked())
}

// WaitConnected blocks until at least n Socket Mode clients are connected.
func (s *Server) WaitConnected(ctx context.Context, n int) error {
	return s.WaitUntil(ctx, func() bool { return s.SocketClients() >= n })
}

// Disconnect sends a "disconnect" frame with reason (e.g. "refresh_requested",
// "warning", "too_many_websockets") to every connected client, which should
// then reconnect through apps.connections.open. The old connections get no
// more deliveries, and are closed DisconnectGrace later, as Slack does.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	conns := s.activeConnsLocked()
	for _, c := range conns {
		c.disconnecting = true
	}
	s.notifyLocked()
	s.mu.Unlock()
	frame := marshal(map[string]any{
		"type":            "disconnect",
		"reason":          reason,
		"debug_info":      map[string]any{"host": "fakeslack"},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	for _, c := range conns {
		_ = c.write(frame)
		time.AfterFunc(DisconnectGrace, c.close)
	}
}

// DisconnectGrace is how long a connection told to disconnect stays open.
const DisconnectGrace = 10 * time.Second

func (s *Server) deliverSocket(ctx context.Context, raw []byte, typ string, d Delivery) (Response, error) {
	return s.deliverEnvelope(ctx, raw, "interactive", typ == "view_submission" || typ == "block_suggestion", d)
}

// deliverEnvelope sends one Socket Mode envelope of envType ("interactive",
// "events_api", "slash_commands") to one connected client and waits for
// its ack.
func (s *Server) deliverEnvelope(ctx context.Context, raw []byte, envType string, accepts bool, d Delivery) (Response, error) {
	res := Response{Transport: TransportSocket}
	s.mu.Lock()
	active := s.activeConnsLocked()
	if len(active) == 0 {
		s.mu.Unlock()
		return res, ErrNoTransport
	}
	// Slack gives each payload to one of the app's connections.
	c := active[s.rr%len(active)]
	s.rr++
	env := newUUID()
	ch := make(chan json.RawMessage, 1)
	c.pending[env] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(c.pending, env)
		s.mu.Unlock()
	}()

	frame := map[string]any{
		"envelope_id":              env,
		"type":                     envType,
		"payload":                  json.RawMessage(raw),
		"accepts_response_payload": accepts,
	}
	if d.RetryNum > 0 {
		frame["retry_attempt"] = d.RetryNum
		frame["retry_reason"] = retryReason(d)
	}
	if err := c.write(marshal(frame)); err != nil {
		return res, fmt.Errorf("slackfake: writing envelope: %w", err)
	}
	timer := time.NewTimer(s.opts.AckTimeout)
	defer timer.Stop()
	select {
	case p := <-ch:
		res.Status = http.StatusOK
		res.Body = p
		s.logf("slackfake: Socket Mode ack %s", p)
		return res, nil
	case <-timer.C:
		return res, fmt.Errorf("%w (%s over Socket Mode, envelope %s)", ErrAckTimeout, s.opts.AckTimeout, env)
	case <-c.done:
		return res, errors.New("slackfake: Socket Mode connection closed before the ack")
	case <-ctx.Done():
		return res, ctx.Err()
	}
}
