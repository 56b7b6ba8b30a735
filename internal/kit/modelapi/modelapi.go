// Package modelapi is a scripted stand-in for the model APIs the real agent
// CLIs talk to: Anthropic's Messages API (Claude Code, the Claude Agent SDK)
// and OpenAI's Responses API (Codex CLI). A test gives it a Script — the
// tool calls the "model" makes, one per turn, then a closing text — points
// the CLI at it (ANTHROPIC_BASE_URL, a Codex model provider's base_url) and
// reads back exactly what the agent handed the model as each tool's result.
//
// It speaks the streaming wire formats the CLIs use (server-sent events):
//   - Messages: https://docs.anthropic.com/en/api/messages-streaming
//   - Responses: https://platform.openai.com/docs/api-reference/responses-streaming
//
// Only requests that offer the scripted tools advance the script; the
// CLIs' side requests (titles, summaries, token counts) get a short text.
package modelapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Step is one turn of the scripted model: a tool call (Tool and Input), or
// a text reply (Text; Quote appends the latest tool result, so a test can
// read in the agent's transcript what the model was handed).
type Step struct {
	Tool  string
	Input any
	// InputFrom, when set, computes the tool call's input from the raw
	// request (a path the agent's system prompt names, say).
	InputFrom func(request []byte) any
	Text      string
	Quote     bool
	// Namespace, on the Responses API, is the namespace tool the call is
	// in: Codex sends an MCP server's tools as one namespace tool
	// (mcp__<server>), and a call names it beside the tool's own name
	// (0.171.0).
	Namespace string
	// Gate holds the answer back until it is closed: a model that thinks
	// while a test does something (answers in Slack) before the agent goes
	// on — in that order whatever the machine's speed.
	Gate <-chan struct{}
}

// hold waits for the step's Gate, or until the request is gone.
func (st Step) hold(r *http.Request) {
	if st.Gate == nil {
		return
	}
	select {
	case <-r.Context().Done():
	case <-st.Gate:
	}
}

// input is the call's input for the request body.
func (st Step) input(body []byte) any {
	if st.InputFrom != nil {
		return st.InputFrom(body)
	}
	return st.Input
}

// Call is a tool call by Tool with Input.
func Call(tool string, input any) Step { return Step{Tool: tool, Input: input} }

// Say is a text turn; the latest tool result is appended when quote is set.
func Say(text string, quote bool) Step { return Step{Text: text, Quote: quote} }

// Result is what the agent sent back to the model for one tool call.
type Result struct {
	Tool    string // the tool the call named
	CallID  string // the call's id (tool_use id, Responses call_id)
	Content string // the result's text
	IsError bool   // Messages: is_error
}

// Server is one scripted model. Safe for concurrent use.
type Server struct {
	script []Step

	mu       sync.Mutex
	results  []Result
	calls    map[string]string // call id → tool
	requests []json.RawMessage // main-loop request bodies, in order
	changed  chan struct{}

	srv *http.Server
	url string
	log []string
}

// Log lists every request the server answered, one line each (side
// requests too): what a test prints when an agent did not do what it
// expected.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

// New returns a server that will play script; Start it.
func New(script ...Step) *Server {
	return &Server{script: script, calls: map[string]string{}, changed: make(chan struct{})}
}

// Start listens on a free loopback port.
func (s *Server) Start() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.url = "http://" + l.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"input_tokens": 100})
	})
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.logf("%s %s (answered {})", r.Method, r.URL.Path)
		// Anything else the CLIs probe (telemetry, feature flags) is
		// answered empty rather than failing their start-up.
		writeJSON(w, map[string]any{})
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return nil
}

// URL is the server's base URL (no trailing slash).
func (s *Server) URL() string { return s.url }

// Close stops the server.
func (s *Server) Close() {
	if s.srv != nil {
		_ = s.srv.Close()
	}
}

// Results are the tool results the agent has sent so far, in order.
func (s *Server) Results() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Result(nil), s.results...)
}

// Requests counts the main-loop requests so far (one per model turn).
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// WaitResult waits until the agent has sent n tool results and returns the
// nth (1-based).
func (s *Server) WaitResult(ctx context.Context, n int) (Result, error) {
	for {
		s.mu.Lock()
		if len(s.results) >= n {
			r := s.results[n-1]
			s.mu.Unlock()
			return r, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return Result{}, fmt.Errorf("waiting for tool result %d (have %d): %w", n, len(s.Results()), ctx.Err())
		case <-ch:
		}
	}
}

// Bodies are the main-loop request bodies so far, in order.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.requests))
	for i, b := range s.requests {
		out[i] = b
	}
	return out
}

// WaitBody waits for a main-loop request whose body holds substr (as JSON
// writes it) and returns its index.
func (s *Server) WaitBody(ctx context.Context, substr string) (int, error) {
	for {
		s.mu.Lock()
		for i, b := range s.requests {
			if bytes.Contains(b, []byte(jsonText(substr))) {
				s.mu.Unlock()
				return i, nil
			}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("waiting for a model request holding %q: %w", substr, ctx.Err())
		case <-ch:
		}
	}
}

// Entered counts the requests in which substr entered the conversation:
// those holding it more often than the request before. A request carries
// the whole conversation, so text injected once shows in every request
// after it; one injection counts once however often the agent repeats it
// inside that request.
func (s *Server) Entered(substr string) int {
	n, prev := 0, 0
	for _, b := range s.Bodies() {
		c := bytes.Count(b, []byte(jsonText(substr)))
		if c > prev {
			n++
		}
		prev = c
	}
	return n
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// WaitRequests waits until the model has been asked n main-loop turns.
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		have, ch := len(s.requests), s.changed
		s.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for model turn %d (have %d): %w", n, have, ctx.Err())
		case <-ch:
		}
	}
}

// record notes a main-loop request and the tool results it carries that
// were not seen before; it returns the step to play (the number of earlier
// assistant turns in the conversation) and the latest result.
func (s *Server) record(body []byte, turn int, results []Result) (Step, Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, body)
	seen := map[string]bool{}
	for _, r := range s.results {
		seen[r.CallID] = true
	}
	var last Result
	for _, r := range results {
		r.Tool = s.calls[r.CallID]
		last = r
		if !seen[r.CallID] {
			s.results = append(s.results, r)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
	if turn >= len(s.script) {
		return Step{Text: "Done."}, last
	}
	return s.script[turn], last
}

func (s *Server) noteCall(id, tool string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[id] = tool
}

// offers reports whether a request is the agent's main loop: it offers
// tools. A side request the CLI makes without tools (a title, a summary)
// must not advance the script. The step's tool need not be listed: Claude
// Code lists some tools (ExitPlanMode, …) only as deferred names, and a
// call to one still reaches the tool.
func offers(tools []string, _ Step) bool { return len(tools) > 0 }

func (st Step) text(last Result) string {
	t := st.Text
	if st.Quote {
		t += " RESULT<<" + last.Content + ">>"
	}
	return t
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events and flushes after each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) send(event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, b)
	if e.f != nil {
		e.f.Flush()
	}
}

// contentText flattens a tool result's content (a string, or blocks of
// text) to its text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

// planFile finds the plan file Claude Code's plan mode tells the model to
// write ("create your plan at …/.claude/plans/<slug>.md").
var planFile = regexp.MustCompile(`/[^\s"'\\]+/\.claude/plans/[^\s"'\\]+\.md`)

// PlanFile is the plan file path named in a request, or "".
func PlanFile(request []byte) string { return string(planFile.Find(request)) }
