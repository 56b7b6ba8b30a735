package loadbench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// RunRate is Run open-loop: asks start at a fixed rate (per second),
// whatever the answers' pace, so the fake's clicks arrive at that rate too
// (it clicks every post at once) and the click acks are measured under a
// known load rather than under as much as the bot can take. Asks are
// spread over 64 agent sessions; at most 8 seconds' worth are in flight.
func RunRate(ctx context.Context, opts LoadOptions, rate int) LoadResult {
	inFlight := max(64, rate*8)
	client := &http.Client{Transport: Transport(inFlight), Timeout: opts.Warmup + opts.Duration + opts.Drain + 30*time.Second}
	defer client.CloseIdleConnections()
	hard, cancel := context.WithTimeout(ctx, opts.Warmup+opts.Duration+opts.Drain)
	defer cancel()
	l := &loop{opts: opts, client: client, ctx: hard, stop: make(chan struct{})}
	var wg sync.WaitGroup
	slots := make(chan struct{}, inFlight)
	tick := time.NewTicker(time.Second / time.Duration(max(1, rate)))
	defer tick.Stop()
	var begin time.Time
	end := time.Now().Add(opts.Warmup + opts.Duration)
	for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
		<-tick.C
		if begin.IsZero() && time.Now().After(end.Add(-opts.Duration)) {
			begin = l.open()
		}
		select {
		case slots <- struct{}{}:
		default:
			l.count(fmt.Errorf("over %d asks in flight: the bot falls behind the rate", inFlight), 0)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			l.ask(n%64, n)
		}()
	}
	l.measuring.Store(false)
	window := time.Since(begin)
	if opts.Window != nil {
		opts.Window(false)
	}
	wg.Wait()
	return LoadResult{Answered: l.answered.Load(), Errors: l.errs.Load(), Window: window, Latency: l.lat, LastErr: l.lastErr}
}

// open starts the measured window.
func (l *loop) open() time.Time {
	if l.opts.Window != nil {
		l.opts.Window(true)
	}
	l.measuring.Store(true)
	return time.Now()
}

// ask sends one ask of agent i and counts it if it falls in the window.
func (l *loop) ask(i, n int) {
	agent := fmt.Sprintf("bench-%s-%d", l.opts.RunID, i)
	callID := fmt.Sprintf("%s-%d-%d", l.opts.RunID, i, n)
	measured := l.measuring.Load()
	start := time.Now()
	err := askOnce(l.ctx, l.client, l.opts.URL, callID, agent)
	done := time.Now()
	if err == nil && l.opts.Slack != nil {
		l.opts.Slack.Answered(callID, done)
	}
	if measured {
		l.count(err, done.Sub(start))
	}
}
