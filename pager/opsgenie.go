package pager

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// OpsgenieURL is Opsgenie's API origin; EU accounts use
// OpsgenieEUURL.
const (
	OpsgenieURL   = "https://api.opsgenie.com"
	OpsgenieEUURL = "https://api.eu.opsgenie.com"
)

// Opsgenie's limits on an alert.
const (
	OpsgenieMessageMax     = 130
	OpsgenieAliasMax       = 512
	OpsgenieDescriptionMax = 15000
	OpsgenieNoteMax        = 25000
	opsgenieDetailMax      = 8000 // per value, to stay well inside the details' total
)

// Opsgenie pages through Opsgenie's Alert API: Open creates an alert
// (POST /v2/alerts) whose alias is the incident's dedup key, Resolve
// closes it by that alias (POST /v2/alerts/{alias}/close?identifierType=alias).
// Both answer 202 (the request is processed asynchronously); 4xx other
// than 429 are final, 429 and 5xx are retried.
type Opsgenie struct {
	header http.Header
	s      sender
}

// NewOpsgenie returns an Opsgenie client for an API integration's key.
func NewOpsgenie(apiKey string, opts Options) *Opsgenie {
	return &Opsgenie{header: http.Header{"Authorization": {"GenieKey " + apiKey}}, s: newSender("opsgenie", OpsgenieURL, opts)}
}

// Provider implements Pager.
func (o *Opsgenie) Provider() string { return "opsgenie" }

type ogAlert struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Priority    string            `json:"priority"`
	Source      string            `json:"source,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
}

type ogClose struct {
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
}

// Open implements Pager: an alert.
func (o *Opsgenie) Open(ctx context.Context, inc Incident) error {
	source := inc.Source
	if source == "" {
		source = "askslack"
	}
	desc := inc.Description
	if desc == "" {
		desc = inc.Summary
	}
	details := make(map[string]string, len(inc.Details)+len(inc.Links))
	for k, v := range inc.Details {
		details[k] = Cut(v, opsgenieDetailMax)
	}
	var links []string
	for _, l := range inc.Links {
		details[strings.ToLower(l.Text)] = l.Href
		links = append(links, l.Text+": "+l.Href)
	}
	if len(links) > 0 {
		// The links come first: the description is cut at its end.
		desc = strings.Join(links, "\n") + "\n\n" + desc
	}
	tags := []string{"askslack"}
	if inc.Class != "" {
		tags = append(tags, inc.Class)
	}
	a := ogAlert{Message: Cut(inc.Summary, OpsgenieMessageMax), Alias: Cut(inc.DedupKey, OpsgenieAliasMax),
		Description: Cut(desc, OpsgenieDescriptionMax), Details: details, Priority: inc.Severity.Priority(), Source: source,
		Entity: inc.Component, Tags: tags}
	if len(a.Details) == 0 {
		a.Details = nil
	}
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return o.s.post(ctx, "open", a.Alias, "/v2/alerts", o.header, body)
}

// Resolve implements Pager: closes the alert by its alias, with note.
func (o *Opsgenie) Resolve(ctx context.Context, dedupKey, note string) error {
	alias := Cut(dedupKey, OpsgenieAliasMax)
	body, err := json.Marshal(ogClose{Source: "askslack", Note: Cut(note, OpsgenieNoteMax)})
	if err != nil {
		return err
	}
	return o.s.post(ctx, "resolve", alias, "/v2/alerts/"+url.PathEscape(alias)+"/close?identifierType=alias", o.header, body)
}
