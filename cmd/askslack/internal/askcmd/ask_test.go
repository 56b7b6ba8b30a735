package askcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRequestFromFlags(t *testing.T) {
	f, err := parseAskFlags([]string{"--question", "Deploy now?", "--option", "Yes", "--option", "No", "--multi",
		"--header", "Deploy", "--agent", "ci", "--channel", "C0OPS", "--call-id", "call-1"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := f.request()
	if err != nil {
		t.Fatal(err)
	}
	q := req.Questions[0]
	if req.CallID != "call-1" || req.Agent.ID != "ci" || req.Channel != "C0OPS" || req.TimeoutMs != nil ||
		q.Question != "Deploy now?" || q.Header != "Deploy" || !q.MultiSelect || len(q.Options) != 2 || q.Options[1].Label != "No" {
		t.Fatalf("request %+v", req)
	}
}

// A timed ask gets a window and, without --session, a session of its own
// for the late answer.
func TestTimedRequestGetsASession(t *testing.T) {
	f, err := parseAskFlags([]string{"--question", "Deploy now?", "--wait", "2m"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := f.request()
	if err != nil {
		t.Fatal(err)
	}
	if req.TimeoutMs == nil || *req.TimeoutMs != float64((2*time.Minute).Milliseconds()) {
		t.Fatalf("timeoutMs %v", req.TimeoutMs)
	}
	if !strings.HasPrefix(req.Agent.SessionID, "cli-session-") || !strings.HasPrefix(req.CallID, "cli-") {
		t.Fatalf("session %q call %q", req.Agent.SessionID, req.CallID)
	}
}

func TestRequestFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "req.json")
	body := `{"callId":"from-file","agent":{"id":"a","sessionId":"s"},"questions":[{"id":"q","question":"Which?","options":[{"label":"x"},{"label":"y"}]}]}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := parseAskFlags([]string{"--file", path})
	if err != nil {
		t.Fatal(err)
	}
	req, err := f.request()
	if err != nil || req.CallID != "from-file" || req.Questions[0].Question != "Which?" {
		t.Fatalf("request %+v (%v)", req, err)
	}
	f, _ = parseAskFlags(nil)
	if _, err := f.request(); err == nil || !strings.Contains(err.Error(), "--question is required") {
		t.Fatalf("no question: %v", err)
	}
}
