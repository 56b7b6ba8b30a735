package hostapi_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// With several workspaces an agent asks in its own, and only there.
func TestAsksAreBoundToTheirCallersWorkspace(t *testing.T) {
	st := store.NewMemory(0, nil)
	installed := map[string]bool{"T1": true}
	srv := started(t, hostapi.NewServer(engine.NewHost(st, instant, engine.HostOptions{}), hostapi.Options{
		Callers: agents(t, "one:secret-one-000000", "two:secret-two-000000", "lost:secret-lost-00000"), Leases: st,
		Workspaces: map[string]string{"one": "T1", "two": "T2"},
		Served: func(_ context.Context, team string) error {
			if !installed[team] {
				return errors.New("not installed")
			}
			return nil
		}}))
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ctx := context.Background()
	as := func(secret string) *hostapi.Client { return &hostapi.Client{BaseURL: hs.URL, Token: secret} }
	req := func(id, ws string) *waterfall.Request {
		r := &waterfall.Request{CallID: id, Agent: waterfall.Agent{ID: "a"}, Workspace: ws,
			Questions: []waterfall.Question{{ID: "q", Question: "Go?", Options: []waterfall.Option{{Label: "Yes"}, {Label: "No"}}}}}
		return r
	}
	if _, err := as("secret-one-000000").Ask(ctx, req("c1", "")); err != nil {
		t.Fatalf("an ask in the caller's workspace: %v", err)
	}
	a, err := st.Get(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := waterfall.DecodeRequest(a); r.Workspace != "T1" {
		t.Fatalf("the stored ask's workspace is %q, want the caller's T1", r.Workspace)
	}
	for _, c := range []struct {
		secret, id, ws, code string
	}{
		{"secret-one-000000", "c2", "T2", waterfall.CodeForbidden}, // names another workspace
		{"secret-lost-00000", "c3", "", waterfall.CodeForbidden},   // bound to none
		{"secret-two-000000", "c4", "", waterfall.CodeNoProvider},  // its workspace is not installed
		{"secret-one-000000", "c5", "T1", ""},                      // naming its own is fine
	} {
		_, err := as(c.secret).Ask(ctx, req(c.id, c.ws))
		if waterfall.CodeOf(err) != c.code && !(c.code == "" && err == nil) {
			t.Errorf("%s asking in %q: %v, want %q", c.secret, c.ws, err, c.code)
		}
		if c.code != "" {
			if _, err := st.Get(ctx, c.id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a refused ask %s was stored: %v", c.id, err)
			}
		}
	}
}
