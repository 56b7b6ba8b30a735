// Package pager pages the on-call about a question nobody answers: at an
// ask's escalation step (remind) it opens an incident with PagerDuty's
// Events API v2 or an Opsgenie alert, and it resolves (closes) the
// incident once the ask is answered, withdrawn or continued.
//
// A Pager is one provider's client: Open and Resolve, each retried on
// HTTP 429 and 5xx (and network errors) with jittered, doubling backoff, a
// bounded number of times; any other 4xx is final (ErrRejected) and
// logged. Escalation is what the bot wires: remind's Escalator (page once
// per ask, across replicas) and the Host's Observer (resolve once per
// paged ask, across replicas), through markers in the store.
package pager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askslack/askslack/internal/archetype"
	"github.com/askslack/askslack/internal/backoff"
	"github.com/askslack/askslack/waterfall"
)

// Pager opens and resolves incidents at one provider.
type Pager interface {
	// Provider names the provider ("pagerduty", "opsgenie").
	Provider() string
	// Open opens (triggers) inc, or adds to the open one with the same
	// DedupKey: opening twice is harmless.
	Open(ctx context.Context, inc Incident) error
	// Resolve resolves (closes) the incident opened with dedupKey; note
	// says why, where the provider keeps one.
	Resolve(ctx context.Context, dedupKey, note string) error
}

// Incident is what the on-call is paged about: one ask nobody answered.
type Incident struct {
	// DedupKey identifies the incident at the provider (PagerDuty's
	// dedup_key, Opsgenie's alias): DedupKey(callID).
	DedupKey string
	// Summary is the question; each provider cuts it to its own limit.
	Summary string
	// Description is the longer text (every question, the links), where
	// the provider shows one (Opsgenie); cut to its limit.
	Description string
	Severity    Severity
	// Source is where the incident comes from ("askslack"), Component the
	// agent, Group its session, Class the ask's kind.
	Source, Component, Group, Class string
	// Links are shown with the incident, the answer page last (PagerDuty's
	// client_url is the last).
	Links []Link
	// Details are shown with the incident: agent, caller, session, …
	Details map[string]string
}

// Link is a link shown with an incident.
type Link struct {
	Href, Text string
}

// Severity is PagerDuty's severity of an incident; Opsgenie's priority
// follows from it (Priority).
type Severity string

// The severities PagerDuty takes.
const (
	Critical Severity = "critical"
	Error    Severity = "error"
	Warning  Severity = "warning"
	Info     Severity = "info"
)

// Valid reports whether s is one of PagerDuty's severities.
func (s Severity) Valid() bool {
	switch s {
	case Critical, Error, Warning, Info:
		return true
	}
	return false
}

// Priority is Opsgenie's priority for s: critical P1, error P2, warning
// P3, info P4.
func (s Severity) Priority() string {
	switch s {
	case Critical:
		return "P1"
	case Error:
		return "P2"
	case Info:
		return "P4"
	}
	return "P3"
}

// SeverityOf is the severity of an ask of kind (waterfall.Request.Kind): a
// tool permission holds the agent at a command it wants to run (error), a
// plan waits for its review (warning), a question for its answer (info).
func SeverityOf(kind string) Severity {
	switch kind {
	case waterfall.KindPermission:
		return Error
	case waterfall.KindPlan:
		return Warning
	}
	return Info
}

// DedupKey is the incident key of the ask callID: "askslack/<callId>"
// (a callId is at most 128 characters, well within PagerDuty's 255).
func DedupKey(callID string) string { return "askslack/" + callID }

// ErrRejected is a request the provider refused for good (HTTP 4xx other
// than 429: a bad key, an invalid event): retrying cannot help.
var ErrRejected = errors.New("pager: request rejected")

// StatusError is a provider's answer other than success.
type StatusError struct {
	Status int
	// Body is the start of the provider's answer (it says what was wrong).
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body)
}

// Is makes a final status ErrRejected.
func (e *StatusError) Is(target error) bool { return target == ErrRejected && final(e.Status) }

// final reports whether status is a refusal retrying cannot change.
func final(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusTooManyRequests
}

