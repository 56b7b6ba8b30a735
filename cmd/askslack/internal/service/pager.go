package service

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"

	"github.com/askslack/askslack/pager"
	"github.com/askslack/askslack/waterfall"
	"github.com/askslack/askslack/web"
)

// Paging is the on-call paging (ASKSLACK_PAGE), a part of Config: at the
// escalation step of the reminders (one interval after the last, when
// ASKSLACK_ESCALATE mentions people) an unanswered ask opens an incident
// in PagerDuty or an alert in Opsgenie, resolved when the ask is answered,
// withdrawn or continued. The keys are secrets: never logged.
type Paging struct {
	// Page is "pagerduty", "opsgenie", or "" (nobody is paged).
	Page string `envconfig:"ASKSLACK_PAGE"`
	// PageSeverity, when set, is every page's severity; unset, it follows
	// the ask's kind (pager.SeverityOf).
	PageSeverity string `envconfig:"ASKSLACK_PAGE_SEVERITY"`
	PagerDutyKey string `envconfig:"ASKSLACK_PAGERDUTY_ROUTING_KEY"`
	PagerDutyURL string `envconfig:"ASKSLACK_PAGERDUTY_URL" default:"https://events.pagerduty.com"`
	OpsgenieKey  string `envconfig:"ASKSLACK_OPSGENIE_API_KEY"`
	OpsgenieURL  string `envconfig:"ASKSLACK_OPSGENIE_URL" default:"https://api.opsgenie.com"`
}

// The providers ASKSLACK_PAGE names.
const (
	pageDuty  = "pagerduty"
	pageGenie = "opsgenie"
)

// check checks the paging settings; remind is ASKSLACK_REMIND, which the
// page needs. Errors name the variable.
func (p *Paging) check(remind []string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	p.Page = strings.ToLower(strings.TrimSpace(p.Page))
	switch p.Page {
	case "":
		for _, v := range []struct{ name, key string }{{"ASKSLACK_PAGERDUTY_ROUTING_KEY", p.PagerDutyKey}, {"ASKSLACK_OPSGENIE_API_KEY", p.OpsgenieKey}} {
			if v.key != "" {
				bad("%s is set but ASKSLACK_PAGE is not: set ASKSLACK_PAGE=pagerduty or opsgenie to page the on-call, or unset the key", v.name)
			}
		}
		return errs
	case pageDuty:
		if p.PagerDutyKey == "" {
			bad(`ASKSLACK_PAGE=pagerduty needs ASKSLACK_PAGERDUTY_ROUTING_KEY: the Integration Key of an "Events API V2" integration of the PagerDuty service to page`)
		}
		p.PagerDutyURL = checkOrigin(&errs, "ASKSLACK_PAGERDUTY_URL", p.PagerDutyURL, "/v2/enqueue")
	case pageGenie:
		if p.OpsgenieKey == "" {
			bad("ASKSLACK_PAGE=opsgenie needs ASKSLACK_OPSGENIE_API_KEY: the API key of an API integration of the Opsgenie team to page")
		}
		p.OpsgenieURL = checkOrigin(&errs, "ASKSLACK_OPSGENIE_URL", p.OpsgenieURL, "/v2/alerts")
	default:
		bad(`ASKSLACK_PAGE %q must be "pagerduty" (PagerDuty's Events API v2) or "opsgenie" (Opsgenie's Alert API), or unset (nobody is paged)`, p.Page)
	}
	if len(NonEmpty(remind)) == 0 {
		bad("ASKSLACK_PAGE: the on-call is paged one interval after the last reminder: it needs ASKSLACK_REMIND")
	}
	if s := pager.Severity(p.PageSeverity); s != "" && !s.Valid() {
		bad(`ASKSLACK_PAGE_SEVERITY %q must be critical, error, warning or info (or unset: by the ask's kind)`, p.PageSeverity)
	}
	return errs
}

// checkOrigin checks an API's origin (http(s), a host, no path: the
// client adds api's) and returns it without a trailing slash; "" stays ""
// (the provider's own).
func checkOrigin(errs *[]error, name, raw, api string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		*errs = append(*errs, fmt.Errorf("%s %q is not an http(s) URL", name, raw))
	case strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "":
		*errs = append(*errs, fmt.Errorf("%s %q must be the API's origin only, such as %s (askslack adds %s)", name, raw, originOf(u), api))
	}
	return strings.TrimSuffix(raw, "/")
}

func originOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// pageCounter is askslack_pages_total, as pager.Metrics.
type pageCounter struct{ *prometheus.CounterVec }

// Paged implements pager.Metrics.
func (c pageCounter) Paged(provider, action, result string) {
	c.WithLabelValues(provider, action, result).Inc()
}

// buildPager wires ASKSLACK_PAGE, when set: the reminders' escalation
// step pages (once across replicas: remind's claim, then a marker in the
// store), and the Host's observer resolves the page when the ask ends
// (once: whoever takes the marker). Its resolve workers run and stop with
// the reminders.
func (a *App) buildPager() {
	cfg := a.cfg.Paging
	if cfg.Page == "" {
		return
	}
	pages := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "askslack_pages_total",
		Help: "Pages to the on-call (ASKSLACK_PAGE) this replica opened and resolved, by provider, action (open, resolve) and result (ok, failed: retries ran out, rejected: refused for good).",
	}, []string{"provider", "action", "result"})
	a.metrics.reg.MustRegister(pages)
	opts := pager.Options{Logger: a.log, Metrics: pageCounter{pages}}
	var p pager.Pager
	if cfg.Page == pageGenie {
		opts.URL = cfg.OpsgenieURL
		p = pager.NewOpsgenie(cfg.OpsgenieKey, opts)
	} else {
		opts.URL = cfg.PagerDutyURL
		p = pager.NewPagerDuty(cfg.PagerDutyKey, opts)
	}
	for _, action := range []string{"open", "resolve"} {
		pages.WithLabelValues(p.Provider(), action, "ok") // shown from the start, at zero
	}
	esc := pager.NewEscalation(a.store, p, pager.EscalationOptions{Clock: a.clock, Logger: a.log, Links: a.pageLinks,
		Severity: pager.Severity(cfg.PageSeverity)})
	a.reminders.EscalateTo(esc)
	a.host.Observe(esc)
	a.log.Info("the on-call is paged at the escalation step", "provider", p.Provider())
}

// permalinkTimeout bounds the Slack call for a page's link to its message.
const permalinkTimeout = 5 * time.Second

// pageLinks are the links of r's page: its Slack message (when posted and
// Slack tells its permalink) and its answer page (when configured).
func (a *App) pageLinks(ctx context.Context, r *waterfall.Record) []pager.Link {
	var out []pager.Link
	if m := r.Message; m.Posted() && (m.Surface == "" || m.Surface == waterfall.SurfaceSlack) && m.Conversation != "" {
		pctx, cancel := context.WithTimeout(ctx, permalinkTimeout)
		link, err := a.slack.GetPermalinkContext(pctx, &slack.PermalinkParameters{Channel: m.Conversation, Ts: m.ID})
		cancel()
		switch {
		case err == nil && link != "":
			out = append(out, pager.Link{Href: link, Text: "Slack message"})
		case err != nil && !errors.Is(err, context.Canceled):
			a.log.Warn("the page goes without its Slack link: no permalink", "callId", r.CallID, "err", err)
		}
	}
	if a.cfg.webOn() {
		out = append(out, pager.Link{Href: web.AskURL(a.cfg.WebURL, r.CallID), Text: "Answer page"})
	}
	return out
}
