package hostapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// instant answers every request with its first option at once.
var instant = waterfall.AnswererFunc(func(ctx context.Context, req *waterfall.Request, next waterfall.Next) (waterfall.Settlement, error) {
	var a waterfall.Answer
	for _, q := range req.Questions {
		it := waterfall.AnswerItem{ID: q.ID, Selected: []string{}}
		if len(q.Options) > 0 {
			it.Selected = []string{q.Options[0].Label}
		} else {
			it.Custom = "free"
		}
		a.Answers = append(a.Answers, it)
	}
	return waterfall.Settlement{Answer: a, Respondent: waterfall.Respondent{UserName: "bot", Surface: waterfall.SurfaceAPI, At: time.Now()}}, nil
})

// server serves the API with the given agent tokens ("name:secret" or a
// bare secret); none is development mode.
func server(t testing.TB, tokens ...string) *hostapi.Server {
	t.Helper()
	st := store.NewMemory(0, nil)
	return started(t, hostapi.NewServer(engine.NewHost(st, instant, engine.HostOptions{}), hostapi.Options{Callers: agents(t, tokens...), Leases: st}))
}

// started starts srv's background work and stops it when the test ends.
func started(t testing.TB, srv *hostapi.Server) *hostapi.Server {
	t.Helper()
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}

