package webhook_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/askslack/askslack/webhook"
)

func TestParseEndpoints(t *testing.T) {
	got, err := webhook.ParseEndpoints([]string{" audit=https://hooks.example.com/askslack?token=s3cret ", "", "local-1=http://127.0.0.1:9000/in", "v6=http://[::1]:80/", "dev=http://localhost:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != (webhook.Endpoint{Name: "audit", URL: "https://hooks.example.com/askslack?token=s3cret"}) || got[1].Name != "local-1" {
		t.Fatalf("endpoints %+v", got)
	}
	if r := got[0].Redacted(); r != "https://hooks.example.com/…" {
		t.Errorf("Redacted = %q: the path and query may hold a token", r)
	}
	for _, c := range []struct {
		entry, want string
	}{
		{"https://hooks.example.com/x", "is not name=https://url"},
		{"Audit=https://hooks.example.com", `endpoint name "Audit" must be 1 to 32 lowercase`},
		{strings.Repeat("a", 33) + "=https://hooks.example.com", "must be 1 to 32"},
		{"a=http://hooks.example.com/secret-path", "endpoint a (http://hooks.example.com/…): https is required (http only to a loopback address)"},
		{"a=ftp://hooks.example.com", "the URL must be https"},
		{"a=/relative", "not an absolute URL"},
		{"a=", "is not name=https://url"},
	} {
		_, err := webhook.ParseEndpoints([]string{c.entry})
		if err == nil || !strings.HasPrefix(err.Error(), "ASKSLACK_WEBHOOKS: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want ASKSLACK_WEBHOOKS: …%s", c.entry, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret-path") {
			t.Errorf("%q: the error shows the URL's path: %v", c.entry, err)
		}
	}
	if _, err := webhook.ParseEndpoints([]string{"a=https://x.example", "a=https://y.example"}); err == nil || !strings.Contains(err.Error(), `"a" is used twice`) {
		t.Errorf("a name twice: %v", err)
	}
}

func TestParseEventsAndSecret(t *testing.T) {
	if got, err := webhook.ParseEvents(nil); err != nil || len(got) != 0 {
		t.Fatalf("no filter: %v %v", got, err)
	}
	if got, err := webhook.ParseEvents([]string{"ask.answered", " rule.granted", "ask.answered"}); err != nil || strings.Join(got, ",") != "ask.answered,rule.granted" {
		t.Fatalf("a filter: %v %v", got, err)
	}
	if _, err := webhook.ParseEvents([]string{"ask.answered", "ask.posted"}); err == nil ||
		!strings.Contains(err.Error(), `ASKSLACK_WEBHOOK_EVENTS: unknown event "ask.posted"`) {
		t.Fatalf("an unknown event: %v", err)
	}
	long := strings.Repeat("k", webhook.MinSecretLen)
	for _, c := range []struct {
		secret    string
		endpoints int
		want      string
	}{
		{"", 0, ""},
		{long, 1, ""},
		{"", 1, "ASKSLACK_WEBHOOKS needs ASKSLACK_WEBHOOK_SECRET"},
		{"short-secret", 1, "ASKSLACK_WEBHOOK_SECRET is 12 bytes: it must be at least 32"},
		{long, 0, "ASKSLACK_WEBHOOK_SECRET is set but ASKSLACK_WEBHOOKS is not"},
		// The Standard Webhooks form: whsec_ and the base64 of 24 bytes or more.
		{"whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 24))), 1, ""},
		{"whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 23))), 1, "not the base64 of a key of at least 24 bytes"},
		{"whsec_not base64!" + long, 1, "not the base64 of a key"},
	} {
		err := webhook.CheckSecret(c.secret, c.endpoints)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckSecret(%d bytes, %d endpoints) = %v; want %q", len(c.secret), c.endpoints, err, c.want)
		}
		if err != nil && c.secret != "" && strings.Contains(err.Error(), c.secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
}
