package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics is the bot's Prometheus registry and the collectors the packages
// report to (through their own small Metrics interfaces).
type metrics struct {
	reg          *prometheus.Registry
	asks         *prometheus.CounterVec
	askDuration  *prometheus.HistogramVec
	interactions *prometheus.CounterVec
	slackCalls   *prometheus.CounterVec
	slackLatency *prometheus.HistogramVec
	rateLimited  *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		asks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askslack_asks_total",
			Help: "Asks that ended at the host API, by outcome (answered, pending, aborted, no_provider, rejected, detached, error).",
		}, []string{"outcome"}),
		askDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "askslack_ask_duration_seconds",
			Help:    "Time from ask to its outcome at the host API, by outcome.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600},
		}, []string{"outcome"}),
		interactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askslack_interactions_total",
			Help: "Slack interactions handled, by type and result (settled, queued, duplicate, refused, invalid, recorded, opened, ignored, error).",
		}, []string{"type", "result"}),
		slackCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askslack_slack_api_calls_total",
			Help: "Slack Web API calls after retries, by method and result (ok or Slack's error).",
		}, []string{"method", "result"}),
		slackLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "askslack_slack_api_call_duration_seconds",
			Help:    "Slack Web API call latency including retries, by method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askslack_slack_rate_limited_total",
			Help: "HTTP 429 answers from Slack, by method.",
		}, []string{"method"}),
	}
	m.reg.MustRegister(m.asks, m.askDuration, m.interactions, m.slackCalls, m.slackLatency, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) Ask(outcome string, took time.Duration) {
	m.asks.WithLabelValues(outcome).Inc()
	m.askDuration.WithLabelValues(outcome).Observe(took.Seconds())
}

func (m *metrics) SlackCall(method, result string, took time.Duration) {
	m.slackCalls.WithLabelValues(method, result).Inc()
	m.slackLatency.WithLabelValues(method).Observe(took.Seconds())
}

func (m *metrics) RateLimited(method string) { m.rateLimited.WithLabelValues(method).Inc() }

func (m *metrics) Interaction(kind, result string) {
	m.interactions.WithLabelValues(kind, result).Inc()
}
