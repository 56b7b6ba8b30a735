package remote

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
	"time"

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
	// Reattach is how long Ask keeps re-attaching (same callId) while the
	// bot is unreachable or restarting; 0 means 2 minutes.
	Reattach time.Duration
}

// AskResult is POST /v1/asks's answer: the settlement, or pending.
type AskResult struct {
	Pending bool   `json:"pending,omitempty"`
	CallID  string `json:"callId,omitempty"`
	waterfall.Settlement
}

// Ask asks and waits. While the bot restarts or a replica drains, it
// re-sends the same request, which re-attaches to the open question rather
// than asking again. Closing ctx closes the request, which withdraws the
// question.
func (c *Client) Ask(ctx context.Context, req *waterfall.Request) (AskResult, error) {
	budget := c.Reattach
	if budget <= 0 {
		budget = 2 * time.Minute
	}
	deadline := time.Now().Add(budget)
	backoff := 200 * time.Millisecond
	for {
		var res AskResult
		err := c.do(ctx, http.MethodPost, "/v1/asks", req, &res)
		if err == nil {
			return res, nil
		}
		if !retryable(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// retryable reports a failure that re-sending the same callId can heal: the
// bot unreachable, or a replica shutting down.
func retryable(err error) bool {
	var e *waterfall.Error
	if errors.As(err, &e) {
		return e.Code == waterfall.CodeUnavailable
	}
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
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
	var st Status
	err := c.do(ctx, http.MethodDelete, "/v1/asks/"+url.PathEscape(callID), nil, &st)
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

// Projection returns the session's timed questions.
func (c *Client) Projection(ctx context.Context, sessionID string) (waterfall.Projection, error) {
	var p waterfall.Projection
	err := c.do(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID)+"/questions", nil, &p)
	return p, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
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
		return fmt.Errorf("askslack: %s %s: HTTP %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("askslack: %s %s: decoding response: %w", method, path, err)
		}
	}
	return nil
}
