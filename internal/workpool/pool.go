// Package workpool runs background work on a fixed number of workers,
// coalescing jobs per key. The message mirror and the Slack dispatcher each
// have one, so settling a click never waits behind message updates.
package workpool

import (
	"context"
	"runtime/debug"
	"sync"
)

// Pool runs background jobs on a fixed number of workers. Jobs with
// the same non-empty key coalesce: while one is waiting to run, another
// submission of that key is dropped, and a submission while it runs makes it
// run once more afterwards — so a burst of changes to one ask costs at most
// two message updates, and they never run concurrently.
type Pool struct {
	jobs chan job
	wg   sync.WaitGroup
	// onPanic is told of a job that panicked; the worker lives on.
	onPanic func(recovered any, stack []byte)

	mu      sync.Mutex
	pending map[string]bool // queued, not started
	running map[string]bool
	again   map[string]func(context.Context)
	ctx     context.Context
	cancel  context.CancelFunc
	stopped bool
	once    sync.Once
	// busy counts the jobs queued or running (a coalesced re-run
	// included); idle is closed when it drops to 0 (Idle).
	busy int
	idle chan struct{}
}

type job struct {
	key string
	fn  func(context.Context)
}

// New starts a pool of workers; onPanic (may be nil) is told of a job that
// panicked, and the worker lives on.
func New(workers int, onPanic func(recovered any, stack []byte)) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		jobs: make(chan job, 4096), pending: map[string]bool{}, running: map[string]bool{},
		again: map[string]func(context.Context){}, ctx: ctx, cancel: cancel, onPanic: onPanic,
	}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

// Submit queues fn under key ("" never coalesces). It never blocks: when
// the queue is full the job runs in the caller. After Stop it is dropped,
// and Submit reports false.
func (p *Pool) Submit(key string, fn func(context.Context)) bool {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return false
	}
	if key != "" {
		if p.pending[key] {
			p.mu.Unlock()
			return true
		}
		if p.running[key] {
			if _, ok := p.again[key]; !ok {
				p.busy++
			}
			p.again[key] = fn
			p.mu.Unlock()
			return true
		}
		p.pending[key] = true
	}
	p.busy++
	// Sending under the lock (it never blocks) keeps stop from closing the
	// channel between the stopped check and the send.
	select {
	case p.jobs <- job{key, fn}:
		p.mu.Unlock()
	default:
		p.mu.Unlock()
		// The queue is full: run it here rather than drop it.
		p.run(job{key, fn})
	}
	return true
}

func (p *Pool) work() {
	defer p.wg.Done()
	for j := range p.jobs {
		p.run(j)
	}
}

func (p *Pool) run(j job) {
	for {
		p.mu.Lock()
		if j.key != "" {
			delete(p.pending, j.key)
			p.running[j.key] = true
		}
		p.mu.Unlock()
		p.call(j.fn)
		p.mu.Lock()
		p.done()
		next, ok := p.again[j.key]
		delete(p.again, j.key)
		if !ok {
			delete(p.running, j.key)
		}
		p.mu.Unlock()
		if !ok {
			return
		}
		j.fn = next
	}
}

// call runs one job; a panic is reported, not fatal, so a job's bookkeeping
// (running, again) stays right and the worker goes on.
func (p *Pool) call(fn func(context.Context)) {
	defer func() {
		if r := recover(); r != nil && p.onPanic != nil {
			p.onPanic(r, debug.Stack())
		}
	}()
	fn(p.ctx)
}

// done counts a job finished; p.mu is held.
func (p *Pool) done() {
	p.busy--
	if p.busy == 0 && p.idle != nil {
		close(p.idle)
		p.idle = nil
	}
}

// Idle waits until no job is queued or running, or ctx ends; it reports
// whether the pool went idle. Jobs may be submitted again afterwards.
func (p *Pool) Idle(ctx context.Context) bool {
	p.mu.Lock()
	if p.busy == 0 {
		p.mu.Unlock()
		return true
	}
	if p.idle == nil {
		p.idle = make(chan struct{})
	}
	ch := p.idle
	p.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// Stop lets queued jobs finish until ctx ends, then cancels the rest.
// Safe twice.
func (p *Pool) Stop(ctx context.Context) {
	p.once.Do(func() {
		p.mu.Lock()
		p.stopped = true
		close(p.jobs)
		p.mu.Unlock()
		done := make(chan struct{})
		go func() { p.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			p.cancel()
			<-done
		}
		p.cancel()
	})
}
