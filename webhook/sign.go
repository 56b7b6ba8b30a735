package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery, signed the Standard Webhooks way
// (https://www.standardwebhooks.com), and the deprecated askslack ones
// sent beside them, with the same id and timestamp, until the first
// release after 2027-06-30 (docs/webhooks.md). The id is the body's "id":
// the same for every attempt and redelivery of one event to one endpoint.
const (
	HeaderStdID        = "Webhook-Id"
	HeaderStdTimestamp = "Webhook-Timestamp"
	HeaderStdSignature = "Webhook-Signature"
	HeaderID           = "Askslack-Webhook-Id"        // Deprecated: HeaderStdID.
	HeaderTimestamp    = "Askslack-Webhook-Timestamp" // Deprecated: HeaderStdTimestamp.
	HeaderSignature    = "Askslack-Webhook-Signature" // Deprecated: HeaderStdSignature.
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock (either way) when Verify is given none: a signature
// older than this is a replay.
const DefaultTolerance = 5 * time.Minute

// A secret is SecretPrefix and the base64 of a key of at least minKeyLen
// bytes (the Standard Webhooks form), or a plain one of at least
// MinSecretLen bytes, which is its own key.
const (
	SecretPrefix = "whsec_"
	MinSecretLen = 32
	minKeyLen    = 24 // the Standard Webhooks minimum
)

// Key is secret's HMAC-SHA256 key: what a whsec_ secret's base64 encodes
// (nil when it is none), or a plain secret's bytes (its whsec_ form is
// the prefix and their base64).
func Key(secret string) []byte {
	b64, whsec := strings.CutPrefix(secret, SecretPrefix)
	if !whsec {
		return []byte(secret)
	}
	key, _ := base64.StdEncoding.DecodeString(b64)
	return key
}

// Sign is the Webhook-Signature of body sent at timestamp (unix seconds)
// as delivery id: "v1," and the base64 HMAC-SHA256, keyed by Key(secret),
// of the id, a dot, the timestamp, a dot and the body.
func Sign(secret, id string, timestamp int64, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(secret, id+"."+strconv.FormatInt(timestamp, 10)+".", body))
}

// SignLegacy is the deprecated Askslack-Webhook-Signature: "v1=" and the
// hex HMAC-SHA256, keyed by Key(secret), of the timestamp, a dot and body.
func SignLegacy(secret string, timestamp int64, body []byte) string {
	return "v1=" + hex.EncodeToString(mac(secret, strconv.FormatInt(timestamp, 10)+".", body))
}

func mac(secret, prefix string, body []byte) []byte {
	h := hmac.New(sha256.New, Key(secret))
	h.Write([]byte(prefix))
	h.Write(body)
	return h.Sum(nil)
}

// What Verify refuses.
var (
	// ErrNoSignature: the id, timestamp or signature header is missing or
	// malformed.
	ErrNoSignature = errors.New("webhook: no valid Webhook-Id, Webhook-Timestamp and Webhook-Signature headers")
	// ErrSignature: no v1 signature matches the body, the id, the
	// timestamp and the secret (a forged or altered request, or another
	// secret).
	ErrSignature = errors.New("webhook: signature mismatch")
	// ErrTimestamp: the signature is valid but its timestamp is outside
	// the tolerance: a replayed request (or a clock far off).
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
)

// Verify checks a delivery as a receiver gets it: header holds its
// headers, body the raw bytes read (before any JSON decoding), now the
// receiver's time. It returns nil when a v1 signature in Webhook-Signature
// (several may be listed, space-separated) is Sign's for the Webhook-Id
// and Webhook-Timestamp headers and body under secret, and that timestamp
// is within tolerance of now (0: DefaultTolerance), which refuses a
// request recorded and replayed later. A request without Webhook-Signature
// is checked by its deprecated askslack headers (SignLegacy; signatures
// comma- or space-separated). Signatures are compared in constant time.
// Dedupe on the id as well: a retry of a delivery whose answer was lost
// carries the same id, freshly signed.
func Verify(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := header.Get(HeaderStdID), header.Get(HeaderStdTimestamp), header.Get(HeaderStdSignature)
	legacy := sigs == ""
	if legacy {
		ts, sigs = header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	}
	sent, err := strconv.ParseInt(ts, 10, 64)
	if sigs == "" || err != nil || (id == "" && !legacy) {
		return ErrNoSignature
	}
	want := Sign(secret, id, sent, body)
	if legacy {
		want = SignLegacy(secret, sent, body)
	}
	ok := false
	for _, s := range strings.FieldsFunc(sigs, func(r rune) bool { return r == ' ' || (legacy && r == ',') }) {
		ok = hmac.Equal([]byte(s), []byte(want)) || ok
	}
	if !ok {
		return ErrSignature
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(sent, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s, %s from now (tolerance %s)", ErrTimestamp, time.Unix(sent, 0).UTC().Format(time.RFC3339),
			d.Round(time.Second), tolerance)
	}
	return nil
}
