package pager

import (
	"context"
	"encoding/json"
)

// PagerDutyURL is the Events API v2's origin; events go to /v2/enqueue.
const PagerDutyURL = "https://events.pagerduty.com"

// PagerDuty's limits.
const (
	PagerDutySummaryMax = 1024
	PagerDutyDedupMax   = 255
)

// PagerDuty pages through PagerDuty's Events API v2: Open sends a trigger
// event, Resolve a resolve event, both keyed by the incident's dedup_key.
// PagerDuty answers 202; 400 is an invalid event (final), 429 and 5xx are
// retried.
type PagerDuty struct {
	routingKey string
	s          sender
}

// NewPagerDuty returns a PagerDuty client for the integration's routing
// key (its "Integration Key").
func NewPagerDuty(routingKey string, opts Options) *PagerDuty {
	return &PagerDuty{routingKey: routingKey, s: newSender("pagerduty", PagerDutyURL, opts)}
}

// Provider implements Pager.
func (p *PagerDuty) Provider() string { return "pagerduty" }

// pdEvent is an Events API v2 event.
type pdEvent struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *pdPayload `json:"payload,omitempty"`
	Links       []pdLink   `json:"links,omitempty"`
	Client      string     `json:"client,omitempty"`
	ClientURL   string     `json:"client_url,omitempty"`
}

type pdPayload struct {
	Summary       string            `json:"summary"`
	Source        string            `json:"source"`
	Severity      Severity          `json:"severity"`
	Component     string            `json:"component,omitempty"`
	Group         string            `json:"group,omitempty"`
	Class         string            `json:"class,omitempty"`
	CustomDetails map[string]string `json:"custom_details,omitempty"`
}

type pdLink struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// Open implements Pager: a trigger event.
func (p *PagerDuty) Open(ctx context.Context, inc Incident) error {
	sev := inc.Severity
	if !sev.Valid() {
		sev = Warning
	}
	source := inc.Source
	if source == "" {
		source = "askslack"
	}
	ev := pdEvent{RoutingKey: p.routingKey, EventAction: "trigger", DedupKey: Cut(inc.DedupKey, PagerDutyDedupMax), Client: "askslack",
		Payload: &pdPayload{Summary: Cut(inc.Summary, PagerDutySummaryMax), Source: source, Severity: sev,
			Component: inc.Component, Group: inc.Group, Class: inc.Class, CustomDetails: inc.Details}}
	for _, l := range inc.Links {
		ev.Links = append(ev.Links, pdLink(l))
		ev.ClientURL = l.Href // the last: the answer page, when there is one
	}
	return p.send(ctx, "open", ev)
}

// Resolve implements Pager: a resolve event (PagerDuty keeps no note).
func (p *PagerDuty) Resolve(ctx context.Context, dedupKey, _ string) error {
	return p.send(ctx, "resolve", pdEvent{RoutingKey: p.routingKey, EventAction: "resolve", DedupKey: Cut(dedupKey, PagerDutyDedupMax)})
}

func (p *PagerDuty) send(ctx context.Context, action string, ev pdEvent) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return p.s.post(ctx, action, ev.DedupKey, "/v2/enqueue", nil, body)
}
