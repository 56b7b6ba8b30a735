package service

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/webhook"
)

// Webhooking is the signed webhooks (ASKSLACK_WEBHOOKS), a part of Config:
// each endpoint gets the events of asks and standing rules from the audit
// trail, signed with the secret, at least once, in order (docs/webhooks.md).
// The secret is never logged.
type Webhooking struct {
	// WebhookURLs are the endpoints, name=https://url each.
	WebhookURLs   []string `envconfig:"ASKSLACK_WEBHOOKS"`
	WebhookSecret string   `envconfig:"ASKSLACK_WEBHOOK_SECRET"`
	// WebhookEvents filters the event types sent; empty sends all.
	WebhookEvents []string `envconfig:"ASKSLACK_WEBHOOK_EVENTS"`

	// endpoints and events are the above read by check.
	endpoints []webhook.Endpoint
	events    []string
}

// check reads and checks the webhook settings; errors name the variable.
func (w *Webhooking) check() []error {
	var errs []error
	eps, err := webhook.ParseEndpoints(w.WebhookURLs)
	if err != nil {
		errs = append(errs, err)
	}
	w.endpoints = eps
	if err := webhook.CheckSecret(w.WebhookSecret, len(NonEmpty(w.WebhookURLs))); err != nil {
		errs = append(errs, err)
	}
	if w.events, err = webhook.ParseEvents(w.WebhookEvents); err != nil {
		errs = append(errs, err)
	}
	if len(NonEmpty(w.WebhookURLs)) == 0 && len(NonEmpty(w.WebhookEvents)) > 0 {
		errs = append(errs, fmt.Errorf("ASKSLACK_WEBHOOK_EVENTS is set but ASKSLACK_WEBHOOKS is not: name the endpoints to send the events to, or unset it"))
	}
	return errs
}

// webhookMetrics are the webhook collectors, as webhook.Metrics.
type webhookMetrics struct {
	attempts *prometheus.CounterVec
	dead     *prometheus.CounterVec
}

// Attempt implements webhook.Metrics.
func (m webhookMetrics) Attempt(endpoint string, ok bool) {
	outcome := "failed"
	if ok {
		outcome = "ok"
	}
	m.attempts.WithLabelValues(endpoint, outcome).Inc()
}

// DeadLetter implements webhook.Metrics.
func (m webhookMetrics) DeadLetter(endpoint string) { m.dead.WithLabelValues(endpoint).Inc() }

// lagCollector reports askslack_webhook_lag_seconds for the endpoints this
// replica delivers to, read at scrape time.
type lagCollector struct {
	d    *webhook.Dispatcher
	desc *prometheus.Desc
}

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	for name, lag := range c.d.Lags() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, lag.Seconds(), name)
	}
}

// buildWebhooks builds the dispatcher when ASKSLACK_WEBHOOKS names an
// endpoint; with none, nothing is built and nothing runs.
func (a *App) buildWebhooks(holder string) {
	cfg := a.cfg.Webhooking
	if len(cfg.endpoints) == 0 {
		return
	}
	m := webhookMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askslack_webhook_deliveries_total",
			Help: "Webhook delivery attempts this replica made, by endpoint and outcome (ok: a 2xx; failed: anything else, retried with backoff).",
		}, []string{"endpoint", "outcome"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askslack_webhook_dead_letters_total",
			Help: "Webhook events this replica gave up on after failing for 24h (dead-lettered: askslack webhooks dead), by endpoint.",
		}, []string{"endpoint"}),
	}
	for _, e := range cfg.endpoints {
		m.attempts.WithLabelValues(e.Name, "ok") // shown from the start, at zero
		m.attempts.WithLabelValues(e.Name, "failed")
		m.dead.WithLabelValues(e.Name)
	}
	a.webhooks = webhook.New(a.store, webhook.Options{Endpoints: cfg.endpoints, Secret: cfg.WebhookSecret, Events: cfg.events,
		Holder: holder, Clock: a.clock, Logger: a.log, Metrics: m})
	a.metrics.reg.MustRegister(m.attempts, m.dead, lagCollector{d: a.webhooks, desc: prometheus.NewDesc("askslack_webhook_lag_seconds",
		"How long the event an endpoint gets next has waited since it happened (0 when caught up), on the replica delivering to it.",
		[]string{"endpoint"}, nil)})
	a.log.Info("webhooks are sent", "endpoints", a.webhooks.Names(), "events", cfg.events)
}

// webhookServices: the dispatcher, when configured.
func (a *App) webhookServices() []service {
	if a.webhooks == nil {
		return nil
	}
	return []service{a.webhooks}
}

// webhookAPI is the dispatcher as the host API's operators' routes see it;
// nil (no routes' service) when none is configured.
func (a *App) webhookAPI() hostapi.Webhooks {
	if a.webhooks == nil {
		return nil
	}
	return webhookAPI{a.webhooks}
}

// webhookAPI maps the dispatcher's status and dead letters to the API's
// views.
type webhookAPI struct{ d *webhook.Dispatcher }

func (w webhookAPI) WebhookEndpoints(ctx context.Context) ([]hostapi.WebhookEndpoint, error) {
	ss, err := w.d.Status(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]hostapi.WebhookEndpoint, 0, len(ss))
	for _, s := range ss {
		out = append(out, hostapi.WebhookEndpoint{Name: s.Name, URL: s.URL, Started: s.Started, Cursor: s.Seq, End: s.End, Behind: s.Behind,
			LagSeconds: s.Lag.Seconds(), Holder: s.Holder, Attempts: s.Attempts, NextAttempt: timeOrNil(s.NextAttempt),
			LastSuccess: timeOrNil(s.LastOK), LastError: s.LastError, LastErrorAt: timeOrNil(s.LastErrorAt), DeadLetters: s.Dead,
			Redelivery: s.Redeliveries})
	}
	return out, nil
}

func (w webhookAPI) WebhookDeadLetters(ctx context.Context, endpoint string) ([]hostapi.WebhookDeadLetter, error) {
	ls, err := w.d.DeadLetters(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	out := make([]hostapi.WebhookDeadLetter, 0, len(ls))
	for _, l := range ls {
		out = append(out, hostapi.WebhookDeadLetter{ID: l.ID, Type: l.Type, Seq: l.Seq, CallID: l.CallID, At: l.At.UTC(), DeadAt: l.DeadAt.UTC(),
			Attempts: l.Attempts, LastError: l.LastError})
	}
	return out, nil
}

func (w webhookAPI) RedeliverWebhooks(ctx context.Context, endpoint string, ids []string) (int, error) {
	return w.d.Redeliver(ctx, endpoint, ids)
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
