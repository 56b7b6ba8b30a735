package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/waterfall"
)

// Client calls a running askslack's host API.
type Client struct {
	// BaseURL is where the bot listens, e.g. "http://127.0.0.1:8080".
	BaseURL string
	// Token is the bearer token (ASKSLACK_TOKEN); empty for loopback.
	Token string
	// HTTP is the client used; nil means one without a timeout (asks block).
	HTTP *http.Client
	// Reattach is how long Ask keeps re-attaching (same callId) through an
	// unbroken run of transient failures — the bot unreachable or
	// restarting, a dropped connection, 502/503/504 from a proxy; 0 means 2
	// minutes. An attempt that stayed connected for a while (a long wait cut
	// by a proxy's idle timeout) starts a fresh run.
	Reattach time.Duration
}

// Backoff between re-attaches: from reattachMin, doubling, at most
// reattachMax. An attempt that lasted longer than reattachMax was attached.
const (
	reattachMin = 200 * time.Millisecond
	reattachMax = 5 * time.Second
)

// AskResult is POST /v1/asks's answer: the settlement, or pending.
type AskResult struct {
	Pending bool   `json:"pending,omitempty"`
	CallID  string `json:"callId,omitempty"`
	waterfall.Settlement
}

// Ask asks and waits. On a transient failure (see Reattach) it re-sends
// the same request, which re-attaches to the open question rather than
// asking again. Closing ctx closes the request; that does not withdraw the
// question at once: the bot keeps it open for its re-attach grace
// (ASKSLACK_REATTACH_GRACE) and withdraws it only if nobody re-attaches.
// Call Abort to withdraw it now.
func (c *Client) Ask(ctx context.Context, req *waterfall.Request) (AskResult, error) {
	var res AskResult
	err := c.reattach(ctx, func() error {
		res = AskResult{}
		return c.do(ctx, http.MethodPost, "/v1/asks", req, &res)
	})
	return res, err
}

// Open asks without waiting (Prefer: respond-async): the bot answers 202
// at once with the ask's status, and the question lives until answered,
// withdrawn or retention. Read the outcome with Get or WaitChange.
func (c *Client) Open(ctx context.Context, req *waterfall.Request) (Status, error) {
	var st Status
	err := c.reattach(ctx, func() error {
		return c.doWith(ctx, http.MethodPost, "/v1/asks", map[string]string{"Prefer": "respond-async"}, req, &st)
	})
	return st, err
}

// reattach runs attempt until it succeeds, fails for good, ctx ends, or a
// run of transient failures outlasts the Reattach budget.
func (c *Client) reattach(ctx context.Context, attempt func() error) error {
	budget := c.Reattach
	if budget <= 0 {
		budget = 2 * time.Minute
	}
	backoff := reattachMin
	var failingSince time.Time
	for {
		began := time.Now()
		err := attempt()
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return err
		}
		if time.Since(began) > reattachMax {
			// It was attached for a while: a new run of failures.
			failingSince, backoff = time.Time{}, reattachMin
		}
		if failingSince.IsZero() {
			failingSince = began
		}
		if time.Since(failingSince) > budget {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, reattachMax)
	}
}

// HTTPError is a response without the API's error body (a proxy's page).
// Like every error of this package its text names no program: the edge
// that prints it (askslack's main) says "askslack:" once.
type HTTPError struct {
	Method, Path string
	StatusCode   int
	Body         string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.StatusCode, e.Body)
}

