package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Endpoint is one receiver of ASKSLACK_WEBHOOKS: its name (what the CLI,
// the logs and the metrics call it, and what its cursor is kept under) and
// its URL.
type Endpoint struct {
	Name string
	URL  string
}

// Redacted is the endpoint's URL as logs and the CLI show it: its scheme
// and host only, since a receiver's path or query may hold a token.
func (e Endpoint) Redacted() string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return "(unparsable URL)"
	}
	s := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		s += "/…"
	}
	return s
}

// urlHash names the URL in the stored state without storing it: another
// URL under the same name is another receiver, which starts from now.
func (e Endpoint) urlHash() string {
	sum := sha256.Sum256([]byte(e.URL))
	return hex.EncodeToString(sum[:8])
}

var nameRE = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// ParseEndpoints reads ASKSLACK_WEBHOOKS, one name=url per entry: a name
// of 1 to 32 lowercase letters, digits and dashes, unique; an https URL
// (http only to a loopback host, for tests and a local relay). Errors
// name the variable and the entry.
func ParseEndpoints(entries []string) ([]Endpoint, error) {
	var out []Endpoint
	var errs []string
	for _, raw := range entries {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		name, u, ok := strings.Cut(raw, "=")
		name, u = strings.TrimSpace(name), strings.TrimSpace(u)
		switch {
		case !ok || u == "":
			errs = append(errs, fmt.Sprintf("%q is not name=https://url", redactEntry(raw)))
			continue
		case !nameRE.MatchString(name):
			errs = append(errs, fmt.Sprintf("endpoint name %q must be 1 to 32 lowercase letters, digits or dashes", name))
			continue
		case slices.ContainsFunc(out, func(e Endpoint) bool { return e.Name == name }):
			errs = append(errs, fmt.Sprintf("endpoint name %q is used twice", name))
			continue
		}
		e := Endpoint{Name: name, URL: u}
		if err := checkURL(u); err != "" {
			errs = append(errs, fmt.Sprintf("endpoint %s (%s): %s", name, e.Redacted(), err))
			continue
		}
		out = append(out, e)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("ASKSLACK_WEBHOOKS: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// redactEntry shows an entry that did not parse without what may be a
// token in its URL.
func redactEntry(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		return raw[:i] + "://…"
	}
	return raw
}

// checkURL says what is wrong with a receiver's URL, or "".
func checkURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return "not an absolute URL"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && loopback(u.Hostname()):
		return ""
	case u.Scheme == "http":
		return "https is required (http only to a loopback address)"
	}
	return "the URL must be https"
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ParseEvents reads ASKSLACK_WEBHOOK_EVENTS: event types (Types); none
// means every type. An unknown name is an error naming the variable.
func ParseEvents(names []string) ([]string, error) {
	var out, bad []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
		case !slices.Contains(Types, n):
			bad = append(bad, fmt.Sprintf("%q", n))
		case !slices.Contains(out, n):
			out = append(out, n)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("ASKSLACK_WEBHOOK_EVENTS: unknown event %s (known: %s)", strings.Join(bad, ", "), strings.Join(Types, ", "))
	}
	return out, nil
}

// CheckSecret checks ASKSLACK_WEBHOOK_SECRET against the endpoints
// configured: required with any; a whsec_ secret the base64 of a key of
// at least 24 bytes, a plain one at least MinSecretLen bytes. The error
// never shows the secret.
func CheckSecret(secret string, endpoints int) error {
	const gen = "echo whsec_$(openssl rand -base64 32)"
	whsec := strings.HasPrefix(secret, SecretPrefix)
	switch {
	case endpoints == 0 && secret != "":
		return fmt.Errorf("ASKSLACK_WEBHOOK_SECRET is set but ASKSLACK_WEBHOOKS is not: name the endpoints to sign for, or unset the secret")
	case endpoints == 0:
		return nil
	case secret == "":
		return fmt.Errorf("ASKSLACK_WEBHOOKS needs ASKSLACK_WEBHOOK_SECRET: a random secret the receivers share, to check each delivery's signature (%s)", gen)
	case whsec && len(Key(secret)) < minKeyLen:
		return fmt.Errorf("ASKSLACK_WEBHOOK_SECRET starts with %s but is not the base64 of a key of at least %d bytes after it (%s)", SecretPrefix, minKeyLen, gen)
	case !whsec && len(secret) < MinSecretLen:
		return fmt.Errorf("ASKSLACK_WEBHOOK_SECRET is %d bytes: it must be at least %d, or %s and a key's base64 (%s)", len(secret), MinSecretLen, SecretPrefix, gen)
	}
	return nil
}
