package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery. The id is the body's "id" too: the same for
// every attempt and redelivery of one event to one endpoint.
const (
	HeaderID        = "Askslack-Webhook-Id"
	HeaderTimestamp = "Askslack-Webhook-Timestamp"
	HeaderSignature = "Askslack-Webhook-Signature"
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock (either way) when Verify is given none: a signature
// older than this is a replay.
const DefaultTolerance = 5 * time.Minute

// MinSecretLen is the shortest ASKSLACK_WEBHOOK_SECRET taken, in bytes.
const MinSecretLen = 32

// Sign is the Askslack-Webhook-Signature of body sent at timestamp (unix
// seconds): "v1=" and the hex HMAC-SHA256, keyed by secret, of the
// timestamp, a dot and the body.
func Sign(secret string, timestamp int64, body []byte) string {
	return "v1=" + hex.EncodeToString(mac(secret, strconv.FormatInt(timestamp, 10), body))
}

func mac(secret, timestamp string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(timestamp))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// What Verify refuses.
var (
	// ErrNoSignature: the timestamp or signature header is missing or
	// malformed.
	ErrNoSignature = errors.New("webhook: no valid Askslack-Webhook-Timestamp and Askslack-Webhook-Signature headers")
	// ErrSignature: no v1 signature matches the body, the timestamp and
	// the secret (a forged or altered request, or another secret).
	ErrSignature = errors.New("webhook: signature mismatch")
	// ErrTimestamp: the signature is valid but its timestamp is outside
	// the tolerance: a replayed request (or a clock far off).
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
)

// Verify checks a delivery as a receiver gets it: header holds its
// headers, body the raw bytes read (before any JSON decoding), now the
// receiver's time. It returns nil when a v1 signature in the signature
// header (several may be listed, comma- or space-separated) is the
// HMAC-SHA256 of the timestamp header, a dot and body under secret, and
// that timestamp is within tolerance of now (0: DefaultTolerance), which
// refuses a request recorded and replayed later. Signatures are compared
// in constant time. Dedupe on the body's "id" as well: a retry of a
// delivery whose answer was lost carries the same id, freshly signed.
func Verify(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts, sigs := header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	sent, err := strconv.ParseInt(ts, 10, 64)
	if ts == "" || sigs == "" || err != nil {
		return ErrNoSignature
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range strings.FieldsFunc(sigs, func(r rune) bool { return r == ',' || r == ' ' }) {
		v, found := strings.CutPrefix(s, "v1=")
		got, err := hex.DecodeString(v)
		if found && err == nil && hmac.Equal(got, want) {
			ok = true
		}
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
