package hostapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/askslack/askslack/hostapi"
)

// A bot of a release before the ack said first (met during a rolling
// update, docs/upgrading.md) answers without the field: Admit counts that
// as first, or the hook that consumed the message would never pass it on.
func TestAdmitThroughAReleaseWithoutFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body  string
		first bool
	}{
		{`{"acked":true,"callId":"c","state":"settled"}`, true}, // 8fcf7fb and older
		{`{"acked":true,"first":true,"callId":"c","state":"settled"}`, true},
		{`{"acked":true,"first":false,"callId":"c","state":"settled"}`, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(tc.body))
		}))
		c := &hostapi.Client{BaseURL: srv.URL}
		first, err := c.Admit(context.Background(), "s", "m")
		srv.Close()
		if err != nil || first != tc.first {
			t.Errorf("ack %s: first=%v %v; want %v", tc.body, first, err, tc.first)
		}
	}
}
