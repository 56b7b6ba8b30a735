package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestProbeURL(t *testing.T) {
	for _, tc := range []struct {
		args []string
		addr string
		want string
	}{
		{nil, "", "http://127.0.0.1:8080/healthz"},
		{nil, ":9090", "http://127.0.0.1:9090/healthz"},
		{nil, "0.0.0.0:7000", "http://127.0.0.1:7000/healthz"},
		{nil, "garbage", "http://127.0.0.1:8080/healthz"},
		{[]string{"http://x:1/readyz"}, ":9090", "http://x:1/readyz"},
		{nil, "[::1]:8081", "http://127.0.0.1:8081/healthz"},
	} {
		if got := probeURL(tc.args, tc.addr); got != tc.want {
			t.Errorf("probeURL(%q, %q) = %q, want %q", tc.args, tc.addr, got, tc.want)
		}
	}
}

func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.Error(w, "no", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := probe(srv.URL+"/healthz", time.Second); err != nil {
		t.Errorf("healthy: %v", err)
	}
	if err := probe(srv.URL+"/readyz", time.Second); err == nil {
		t.Error("503 passed the probe")
	}
	srv.Close()
	if err := probe(srv.URL+"/healthz", time.Second); err == nil {
		t.Error("closed server passed the probe")
	}
}

func TestProbeRejects(t *testing.T) {
	for _, u := range []string{"https://127.0.0.1:1/healthz", "http:///healthz", "::bad"} {
		if err := probe(u, time.Second); err == nil {
			t.Errorf("probe(%q) passed", u)
		}
	}
}