// Metrics counts what the pagers did, by provider, action ("open",
// "resolve") and result ("ok", "failed": retries ran out, "rejected": a
// final 4xx).
type Metrics interface {
	Paged(provider, action, result string)
}

type noMetrics struct{}

func (noMetrics) Paged(string, string, string) {}

// Options configure a PagerDuty or Opsgenie client.
type Options struct {
	// URL is the API's origin (scheme and host, no path); "" is the
	// provider's (PagerDutyURL, OpsgenieURL). Tests point it at a fake.
	URL string
	// HTTP is the client; nil is one with a 10s timeout per request.
	HTTP *http.Client
	// Attempts bounds the tries of one call (default 4).
	Attempts int
	// Backoff is the first retry's ceiling (default 1s), doubling up to
	// MaxBackoff (default 30s), each wait drawn at random below it
	// (internal/backoff). A Retry-After, when longer, is waited instead
	// (capped at MaxBackoff).
	Backoff, MaxBackoff time.Duration
	Logger              *slog.Logger
	// Metrics counts calls; nil counts nothing.
	Metrics Metrics
}

// requestTimeout bounds one HTTP request of the default client.
const requestTimeout = 10 * time.Second

// maxBody is how much of an answer is read.
const maxBody = 4 << 10

// sender is what both providers share: one JSON POST, retried.
type sender struct {
	archetype.Archetype
	provider string
	base     string
	opts     Options
}

func newSender(provider, base string, opts Options) sender {
	if opts.URL != "" {
		base = strings.TrimSuffix(opts.URL, "/")
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Timeout: requestTimeout}
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.Metrics == nil {
		opts.Metrics = noMetrics{}
	}
	return sender{Archetype: archetype.Of(opts.Logger, nil), provider: provider, base: base, opts: opts}
}

// post sends body to path (under the base URL) with header, retrying
// what may pass later; action and key are for the metrics and the logs.
func (s sender) post(ctx context.Context, action, key, path string, header http.Header, body []byte) error {
	attempts, retry := 0, backoff.Policy{Attempts: s.opts.Attempts, Base: s.opts.Backoff, Max: max(s.opts.MaxBackoff, s.opts.Backoff)}
	err := retry.Retry(ctx, func(ctx context.Context) (time.Duration, error) {
		attempts++
		status, answer, retryAfter, err := s.once(ctx, path, header, body)
		switch {
		case err == nil && status/100 == 2:
			return 0, nil
		case err == nil:
			err = &StatusError{Status: status, Body: answer}
		}
		if final(status) {
			return 0, backoff.Final(err)
		}
		s.Logger.Debug("a paging attempt failed", "provider", s.provider, "action", action, "dedupKey", key, "attempt", attempts, "err", err)
		return retryAfter, err
	})
	switch {
	case err == nil:
		s.opts.Metrics.Paged(s.provider, action, "ok")
		return nil
	case errors.Is(err, ErrRejected):
		s.Logger.Error("the pager refused a request; not retrying it", "provider", s.provider, "action", action, "dedupKey", key, "err", err)
		s.opts.Metrics.Paged(s.provider, action, "rejected")
		return err
	}
	s.Logger.Warn("paging failed; giving up after its retries", "provider", s.provider, "action", action, "dedupKey", key, "attempts", attempts, "err", err)
	s.opts.Metrics.Paged(s.provider, action, "failed")
	return fmt.Errorf("%s %s after %d attempts: %w", s.provider, action, attempts, err)
}

// once is one HTTP request: the status, the start of the answer and a
// Retry-After, or a transport error.
func (s sender) once(ctx context.Context, path string, header http.Header, body []byte) (int, string, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, "", 0, err
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "askslack")
	resp, err := s.opts.HTTP.Do(req)
	if err != nil {
		return 0, "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // reuse the connection
	return resp.StatusCode, strings.TrimSpace(string(b)), backoff.RetryAfter(resp.Header, time.Now()), nil
}

// Cut shortens s to at most n characters (runes), ending it with "…" when
// cut.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
