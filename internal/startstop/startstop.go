// Package startstop gives every long-running part of the bot one shape
// (river's BaseStartStop is the model): Start runs it in the background and
// returns; a second Start is an error; Start after Stop does nothing; Stop
// ends the run within ctx's budget, reporting ctx's error when that ran out,
// and is safe twice and before Start.
//
// A service embeds a Base and writes its Start and Stop around Launch and
// Halt, keeping only what is its own: what to prepare before it runs (a
// subscription that may fail), what to run, and what to let go of after.
package startstop

import (
	"context"
	"errors"
	"sync"
)

// ErrStartedTwice is a second Start of a service that is running.
var ErrStartedTwice = errors.New("started twice")

// Base is the lifecycle of one service. Its zero value is ready.
type Base struct {
	mu      sync.Mutex
	running bool
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// Launch runs run in the background with a context that keeps ctx's
// values but ends only on Halt. prepare, when not nil, runs first, in the
// caller's goroutine and under ctx: when it fails nothing runs and Launch
// may be called again. Launch after Halt does nothing; a second Launch
// while running is ErrStartedTwice (prepare is not called).
func (b *Base) Launch(ctx context.Context, prepare func(ctx context.Context) error, run func(ctx context.Context)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil
	}
	if b.running {
		return ErrStartedTwice
	}
	if prepare != nil {
		if err := prepare(ctx); err != nil {
			return err
		}
	}
	b.running = true
	var rctx context.Context
	rctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
	b.done = make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		run(rctx)
	}(b.done)
	return nil
}

// Halt ends what Launch started and waits for it until ctx ends, then,
// on the first Halt only, calls release (when not nil) to let go of the
// rest of what the service holds (its workers, its claims): so a second
// Stop is a no-op, and release runs even when the run outlived ctx. It
// returns ctx's error when the run did not end in time.
//
//	func (m *Mirror) Stop(ctx context.Context) error {
//		return m.life.Halt(ctx, func() { m.pool.Stop(ctx) })
//	}
func (b *Base) Halt(ctx context.Context, release func()) error {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return nil
	}
	b.stopped = true
	cancel, done := b.cancel, b.done
	b.mu.Unlock()
	var err error
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if release != nil {
		release()
	}
	return err
}

// Stopped reports whether Halt was called.
func (b *Base) Stopped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}
