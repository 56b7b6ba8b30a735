// Package backoff is the one retry policy of the calls that may pass later
// (Slack's Web API, the pagers, the webhook receivers): exponential, with
// jitter, bounded, honouring a server's Retry-After. Each caller keeps what
// is its own: which errors are worth another try (Final marks the rest),
// where its Retry-After comes from, and, for the webhooks, the attempts
// kept in the store (Delay takes the count: a wait needs no state here).
package backoff

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy is how often and how long to retry. The wait before retry n is
// drawn at random between half of Base and Base·2^(n-1), capped at Max
// (full jitter above a floor, https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/);
// a Retry-After longer than the draw is waited instead, up to Max.
type Policy struct {
	Attempts  int           // Retry's calls at most (at least one)
	Base, Max time.Duration // the first wait's ceiling; every wait's
	// Rand draws uniformly from [0, d], After is Retry's timer; nil are
	// math/rand and time.After. Tests make them deterministic.
	Rand  func(d time.Duration) time.Duration
	After func(d time.Duration) <-chan time.Time
}

// Delay is the wait before retry n (1: the first) when the server asked
// for retryAfter (0: it said nothing).
func (p Policy) Delay(n int, retryAfter time.Duration) time.Duration {
	ceiling := p.Base
	for i := 1; i < n && ceiling < p.Max; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, p.Max)
	floor, draw := min(p.Base/2, ceiling), p.Rand
	if draw == nil {
		draw = func(d time.Duration) time.Duration { return rand.N(d + 1) }
	}
	return min(max(floor+draw(ceiling-floor), retryAfter), p.Max)
}

// Retry calls call until it returns nil or an error marked Final, has been
// called Attempts times, or ctx ends, waiting Delay between calls. call
// returns the server's Retry-After with its error (0: none). The error is
// call's last (unmarked), joined with ctx's when ctx ended a wait.
func (p Policy) Retry(ctx context.Context, call func(ctx context.Context) (retryAfter time.Duration, err error)) error {
	wait := p.After
	if wait == nil {
		wait = time.After
	}
	for n := 1; ; n++ {
		after, err := call(ctx)
		var f *final
		if errors.As(err, &f) {
			return f.error
		} else if err == nil || n >= p.Attempts {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-wait(p.Delay(n, after)):
		}
	}
}

type final struct{ error }

func (f *final) Unwrap() error { return f.error }

// Final marks err as one retrying cannot change: Retry returns it at once.
func Final(err error) error { return &final{err} }

// RetryAfter reads an HTTP Retry-After header at now (seconds or a date);
// 0 when absent, malformed or past.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	t, _ := http.ParseTime(v) // the zero time when not a date: past
	return max(t.Sub(now), 0)
}
