// Package pagerfake is a fake of the two paging APIs askslack talks to,
// for tests: PagerDuty's Events API v2 (POST /v2/enqueue) and Opsgenie's
// Alert API (POST /v2/alerts, POST /v2/alerts/{identifier}/close), both
// on one HTTP server. It checks what the providers document and answers
// as they do:
//
//   - PagerDuty: a JSON body of known fields only; routing_key set (and
//     the expected one, when Options.RoutingKey is); event_action one of
//     trigger, acknowledge, resolve; dedup_key at most 255 characters, and
//     set for acknowledge and resolve; a trigger's payload with a summary
//     of 1 to 1024 characters, a source, a severity of critical, error,
//     warning or info; links with an href. A bad event answers 400
//     {"status":"invalid event","message":"Event object is invalid","errors":[…]};
//     a good one 202 {"status":"success","message":"Event processed","dedup_key":…}.
//   - Opsgenie: Authorization: GenieKey <key> (the expected key, when
//     Options.APIKey is set), else 401; an alert of known fields only
//     with a message of 1 to 130 characters, an alias of at most 512, a
//     description of at most 15000, a priority P1 to P5 (or none),
//     string details, at most 20 tags of at most 50 characters; a close
//     with identifierType id, tiny or alias (recorded as "id:…" or
//     "tiny:…" unless it is alias). A bad request answers 422
//     {"message":…,"took":…,"requestId":…}; a good one 202
//     {"result":"Request will be processed","took":…,"requestId":…}.
//
// Every request that passed is recorded as an Event (Events, WaitFor);
// Fail makes the next requests fail with a status (429 with Retry-After,
// 500, 400 …) before they are looked at. Requests counts every request.
package pagerfake

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Options configure a Server.
type Options struct {
	// RoutingKey, when set, is the only PagerDuty routing key accepted.
	RoutingKey string
	// APIKey, when set, is the only Opsgenie key accepted.
	APIKey string
}

// Event is one accepted request.
type Event struct {
	// Provider is "pagerduty" or "opsgenie".
	Provider string
	// Action is PagerDuty's event_action (trigger, acknowledge, resolve)
	// or Opsgenie's "create" or "close".
	Action string
	// DedupKey is PagerDuty's dedup_key or Opsgenie's alias.
	DedupKey string
	// Summary is PagerDuty's payload.summary or Opsgenie's message;
	// Severity its payload.severity or Opsgenie's priority.
	Summary, Severity string
	// Links are PagerDuty's links' hrefs.
	Links []string
	// Details are PagerDuty's custom_details or Opsgenie's details.
	Details map[string]any
	// Note is a close's note.
	Note string
	// Body is the request's JSON.
	Body json.RawMessage
	// At is when the fake accepted it.
	At time.Time
}

// Server is a running fake.
type Server struct {
	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	events   []Event
	fail     []int
	changed  chan struct{} // closed and replaced at every new event
	requests atomic.Int64
	ids      atomic.Int64
}

// New starts a fake; Close stops it.
func New(opts Options) *Server {
	s := &Server{opts: opts, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/enqueue", s.enqueue)
	mux.HandleFunc("POST /v2/alerts", s.createAlert)
	mux.HandleFunc("POST /v2/alerts/{identifier}/close", s.closeAlert)
	s.srv = httptest.NewServer(s.counting(mux))
	return s
}

// URL is the fake's origin: ASKSLACK_PAGERDUTY_URL and ASKSLACK_OPSGENIE_URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Fail makes the next len(statuses) requests, of either API, answer these
// statuses (and do nothing): 429 comes with Retry-After: 1.
func (s *Server) Fail(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = append(s.fail, statuses...)
}

// Requests counts every request the server received, failed ones too.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Events returns the accepted requests in order.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Count counts the accepted events of action for dedupKey ("" for any).
func (s *Server) Count(action, dedupKey string) int {
	n := 0
	for _, e := range s.Events() {
		if e.Action == action && (dedupKey == "" || e.DedupKey == dedupKey) {
			n++
		}
	}
	return n
}

// WaitFor waits until pred holds for the events, or ctx ends.
func (s *Server) WaitFor(ctx context.Context, pred func([]Event) bool) error {
	for {
		s.mu.Lock()
		evs, ch := append([]Event(nil), s.events...), s.changed
		s.mu.Unlock()
		if pred(evs) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pagerfake: %w; events: %s", ctx.Err(), describe(evs))
		case <-ch:
		}
	}
}

