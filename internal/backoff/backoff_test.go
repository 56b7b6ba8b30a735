package backoff_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/askslack/askslack/internal/backoff"
)

// lowest and highest are random sources at either end of their range.
func lowest(time.Duration) time.Duration    { return 0 }
func highest(d time.Duration) time.Duration { return d }

// The waits double from Base up to Max, each drawn between half of Base
// and its ceiling; a Retry-After longer than the draw is waited instead,
// never past Max.
func TestDelayBoundsAndJitterRange(t *testing.T) {
	t.Parallel()
	p := backoff.Policy{Base: time.Second, Max: 10 * time.Second}
	for _, c := range []struct {
		n          int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, 0, 500 * time.Millisecond, time.Second},
		{2, 0, 500 * time.Millisecond, 2 * time.Second},
		{3, 0, 500 * time.Millisecond, 4 * time.Second},
		{4, 0, 500 * time.Millisecond, 8 * time.Second},
		{5, 0, 500 * time.Millisecond, 10 * time.Second}, // capped
		{1000, 0, 500 * time.Millisecond, 10 * time.Second},
		{0, 0, 500 * time.Millisecond, time.Second}, // no attempt yet: as the first
		{1, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		{3, 3 * time.Second, 3 * time.Second, 4 * time.Second}, // the draw, when longer
		{1, time.Hour, 10 * time.Second, 10 * time.Second},     // never past Max
	} {
		p.Rand = lowest
		lo := p.Delay(c.n, c.retryAfter)
		p.Rand = highest
		hi := p.Delay(c.n, c.retryAfter)
		if lo != c.lo || hi != c.hi {
			t.Errorf("Delay(%d, %s) from %s to %s; want %s to %s", c.n, c.retryAfter, lo, hi, c.lo, c.hi)
		}
	}
	// The default source stays in the range and spreads.
	p.Rand = nil
	seen := map[time.Duration]bool{}
	for range 1000 {
		d := p.Delay(4, 0)
		if d < 500*time.Millisecond || d > 8*time.Second {
			t.Fatalf("Delay(4) = %s: outside [500ms, 8s]", d)
		}
		seen[d] = true
	}
	if len(seen) < 900 {
		t.Errorf("1000 draws gave %d different waits: no jitter", len(seen))
	}
	// What the draw is asked for: the span between the floor and the ceiling.
	var asked time.Duration
	p.Rand = func(d time.Duration) time.Duration { asked = d; return 0 }
	p.Delay(3, 0)
	if asked != 3500*time.Millisecond {
		t.Errorf("the draw's span for retry 3 is %s; want 4s - 500ms", asked)
	}
}

// Retry stops at success, at a Final error (its mark taken off), or after
// Attempts calls, and waits between the calls.
func TestRetryStops(t *testing.T) {
	t.Parallel()
	errDown, errBad := errors.New("down"), errors.New("bad request")
	p := backoff.Policy{Attempts: 3, Base: time.Microsecond, Max: time.Microsecond}
	for _, c := range []struct {
		name  string
		errs  []error
		want  error
		calls int
	}{
		{"success at once", []error{nil}, nil, 1},
		{"success on the third call", []error{errDown, errDown, nil}, nil, 3},
		{"attempts run out", []error{errDown, errDown, errDown, nil}, errDown, 3},
		{"a final error", []error{errDown, backoff.Final(errBad), nil}, errBad, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := p.Retry(context.Background(), func(context.Context) (time.Duration, error) {
				calls++
				return 0, c.errs[calls-1]
			})
			if err != c.want || calls != c.calls {
				t.Fatalf("Retry = %v after %d calls; want %v after %d", err, calls, c.want, c.calls)
			}
		})
	}
	if err := (backoff.Policy{}).Retry(context.Background(), func(context.Context) (time.Duration, error) { return 0, errDown }); err != errDown {
		t.Fatalf("a zero policy calls once: %v", err)
	}
}

// now is a timer that fires at once and records what it was asked for.
func now(waits *[]time.Duration) func(time.Duration) <-chan time.Time {
	return func(d time.Duration) <-chan time.Time {
		*waits = append(*waits, d)
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
}

// Retry waits Delay between calls: the backoff's draw, or the server's
// Retry-After when longer.
func TestRetryWaitsTheDelayAndHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	p := backoff.Policy{Attempts: 5, Base: time.Second, Max: time.Minute, Rand: highest, After: now(&waits)}
	asked := []time.Duration{0, 30 * time.Second, time.Second, time.Hour, 0}
	calls := 0
	err := p.Retry(context.Background(), func(context.Context) (time.Duration, error) {
		calls++
		if calls == len(asked) {
			return 0, nil
		}
		return asked[calls-1], errors.New("429")
	})
	want := []time.Duration{time.Second, 30 * time.Second, 4 * time.Second, time.Minute}
	if err != nil || calls != 5 || !slices.Equal(waits, want) {
		t.Fatalf("Retry = %v after %d calls, waiting %v; want success after 5, waiting %v", err, calls, waits, want)
	}
}

// ctx ending during a wait ends Retry with the last error and ctx's.
func TestRetryStopsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	errDown := errors.New("down")
	p := backoff.Policy{Attempts: 10, Base: time.Hour, Max: time.Hour}
	calls := 0
	err := p.Retry(ctx, func(context.Context) (time.Duration, error) {
		calls++
		cancel() // the wait that follows is cut short
		return 0, errDown
	})
	if !errors.Is(err, errDown) || !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("Retry = %v after %d calls; want the last error and ctx's after one", err, calls)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		" 3 ":                           3 * time.Second,
		"-5":                            0,
		"soon":                          0,
		"Mon, 07 Dec 2026 12:00:30 GMT": 30 * time.Second,
		"Mon, 07 Dec 2026 11:00:00 GMT": 0, // past
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := backoff.RetryAfter(h, now); got != want {
			t.Errorf("Retry-After %q = %s; want %s", v, got, want)
		}
	}
}
