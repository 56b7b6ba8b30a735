package web

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// feed tells open pages that asks changed. A change made on this replica
// arrives from the Host's observer at once; one made on another replica is
// heard by reading the active asks every poll, only while a page is open
// here (an idle replica reads nothing).
type feed struct {
	host Host
	poll time.Duration
	log  *slog.Logger

	mu      sync.Mutex
	subs    map[chan struct{}]struct{}
	ver     uint64
	polling bool
	done    chan struct{}
	stopped bool
}

func newFeed(h Host, poll time.Duration, log *slog.Logger) *feed {
	return &feed{host: h, poll: poll, log: log, subs: map[chan struct{}]struct{}{}, done: make(chan struct{})}
}

// Changed implements engine.Observer; it never blocks.
func (f *feed) Changed(*waterfall.Record) { f.bump() }

func (f *feed) bump() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ver++
	for ch := range f.subs {
		select {
		case ch <- struct{}{}:
		default: // coalesced: the page re-reads whatever is newest
		}
	}
}

// subscribe returns a channel that receives (coalesced) when asks change,
// and starts the poll if it is the first.
func (f *feed) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	f.subs[ch] = struct{}{}
	if !f.polling && !f.stopped {
		f.polling = true
		go f.run()
	}
	f.mu.Unlock()
	return ch, func() {
		f.mu.Lock()
		delete(f.subs, ch)
		f.mu.Unlock()
	}
}

// run polls while anyone listens: a fingerprint of the active asks and
// their versions, compared with the last one.
func (f *feed) run() {
	t := time.NewTicker(f.poll)
	defer t.Stop()
	var last uint64
	for first := true; ; first = false {
		fp, err := f.fingerprint()
		if err != nil {
			f.log.Warn("reading active asks for live pages failed", "err", err)
		} else if !first && fp != last {
			f.bump()
		}
		if err == nil {
			last = fp
		}
		select {
		case <-f.done:
			return
		case <-t.C:
		}
		f.mu.Lock()
		if len(f.subs) == 0 {
			f.polling = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}

func (f *feed) fingerprint() (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := f.host.Active(ctx, scanAsks)
	if err != nil {
		return 0, err
	}
	h := fnv.New64a()
	for _, r := range recs {
		fmt.Fprintf(h, "%s@%d\n", r.CallID, r.Ask.Version)
	}
	return h.Sum64(), nil
}

func (f *feed) version() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ver
}

func (f *feed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		close(f.done)
	}
}

// heartbeat keeps an idle stream open through proxies that cut silent ones.
const heartbeat = 20 * time.Second

// events is the page's live stream (server-sent events): "changed" whenever
// asks change; the page then re-reads its own view, so the stream carries
// nothing a person may not see.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	sess, _ := s.current(r)
	if sess == nil {
		http.Error(w, "not signed in", http.StatusUnauthorized)
		return
	}
	rc := http.NewResponseController(w)
	// The stream lasts as long as the page: lift the server's read
	// deadline, which would otherwise end it (as the host API's waits do).
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	ch, stop := s.feed.subscribe()
	defer stop()
	fmt.Fprintf(w, "retry: 2000\nevent: hello\ndata: %d\n\n", s.feed.version())
	if rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	var last time.Time
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.feed.done:
			return
		case <-ch:
			// At most one a second: each makes the page read its view
			// again, and an agent asking and withdrawing in a loop must not
			// make every open page do so as fast.
			if wait := time.Until(last.Add(time.Second)); wait > 0 {
				select {
				case <-time.After(wait):
				case <-r.Context().Done():
					return
				}
			}
			last = time.Now()
			fmt.Fprintf(w, "event: changed\ndata: %s\n\n", strconv.FormatUint(s.feed.version(), 10))
		case <-beat.C:
			// The stream ends with the session (signed out, taken off the
			// list) on whichever replica that happened.
			if sess, _ := s.current(r); sess == nil {
				return
			}
			fmt.Fprint(w, ": beat\n\n")
		}
		if rc.Flush() != nil {
			return
		}
	}
}