// Transient reports a failure that re-sending the same callId can heal: the
// bot unreachable or restarting, a connection reset or cut short, a replica
// shutting down (UNAVAILABLE), or 502/503/504 from whatever sits in front.
// NO_PROVIDER and every other answer of the API are final.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *waterfall.Error
	if errors.As(err, &e) {
		return e.Code == waterfall.CodeUnavailable
	}
	var he *HTTPError
	if errors.As(err, &he) {
		switch he.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// Get returns the ask's status; wait > 0 long-polls for a change.
func (c *Client) Get(ctx context.Context, callID string, wait time.Duration) (Status, error) {
	var st Status
	p := "/v1/asks/" + url.PathEscape(callID)
	if wait > 0 {
		p += "?waitMs=" + strconv.FormatInt(wait.Milliseconds(), 10)
	}
	err := c.do(ctx, http.MethodGet, p, nil, &st)
	return st, err
}

// WaitChange long-polls the ask's status until its version differs from
// version (the one the caller has seen) or wait passes, in any state.
func (c *Client) WaitChange(ctx context.Context, callID string, version int64, wait time.Duration) (Status, error) {
	var st Status
	p := "/v1/asks/" + url.PathEscape(callID) + "?waitMs=" + strconv.FormatInt(max(wait.Milliseconds(), 1), 10) +
		"&version=" + strconv.FormatInt(version, 10)
	err := c.do(ctx, http.MethodGet, p, nil, &st)
	return st, err
}

// Abort withdraws the ask.
func (c *Client) Abort(ctx context.Context, callID string) (Status, error) {
	return c.AbortBecause(ctx, callID, "")
}

// AbortBecause withdraws the ask giving a reason (ReasonElsewhere, or ""
// for a plain withdrawal), which the message shows.
func (c *Client) AbortBecause(ctx context.Context, callID, reason string) (Status, error) {
	var st Status
	p := "/v1/asks/" + url.PathEscape(callID)
	if reason != "" {
		p += "?reason=" + url.QueryEscape(reason)
	}
	err := c.do(ctx, http.MethodDelete, p, nil, &st)
	return st, err
}

// Answer answers an ask from outside Slack.
func (c *Client) Answer(ctx context.Context, callID string, body AnswerBody) (AnswerResult, error) {
	var res AnswerResult
	err := c.do(ctx, http.MethodPost, "/v1/asks/"+url.PathEscape(callID)+"/answer", body, &res)
	return res, err
}

// Messages returns the session's steered messages waiting for admission.
func (c *Client) Messages(ctx context.Context, sessionID string, wait time.Duration) ([]waterfall.SteeredMessage, error) {
	var m Messages
	p := "/v1/sessions/" + url.PathEscape(sessionID) + "/messages"
	if wait > 0 {
		p += "?waitMs=" + strconv.FormatInt(wait.Milliseconds(), 10)
	}
	err := c.do(ctx, http.MethodGet, p, nil, &m)
	return m.Messages, err
}

// Ack admits a steered message.
func (c *Client) Ack(ctx context.Context, sessionID, messageID string) error {
	return c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/messages/"+url.PathEscape(messageID)+"/ack", nil, nil)
}

// Admit acknowledges a steered message like Ack and reports whether this
// call admitted it (first) rather than an earlier one: a deliverer racing
// another passes the message to its agent only when first. A bot of a
// release before the ack said first (8fcf7fb and older, met during a
// rolling update) leaves it out; that counts as first, since the message is
// consumed either way: a racing deliverer may then pass it on twice (at
// least once, as those releases did), never zero times.
func (c *Client) Admit(ctx context.Context, sessionID, messageID string) (first bool, err error) {
	var res struct {
		First *bool `json:"first"`
	}
	err = c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/messages/"+url.PathEscape(messageID)+"/ack", nil, &res)
	if err != nil {
		return false, err
	}
	return res.First == nil || *res.First, nil
}

// Continue tells the bot the agent went on without the answer before the
// window closed: the question turns continued, and a later answer is queued
// for the agent's session.
func (c *Client) Continue(ctx context.Context, callID string) (Status, error) {
	var st Status
	err := c.do(ctx, http.MethodPost, "/v1/asks/"+url.PathEscape(callID)+"/continue", nil, &st)
	return st, err
}

// Projection returns the session's timed questions.
func (c *Client) Projection(ctx context.Context, sessionID string) (waterfall.Projection, error) {
	var p waterfall.Projection
	err := c.do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID)+"/questions", nil, &p)
	return p, err
}

// Audit reads one page of the audit trail (an operator's token): entries
// oldest first and the cursor of the next page ("" when there is no more).
func (c *Client) Audit(ctx context.Context, q asktype.AuditQuery) (AuditPage, error) {
	v := url.Values{}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.CallID != "" {
		v.Set("callId", q.CallID)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	p := "/v1/audit"
	if len(v) > 0 {
		p += "?" + v.Encode()
	}
	var page AuditPage
	err := c.do(ctx, http.MethodGet, p, nil, &page)
	return page, err
}

// AuditAll calls fn with each entry matching q, page after page, until the
// trail ends, fn returns an error, or ctx ends.
func (c *Client) AuditAll(ctx context.Context, q asktype.AuditQuery, fn func(*asktype.AuditEntry) error) error {
	for {
		page, err := c.Audit(ctx, q)
		if err != nil {
			return err
		}
		for i := range page.Events {
			if err := fn(&page.Events[i]); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		q.Cursor = page.Next
	}
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.doWith(ctx, method, path, nil, in, out)
}

func (c *Client) doWith(ctx context.Context, method, path string, hdr map[string]string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
			return &waterfall.Error{Code: eb.Error.Code, Message: eb.Error.Message}
		}
		return &HTTPError{Method: method, Path: path, StatusCode: resp.StatusCode, Body: string(bytes.TrimSpace(data))}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decoding response: %w", method, path, err)
		}
	}
	return nil
}
