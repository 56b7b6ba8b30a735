package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// askBody is one single-select question with two options: askslack renders
// it as two buttons, and a click on the first answers it.
func askBody(callID, agent string) []byte {
	return []byte(`{"callId":"` + callID + `","agent":{"id":"` + agent + `","sessionId":"` + agent +
		`"},"questions":[{"id":"q1","header":"Deploy","question":"Deploy build ` + callID +
		` to production now?","options":[{"label":"Yes","description":"ship it"},{"label":"No","description":"hold"}]}]}`)
}

// LoadOptions configure one closed-loop run.
type LoadOptions struct {
	URL      string // the bot, http://host:port
	RunID    string // makes call ids unique across runs on one store
	Agents   int
	Warmup   time.Duration // load before the measured window
	Duration time.Duration // the measured window
	// MaxAsks bounds the asks sent in the whole run.
	MaxAsks int64
	// Drain bounds the wait for asks in flight after the window, which
	// are answered (not abandoned) so the next run starts clean.
	Drain time.Duration
	// Window is called when the measured window begins (true) and ends
	// (false), to snapshot counters.
	Window func(begin bool)
	Slack  *Slack
	// Stagger spreads the agents' first asks evenly over this span (agent
	// i waits i×Stagger/Agents), so that with a click delay they do not
	// ask and get answered in lockstep, one wave per delay. Count it in
	// Warmup.
	Stagger time.Duration
}

// LoadResult is what the agents saw inside the window.
type LoadResult struct {
	Answered int64
	Errors   int64
	Window   time.Duration
	Latency  Samples // POST /v1/asks → answer
	LastErr  error
}

// Run drives opts.Agents agents, each posting an ask and waiting for its
// answer in a loop, and measures the window after the warmup.
func Run(ctx context.Context, opts LoadOptions) LoadResult {
	client := &http.Client{Transport: Transport(opts.Agents), Timeout: opts.Warmup + opts.Duration + opts.Drain + 30*time.Second}
	defer client.CloseIdleConnections()
	hard, cancel := context.WithTimeout(ctx, opts.Warmup+opts.Duration+opts.Drain)
	defer cancel()
	l := &loop{opts: opts, client: client, ctx: hard, stop: make(chan struct{})}
	var wg sync.WaitGroup
	for i := range opts.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if opts.Stagger > 0 {
				sleep(hard, opts.Stagger*time.Duration(i)/time.Duration(opts.Agents))
			}
			l.agent(i)
		}()
	}
	sleep(ctx, opts.Warmup)
	if opts.Window != nil {
		opts.Window(true)
	}
	l.measuring.Store(true)
	begin := time.Now()
	sleep(ctx, opts.Duration)
	l.measuring.Store(false)
	window := time.Since(begin)
	if opts.Window != nil {
		opts.Window(false)
	}
	close(l.stop)
	wg.Wait()
	return LoadResult{Answered: l.answered.Load(), Errors: l.errs.Load(), Window: window, Latency: l.lat, LastErr: l.lastErr}
}

// loop is one closed-loop run: its agents and what they counted.
type loop struct {
	opts      LoadOptions
	client    *http.Client
	ctx       context.Context // ends at warmup+duration+drain
	stop      chan struct{}
	measuring atomic.Bool
	sent      atomic.Int64
	answered  atomic.Int64
	errs      atomic.Int64
	mu        sync.Mutex
	lat       Samples
	lastErr   error
}

// agent asks, waits for the answer and asks again until the run stops,
// counting only what falls in the measured window.
func (l *loop) agent(i int) {
	agent := fmt.Sprintf("bench-%s-%d", l.opts.RunID, i)
	for n := 0; ; n++ {
		select {
		case <-l.stop:
			return
		default:
		}
		if l.sent.Add(1) > l.opts.MaxAsks {
			return
		}
		callID := fmt.Sprintf("%s-%d-%d", l.opts.RunID, i, n)
		start := time.Now()
		err := askOnce(l.ctx, l.client, l.opts.URL, callID, agent)
		done := time.Now()
		if err == nil && l.opts.Slack != nil {
			l.opts.Slack.Answered(callID, done)
		}
		if l.measuring.Load() {
			l.count(err, done.Sub(start))
		}
		if err != nil && l.ctx.Err() != nil {
			return
		}
		if !l.measuring.Load() && l.ctx.Err() != nil {
			return
		}
	}
}

// count records one ask of the measured window.
func (l *loop) count(err error, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.errs.Add(1)
		l.lastErr = err
		return
	}
	l.answered.Add(1)
	l.lat.Add(took)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// askOnce posts one blocking ask and checks that it was answered.
func askOnce(ctx context.Context, client *http.Client, base, callID, agent string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/asks", bytes.NewReader(askBody(callID, agent)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /v1/asks: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	var out struct {
		Answers []json.RawMessage `json:"answers"`
		Pending bool              `json:"pending"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("POST /v1/asks: %w", err)
	}
	if len(out.Answers) == 0 {
		return errors.New("POST /v1/asks: no answer in " + string(body))
	}
	return nil
}

// OpenAsks holds n blocking asks open against base (the fake must not
// click), started in batches so the bot's listen backlog is not flooded,
// and returns once the fake has seen n posts or ctx ends. cancel withdraws
// them by closing the requests.
func OpenAsks(ctx context.Context, base, runID string, n int, s *Slack) (cancel func(), err error) {
	actx, stop := context.WithCancel(ctx)
	client := &http.Client{Transport: Transport(n)}
	var wg sync.WaitGroup
	cancel = func() {
		stop()
		wg.Wait()
		client.CloseIdleConnections()
	}
	posts0 := s.Counters().Posts
	const batch = 250
	for i := 0; i < n; i++ {
		if i%batch == 0 && i > 0 {
			// Let the bot post what it has before opening more.
			if err := waitPosts(ctx, s, posts0+int64(i-batch), 60*time.Second); err != nil {
				cancel()
				return nil, err
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = askOnce(actx, client, base, fmt.Sprintf("%s-open-%d", runID, i), fmt.Sprintf("bench-%s-open-%d", runID, i%64))
		}()
	}
	if err := waitPosts(ctx, s, posts0+int64(n), 120*time.Second); err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

func waitPosts(ctx context.Context, s *Slack, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for s.Counters().Posts < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d questions posted within %s", s.Counters().Posts, want, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond): // the fake counts; polling a counter is cheap
		}
	}
	return nil
}
