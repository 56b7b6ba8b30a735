package pager_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askslack/askslack/internal/pagerfake"
	"github.com/askslack/askslack/pager"
)

// counts records the metrics.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) Paged(provider, action, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[provider+" "+action+" "+result]++
}

func (c *counts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.n)
}

// fast are options that retry at once.
func fast(f *pagerfake.Server, m pager.Metrics) pager.Options {
	return pager.Options{URL: f.URL(), Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Metrics: m}
}

const routingKey = "R0UTINGKEYR0UTINGKEYR0UTINGKEY12"

var incident = pager.Incident{DedupKey: pager.DedupKey("c1"), Summary: "Deploy build 1234 now?", Description: "agent-1 has waited 2m",
	Severity: pager.Warning, Source: "askslack", Component: "agent-1", Group: "sess-1", Class: "plan",
	Links:   []pager.Link{{Href: "https://slack.example/archives/C1/p1", Text: "Slack message"}, {Href: "https://askslack.example/app/asks/c1", Text: "Answer page"}},
	Details: map[string]string{"agent": "agent-1", "caller": "ci", "session": "sess-1"}}

func TestPagerDutyTriggersAndResolves(t *testing.T) {
	f := pagerfake.New(pagerfake.Options{RoutingKey: routingKey})
	defer f.Close()
	m := &counts{}
	p := pager.NewPagerDuty(routingKey, fast(f, m))
	ctx := context.Background()
	if err := p.Open(ctx, incident); err != nil {
		t.Fatal(err)
	}
	if err := p.Resolve(ctx, incident.DedupKey, "answered"); err != nil {
		t.Fatal(err)
	}
	evs := f.Events()
	if len(evs) != 2 {
		t.Fatalf("events: %+v", evs)
	}
	tr, rs := evs[0], evs[1]
	if tr.Action != "trigger" || tr.DedupKey != "askslack/c1" || tr.Summary != incident.Summary || tr.Severity != "warning" ||
		tr.Details["caller"] != "ci" || len(tr.Links) != 2 || tr.Links[1] != "https://askslack.example/app/asks/c1" {
		t.Fatalf("trigger: %+v %s", tr, tr.Body)
	}
	for _, want := range []string{`"component":"agent-1"`, `"group":"sess-1"`, `"class":"plan"`, `"source":"askslack"`, `"client":"askslack"`} {
		if !strings.Contains(string(tr.Body), want) {
			t.Errorf("trigger lacks %s: %s", want, tr.Body)
		}
	}
	if rs.Action != "resolve" || rs.DedupKey != "askslack/c1" || strings.Contains(string(rs.Body), "payload") {
		t.Fatalf("resolve: %+v %s", rs, rs.Body)
	}
	if got := m.String(); got != "map[pagerduty open ok:1 pagerduty resolve ok:1]" {
		t.Fatalf("metrics: %s", got)
	}
}

func TestPagerDutyCutsALongSummary(t *testing.T) {
	f := pagerfake.New(pagerfake.Options{})
	defer f.Close()
	inc := incident
	inc.Summary = strings.Repeat("ü", 3000)
	inc.Severity = "" // not one of PagerDuty's: sent as warning
	if err := pager.NewPagerDuty(routingKey, fast(f, nil)).Open(context.Background(), inc); err != nil {
		t.Fatal(err)
	}
	e := f.Events()[0]
	if n := utf8.RuneCountInString(e.Summary); n != 1024 || !strings.HasSuffix(e.Summary, "…") || e.Severity != "warning" {
		t.Fatalf("summary of %d characters, severity %q", n, e.Severity)
	}
}

func TestRetriesOn429And5xxThenSucceeds(t *testing.T) {
	for _, provider := range []string{"pagerduty", "opsgenie"} {
		t.Run(provider, func(t *testing.T) {
			f := pagerfake.New(pagerfake.Options{})
			defer f.Close()
			m := &counts{}
			p := newPager(provider, f, m)
			f.Fail(429, 500, 503)
			if err := p.Open(context.Background(), incident); err != nil {
				t.Fatal(err)
			}
			if f.Requests() != 4 || len(f.Events()) != 1 {
				t.Fatalf("%d requests, %d events; want 3 failures then the event", f.Requests(), len(f.Events()))
			}
			if got, want := m.String(), fmt.Sprintf("map[%s open ok:1]", provider); got != want {
				t.Fatalf("metrics %s; want %s", got, want)
			}
		})
	}
}

