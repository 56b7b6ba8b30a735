package service

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/askslack/askslack/store"
)

func TestHandlerPanicIsLoggedCountedAndSurvived(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	m := newMetrics(store.NewMemory(0, nil))
	h := recovering(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
		slog.New(slog.NewJSONHandler(&logs, nil)), m)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/asks", nil))
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d", w.Code)
	}
	if !strings.Contains(logs.String(), `"panic":"boom"`) || !strings.Contains(logs.String(), "goroutine") {
		t.Fatalf("log lacks the panic and its stack: %s", logs.String())
	}
	var got dto.Metric
	if err := m.panics.WithLabelValues("http").Write(&got); err != nil || got.GetCounter().GetValue() != 1 {
		t.Fatalf("askslack_panics_total{where=http} = %v (%v)", got.GetCounter().GetValue(), err)
	}
}