func describe(evs []Event) string {
	var parts []string
	for _, e := range evs {
		parts = append(parts, e.Provider+" "+e.Action+" "+e.DedupKey)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (s *Server) record(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.At = time.Now()
	s.events = append(s.events, e)
	close(s.changed)
	s.changed = make(chan struct{})
}

// counting counts requests and serves the injected failures.
func (s *Server) counting(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		status := 0
		if len(s.fail) > 0 {
			status, s.fail = s.fail[0], s.fail[1:]
		}
		s.mu.Unlock()
		if status != 0 {
			_, _ = io.Copy(io.Discard, r.Body)
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"status":"error","message":"injected %d"}`, status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// decodeStrict decodes a JSON object of known fields only.
func decodeStrict(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func chars(s string) int { return utf8.RuneCountInString(s) }

// PagerDuty's event, as documented.
type pdEvent struct {
	RoutingKey  *string    `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *pdPayload `json:"payload"`
	Images      []struct {
		Src  string `json:"src"`
		Href string `json:"href"`
		Alt  string `json:"alt"`
	} `json:"images"`
	Links []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"links"`
	Client    string `json:"client"`
	ClientURL string `json:"client_url"`
}

type pdPayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp"`
	Component     string         `json:"component"`
	Group         string         `json:"group"`
	Class         string         `json:"class"`
	CustomDetails map[string]any `json:"custom_details"`
}

func (s *Server) enqueue(w http.ResponseWriter, r *http.Request) {
	var ev pdEvent
	body, errs := s.readPD(r, &ev)
	if len(errs) > 0 {
		reply(w, http.StatusBadRequest, map[string]any{"status": "invalid event", "message": "Event object is invalid", "errors": errs})
		return
	}
	e := Event{Provider: "pagerduty", Action: ev.EventAction, DedupKey: ev.DedupKey, Body: body}
	if e.DedupKey == "" {
		e.DedupKey = fmt.Sprintf("generated-%d", s.ids.Add(1))
	}
	if p := ev.Payload; p != nil {
		e.Summary, e.Severity, e.Details = p.Summary, p.Severity, p.CustomDetails
	}
	for _, l := range ev.Links {
		e.Links = append(e.Links, l.Href)
	}
	s.record(e)
	reply(w, http.StatusAccepted, map[string]string{"status": "success", "message": "Event processed", "dedup_key": e.DedupKey})
}

// readPD reads and checks a PagerDuty event: what is wrong, in
// PagerDuty's words where it has them.
func (s *Server) readPD(r *http.Request, ev *pdEvent) (json.RawMessage, []string) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 512<<10+1))
	if err != nil {
		return nil, []string{err.Error()}
	}
	if len(b) > 512<<10 {
		return nil, []string{"Event is larger than 512KB"}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ev); err != nil {
		return nil, []string{"Invalid JSON: " + err.Error()}
	}
	var errs []string
	bad := func(f string, args ...any) { errs = append(errs, fmt.Sprintf(f, args...)) }
	switch {
	case ev.RoutingKey == nil || *ev.RoutingKey == "":
		bad("'routing_key' is missing or blank")
	case s.opts.RoutingKey != "" && *ev.RoutingKey != s.opts.RoutingKey:
		bad("'routing_key' is not a valid integration key")
	}
	switch ev.EventAction {
	case "trigger":
		p := ev.Payload
		if p == nil {
			bad("'payload' is missing")
			break
		}
		if p.Summary == "" {
			bad("'payload.summary' is missing or blank")
		} else if chars(p.Summary) > 1024 {
			bad("'payload.summary' is longer than 1024 characters")
		}
		if p.Source == "" {
			bad("'payload.source' is missing or blank")
		}
		switch p.Severity {
		case "critical", "error", "warning", "info":
		default:
			bad("'payload.severity' must be one of critical, error, warning, info")
		}
	case "acknowledge", "resolve":
		if ev.DedupKey == "" {
			bad("'dedup_key' is required for %s events", ev.EventAction)
		}
	case "":
		bad("'event_action' is missing or blank")
	default:
		bad("'event_action' must be one of trigger, acknowledge, resolve")
	}
	if chars(ev.DedupKey) > 255 {
		bad("'dedup_key' is longer than 255 characters")
	}
	for i, l := range ev.Links {
		if l.Href == "" {
			bad("'links[%d].href' is missing", i)
		}
	}
	return b, errs
}

