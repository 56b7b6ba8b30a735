package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/askslack/askslack/webhook"
)

const secret = "0123456789abcdef0123456789abcdef-test"

// signed is the headers of body sent at at, as the dispatcher signs them.
func signed(sec string, at time.Time, body []byte) http.Header {
	h := http.Header{}
	h.Set(webhook.HeaderID, "wh_1")
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(webhook.HeaderSignature, webhook.Sign(sec, at.Unix(), body))
	return h
}

// The signature is the documented one: v1= and the hex HMAC-SHA256 of
// "<timestamp>.<body>", which a receiver in any language recomputes.
func TestSignIsHMACOfTimestampDotBody(t *testing.T) {
	body := []byte(`{"id":"wh_1","type":"ask.created"}`)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("1800000000." + string(body)))
	if got, want := webhook.Sign(secret, 1_800_000_000, body), "v1="+hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("Sign = %s; want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"wh_1","type":"ask.answered","seq":7}`)
	for _, c := range []struct {
		name   string
		header http.Header
		body   []byte
		tol    time.Duration
		want   error
	}{
		{"fresh and intact", signed(secret, now.Add(-time.Second), body), body, 0, nil},
		{"a little ahead of the receiver's clock", signed(secret, now.Add(time.Minute), body), body, 0, nil},
		{"a replay: the same request six minutes later", signed(secret, now.Add(-6*time.Minute), body), body, 0, webhook.ErrTimestamp},
		{"a replay within a tolerance of its own", signed(secret, now.Add(-6*time.Minute), body), body, 10 * time.Minute, nil},
		{"a timestamp far ahead", signed(secret, now.Add(time.Hour), body), body, 0, webhook.ErrTimestamp},
		{"a tampered body", signed(secret, now, body), []byte(`{"id":"wh_1","type":"ask.answered","seq":8}`), 0, webhook.ErrSignature},
		{"another secret", signed("another-secret-another-secret-0000", now, body), body, 0, webhook.ErrSignature},
		{"no headers", http.Header{}, body, 0, webhook.ErrNoSignature},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := webhook.Verify(secret, c.header, c.body, now, c.tol); !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v; want %v", err, c.want)
			}
		})
	}

	// An old signature on a fresh timestamp: the timestamp is signed too.
	h := signed(secret, now.Add(-time.Hour), body)
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	if err := webhook.Verify(secret, h, body, now, 0); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("an old signature under a new timestamp: %v; want ErrSignature", err)
	}
	// Several signatures (a receiver rotating secrets lists both): one
	// match is enough; garbage beside it changes nothing.
	h = signed(secret, now, body)
	h.Set(webhook.HeaderSignature, "v1=deadbeef, v0=zz "+h.Get(webhook.HeaderSignature))
	if err := webhook.Verify(secret, h, body, now, 0); err != nil {
		t.Fatalf("one of several signatures matches: %v", err)
	}
	h.Set(webhook.HeaderTimestamp, "soon")
	if err := webhook.Verify(secret, h, body, now, 0); !errors.Is(err, webhook.ErrNoSignature) {
		t.Fatalf("a timestamp that is not a number: %v", err)
	}
}
