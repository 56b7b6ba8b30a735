package service

import (
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// slackIdleConns is how many idle connections to the Slack Web API the bot
// keeps. Every call goes to one host, and Go's default transport keeps only
// two idle connections per host: with more calls in flight than that, each
// burst dials new connections (a TLS handshake each on the real Slack) and
// leaves them in TIME_WAIT. It is above the bot's worker pool plus the
// posts that requests make concurrently, so a steady load reuses them.
const slackIdleConns = 256

// slackHTTPClient is the Slack Web API client's HTTP client: Go's default
// transport (proxy from the environment, HTTP/2 when the server offers it)
// with enough idle connections per host for the bot's concurrency, and a
// timeout per call.
func slackHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConns = slackIdleConns
	t.MaxIdleConnsPerHost = slackIdleConns
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: t, Timeout: 15 * time.Second}
}

// mountPProf serves net/http/pprof under /debug/pprof/ on mux (the package's
// init registers on http.DefaultServeMux, which the bot does not serve).
func mountPProf(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
