package audit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/cmd/askslack/internal/cli"
)

// Bad flags are exit status 2 (the trail could not be read) before any
// request is made.
func TestFlagErrorsAreStatus2(t *testing.T) {
	for _, args := range [][]string{
		{"--format", "xml"}, {"--since", "yesterday"}, {"--nope"}, {"extra"}, {"verify", "--since", "24h"},
	} {
		var out bytes.Buffer
		err := Run(append(args, "--url", "http://127.0.0.1:1"), &out)
		if err == nil || cli.ExitCode(err) != 2 {
			t.Errorf("audit %v: %v (exit %d); want exit 2", args, err, cli.ExitCode(err))
		}
	}
}

func TestCSVRowMatchesTheHeader(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := &asktype.AuditEntry{Seq: 7, At: at, CallID: "c1", Event: "settled", Caller: "alice-laptop",
		Agent:      &asktype.AuditAgent{ID: "claude", SessionID: "s1"},
		Respondent: &asktype.AuditRespondent{UserID: "U1", UserName: "bob", Surface: "slack"},
		Detail:     "d", Prev: "p", Hash: "h"}
	row := csvRow(e)
	if len(row) != len(csvHeader) {
		t.Fatalf("%d columns; the header has %d", len(row), len(csvHeader))
	}
	got := map[string]string{}
	for i, h := range csvHeader {
		got[h] = row[i]
	}
	want := map[string]string{"seq": "7", "at": "2026-01-02T03:04:05Z", "callId": "c1", "event": "settled", "caller": "alice-laptop",
		"agentId": "claude", "sessionId": "s1", "userId": "U1", "userName": "bob", "surface": "slack", "detail": "d", "prev": "p", "hash": "h"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q; want %q", k, got[k], v)
		}
	}
	if row := csvRow(&asktype.AuditEntry{Seq: 1, At: at, Event: "asked"}); strings.Join(row[5:10], "") != "" {
		t.Errorf("an entry without agent or respondent: %q", row)
	}
}
