package webhooks

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/hostapi"
)

// fakeAPI answers the webhook routes as a bot with one endpoint, "audit",
// would, and records the redeliveries asked for.
func fakeAPI(t *testing.T) (*httptest.Server, *[]hostapi.RedeliverBody) {
	t.Helper()
	var asked []hostapi.RedeliverBody
	now := time.Now().UTC()
	failedAt, next := now.Add(-90*time.Second), now.Add(2*time.Minute)
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":"NOT_FOUND","message":"no webhook endpoint named \"nope\" (ASKSLACK_WEBHOOKS)"}}`)
	}
	mux.HandleFunc("GET /v1/webhooks", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ops" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"error":{"code":"FORBIDDEN","message":"only operators"}}`)
			return
		}
		write(w, hostapi.WebhooksPage{Endpoints: []hostapi.WebhookEndpoint{
			{Name: "audit", URL: "https://hooks.example.com/…", Started: true, Cursor: 40, End: 42, Behind: 2, LagSeconds: 95,
				Attempts: 3, NextAttempt: &next, LastError: "HTTP 503:\nbusy", LastErrorAt: &failedAt, DeadLetters: 1, Redelivery: 1},
			{Name: "fresh", URL: "https://other.example.com"},
		}})
	})
	mux.HandleFunc("GET /v1/webhooks/{name}/dead", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "audit" {
			notFound(w)
			return
		}
		write(w, hostapi.DeadLettersPage{DeadLetters: []hostapi.WebhookDeadLetter{{ID: "wh_abc", Type: "ask.answered", Seq: 7, CallID: "c1",
			At: now.Add(-25 * time.Hour), DeadAt: now.Add(-time.Hour), Attempts: 160, LastError: "HTTP 404"}}})
	})
	mux.HandleFunc("POST /v1/webhooks/{name}/redeliver", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "audit" {
			notFound(w)
			return
		}
		var b hostapi.RedeliverBody
		_ = json.NewDecoder(r.Body).Decode(&b)
		asked = append(asked, b)
		write(w, hostapi.Redelivered{Queued: max(1, len(b.IDs))})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &asked
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(args, &out)
	return out.String(), err
}

func TestListsEndpointsAndDeadLetters(t *testing.T) {
	t.Setenv("ASKSLACK_TOKEN", "ops")
	srv, asked := fakeAPI(t)
	out, err := run(t, "--url", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAME", "LAG", "audit", "https://hooks.example.com/…", "40/42", "1m35s", "1m30s ago: HTTP 503: busy (retrying: 3 attempts, next in 2m0s)",
		"1 (+1 redelivering)", "fresh"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	out, err = run(t, "--json", "--url", srv.URL)
	var page hostapi.WebhooksPage
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Endpoints) != 2 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	// Flags after the arguments, as people type them.
	out, err = run(t, "dead", "audit", "--url", srv.URL)
	if err != nil || !strings.Contains(out, "wh_abc") || !strings.Contains(out, "ask.answered") || !strings.Contains(out, "160") {
		t.Fatalf("dead audit: %v\n%s", err, out)
	}
	if _, err := run(t, "dead", "nope", "--url", srv.URL); cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Fatalf("dead of an unknown endpoint: %v (exit %d); want exit 1", err, cli.ExitCode(err))
	}
	if out, err := run(t, "redeliver", "audit", "wh_abc", "wh_def", "--url", srv.URL); err != nil || !strings.Contains(out, "2 dead letter(s) of audit queued") {
		t.Fatalf("redeliver two: %v %s", err, out)
	}
	if out, err := run(t, "--url", srv.URL, "redeliver", "audit", "--all"); err != nil || !strings.Contains(out, "1 dead letter(s)") {
		t.Fatalf("redeliver --all: %v %s", err, out)
	}
	if len(*asked) != 2 || strings.Join((*asked)[0].IDs, ",") != "wh_abc,wh_def" || !(*asked)[1].All {
		t.Fatalf("asked %+v", *asked)
	}
	if _, err := run(t, "--url", srv.URL, "--token", "agent"); cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "FORBIDDEN") {
		t.Fatalf("an agent's token: %v (exit %d); want exit 2", err, cli.ExitCode(err))
	}
}

// Usage errors are exit status 2, before any request.
func TestUsageErrorsAreStatus2(t *testing.T) {
	for _, args := range [][]string{
		{"dead"}, {"dead", "a", "b"}, {"redeliver", "a"}, {"redeliver", "a", "wh_1", "--all"}, {"frobnicate"}, {"--nope"}, {"--all"},
	} {
		_, err := run(t, append(args, "--url", "http://127.0.0.1:1")...)
		if cli.ExitCode(err) != 2 {
			t.Errorf("webhooks %v: %v (exit %d); want exit 2", args, err, cli.ExitCode(err))
		}
	}
}
