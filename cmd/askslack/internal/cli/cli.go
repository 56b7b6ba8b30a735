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
func ClientFlags(fs *flag.FlagSet) (url, token *string) {
	defURL := os.Getenv("ASKSLACK_URL")
	if defURL == "" {
		defURL = "http://127.0.0.1:8080"
	}
	url = fs.String("url", defURL, "where the bot listens (ASKSLACK_URL)")
	token = fs.String("token", os.Getenv("ASKSLACK_TOKEN"), "bearer token for the host API (ASKSLACK_TOKEN)")
	return url, token
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
