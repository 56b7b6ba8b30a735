package service

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// recovering turns a panic in any handler into a logged line with its stack,
// a count in askslack_panics_total{where="http"} and a 500, instead of
// net/http's plain-text stderr line: hostile input must be visible, counted
// and survivable. http.ErrAbortHandler keeps its meaning (abort quietly).
func recovering(next http.Handler, log *slog.Logger, m *metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if err, ok := rec.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(rec)
			}
			log.Error("recovered from a panic", "where", "http", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
			m.Panic("http")
			http.Error(w, `{"error":{"code":"INTERNAL","message":"internal error"}}`, http.StatusInternalServerError)
		}()
		next.ServeHTTP(w, r)
	})
}
