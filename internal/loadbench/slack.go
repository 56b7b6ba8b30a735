// Package loadbench holds the parts of `askslack bench`: a fast fake Slack
// that clicks every posted question, a null bot doing the same HTTP legs as
// askslack with no logic, closed-loop agents, and readers for /proc and
// Redis INFO. It is measuring equipment, not a test double: unlike
// internal/slackfake it keeps no history, validates nothing and never
// decodes a message it does not have to, so that the fake costs little next
// to the bot it measures.
package loadbench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askslack/askslack/internal/slacklimits"
)

// SlackOptions configure a Slack fake.
type SlackOptions struct {
	// SigningSecret signs the block_actions payloads it delivers.
	SigningSecret string
	// InteractionURL is where clicks go (the bot's /slack/interactions).
	InteractionURL string
	// Click: on every chat.postMessage, click the message's first button
	// once the post has been answered. Off for the open-asks test.
	Click bool
	// CallID names the ask a clicked button belongs to (from its action_id,
	// block_id and value), to pair the click with the agent's answer.
	CallID func(actionID, blockID, value string) string
	// Clickable picks the button to click by its action_id (nil: the
	// first button of the message).
	Clickable func(actionID string) bool
	// MaxClicks bounds clicks in flight (default 1024); a post beyond it
	// waits for a slot before its click is sent.
	MaxClicks int
	// RateLimits, above zero, enforces Slack's published limits at that
	// time scale (see limits.go); off by default.
	RateLimits float64
	// ClickAfter, when set with Click, says how long after its post a
	// question is clicked, or false to leave it unanswered (by call id).
	ClickAfter func(callID string) (time.Duration, bool)
	// ClickDelay, with Click, is how long every question waits before
	// its click: a person's seconds (SetClickDelay changes it). Unlike
	// ClickAfter it costs the fake no look into the message.
	ClickDelay time.Duration
	// Journal keeps every question post, click and buttons-gone update
	// (limits.go), for the --slack-limits bench.
	Journal bool
}

// Slack is a fast fake of the Slack Web API methods askslack calls
// (chat.postMessage, chat.update, chat.postEphemeral, auth.test; anything
// else answers ok) that delivers a signed click on the first button of every
// posted question, as a person who answers at once.
type Slack struct {
	opts   SlackOptions
	srv    *http.Server
	ln     net.Listener
	client *http.Client
	seq    atomic.Int64
	conns  atomic.Int64 // TCP connections accepted
	slots  chan struct{}
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc

	posts, updates, replies, ephemerals, others, clickErrs atomic.Int64
	limiter                                                *slacklimits.Limiter // nil: no limits
	limited                                                atomic.Int64         // 429s answered
	clickDelay                                             atomic.Int64         // ClickDelay, ns

	mu      sync.Mutex
	book    staleBook // see stale.go
	calls   map[string]*pairing
	ackLat  Samples // click sent → bot's ack received
	ackToAn Samples // ack received → agent got its answer
	journal journal // see limits.go
}

// pairing joins a click's ack time with the agent's answer time, whichever
// comes second records the difference.
type pairing struct {
	ack, answered time.Time
}

