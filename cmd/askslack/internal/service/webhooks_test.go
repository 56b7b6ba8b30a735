package service

import (
	"strings"
	"testing"
	"time"
)

// The webhook settings: endpoints need the secret, the secret and the
// filter need endpoints; each error names the variable and none shows the
// secret.
func TestWebhookConfig(t *testing.T) {
	t.Parallel()
	base := Config{BotToken: "xoxb-1", AppToken: "xapp-1", RedisPrefix: "askslack", Addr: ":8080",
		Retention: 168 * time.Hour, ClaimLease: 15 * time.Second, ReattachGrace: 30 * time.Second,
		ReadTimeout: 30 * time.Second, ShutdownGrace: time.Second, LogLevel: "info", ReconcileAfter: time.Minute, Delivery: "channel"}
	const secret = "s3cret-s3cret-s3cret-s3cret-0001"
	for _, tc := range []struct {
		name                  string
		hooks, events         []string
		secret, want, wantEPs string
	}{
		{"off", nil, nil, "", "", ""},
		{"on", []string{"audit=https://hooks.example.com/in", " tickets=http://127.0.0.1:9000"}, []string{"ask.answered"}, secret, "", "audit,tickets"},
		{"no secret", []string{"audit=https://hooks.example.com/in"}, nil, "", "ASKSLACK_WEBHOOKS needs ASKSLACK_WEBHOOK_SECRET", ""},
		{"a short secret", []string{"audit=https://hooks.example.com/in"}, nil, "short", "ASKSLACK_WEBHOOK_SECRET is 5 bytes", ""},
		{"a secret alone", nil, nil, secret, "ASKSLACK_WEBHOOK_SECRET is set but ASKSLACK_WEBHOOKS is not", ""},
		{"a filter alone", nil, []string{"ask.answered"}, "", "ASKSLACK_WEBHOOK_EVENTS is set but ASKSLACK_WEBHOOKS is not", ""},
		{"an unknown event", []string{"audit=https://hooks.example.com/in"}, []string{"ask.clicked"}, secret, `ASKSLACK_WEBHOOK_EVENTS: unknown event "ask.clicked"`, ""},
		{"plain http", []string{"audit=http://hooks.example.com/in"}, nil, secret, "ASKSLACK_WEBHOOKS: endpoint audit", ""},
	} {
		c := base
		c.WebhookURLs, c.WebhookEvents, c.WebhookSecret = tc.hooks, tc.events, tc.secret
		err := c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		case err != nil && strings.Contains(err.Error(), secret):
			t.Errorf("%s: the error shows the secret: %v", tc.name, err)
		}
		var names []string
		for _, e := range c.endpoints {
			names = append(names, e.Name)
		}
		if tc.want == "" && strings.Join(names, ",") != tc.wantEPs {
			t.Errorf("%s: endpoints %v; want %s", tc.name, names, tc.wantEPs)
		}
	}
}
