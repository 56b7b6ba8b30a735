// Package cli holds what several askslack subcommands share: the exit
// status an error carries, the host API client's flags, call ids, and
// small flag and environment helpers.
package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"strings"
)

// ExitError carries a process exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ErrReported is an ExitError's Err when the subcommand has written all
// it had to say to stderr itself (a hook whose stderr is read by its
// agent): main prints nothing more.
var ErrReported = errors.New("reported")

// ExitCode is the exit status for err: an ExitError's code, else 1.
func ExitCode(err error) int {
	if e, ok := err.(*ExitError); ok {
		return e.Code
	}
	return 1
}

// MultiFlag is a flag given once per value.
type MultiFlag []string

func (m *MultiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *MultiFlag) Set(v string) error { *m = append(*m, v); return nil }

// ClientFlags are shared by the client subcommands (ask, mcp, hook, audit).
// The token is --token, else ASKSLACK_TOKEN, else the one askslack login
// stored for the URL (--url, else ASKSLACK_URL): a --url given after the
// flags are defined picks its own stored token, in whichever order the
// flags come. The token is never a flag default (-help would print it).
func ClientFlags(fs *flag.FlagSet) (url, token *string) {
	defURL := os.Getenv("ASKSLACK_URL")
	if defURL == "" {
		defURL = "http://127.0.0.1:8080"
	}
	u, t := defURL, os.Getenv("ASKSLACK_TOKEN")
	tf := &tokenFlag{v: &t, explicit: t != ""}
	if t == "" {
		t = StoredToken(defURL)
	}
	fs.Var(&urlFlag{v: &u, token: tf}, "url", "where the bot listens (ASKSLACK_URL)")
	fs.Var(tf, "token", "bearer token for the host API (ASKSLACK_TOKEN; default: the one askslack login stored for --url)")
	return &u, &t
}

// urlFlag is --url: setting it picks the token stored for it, unless a
// token was given.
type urlFlag struct {
	v     *string
	token *tokenFlag
}

func (f *urlFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f *urlFlag) Set(s string) error {
	*f.v = s
	if !f.token.explicit {
		*f.token.v = StoredToken(s)
	}
	return nil
}

// tokenFlag is --token; String never shows the secret.
type tokenFlag struct {
	v        *string
	explicit bool
}

func (f *tokenFlag) String() string { return "" }

func (f *tokenFlag) Set(s string) error {
	*f.v, f.explicit = s, true
	return nil
}

// NewCallID is a fresh id: prefix, a dash and 12 random hex digits.
func NewCallID(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// EnvOr is the environment variable k, or def when it is unset or empty.
func EnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
