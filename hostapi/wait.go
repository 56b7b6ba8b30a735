package hostapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/internal/clock"
	"github.com/askslack/askslack/store"
)

// Leases lets an attached UI hold the live wait (redisstore.Store, store.Memory).
type Leases = store.Leases

// attachWait streams the seed's attachWait frames as server-sent events:
// one {"remainingMs":…} computed from the stored deadline, then nothing
// until the wait ends (answered, continued or withdrawn), when the stream
// closes. An untimed or already-ended wait closes at once with no frame.
//
// While attached, the stream holds the wait's claim when nobody else does
// (renewed like a replica's); closing the stream releases it, so a replica
// picks the wait up again at once.
func (s *Server) attachWait(w http.ResponseWriter, r *http.Request) {
	callID := r.PathValue("callId")
	a, err := s.mine(r, callerOf(r), callID)
	if err != nil {
		s.fail(w, err)
		return
	}
	waits(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if a.State != asktype.Open || a.Deadline.IsZero() {
		return
	}
	ctx, cancel := s.callCtx(r)
	defer cancel()
	holder := ""
	if s.leases != nil {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		h := "sse-" + hex.EncodeToString(b)
		if _, err := s.leases.Acquire(ctx, callID, store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: h, TTL: s.lease, Now: s.clock.Now()}}); err == nil {
			holder = h
			defer func() { _ = s.leases.Release(context.WithoutCancel(ctx), callID, store.LeaseWait, holder) }()
		}
	}
	frame, _ := json.Marshal(map[string]int64{"remainingMs": max(a.Deadline.Sub(s.clock.Now()), 0).Milliseconds()})
	fmt.Fprintf(w, "data: %s\n\n", frame)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	for {
		step := min(s.lease/3, max(a.Deadline.Sub(s.clock.Now()), 0)+10*time.Millisecond)
		wctx, stop := clock.WithTimeout(ctx, s.clock, step)
		a, err = s.host.WaitChange(wctx, callID, a.Version)
		stop()
		if err != nil || ctx.Err() != nil || a.State != asktype.Open {
			return
		}
		if !s.clock.Now().Before(a.Deadline) {
			// Expiry is once-only: whoever sees the deadline first closes it.
			_, _ = s.host.Expire(ctx, callID)
			return
		}
		if holder != "" {
			_, _ = s.leases.Acquire(ctx, callID, store.Claim{Name: store.LeaseWait, Hold: store.Hold{Holder: holder, TTL: s.lease, Now: s.clock.Now()}})
		}
	}
}
