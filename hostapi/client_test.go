package hostapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/waterfall"
)

// flaky fails the first requests the way proxies and restarts do, then
// hands the rest to the real API.
func flaky(t *testing.T, next http.Handler, faults ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(faults) {
			faults[i](w)
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs, &n
}

func resetConn(w http.ResponseWriter) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = c.Close()
	}
}

func status(code int, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// The client re-attaches (same request, same callId) on a dropped
// connection and on 502/503/504 from a proxy, with backoff.
func TestClientReattachesOnTransientFailures(t *testing.T) {
	t.Parallel()
	hs, n := flaky(t, server(t), resetConn, status(502, "<html>Bad Gateway</html>"), status(504, "<html>Gateway Timeout</html>"),
		status(503, "<html>Service Unavailable</html>"), resetConn)
	c := &hostapi.Client{BaseURL: hs.URL, Reattach: 30 * time.Second}
	res, err := c.Ask(context.Background(), &waterfall.Request{CallID: "r1", Agent: waterfall.Agent{ID: "a"},
		Questions: []waterfall.Question{{ID: "q", Question: "?", Options: []waterfall.Option{{Label: "A"}}}}})
	if err != nil || res.Pending || len(res.Answers) != 1 {
		t.Fatalf("Ask = %+v %v", res, err)
	}
	if got := n.Load(); got != 6 {
		t.Fatalf("%d attempts; want 6 (5 failures, then the answer)", got)
	}
}

// Final answers are not retried: NO_PROVIDER, a bad request, a 500.
func TestClientDoesNotRetryFinalErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		fault func(w http.ResponseWriter)
	}{
		{"no provider", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			_, _ = w.Write([]byte(`{"error":{"code":"NO_PROVIDER","message":"no human available"}}`))
		}},
		{"bad request", status(400, "bad")},
		{"internal", status(500, "oops")},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs, n := flaky(t, server(t), c.fault)
			cl := &hostapi.Client{BaseURL: hs.URL, Reattach: 30 * time.Second}
			_, err := cl.Ask(context.Background(), &waterfall.Request{CallID: "r2", Agent: waterfall.Agent{ID: "a"},
				Questions: []waterfall.Question{{ID: "q", Question: "?"}}})
			if err == nil || n.Load() != 1 {
				t.Fatalf("err=%v after %d attempts; want one attempt and an error", err, n.Load())
			}
		})
	}
}
