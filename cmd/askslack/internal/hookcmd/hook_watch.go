package hookcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/askslack/askslack/hostapi"
)

// hookSilence is how long a hook goes on without any reply from the bot
// before it gives up on it: a bot that accepts connections and never
// answers (hung, or a proxy holding the connection) must not hold the
// agent's own prompt for the whole wait. A blocking ask says nothing until
// a person answers, so beside it the hook long-polls the question
// (GET /v1/asks/{callId}?waitMs=), which a bot that is alive answers every
// hookSilence/3 at the latest.
const hookSilence = 45 * time.Second

// hookSilenceKnob shortens hookSilence for tests of the real binary; it is
// not documented and only ever shortens.
const hookSilenceKnob = "ASKSLACK_HOOK_SILENCE"

func hookSilenceFromEnv() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(hookSilenceKnob)); err == nil && d > 0 && d < hookSilence {
		return d
	}
	return hookSilence
}

// silentError is why a hook gave up on a bot that stopped answering.
type silentError struct {
	url   string
	after time.Duration
}

func (e *silentError) Error() string {
	return fmt.Sprintf("the askslack bot at %s stopped answering: no reply for %s", e.url, e.after)
}

// silenced returns the silentError ctx (from watchBot) ended with, if any.
func silenced(ctx context.Context) error {
	var se *silentError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return nil
}

// watchBot returns a context that ends, with a *silentError as its cause
// (see silenced), once the bot has sent no reply of any kind for
// h.silence; stop ends the watch. While it runs the question callID is
// long-polled, at most once a second: any answer of the API — the ask's
// status, NOT_FOUND before it is stored, an error — counts as a reply; a
// connection refused or reset, a proxy's 502/503/504 and a request that
// gets nothing back in time do not.
func (h *hookRun) watchBot(ctx context.Context, callID string) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := time.Now()
		for {
			left := time.Until(last.Add(h.silence))
			if left <= 0 {
				cancel(&silentError{url: h.client.BaseURL, after: h.silence})
				return
			}
			began := time.Now()
			rctx, stop := context.WithTimeout(ctx, left)
			_, err := h.client.Get(rctx, callID, min(left/2, h.silence/3))
			stop()
			if ctx.Err() != nil {
				return
			}
			if err == nil || !hostapi.Transient(err) && !errors.Is(err, context.DeadlineExceeded) {
				last = time.Now()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second - time.Since(began)):
			}
		}
	}()
	return ctx, func() { cancel(nil); <-done }
}
