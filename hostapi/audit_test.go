package hostapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// auditServer serves the API with agents alice and mallory, an answer
// surface and an operator, over a Memory store with its audit trail.
func auditServer(t *testing.T) *httptest.Server {
	t.Helper()
	var creds []hostapi.Credential
	n := 0
	for _, c := range []struct {
		role    hostapi.Role
		entries []string
	}{
		{hostapi.RoleAgent, []string{"alice:alice-secret-000000001", "mallory:mallory-secret-0000001"}},
		{hostapi.RoleAnswer, []string{"console:console-secret-000001"}},
		{hostapi.RoleAdmin, []string{"ops:ops-secret-00000000000001"}},
	} {
		got, err := hostapi.ParseCredentials("X", c.role, c.entries, false, &n)
		if err != nil {
			t.Fatal(err)
		}
		creds = append(creds, got...)
	}
	callers, err := hostapi.NewCallers(creds, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory(0, nil)
	h := engine.NewHost(st, instant, engine.HostOptions{Audit: st})
	api := started(t, hostapi.NewServer(h, hostapi.Options{Callers: callers, Leases: st}))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close) // before api's Stop (cleanups run last first)
	return srv
}

func TestAuditRouteIsForOperatorsAndRecordsRefusals(t *testing.T) {
	t.Parallel()
	srv := auditServer(t)
	ctx := context.Background()
	client := func(token string) *hostapi.Client { return &hostapi.Client{BaseURL: srv.URL, Token: token} }
	alice, mallory := client("alice-secret-000000001"), client("mallory-secret-0000001")
	console, ops := client("console-secret-000001"), client("ops-secret-00000000000001")

	req := &waterfall.Request{CallID: "c1", Agent: waterfall.Agent{ID: "claude", SessionID: "s1"},
		Questions: []waterfall.Question{{ID: "q", Question: "?", Options: []waterfall.Option{{Label: "A"}}}}}
	if _, err := alice.Ask(ctx, req); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*hostapi.Client{alice, mallory, console} {
		if _, err := c.Audit(ctx, asktype.AuditQuery{}); waterfall.CodeOf(err) != waterfall.CodeForbidden {
			t.Errorf("%s reading the audit trail: %v; want FORBIDDEN", c.Token[:5], err)
		}
	}
	if _, err := mallory.Get(ctx, "c1", 0); waterfall.CodeOf(err) != waterfall.CodeNotFound {
		t.Fatalf("mallory reading alice's ask: %v", err)
	}
	if _, err := alice.Answer(ctx, "c1", hostapi.AnswerBody{}); waterfall.CodeOf(err) != waterfall.CodeForbidden {
		t.Fatalf("an agent answering: %v", err)
	}
	if _, err := ops.Abort(ctx, "c1"); waterfall.CodeOf(err) != waterfall.CodeAlreadySettled {
		t.Fatal(err) // answered already: nothing to withdraw, nothing recorded
	}

	var got []asktype.AuditEntry
	var v store.ChainVerifier
	if err := ops.AuditAll(ctx, asktype.AuditQuery{Limit: 2}, func(e *asktype.AuditEntry) error {
		got = append(got, *e)
		return v.Next(e)
	}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, e.Event+" "+e.Caller+" "+e.CallID+" "+e.Detail)
	}
	want := []string{
		"asked alice c1 question",
		"answered alice c1 ",
		"refused alice  GET /v1/audit: only operators (ASKSLACK_ADMIN_TOKENS) read the audit trail (alice is agent)",
		"refused mallory  GET /v1/audit: only operators (ASKSLACK_ADMIN_TOKENS) read the audit trail (mallory is agent)",
		"refused console  GET /v1/audit: only operators (ASKSLACK_ADMIN_TOKENS) read the audit trail (console is answer)",
		"refused mallory c1 GET /v1/asks/{callId}: another caller's ask",
		"refused alice c1 POST /v1/asks/{callId}/answer: answers come from people, not agents: answer in Slack, or through an answer surface's token (ASKSLACK_ANSWER_TOKENS) (alice is agent)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the trail:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	page, err := ops.Audit(ctx, asktype.AuditQuery{CallID: "c1", Since: time.Now().Add(-time.Hour)})
	if err != nil || len(page.Events) != 4 || page.Next != "" {
		t.Fatalf("callId c1 since 1h: %d events, next %q, %v", len(page.Events), page.Next, err)
	}
	for _, bad := range []string{"?limit=0", "?limit=1001", "?since=yesterday", "?since=-5m", "?cursor=nope"} {
		code, body := get(t, srv.URL+"/v1/audit"+bad, "ops-secret-00000000000001")
		if code != 400 || !strings.Contains(body, "BAD_REQUEST") {
			t.Errorf("GET /v1/audit%s: %d %s", bad, code, body)
		}
	}
	if _, err := ops.Audit(ctx, asktype.AuditQuery{Since: time.Now().Add(-24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

// get GETs url with a bearer token and returns the status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h":                  now.Add(-24 * time.Hour),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
		"2026-04-30T10:00:00Z": time.Date(2026, 4, 30, 10, 0, 0, 0, time.UTC),
	} {
		if got, err := hostapi.ParseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0h", "-1h", "yesterday", "7x", "d"} {
		if _, err := hostapi.ParseSince(bad, now); err == nil {
			t.Errorf("ParseSince(%q) passed", bad)
		}
	}
}
