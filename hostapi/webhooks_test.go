package hostapi_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// fakeWebhooks is a webhook service with one endpoint, "audit", and two
// dead letters.
type fakeWebhooks struct {
	redelivered []string
}

func (f *fakeWebhooks) WebhookEndpoints(context.Context) ([]hostapi.WebhookEndpoint, error) {
	return []hostapi.WebhookEndpoint{{Name: "audit", URL: "https://hooks.example.com/…", Started: true, Cursor: 4, End: 6, Behind: 2, DeadLetters: 2}}, nil
}

func (f *fakeWebhooks) WebhookDeadLetters(_ context.Context, name string) ([]hostapi.WebhookDeadLetter, error) {
	if name != "audit" {
		return nil, waterfall.Errorf(waterfall.CodeNotFound, "no webhook endpoint named %q", name)
	}
	return []hostapi.WebhookDeadLetter{{ID: "wh_1", Type: "ask.created", Seq: 1, DeadAt: time.Now()}, {ID: "wh_2", Type: "ask.answered", Seq: 3}}, nil
}

func (f *fakeWebhooks) RedeliverWebhooks(_ context.Context, name string, ids []string) (int, error) {
	if name != "audit" {
		return 0, waterfall.Errorf(waterfall.CodeNotFound, "no webhook endpoint named %q", name)
	}
	if len(ids) == 0 {
		ids = []string{"wh_1", "wh_2"}
	}
	f.redelivered = append(f.redelivered, ids...)
	return len(ids), nil
}

// The webhook routes are an operator's: agents and answer surfaces are
// FORBIDDEN and change nothing; without webhooks the list is empty and
// the rest NOT_FOUND.
func TestWebhookRoutesAreForOperators(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	serve := func(wh hostapi.Webhooks) func(token string) *hostapi.Client {
		callers, err := hostapi.NewCallers([]hostapi.Credential{
			mustCred(t, hostapi.RoleAgent, "alice:alice-secret-000000001"),
			mustCred(t, hostapi.RoleAnswer, "console:console-secret-000001"),
			mustCred(t, hostapi.RoleAdmin, "ops:ops-secret-00000000000001"),
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st := store.NewMemory(0, nil)
		api := started(t, hostapi.NewServer(engine.NewHost(st, instant, engine.HostOptions{Audit: st}),
			hostapi.Options{Callers: callers, Leases: st, Webhooks: wh}))
		srv := httptest.NewServer(api)
		t.Cleanup(srv.Close)
		return func(token string) *hostapi.Client { return &hostapi.Client{BaseURL: srv.URL, Token: token} }
	}
	wh := &fakeWebhooks{}
	client := serve(wh)
	for _, tok := range []string{"alice-secret-000000001", "console-secret-000001"} {
		c := client(tok)
		if _, err := c.Webhooks(ctx); waterfall.CodeOf(err) != waterfall.CodeForbidden {
			t.Errorf("%s listing webhooks: %v; want FORBIDDEN", tok[:5], err)
		}
		if _, err := c.WebhookDeadLetters(ctx, "audit"); waterfall.CodeOf(err) != waterfall.CodeForbidden {
			t.Errorf("%s reading dead letters: %v; want FORBIDDEN", tok[:5], err)
		}
		if _, err := c.RedeliverWebhooks(ctx, "audit", nil, true); waterfall.CodeOf(err) != waterfall.CodeForbidden {
			t.Errorf("%s redelivering: %v; want FORBIDDEN", tok[:5], err)
		}
	}
	if len(wh.redelivered) != 0 {
		t.Fatalf("a refused caller redelivered %v", wh.redelivered)
	}

	ops := client("ops-secret-00000000000001")
	eps, err := ops.Webhooks(ctx)
	if err != nil || len(eps) != 1 || eps[0].Name != "audit" || eps[0].Behind != 2 {
		t.Fatalf("Webhooks = %+v, %v", eps, err)
	}
	dead, err := ops.WebhookDeadLetters(ctx, "audit")
	if err != nil || len(dead) != 2 || dead[0].ID != "wh_1" {
		t.Fatalf("WebhookDeadLetters = %+v, %v", dead, err)
	}
	if _, err := ops.WebhookDeadLetters(ctx, "nope"); waterfall.CodeOf(err) != waterfall.CodeNotFound {
		t.Fatalf("an unknown endpoint: %v", err)
	}
	if n, err := ops.RedeliverWebhooks(ctx, "audit", []string{"wh_2"}, false); err != nil || n != 1 {
		t.Fatalf("redeliver one: %d, %v", n, err)
	}
	if n, err := ops.RedeliverWebhooks(ctx, "audit", nil, true); err != nil || n != 2 {
		t.Fatalf("redeliver all: %d, %v", n, err)
	}
	if !slices.Equal(wh.redelivered, []string{"wh_2", "wh_1", "wh_2"}) {
		t.Fatalf("redelivered %v", wh.redelivered)
	}
	for _, body := range []struct {
		ids []string
		all bool
	}{{nil, false}, {[]string{"wh_1"}, true}} {
		if _, err := ops.RedeliverWebhooks(ctx, "audit", body.ids, body.all); waterfall.CodeOf(err) != waterfall.CodeBadRequest {
			t.Errorf("redeliver %v all=%v: %v; want BAD_REQUEST", body.ids, body.all, err)
		}
	}

	none := serve(nil)("ops-secret-00000000000001")
	if eps, err := none.Webhooks(ctx); err != nil || len(eps) != 0 {
		t.Fatalf("without webhooks: %+v, %v", eps, err)
	}
	if _, err := none.RedeliverWebhooks(ctx, "audit", nil, true); waterfall.CodeOf(err) != waterfall.CodeNotFound {
		t.Fatalf("redelivering without webhooks: %v", err)
	}
}

func mustCred(t *testing.T, role hostapi.Role, entry string) hostapi.Credential {
	t.Helper()
	n := 0
	got, err := hostapi.ParseCredentials("X", role, []string{entry}, false, &n)
	if err != nil || len(got) != 1 {
		t.Fatalf("%s: %v", entry, err)
	}
	return got[0]
}
