package hostapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// Parking a blocking ask. A person may take hours to answer; meanwhile
// net/http holds the call's connection with a goroutine serving it (its
// stack grown by everything the request did), another reading behind it,
// and 10 kB of buffers — about half of what an open ask costs. So a
// blocking ask still waiting after Options.ParkAfter takes its connection
// over (Hijack): a fresh goroutine re-attaches and waits for the outcome
// on a shallow stack; one loop for all parked asks looks every few seconds
// whether their callers hung up (a non-blocking peek at each socket, so no
// goroutine per ask); and the answer is written straight to the
// connection, which then closes (the response says Connection: close).
// Everything else is as before: a caller that hangs up starts the
// re-attach grace, a drain answers 503, and every outcome is counted. A
// connection that cannot be taken over (HTTP/2) keeps waiting in its
// handler.

// errParked ends the in-handler wait of an ask about to be parked.
var errParked = errors.New("hostapi: parked")

// parkWriteTimeout bounds writing a parked ask's response.
const parkWriteTimeout = 30 * time.Second

// parkable returns ctx, ending with errParked once the ask has waited
// ParkAfter (never when parking is off), and what stops that timer.
func (s *Server) parkable(ctx context.Context) (context.Context, func()) {
	if s.parkAfter <= 0 {
		return ctx, func() {}
	}
	pctx, cancel := context.WithCancelCause(ctx)
	t := s.clock.AfterFunc(s.parkAfter, func() { cancel(errParked) })
	return pctx, func() { t.Stop(); cancel(nil) }
}

// parked reports whether a wait ended only because it is to be parked.
func parked(pctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(context.Cause(pctx), errParked)
}

// park takes the connection of a waiting blocking ask over and waits for
// its outcome there; detach is the waiter's attach registration, ended
// when the parked wait ends. It reports false when the connection cannot
// be taken over (nothing has changed then).
func (s *Server) park(w http.ResponseWriter, req *waterfall.Request, start time.Time, detach func()) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.wg.Add(1)
	s.mu.Unlock()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.wg.Done()
		return false
	}
	// The handler's buffers (and any pipelined request bytes, which the
	// Connection: close response tells the client to send again) are
	// dropped; the read deadline was lifted when the ask began waiting.
	_ = conn.SetDeadline(time.Time{})
	s.log.Debug("blocking ask parked", "callId", req.CallID, "waited", time.Since(start).String())
	go s.waitParked(conn, req, start, detach)
	return true
}

// waitParked waits for a parked ask's outcome and writes it.
func (s *Server) waitParked(conn net.Conn, req *waterfall.Request, start time.Time, detach func()) {
	defer s.wg.Done()
	defer conn.Close()
	defer func() {
		if rec := recover(); rec != nil {
			s.log.Error("recovered from a panic", "where", "parked ask", "callId", req.CallID,
				"panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
		}
	}()
	// Not the request's context (it ended with the handler): the server's,
	// which Close ends, and the drain.
	ctx, cancel := context.WithCancel(s.bg)
	defer cancel()
	stopDrain := context.AfterFunc(s.drained, cancel)
	defer stopDrain()
	stopWatch := s.watchHangUp(conn, cancel)
	// The handler's Ask stored the ask moments ago: wait for it, without
	// storing it again (a re-attach's create cost Redis 25 commands for
	// every blocking ask that waited past the park, issue 46).
	res, err := s.host.Resume(ctx, req)
	stopWatch()
	detach()
	rw := &connResponse{header: http.Header{}}
	s.respond(rw, req, start, res, err)
	if rw.status == 0 {
		return // the caller hung up: nobody to answer
	}
	_ = conn.SetWriteDeadline(time.Now().Add(parkWriteTimeout))
	if _, err := conn.Write(rw.bytes()); err != nil {
		s.log.Warn("writing a parked ask's answer failed; the caller re-attaches to get it", "callId", req.CallID, "err", err)
	}
}

// probeEvery is how often a parked ask looks whether its caller hung up.
// Noticing late only starts the re-attach grace late; looking costs one
// non-blocking read, where a goroutine blocked reading would cost its stack
// for as long as the ask waits.
const probeEvery = 3 * time.Second

// watchHangUp cancels when the caller closes the connection (or it
// breaks), until stop. Bytes a client sends after its request are left
// unread; the response closes the connection anyway.
func (s *Server) watchHangUp(conn net.Conn, cancel context.CancelFunc) (stop func()) {
	probe, ok := prober(conn)
	if !ok {
		go func() { // no way to look without reading: read
			var b [64]byte
			for {
				if _, err := conn.Read(b[:]); err != nil {
					cancel()
					return
				}
			}
		}()
		return func() {}
	}
	w := &watched{gone: probe, cancel: cancel}
	s.parkedMu.Lock()
	s.parked[w] = struct{}{}
	s.parkedMu.Unlock()
	return func() {
		s.parkedMu.Lock()
		delete(s.parked, w)
		s.parkedMu.Unlock()
	}
}

// watched is a parked ask's connection, looked at by probeParked.
type watched struct {
	gone   func() bool
	cancel context.CancelFunc
}

// probeParked looks, every probeEvery until Close, whether the callers of
// parked asks hung up: one loop for all of them, not a timer each.
func (s *Server) probeParked() {
	t := s.clock.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-s.bg.Done():
			return
		case <-t.C:
		}
		s.parkedMu.Lock()
		ws := make([]*watched, 0, len(s.parked))
		for w := range s.parked {
			ws = append(ws, w)
		}
		s.parkedMu.Unlock()
		for _, w := range ws {
			if w.gone() {
				w.cancel()
			}
		}
	}
}

// connResponse is the response a parked ask writes itself: an
// http.ResponseWriter collecting what respond writes, serialized as one
// HTTP/1.1 response that closes the connection.
type connResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *connResponse) Header() http.Header { return c.header }

func (c *connResponse) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *connResponse) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return c.body.Write(p)
}

// bytes is the whole response: status line, headers, body.
func (c *connResponse) bytes() []byte {
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", c.status, http.StatusText(c.status))
	c.header.Set("Content-Length", strconv.Itoa(c.body.Len()))
	c.header.Set("Connection", "close")
	c.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	_ = c.header.Write(bw)
	bw.WriteString("\r\n")
	_ = bw.Flush()
	b.Write(c.body.Bytes())
	return b.Bytes()
}
