package hostapi

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/askslack/askslack/waterfall"
)

const whyWebhooks = "only operators (ASKSLACK_ADMIN_TOKENS) read and redeliver webhooks"

// Webhooks is the webhook service (ASKSLACK_WEBHOOKS) as the operators'
// routes see it: the API's own view of it, so this package needs nothing
// of the service's. An unknown endpoint or dead letter is a
// waterfall.Error with CodeNotFound.
type Webhooks interface {
	// WebhookEndpoints is every configured endpoint's status.
	WebhookEndpoints(ctx context.Context) ([]WebhookEndpoint, error)
	// WebhookDeadLetters are an endpoint's dead letters, oldest first.
	WebhookDeadLetters(ctx context.Context, endpoint string) ([]WebhookDeadLetter, error)
	// RedeliverWebhooks queues the endpoint's dead letters with those ids
	// (all of them when ids is empty) again, and says how many.
	RedeliverWebhooks(ctx context.Context, endpoint string, ids []string) (int, error)
}

// WebhookEndpoint is one endpoint as GET /v1/webhooks shows it.
type WebhookEndpoint struct {
	Name string `json:"name"`
	// URL is redacted: scheme and host (a path or query may hold a token).
	URL string `json:"url"`
	// Started is false until a replica took the endpoint on.
	Started bool `json:"started"`
	// Cursor is the seq of the last trail entry handled, End the newest;
	// Behind the entries between.
	Cursor int64 `json:"cursor"`
	End    int64 `json:"end"`
	Behind int64 `json:"behind"`
	// LagSeconds is how long the oldest event not yet delivered has waited.
	LagSeconds  float64    `json:"lagSeconds"`
	Holder      string     `json:"holder,omitempty"`
	Attempts    int        `json:"attempts,omitempty"`
	NextAttempt *time.Time `json:"nextAttempt,omitempty"`
	LastSuccess *time.Time `json:"lastSuccess,omitempty"`
	LastError   string     `json:"lastError,omitempty"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	DeadLetters int        `json:"deadLetters"`
	Redelivery  int        `json:"redeliveriesQueued"`
}

// WebhookDeadLetter is one event an endpoint never took.
type WebhookDeadLetter struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Seq       int64     `json:"seq"`
	CallID    string    `json:"callId,omitempty"`
	At        time.Time `json:"at"`
	DeadAt    time.Time `json:"deadAt"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError"`
}

// WebhooksPage is the JSON of GET /v1/webhooks.
type WebhooksPage struct {
	Endpoints []WebhookEndpoint `json:"endpoints"`
}

// DeadLettersPage is the JSON of GET /v1/webhooks/{name}/dead.
type DeadLettersPage struct {
	DeadLetters []WebhookDeadLetter `json:"deadLetters"`
}

// RedeliverBody is the JSON of POST /v1/webhooks/{name}/redeliver: the
// ids of dead letters, or all of them.
type RedeliverBody struct {
	IDs []string `json:"ids,omitempty"`
	All bool     `json:"all,omitempty"`
}

// Redelivered is its answer.
type Redelivered struct {
	Queued int `json:"queued"`
}

// webhooksOf is the service, or NOT_FOUND when none is configured.
func (s *Server) webhooksOf() (Webhooks, error) {
	if s.webhooks == nil {
		return nil, waterfall.Errorf(waterfall.CodeNotFound, "no webhooks are configured (ASKSLACK_WEBHOOKS)")
	}
	return s.webhooks, nil
}

// listWebhooks is GET /v1/webhooks, for operators: every endpoint's
// status (none when no webhook is configured).
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.require(w, r, RoleAdmin, whyWebhooks); !ok {
		return
	}
	page := WebhooksPage{Endpoints: []WebhookEndpoint{}}
	if s.webhooks != nil {
		eps, err := s.webhooks.WebhookEndpoints(r.Context())
		if err != nil {
			s.fail(w, err)
			return
		}
		page.Endpoints = append(page.Endpoints, eps...)
	}
	writeJSON(w, http.StatusOK, page)
}

// deadLetters is GET /v1/webhooks/{name}/dead, for operators.
func (s *Server) deadLetters(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.require(w, r, RoleAdmin, whyWebhooks); !ok {
		return
	}
	wh, err := s.webhooksOf()
	if err != nil {
		s.fail(w, err)
		return
	}
	dead, err := wh.WebhookDeadLetters(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, DeadLettersPage{DeadLetters: append([]WebhookDeadLetter{}, dead...)})
}

// redeliver is POST /v1/webhooks/{name}/redeliver, for operators: the
// dead letters named (or all) are sent again, same ids, before the
// endpoint's next events.
func (s *Server) redeliver(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.require(w, r, RoleAdmin, whyWebhooks); !ok {
		return
	}
	wh, err := s.webhooksOf()
	if err != nil {
		s.fail(w, err)
		return
	}
	var body RedeliverBody
	if err := decodeBody(w, r, &body); err != nil {
		s.fail(w, err)
		return
	}
	if body.All == (len(body.IDs) > 0) {
		s.fail(w, waterfall.Errorf(waterfall.CodeBadRequest, `name the dead letters to redeliver ("ids") or ask for "all"`))
		return
	}
	n, err := wh.RedeliverWebhooks(r.Context(), r.PathValue("name"), body.IDs)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, Redelivered{Queued: n})
}

// Webhooks reads every webhook endpoint's status (an operator's token).
func (c *Client) Webhooks(ctx context.Context) ([]WebhookEndpoint, error) {
	var p WebhooksPage
	err := c.do(ctx, http.MethodGet, "/v1/webhooks", nil, &p)
	return p.Endpoints, err
}

// WebhookDeadLetters reads an endpoint's dead letters.
func (c *Client) WebhookDeadLetters(ctx context.Context, endpoint string) ([]WebhookDeadLetter, error) {
	var p DeadLettersPage
	err := c.do(ctx, http.MethodGet, "/v1/webhooks/"+url.PathEscape(endpoint)+"/dead", nil, &p)
	return p.DeadLetters, err
}

// RedeliverWebhooks queues an endpoint's dead letters again: those with
// ids, or every one with all.
func (c *Client) RedeliverWebhooks(ctx context.Context, endpoint string, ids []string, all bool) (int, error) {
	var res Redelivered
	err := c.do(ctx, http.MethodPost, "/v1/webhooks/"+url.PathEscape(endpoint)+"/redeliver", RedeliverBody{IDs: ids, All: all}, &res)
	return res.Queued, err
}