// NewSlack starts a fake on a loopback port.
func NewSlack(opts SlackOptions) (*Slack, error) {
	if opts.MaxClicks <= 0 {
		opts.MaxClicks = 1024
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Slack{opts: opts, ln: ln, slots: make(chan struct{}, opts.MaxClicks), calls: map[string]*pairing{}}
	if opts.RateLimits > 0 {
		s.limiter = slacklimits.New(slacklimits.Slack(), opts.RateLimits, nil)
	}
	s.clickDelay.Store(int64(opts.ClickDelay))
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.client = &http.Client{Transport: Transport(opts.MaxClicks), Timeout: 10 * time.Second}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat.postMessage", s.postMessage)
	mux.HandleFunc("POST /api/chat.update", s.update)
	mux.HandleFunc("POST /actions/{channel}/{ts}", s.reply)
	mux.HandleFunc("POST /api/chat.postEphemeral", func(w http.ResponseWriter, r *http.Request) {
		s.ephemerals.Add(1)
		io.Copy(io.Discard, r.Body)
		if s.refused(w, "chat.postEphemeral", "") {
			return
		}
		writeJSON(w, `{"ok":true,"message_ts":"`+s.nextTS()+`"}`)
	})
	mux.HandleFunc("/api/auth.test", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, `{"ok":true,"url":"https://bench.slack.com/","team":"bench","user":"askslack","team_id":"T0BENCH","user_id":"U0BOT","bot_id":"B0BOT"}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.others.Add(1)
		io.Copy(io.Discard, r.Body)
		if s.refused(w, strings.TrimPrefix(r.URL.Path, "/api/"), "") {
			return
		}
		writeJSON(w, `{"ok":true}`)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		}}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the Web API base URL, ending in /api/.
func (s *Slack) URL() string { return "http://" + s.ln.Addr().String() + "/api/" }

// SetClickDelay sets how long questions posted from now on wait before
// their click (0: at once).
func (s *Slack) SetClickDelay(d time.Duration) { s.clickDelay.Store(int64(max(d, 0))) }

// SetInteractionURL points clicks at another app.
func (s *Slack) SetInteractionURL(u string) {
	s.mu.Lock()
	s.opts.InteractionURL = u
	s.mu.Unlock()
}

// Close stops the server and waits for clicks in flight.
func (s *Slack) Close() {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	s.srv.Close()
	s.wg.Wait()
}

// SlackCounters are cumulative counts; subtract two to get a window's.
// Posts, Updates, Ephemerals and Others count every call, refused ones
// too; Limited counts the 429s among them. Replies count posts to clicks'
// response_urls (never rate limited).
type SlackCounters struct {
	Conns, Posts, Updates, Replies, Ephemerals, Others, ClickErrors, Limited int64
}

// Counters returns the counts so far.
func (s *Slack) Counters() SlackCounters {
	return SlackCounters{Conns: s.conns.Load(), Posts: s.posts.Load(), Updates: s.updates.Load(), Replies: s.replies.Load(),
		Ephemerals: s.ephemerals.Load(), Others: s.others.Load(), ClickErrors: s.clickErrs.Load(), Limited: s.limited.Load()}
}

// Calls is every Slack call counted: Web API methods and response_urls.
func (c SlackCounters) Calls() int64 {
	return c.Posts + c.Updates + c.Replies + c.Ephemerals + c.Others
}

// Sub returns c - o.
func (c SlackCounters) Sub(o SlackCounters) SlackCounters {
	return SlackCounters{c.Conns - o.Conns, c.Posts - o.Posts, c.Updates - o.Updates, c.Replies - o.Replies,
		c.Ephemerals - o.Ephemerals, c.Others - o.Others, c.ClickErrors - o.ClickErrors, c.Limited - o.Limited}
}

// TakeLatencies returns and resets the ack and ack→answer samples.
func (s *Slack) TakeLatencies() (ack, ackToAnswer Samples) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ack, ackToAnswer = s.ackLat, s.ackToAn
	s.ackLat, s.ackToAn = Samples{}, Samples{}
	return ack, ackToAnswer
}

// Answered records that the agent got callID's answer at t.
func (s *Slack) Answered(callID string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteAnswered(callID)
	p := s.calls[callID]
	if p == nil {
		s.calls[callID] = &pairing{answered: t}
		return
	}
	delete(s.calls, callID)
	s.ackToAn.Add(max(0, t.Sub(p.ack)))
}

func (s *Slack) acked(callID string, t time.Time, lat time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ackLat.Add(lat)
	p := s.calls[callID]
	if p == nil {
		if len(s.calls) < 1<<20 { // bounded: unanswered clicks are forgotten past this
			s.calls[callID] = &pairing{ack: t}
		}
		return
	}
	delete(s.calls, callID)
	s.ackToAn.Add(max(0, p.answered.Sub(t)))
}

func (s *Slack) nextTS() string {
	n := s.seq.Add(1)
	return fmt.Sprintf("1700000000.%06d", n)
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// message reads a chat.postMessage or chat.update body, form-encoded or
// JSON (Slack takes both): the channel, the ts, and the blocks as JSON.
func message(r *http.Request) (channel, ts, blocks string, err error) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m struct {
			Channel string          `json:"channel"`
			TS      string          `json:"ts"`
			Blocks  json.RawMessage `json:"blocks"`
		}
		err = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
		return m.Channel, m.TS, string(m.Blocks), err
	}
	if err = r.ParseForm(); err != nil {
		return "", "", "", err
	}
	return r.PostForm.Get("channel"), r.PostForm.Get("ts"), r.PostForm.Get("blocks"), nil
}

func (s *Slack) postMessage(w http.ResponseWriter, r *http.Request) {
	s.posts.Add(1)
	ch, _, blocks, err := message(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.refused(w, "chat.postMessage", ch) {
		return
	}
	ts := s.nextTS()
	s.shown(ts, blocks)
	s.journalPost(ch, ts, blocks)
	chq, _ := json.Marshal(ch)
	writeJSON(w, `{"ok":true,"channel":`+string(chq)+`,"ts":"`+ts+`","message":{"type":"message","ts":"`+ts+`"}}`)
	if !s.opts.Click {
		return
	}
	// The click goes out after the post has been answered, as a person can
	// only click what they see.
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// The wait comes before the slot: MaxClicks bounds clicks in
		// flight, not people still reading.
		if !s.waitToClick(blocks) {
			return
		}
		select {
		case s.slots <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		defer func() { <-s.slots }()
		if err := s.click(ch, ts, blocks); err != nil {
			s.clickErrs.Add(1)
		}
	}()
}

func (s *Slack) update(w http.ResponseWriter, r *http.Request) {
	s.updates.Add(1)
	ch, ts, blocks, err := message(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.refused(w, "chat.update", ch) {
		return
	}
	s.shown(ts, blocks)
	s.journalUpdate(ts, blocks)
	chq, _ := json.Marshal(ch)
	tsq, _ := json.Marshal(ts)
	writeJSON(w, `{"ok":true,"channel":`+string(chq)+`,"ts":`+string(tsq)+`,"text":""}`)
}

// reply serves the response_url a click carries (see click): with
// replace_original it swaps the message's content as chat.update does, but
// no method tier limits it (Slack allows 5 uses per URL in 30 minutes,
// which the full fake, internal/slackfake, enforces).
func (s *Slack) reply(w http.ResponseWriter, r *http.Request) {
	s.replies.Add(1)
	var m struct {
		Blocks          json.RawMessage `json:"blocks"`
		ReplaceOriginal bool            `json:"replace_original"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if m.ReplaceOriginal {
		ts := r.PathValue("ts")
		s.shown(ts, string(m.Blocks))
		s.journalUpdate(ts, string(m.Blocks))
	}
	writeJSON(w, `{"ok":true}`)
}

// button is the part of a Block Kit element the click needs.
type button struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Value    string          `json:"value,omitempty"`
	Text     json.RawMessage `json:"text"`
}

type block struct {
	Type      string   `json:"type"`
	BlockID   string   `json:"block_id"`
	Elements  []button `json:"elements"`
	Accessory *button  `json:"accessory"`
}

// firstButton finds the first clickable button of a message (actions blocks and
// section accessories).
func firstButton(blocksJSON string, ok func(string) bool) (string, button, bool) {
	if ok == nil {
		ok = func(string) bool { return true }
	}
	var bs []block
	if json.Unmarshal([]byte(blocksJSON), &bs) != nil {
		return "", button{}, false
	}
	for _, b := range bs {
		if b.Accessory != nil && b.Accessory.Type == "button" && ok(b.Accessory.ActionID) {
			return b.BlockID, *b.Accessory, true
		}
		for _, e := range b.Elements {
			if e.Type == "button" && ok(e.ActionID) {
				return b.BlockID, e, true
			}
		}
	}
	return "", button{}, false
}

// blockActions is a block_actions payload shaped like Slack's
// (reference/payloads/block_actions_button.json), message blocks included,
// so that the bot parses what it would parse in production.
type blockActions struct {
	Type      string         `json:"type"`
	User      map[string]any `json:"user"`
	APIAppID  string         `json:"api_app_id"`
	Token     string         `json:"token"`
	Container map[string]any `json:"container"`
	TriggerID string         `json:"trigger_id"`
	Team      map[string]any `json:"team"`
	Channel   map[string]any `json:"channel"`
	Message   struct {
		BotID  string          `json:"bot_id"`
		Type   string          `json:"type"`
		Text   string          `json:"text"`
		User   string          `json:"user"`
		TS     string          `json:"ts"`
		Team   string          `json:"team"`
		Blocks json.RawMessage `json:"blocks"`
	} `json:"message"`
	State       map[string]any   `json:"state"`
	ResponseURL string           `json:"response_url"`
	Actions     []map[string]any `json:"actions"`
}

var clicker = map[string]any{"id": "U0BENCH", "username": "bench", "name": "bench", "team_id": "T0BENCH"}

func (s *Slack) click(channel, ts, blocksJSON string) error {
	blockID, b, ok := firstButton(blocksJSON, s.opts.Clickable)
	if !ok {
		return errors.New("no button")
	}
	p := blockActions{
		Type: "block_actions", User: clicker, APIAppID: "A0BENCH", Token: "bench-verification-token",
		Container:   map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		TriggerID:   "1388105719492.1379717998065.9bc163894734c1f415a2c504e81dec91",
		Team:        map[string]any{"id": "T0BENCH", "domain": "bench"},
		Channel:     map[string]any{"id": channel, "name": strings.ToLower(channel)},
		State:       map[string]any{"values": map[string]any{}},
		ResponseURL: "http://" + s.ln.Addr().String() + "/actions/" + url.PathEscape(channel) + "/" + url.PathEscape(ts),
		Actions: []map[string]any{{"action_id": b.ActionID, "block_id": blockID, "text": b.Text,
			"value": b.Value, "type": "button", "action_ts": s.nextTS()}},
	}
	p.Message.BotID, p.Message.Type, p.Message.Text, p.Message.User, p.Message.TS, p.Message.Team =
		"B0BOT", "message", "question", "U0BOT", ts, "T0BENCH"
	p.Message.Blocks = json.RawMessage(blocksJSON)
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	body := []byte("payload=" + url.QueryEscape(string(raw)))
	s.mu.Lock()
	target := s.opts.InteractionURL
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	now := time.Now()
	s.journalClick(ts, now)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(s.opts.SigningSecret, now.Unix(), body))
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	done := time.Now()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("interaction answered %s", resp.Status)
	}
	if id := s.callID(ts, b, blockID); id != "" {
		s.acked(id, done, done.Sub(now))
	}
	return nil
}

// callID names the ask a click on b belongs to, and notes it as the ask of
// message ts (for StaleButtons).
func (s *Slack) callID(ts string, b button, blockID string) string {
	if s.opts.CallID == nil {
		return ""
	}
	id := s.opts.CallID(b.ActionID, blockID, b.Value)
	if id != "" {
		s.clickedOn(ts, id)
	}
	return id
}

// Sign returns Slack's v0 signature of body at Unix time ts.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Transport is an HTTP transport for many concurrent requests to one
// loopback host: it keeps up to perHost idle connections instead of Go's
// default two, so a steady load reuses connections.
func Transport(perHost int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = perHost
	t.IdleConnTimeout = 90 * time.Second
	return t
}