// Opsgenie's alert, as documented.
type ogAlert struct {
	Message     *string           `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description"`
	Responders  []map[string]any  `json:"responders"`
	VisibleTo   []map[string]any  `json:"visibleTo"`
	Actions     []string          `json:"actions"`
	Tags        []string          `json:"tags"`
	Details     map[string]string `json:"details"`
	Entity      string            `json:"entity"`
	Source      string            `json:"source"`
	Priority    string            `json:"priority"`
	User        string            `json:"user"`
	Note        string            `json:"note"`
}

type ogClose struct {
	User   string `json:"user"`
	Source string `json:"source"`
	Note   string `json:"note"`
}

// authorized checks the GenieKey, answering 401 when it is wrong.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "GenieKey ")
	if !ok || key == "" || (s.opts.APIKey != "" && key != s.opts.APIKey) {
		s.ogReply(w, http.StatusUnauthorized, "message", "Could not authenticate")
		return false
	}
	return true
}

func (s *Server) ogReply(w http.ResponseWriter, status int, field, text string) {
	reply(w, status, map[string]any{field: text, "took": 0.01, "requestId": "req-" + strconv.FormatInt(s.ids.Add(1), 10)})
}

func (s *Server) createAlert(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var a ogAlert
	if err := decodeStrict(r, &a); err != nil {
		s.ogReply(w, http.StatusUnprocessableEntity, "message", "Invalid request body: "+err.Error())
		return
	}
	var errs []string
	bad := func(f string, args ...any) { errs = append(errs, fmt.Sprintf(f, args...)) }
	switch {
	case a.Message == nil || strings.TrimSpace(*a.Message) == "":
		bad("Message can not be empty.")
	case chars(*a.Message) > 130:
		bad("Message can not be longer than 130 characters.")
	}
	if chars(a.Alias) > 512 {
		bad("Alias can not be longer than 512 characters.")
	}
	if chars(a.Description) > 15000 {
		bad("Description can not be longer than 15000 characters.")
	}
	switch a.Priority {
	case "", "P1", "P2", "P3", "P4", "P5":
	default:
		bad("Priority should be one of [P1, P2, P3, P4, P5]")
	}
	if len(a.Tags) > 20 {
		bad("Tags can not be more than 20.")
	}
	for _, t := range a.Tags {
		if chars(t) > 50 {
			bad("Tag %q can not be longer than 50 characters.", t)
		}
	}
	if chars(a.Source) > 100 {
		bad("Source can not be longer than 100 characters.")
	}
	if chars(a.Entity) > 512 {
		bad("Entity can not be longer than 512 characters.")
	}
	if len(errs) > 0 {
		s.ogReply(w, http.StatusUnprocessableEntity, "message", strings.Join(errs, " "))
		return
	}
	body, _ := json.Marshal(a)
	e := Event{Provider: "opsgenie", Action: "create", DedupKey: a.Alias, Summary: *a.Message, Severity: a.Priority, Body: body}
	if e.DedupKey == "" {
		e.DedupKey = *a.Message // Opsgenie's default alias
	}
	if len(a.Details) > 0 {
		e.Details = map[string]any{}
		for k, v := range a.Details {
			e.Details[k] = v
		}
	}
	s.record(e)
	s.ogReply(w, http.StatusAccepted, "result", "Request will be processed")
}

func (s *Server) closeAlert(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id := r.PathValue("identifier")
	switch t := r.URL.Query().Get("identifierType"); t {
	case "alias":
	case "", "id", "tiny": // recorded so, since what they name is no alias
		id = cmp.Or(t, "id") + ":" + id
	default:
		s.ogReply(w, http.StatusUnprocessableEntity, "message", "identifierType should be one of [id, tiny, alias]")
		return
	}
	var c ogClose
	if r.ContentLength != 0 {
		if err := decodeStrict(r, &c); err != nil {
			s.ogReply(w, http.StatusUnprocessableEntity, "message", "Invalid request body: "+err.Error())
			return
		}
	}
	if chars(c.Note) > 25000 {
		s.ogReply(w, http.StatusUnprocessableEntity, "message", "Note can not be longer than 25000 characters.")
		return
	}
	body, _ := json.Marshal(c)
	s.record(Event{Provider: "opsgenie", Action: "close", DedupKey: id, Note: c.Note, Body: body})
	s.ogReply(w, http.StatusAccepted, "result", "Request will be processed")
}