func TestA4xxIsNotRetried(t *testing.T) {
	for _, provider := range []string{"pagerduty", "opsgenie"} {
		t.Run(provider, func(t *testing.T) {
			f := pagerfake.New(pagerfake.Options{})
			defer f.Close()
			m := &counts{}
			p := newPager(provider, f, m)
			f.Fail(400)
			err := p.Open(context.Background(), incident)
			var se *pager.StatusError
			if !errors.Is(err, pager.ErrRejected) || !errors.As(err, &se) || se.Status != 400 {
				t.Fatalf("err %v; want a final 400", err)
			}
			if f.Requests() != 1 {
				t.Fatalf("%d requests; a 400 is not retried", f.Requests())
			}
			if got, want := m.String(), fmt.Sprintf("map[%s open rejected:1]", provider); got != want {
				t.Fatalf("metrics %s; want %s", got, want)
			}
		})
	}
}

func TestRetriesAreBounded(t *testing.T) {
	f := pagerfake.New(pagerfake.Options{})
	defer f.Close()
	m := &counts{}
	opts := fast(f, m)
	opts.Attempts = 3
	f.Fail(500, 500, 500, 500)
	err := pager.NewPagerDuty(routingKey, opts).Resolve(context.Background(), "askslack/c1", "")
	if err == nil || errors.Is(err, pager.ErrRejected) {
		t.Fatalf("err %v; want a failure that is not final", err)
	}
	if f.Requests() != 3 || m.String() != "map[pagerduty resolve failed:1]" {
		t.Fatalf("%d requests, metrics %s; want 3 attempts", f.Requests(), m)
	}
}

func TestRetriesStopWithTheContext(t *testing.T) {
	f := pagerfake.New(pagerfake.Options{})
	defer f.Close()
	opts := fast(f, nil)
	opts.Attempts, opts.Backoff, opts.MaxBackoff = 10, time.Hour, time.Hour
	f.Fail(503, 503)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := pager.NewPagerDuty(routingKey, opts).Open(ctx, incident); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v; want the context's", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s: the backoff outlived the context", d)
	}
}

func TestOpsgenieCreatesAndClosesByAlias(t *testing.T) {
	f := pagerfake.New(pagerfake.Options{APIKey: "genie-key"})
	defer f.Close()
	m := &counts{}
	p := pager.NewOpsgenie("genie-key", fast(f, m))
	ctx := context.Background()
	inc := incident
	inc.Summary = strings.Repeat("Why? ", 100)
	inc.Severity = pager.Error
	if err := p.Open(ctx, inc); err != nil {
		t.Fatal(err)
	}
	if err := p.Resolve(ctx, inc.DedupKey, "answered"); err != nil {
		t.Fatal(err)
	}
	evs := f.Events()
	if len(evs) != 2 {
		t.Fatalf("events: %+v", evs)
	}
	c, cl := evs[0], evs[1]
	if c.Action != "create" || c.DedupKey != "askslack/c1" || utf8.RuneCountInString(c.Summary) > 130 || c.Severity != "P2" ||
		c.Details["agent"] != "agent-1" || c.Details["answer page"] != "https://askslack.example/app/asks/c1" {
		t.Fatalf("create: %+v %s", c, c.Body)
	}
	if !strings.Contains(string(c.Body), `Answer page: https://askslack.example/app/asks/c1`) {
		t.Fatalf("the description lacks the links: %s", c.Body)
	}
	if cl.Action != "close" || cl.DedupKey != "askslack/c1" || cl.Note != "answered" {
		t.Fatalf("close: %+v", cl)
	}
	// A wrong key is final.
	bad := pager.NewOpsgenie("other", fast(f, m))
	if err := bad.Open(ctx, incident); !errors.Is(err, pager.ErrRejected) {
		t.Fatalf("wrong key: %v", err)
	}
	if got := m.String(); got != "map[opsgenie open ok:1 opsgenie open rejected:1 opsgenie resolve ok:1]" {
		t.Fatalf("metrics: %s", got)
	}
}

func TestSeverityOfKind(t *testing.T) {
	for kind, want := range map[string]string{"permission": "error P2", "plan": "warning P3", "question": "info P4", "": "info P4"} {
		s := pager.SeverityOf(kind)
		if got := string(s) + " " + s.Priority(); got != want {
			t.Errorf("%q: %s; want %s", kind, got, want)
		}
	}
	if pager.Critical.Priority() != "P1" || pager.Severity("high").Valid() {
		t.Error("critical is P1, high is no severity")
	}
}

func newPager(provider string, f *pagerfake.Server, m pager.Metrics) pager.Pager {
	if provider == "opsgenie" {
		return pager.NewOpsgenie("genie-key", fast(f, m))
	}
	return pager.NewPagerDuty(routingKey, fast(f, m))
}
