package service

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// metrics is the bot's Prometheus registry and the collectors the packages
// report to (through their own small Metrics interfaces).
type metrics struct {
	reg          *prometheus.Registry
	asks         *prometheus.CounterVec
	askDuration  *prometheus.HistogramVec
	timeToAnswer *prometheus.HistogramVec
	interactions *prometheus.CounterVec
	slackCalls   *prometheus.CounterVec
	slackLatency *prometheus.HistogramVec
	rateLimited  *prometheus.CounterVec
	claimsHeld   prometheus.Gauge
	takeovers    prometheus.Counter
	claimed      prometheus.Counter
	steered      *prometheus.CounterVec
	transitions  *prometheus.CounterVec
	storeErrors  *prometheus.CounterVec
	panics       *prometheus.CounterVec
	reminders    *prometheus.CounterVec
	sweeps       prometheus.Counter
	web          *prometheus.CounterVec
}

// questionCounter reads the active-state counts from the shared store.
type questionCounter interface {
	Counts(ctx context.Context) (store.Counts, error)
}

// questionsCollector reports askslack_questions from the store at scrape
// time, so every replica reports the same, correct numbers.
type questionsCollector struct {
	st     questionCounter
	desc   *prometheus.Desc
	timed  *prometheus.Desc
	errors *prometheus.CounterVec
}

func (c *questionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc; ch <- c.timed }

func (c *questionsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.st.Counts(ctx)
	if err != nil {
		c.errors.WithLabelValues("counts").Inc()
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n.Open), "open")
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n.Continued), "continued")
	ch <- prometheus.MustNewConstMetric(c.timed, prometheus.GaugeValue, float64(n.TimedOpen))
}

func newMetrics(st questionCounter) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.addAskMetrics()
	m.addSlackMetrics()
	m.addClaimMetrics()
	m.reg.MustRegister(m.asks, m.askDuration, m.timeToAnswer, m.interactions, m.slackCalls, m.slackLatency, m.rateLimited,
		m.claimsHeld, m.takeovers, m.claimed, m.steered, m.transitions, m.storeErrors, m.panics, m.reminders, m.sweeps, m.web,
		&questionsCollector{st: st, errors: m.storeErrors, desc: prometheus.NewDesc("askslack_questions",
			"Questions open (waiting for an answer) and continued (window closed, late answers still delivered), read from the shared store.",
			[]string{"state"}, nil),
			timed: prometheus.NewDesc("askslack_timed_waits_open",
				"Open timed waits, read from the shared store: each should be held by one replica's claim.", nil, nil)},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// addAskMetrics: asks at the host API, transitions, steered messages, panics.
func (m *metrics) addAskMetrics() {
	m.asks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_asks_total",
		Help: "Asks that ended at the host API, by outcome (answered, pending, aborted, no_provider, rejected, detached, error).",
	}, []string{"outcome"})
	m.askDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "askslack_ask_duration_seconds",
		Help:    "Time from ask to its outcome at the host API, by outcome.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600},
	}, []string{"outcome"})
	m.timeToAnswer = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "askslack_time_to_answer_seconds",
		Help:    "Time from ask to a person's answer (in its window, or late), observed once per answered ask on the replica that settles it, by kind (question, plan, permission).",
		Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600},
	}, []string{"kind"})
	for _, k := range []string{waterfall.KindQuestion, waterfall.KindPlan, waterfall.KindPermission} {
		m.timeToAnswer.WithLabelValues(k) // every kind shows from the start, at zero
	}
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_panics_total",
		Help: "Panics recovered (and logged with their stack) in background jobs and interaction handlers, by where.",
	}, []string{"where"})
	m.steered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_steered_messages_total",
		Help: "Late answers turned into steered user messages (queued) and admitted by the agent (admitted).",
	}, []string{"event"})
	m.reminders = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_reminders_total",
		Help: "Reminders (ASKSLACK_REMIND) and escalations (ASKSLACK_ESCALATE) this replica sent, failed to send (retried after a lease), skipped (Slack refused them for good) or dropped (a reminder not posted by its escalation's time, which did not wait for it).",
	}, []string{"kind", "result"})
	m.sweeps = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "askslack_reminder_sweeps_total",
		Help: "Sweeps of the reminders' schedule this replica ran (at least one a tick while reminders are configured): one that stops rising is a stalled sweep.",
	})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_transitions_total",
		Help: "Ask state transitions made by this replica (settled, expired, aborted, queued, admitted), and votes recorded while an ask waits for more (voted).",
	}, []string{"kind"})
}

// addSlackMetrics: interactions and Web API calls.
func (m *metrics) addSlackMetrics() {
	m.interactions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_interactions_total",
		Help: "Slack interactions handled, by type and result (settled, queued, duplicate, refused, invalid, recorded, opened, ignored, error).",
	}, []string{"type", "result"})
	m.slackCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_slack_api_calls_total",
		Help: "Slack Web API calls after retries, by method and result (ok or Slack's error).",
	}, []string{"method", "result"})
	m.slackLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "askslack_slack_api_call_duration_seconds",
		Help:    "Slack Web API call latency including retries, by method.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_slack_rate_limited_total",
		Help: "HTTP 429 answers from Slack, by method.",
	}, []string{"method"})
	m.web = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_web_actions_total",
		Help: "What people did on the answer page, by action (signin, answer, logout, revoke, csrf) and result (ok, settled, voted, queued, duplicate, refused, invalid, limited, error).",
	}, []string{"action", "result"})
}

// Web implements web.Metrics.
func (m *metrics) Web(action, result string) { m.web.WithLabelValues(action, result).Inc() }

// addClaimMetrics: timed-wait claims and store errors.
func (m *metrics) addClaimMetrics() {
	m.claimsHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "askslack_claims_held",
		Help: "Timed waits whose lease this replica holds (it drives their countdown).",
	})
	m.takeovers = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "askslack_claims_taken_over_total",
		Help: "Timed waits this replica took over from a replica that stopped renewing.",
	})
	m.claimed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "askslack_claims_total",
		Help: "Timed-wait leases this replica acquired (new waits and takeovers).",
	})
	m.storeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_store_errors_total",
		Help: "Store (Redis) operations that failed, by operation.",
	}, []string{"op"})
}

func (m *metrics) Reminded(kind, result string) { m.reminders.WithLabelValues(kind, result).Inc() }

func (m *metrics) Swept() { m.sweeps.Inc() }

func (m *metrics) Held(n int) { m.claimsHeld.Set(float64(n)) }

func (m *metrics) Claimed(takeover bool) {
	m.claimed.Inc()
	if takeover {
		m.takeovers.Inc()
	}
}

func (m *metrics) StoreError(op string) { m.storeErrors.WithLabelValues(op).Inc() }

func (m *metrics) Transition(kind string) {
	m.transitions.WithLabelValues(kind).Inc()
	switch kind {
	case "queued", "admitted":
		m.steered.WithLabelValues(kind).Inc()
	}
}

func (m *metrics) Answered(kind string, took time.Duration) {
	m.timeToAnswer.WithLabelValues(kind).Observe(took.Seconds())
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

func (m *metrics) Panic(where string) { m.panics.WithLabelValues(where).Inc() }

func (m *metrics) Interaction(kind, result string) {
	m.interactions.WithLabelValues(kind, result).Inc()
}
