package pagerfake

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url, auth, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("answer %q is no JSON object: %v", b, err)
	}
	return resp.StatusCode, v
}

func TestPagerDutyChecksEvents(t *testing.T) {
	s := New(Options{RoutingKey: "R0UTINGKEY"})
	defer s.Close()
	long := strings.Repeat("é", 1025)
	for _, tc := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"trigger", `{"routing_key":"R0UTINGKEY","event_action":"trigger","dedup_key":"askslack/c1","payload":{"summary":"Deploy?","source":"askslack","severity":"info","custom_details":{"agent":"a1"}},"links":[{"href":"https://x/y","text":"Answer"}],"client":"askslack"}`, 202, "Event processed"},
		{"resolve needs only the key", `{"routing_key":"R0UTINGKEY","event_action":"resolve","dedup_key":"askslack/c1"}`, 202, "success"},
		{"no routing key", `{"event_action":"trigger","payload":{"summary":"s","source":"x","severity":"info"}}`, 400, "routing_key"},
		{"another routing key", `{"routing_key":"OTHER","event_action":"resolve","dedup_key":"k"}`, 400, "routing_key"},
		{"unknown action", `{"routing_key":"R0UTINGKEY","event_action":"close","dedup_key":"k"}`, 400, "event_action"},
		{"summary too long", `{"routing_key":"R0UTINGKEY","event_action":"trigger","payload":{"summary":"` + long + `","source":"x","severity":"info"}}`, 400, "1024"},
		{"bad severity", `{"routing_key":"R0UTINGKEY","event_action":"trigger","payload":{"summary":"s","source":"x","severity":"high"}}`, 400, "severity"},
		{"no source", `{"routing_key":"R0UTINGKEY","event_action":"trigger","payload":{"summary":"s","severity":"info"}}`, 400, "source"},
		{"resolve without a key", `{"routing_key":"R0UTINGKEY","event_action":"resolve"}`, 400, "dedup_key"},
		{"unknown field", `{"routing_key":"R0UTINGKEY","event_action":"resolve","dedup_key":"k","note":"x"}`, 400, "Invalid JSON"},
		{"dedup key too long", `{"routing_key":"R0UTINGKEY","event_action":"resolve","dedup_key":"` + strings.Repeat("k", 256) + `"}`, 400, "255"},
	} {
		status, v := post(t, s.URL()+"/v2/enqueue", "", tc.body)
		if got, _ := json.Marshal(v); status != tc.status || !strings.Contains(string(got), tc.says) {
			t.Errorf("%s: %d %s; want %d saying %q", tc.name, status, got, tc.status, tc.says)
		}
	}
	if got := s.Events(); len(got) != 2 || got[0].Action != "trigger" || got[0].Summary != "Deploy?" || got[0].Severity != "info" ||
		got[0].Links[0] != "https://x/y" || got[0].Details["agent"] != "a1" || got[1].Action != "resolve" || got[1].DedupKey != "askslack/c1" {
		t.Fatalf("events: %+v", got)
	}
}

func TestOpsgenieChecksAlerts(t *testing.T) {
	s := New(Options{APIKey: "key-1"})
	defer s.Close()
	const key = "GenieKey key-1"
	for _, tc := range []struct {
		name, path, auth, body string
		status                 int
		says                   string
	}{
		{"create", "/v2/alerts", key, `{"message":"Deploy?","alias":"askslack/c1","description":"d","priority":"P3","details":{"agent":"a1"},"source":"askslack","tags":["askslack"]}`, 202, "Request will be processed"},
		{"close by alias", "/v2/alerts/askslack%2Fc1/close?identifierType=alias", key, `{"source":"askslack","note":"answered"}`, 202, "Request will be processed"},
		{"no key", "/v2/alerts", "", `{"message":"m"}`, 401, "authenticate"},
		{"bearer, not GenieKey", "/v2/alerts", "Bearer key-1", `{"message":"m"}`, 401, "authenticate"},
		{"another key", "/v2/alerts", "GenieKey key-2", `{"message":"m"}`, 401, "authenticate"},
		{"message too long", "/v2/alerts", key, `{"message":"` + strings.Repeat("m", 131) + `"}`, 422, "130"},
		{"no message", "/v2/alerts", key, `{"alias":"a"}`, 422, "empty"},
		{"bad priority", "/v2/alerts", key, `{"message":"m","priority":"P0"}`, 422, "Priority"},
		{"description too long", "/v2/alerts", key, `{"message":"m","description":"` + strings.Repeat("d", 15001) + `"}`, 422, "15000"},
		{"details not strings", "/v2/alerts", key, `{"message":"m","details":{"n":1}}`, 422, "Invalid request body"},
		{"bad identifierType", "/v2/alerts/x/close?identifierType=name", key, `{}`, 422, "identifierType"},
	} {
		status, v := post(t, s.URL()+tc.path, tc.auth, tc.body)
		if got, _ := json.Marshal(v); status != tc.status || !strings.Contains(string(got), tc.says) {
			t.Errorf("%s: %d %s; want %d saying %q", tc.name, status, got, tc.status, tc.says)
		}
	}
	if got := s.Events(); len(got) != 2 || got[0].Action != "create" || got[0].Severity != "P3" || got[0].DedupKey != "askslack/c1" ||
		got[1].Action != "close" || got[1].DedupKey != "askslack/c1" || got[1].Note != "answered" {
		t.Fatalf("events: %+v", got)
	}
	// Opsgenie's default identifier is the alert's id, not its alias.
	post(t, s.URL()+"/v2/alerts/askslack%2Fc1/close", key, `{}`)
	if got := s.Events(); got[2].DedupKey != "id:askslack/c1" {
		t.Fatalf("a close by id recorded as %q", got[2].DedupKey)
	}
}

func TestFailAndWaitFor(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	s.Fail(429, 500)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v2/enqueue", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("first: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if status, _ := post(t, s.URL()+"/v2/enqueue", "", `{}`); status != 500 {
		t.Fatalf("second: %d", status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() { // the wait starts before the event comes
		resp, err := http.Post(s.URL()+"/v2/enqueue", "application/json", strings.NewReader(`{"routing_key":"k","event_action":"resolve","dedup_key":"d"}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	if err := s.WaitFor(ctx, func(evs []Event) bool { return len(evs) == 1 }); err != nil {
		t.Fatal(err)
	}
	if s.Requests() != 3 || s.Count("resolve", "d") != 1 {
		t.Fatalf("requests %d, resolves %d", s.Requests(), s.Count("resolve", "d"))
	}
}
