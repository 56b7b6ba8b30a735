package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/askslack/askslack/webhook"
)

const secret = "0123456789abcdef0123456789abcdef-test"

// signed is the headers of body sent at at, as the dispatcher signs them:
// the Standard Webhooks set and the deprecated askslack set.
func signed(sec string, at time.Time, body []byte) http.Header {
	h := http.Header{}
	ts := strconv.FormatInt(at.Unix(), 10)
	h.Set(webhook.HeaderStdID, "wh_1")
	h.Set(webhook.HeaderStdTimestamp, ts)
	h.Set(webhook.HeaderStdSignature, webhook.Sign(sec, "wh_1", at.Unix(), body))
	h.Set(webhook.HeaderID, "wh_1")
	h.Set(webhook.HeaderTimestamp, ts)
	h.Set(webhook.HeaderSignature, webhook.SignLegacy(sec, at.Unix(), body))
	return h
}

// legacyOnly is h as a release before Standard Webhooks sent it.
func legacyOnly(h http.Header) http.Header {
	h = h.Clone()
	for _, k := range []string{webhook.HeaderStdID, webhook.HeaderStdTimestamp, webhook.HeaderStdSignature} {
		h.Del(k)
	}
	return h
}

// The signature is the Standard Webhooks one: the example of the
// specification (its secret, id, timestamp and payload) signs to the
// value it gives.
func TestSignIsStandardWebhooks(t *testing.T) {
	const sec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	got := webhook.Sign(sec, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %s; want %s", got, want)
	}
	// A plain secret is the key as it is: its whsec_ form (the prefix and
	// the base64 of its bytes) signs the same.
	body := []byte(`{"id":"wh_1"}`)
	whsec := webhook.SecretPrefix + base64.StdEncoding.EncodeToString([]byte(secret))
	if a, b := webhook.Sign(secret, "wh_1", 1, body), webhook.Sign(whsec, "wh_1", 1, body); a != b {
		t.Fatalf("a plain secret signs %s, its whsec_ form %s", a, b)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("wh_1.1." + string(body)))
	if got, want := webhook.Sign(secret, "wh_1", 1, body), "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("Sign = %s; want %s", got, want)
	}
}

// The deprecated signature is as documented: v1= and the hex HMAC-SHA256
// of "<timestamp>.<body>", keyed by the secret (a whsec_ one's key).
func TestSignLegacyIsHMACOfTimestampDotBody(t *testing.T) {
	body := []byte(`{"id":"wh_1","type":"ask.created"}`)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("1800000000." + string(body)))
	if got, want := webhook.SignLegacy(secret, 1_800_000_000, body), "v1="+hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("SignLegacy = %s; want %s", got, want)
	}
	key := []byte("a key of twenty-four bytes")
	m = hmac.New(sha256.New, key)
	m.Write([]byte("1800000000." + string(body)))
	whsec := webhook.SecretPrefix + base64.StdEncoding.EncodeToString(key)
	if got, want := webhook.SignLegacy(whsec, 1_800_000_000, body), "v1="+hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("SignLegacy(whsec_…) = %s; want %s", got, want)
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
		{"the deprecated headers only", legacyOnly(signed(secret, now, body)), body, 0, nil},
		{"the deprecated headers only, tampered", legacyOnly(signed(secret, now, body)), []byte(`{}`), 0, webhook.ErrSignature},
		{"the deprecated headers only, replayed", legacyOnly(signed(secret, now.Add(-6*time.Minute), body)), body, 0, webhook.ErrTimestamp},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := webhook.Verify(secret, c.header, c.body, now, c.tol); !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v; want %v", err, c.want)
			}
		})
	}

	// An old signature on a fresh timestamp: the timestamp is signed too.
	h := signed(secret, now.Add(-time.Hour), body)
	h.Set(webhook.HeaderStdTimestamp, strconv.FormatInt(now.Unix(), 10))
	if err := webhook.Verify(secret, h, body, now, 0); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("an old signature under a new timestamp: %v; want ErrSignature", err)
	}
	// The id is signed: another event's id under this signature fails.
	h = signed(secret, now, body)
	h.Set(webhook.HeaderStdID, "wh_2")
	if err := webhook.Verify(secret, h, body, now, 0); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("another id: %v; want ErrSignature", err)
	}
	// A standard signature that fails is not rescued by the deprecated one.
	h = signed(secret, now, body)
	h.Set(webhook.HeaderStdSignature, "v1,AAAA")
	if err := webhook.Verify(secret, h, body, now, 0); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("a bad standard signature beside a good deprecated one: %v; want ErrSignature", err)
	}
	// Several signatures (a receiver rotating secrets lists both): one
	// match is enough; garbage beside it changes nothing.
	h = signed(secret, now, body)
	h.Set(webhook.HeaderStdSignature, "v1,ZGVhZGJlZWY= v0,zz "+h.Get(webhook.HeaderStdSignature))
	if err := webhook.Verify(secret, h, body, now, 0); err != nil {
		t.Fatalf("one of several signatures matches: %v", err)
	}
	h = legacyOnly(signed(secret, now, body))
	h.Set(webhook.HeaderSignature, "v1=deadbeef, v0=zz "+h.Get(webhook.HeaderSignature))
	if err := webhook.Verify(secret, h, body, now, 0); err != nil {
		t.Fatalf("one of several deprecated signatures matches: %v", err)
	}
	for _, k := range []string{webhook.HeaderStdID, webhook.HeaderStdTimestamp} {
		h = signed(secret, now, body)
		h.Set(k, "")
		if k == webhook.HeaderStdTimestamp {
			h.Set(k, "soon")
		}
		if err := webhook.Verify(secret, h, body, now, 0); !errors.Is(err, webhook.ErrNoSignature) {
			t.Fatalf("%s missing or malformed: %v", k, err)
		}
	}
}
