package hostapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

type notices struct {
	got  []string
	fail bool
}

func (n *notices) Notify(_ context.Context, a waterfall.Agent, text, channel string) error {
	if n.fail {
		return errors.New("channel_not_found")
	}
	n.got = append(n.got, a.ID+"|"+text+"|"+channel)
	return nil
}

func TestNotices(t *testing.T) {
	t.Parallel()
	n := &notices{}
	st := store.NewMemory(0, nil)
	srv := started(t, hostapi.NewServer(engine.NewHost(st, instant, engine.HostOptions{}), hostapi.Options{Notifier: n, Leases: st}))
	post := func(body string) (int, string) {
		w := do(srv, "POST", "/v1/notices", "127.0.0.1:5000", "", body)
		return w.Code, w.Body.String()
	}
	if code, body := post(`{"agent":{"id":"claude-code"},"text":"Permission needed","channel":"C9"}`); code != 200 || !strings.Contains(body, `"posted":true`) {
		t.Fatalf("notice: %d %s", code, body)
	}
	if len(n.got) != 1 || n.got[0] != "claude-code|Permission needed|C9" {
		t.Fatalf("notified %v", n.got)
	}
	for _, bad := range []string{`{"agent":{},"text":"x"}`, `{"agent":{"id":"a"},"text":"  "}`,
		`{"agent":{"id":"a"},"text":"` + strings.Repeat("x", 3001) + `"}`, `{"agent":{"id":"a"},"text":"x","channel":"a b"}`, `nope`} {
		if code, body := post(bad); code != 400 || !strings.Contains(body, "BAD_REQUEST") {
			t.Fatalf("%.40s: %d %s", bad, code, body)
		}
	}
	n.fail = true
	if code, body := post(`{"agent":{"id":"a"},"text":"x"}`); code != 503 || !strings.Contains(body, "NO_PROVIDER") {
		t.Fatalf("failed post: %d %s", code, body)
	}
	if w := do(server(t), "POST", "/v1/notices", "127.0.0.1:5000", "", `{"agent":{"id":"a"},"text":"x"}`); w.Code != 503 {
		t.Fatalf("no notifier: %d", w.Code)
	}
}
