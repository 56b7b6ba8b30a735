package remote

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/askslack/askslack/store"
)

// attachWait streams the seed's attachWait frames as server-sent events:
// one {"remainingMs":…} computed from the stored deadline, then nothing
// until the wait ends (answered, continued or withdrawn), when the stream
// closes. An untimed or already-ended wait closes at once with no frame.
func (s *Server) attachWait(w http.ResponseWriter, r *http.Request) {
	callID := r.PathValue("callId")
	a, err := s.host.Get(r.Context(), callID)
	if err != nil {
		s.fail(w, err)
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if a.State != store.Open || a.Deadline.IsZero() {
		return
	}
	remaining := max(a.Deadline.Sub(s.host.Now()), 0)
	frame, _ := json.Marshal(map[string]int64{"remainingMs": remaining.Milliseconds()})
	fmt.Fprintf(w, "data: %s\n\n", frame)
	if flusher != nil {
		flusher.Flush()
	}
	ctx, cancel := s.callCtx(r)
	defer cancel()
	for a.State == store.Open && ctx.Err() == nil {
		a, err = s.host.WaitChange(ctx, callID, a.Version)
		if err != nil {
			return
		}
		// Expire is idempotent: whichever waiter sees the deadline first
		// closes the window for everyone.
		if a.State == store.Open && !s.host.Now().Before(a.Deadline) {
			if cur, err := s.host.Expire(ctx, callID); err == nil {
				a = cur
			}
		}
		if a.State == store.Open {
			select {
			case <-ctx.Done():
			case <-time.After(min(time.Second, max(a.Deadline.Sub(s.host.Now()), 0))):
			}
		}
	}
}