func agents(t testing.TB, tokens ...string) *hostapi.Callers {
	t.Helper()
	n := 0
	creds, err := hostapi.ParseCredentials("ASKSLACK_API_TOKENS", hostapi.RoleAgent, tokens, true, &n)
	if err != nil {
		t.Fatal(err)
	}
	c, err := hostapi.NewCallers(creds, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func do(h http.Handler, method, path, remoteAddr, auth, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.RemoteAddr = remoteAddr
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const ask = `{"callId":"c1","agent":{"id":"a"},"questions":[{"id":"q","question":"?","options":[{"label":"A"}]}]}`

func TestAuth(t *testing.T) {
	t.Parallel()
	open := server(t)
	if w := do(open, "POST", "/v1/asks", "127.0.0.1:5000", "", ask); w.Code != 200 {
		t.Fatalf("loopback without tokens: %d %s", w.Code, w.Body)
	}
	if w := do(open, "POST", "/v1/asks", "[::1]:5000", "", ask); w.Code != 200 {
		t.Fatalf("IPv6 loopback without tokens: %d", w.Code)
	}
	if w := do(open, "POST", "/v1/asks", "10.0.0.7:5000", "", ask); w.Code != 401 || !strings.Contains(w.Body.String(), `"UNAUTHORIZED"`) {
		t.Fatalf("remote caller without tokens configured: %d %s", w.Code, w.Body)
	}
	locked := server(t, "s3cret-s3cret-s3cret", "other-other-other-other")
	for _, c := range []struct {
		auth string
		code int
	}{{"", 401}, {"Bearer wrong", 401}, {"s3cret-s3cret-s3cret", 401}, {"Bearer s3cret-s3cret-s3cret", 200},
		{"Bearer other-other-other-other", 409}} { // the other agent may not borrow token-1's callId
		if w := do(locked, "POST", "/v1/asks", "10.0.0.7:5000", c.auth, ask); w.Code != c.code {
			t.Errorf("Authorization %q: %d, want %d", c.auth, w.Code, c.code)
		}
	}
}

func TestErrorsCarrySeedCodes(t *testing.T) {
	t.Parallel()
	h := server(t)
	for _, c := range []struct {
		method, path, body string
		code               int
		seed               string
	}{
		{"POST", "/v1/asks", `{`, 400, waterfall.CodeBadRequest},
		{"POST", "/v1/asks", `{"callId":"x","agent":{"id":"a"},"questions":[]}`, 400, waterfall.CodeEmptyQuestions},
		{"POST", "/v1/asks", `{"callId":"x","agent":{"id":"a"},"timeoutMs":"1m","questions":[{"id":"q","question":"?"}]}`, 400, waterfall.CodeBadTimeout},
		{"POST", "/v1/asks", `{"callId":"x","agent":{"id":"a","ownerId":"b"},"questions":[{"id":"q","question":"?"}]}`, 403, waterfall.CodeDelegatedCaller},
		{"GET", "/v1/asks/nope", ``, 404, waterfall.CodeNotFound},
		{"GET", "/v1/asks/nope?waitMs=-1", ``, 400, waterfall.CodeBadRequest},
		{"DELETE", "/v1/asks/nope", ``, 404, waterfall.CodeNotFound},
		{"POST", "/v1/sessions/s/messages/reply:nope/ack", ``, 404, waterfall.CodeNotFound},
	} {
		w := do(h, c.method, c.path, "127.0.0.1:1", "", c.body)
		var eb hostapi.ErrorBody
		_ = json.Unmarshal(w.Body.Bytes(), &eb)
		if w.Code != c.code || eb.Error.Code != c.seed || eb.Error.Message == "" {
			t.Errorf("%s %s %s: %d %s; want %d %s", c.method, c.path, c.body, w.Code, w.Body, c.code, c.seed)
		}
	}
	if w := do(h, "POST", "/v1/asks", "127.0.0.1:1", "", ask); w.Code != 200 {
		t.Fatal(w.Body)
	}
	// Settled: a second answer names the winner's state; a delete is a conflict.
	w := do(h, "POST", "/v1/asks/c1/answer", "127.0.0.1:1", "", `{"answers":[{"id":"q","selected":["A"]}]}`)
	if w.Code != 409 || !strings.Contains(w.Body.String(), waterfall.CodeAlreadySettled) {
		t.Fatalf("answering a settled ask: %d %s", w.Code, w.Body)
	}
	w = do(h, "POST", "/v1/asks", "127.0.0.1:1", "", strings.Replace(ask, `"question":"?"`, `"question":"other?"`, 1))
	if w.Code != 409 || !strings.Contains(w.Body.String(), waterfall.CodeCallConflict) {
		t.Fatalf("reusing a callId: %d %s", w.Code, w.Body)
	}
}

// FuzzAskBody: any body to POST /v1/asks gets a JSON answer with a sensible
// status, never a panic or a 500.
func FuzzAskBody(f *testing.F) {
	for _, s := range []string{ask, `{}`, `[]`, `null`, `{"callId":"c","agent":{"id":"a"},"timeoutMs":1.5,"questions":[{"id":"q","question":"?"}]}`,
		`{"callId":"c","agent":{"id":"a"},"questions":[{"id":"q","question":"?","detail":"d","options":[{"label":"Go"}],"intent":{"kind":"plan-review","approve":"Go"}}]}`,
		`{"callId":"c","agent":{"id":"a"},"questions":[{"id":"q","question":"?","multiSelect":true,"options":[{"label":"a"},{"label":"b"}]},{"id":"r","question":"!"}]}`} {
		f.Add(s)
	}
	h := server(f)
	f.Fuzz(func(t *testing.T, body string) {
		w := do(h, "POST", "/v1/asks", "127.0.0.1:1", "", body)
		switch w.Code {
		case 200, 400, 403, 409, 429, 503:
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("not JSON: %s", w.Body)
		}
	})
}

// A session at its cap of active asks answers 429 SESSION_FULL, saying why.
func TestSessionFullIs429(t *testing.T) {
	t.Parallel()
	st := store.NewMemory(0, nil)
	ctx := context.Background()
	for i := range store.MaxSessionAsks {
		if _, _, err := st.Create(ctx, &asktype.Ask{CallID: fmt.Sprintf("pre%d", i), SessionID: waterfall.SessionKey(hostapi.LocalCaller, "s"), Request: json.RawMessage(`{}`), Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	h := started(t, hostapi.NewServer(engine.NewHost(st, instant, engine.HostOptions{}), hostapi.Options{Leases: st}))
	body := `{"callId":"one-more","agent":{"id":"a","sessionId":"s"},"questions":[{"id":"q","question":"?","options":[{"label":"A"}]}]}`
	w := do(h, "POST", "/v1/asks", "127.0.0.1:1", "", body)
	var eb hostapi.ErrorBody
	_ = json.Unmarshal(w.Body.Bytes(), &eb)
	if w.Code != http.StatusTooManyRequests || eb.Error.Code != waterfall.CodeSessionFull || !strings.Contains(eb.Error.Message, "1000") {
		t.Fatalf("one ask over the cap: %d %s", w.Code, w.Body)
	}
}

// Re-sending the same ask is a re-attach, however its JSON spells what
// the stored copy leaves out: an empty options list (a free-text
// question), an empty detail, a zero-valued field.
func TestResendingTheSameAskIsNotAConflict(t *testing.T) {
	t.Parallel()
	h := server(t)
	free := `{"callId":"f1","agent":{"id":"a"},"questions":[{"id":"q","question":"why?","options":[],"detail":"","multiSelect":false}]}`
	if w := do(h, "POST", "/v1/asks", "127.0.0.1:1", "", free); w.Code != 200 {
		t.Fatalf("first: %d %s", w.Code, w.Body)
	}
	if w := do(h, "POST", "/v1/asks", "127.0.0.1:1", "", free); w.Code != 200 {
		t.Fatalf("re-sending the same free-text ask: %d %s; want the stored answer", w.Code, w.Body)
	}
}
