package try

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/cmd/askslack/internal/login"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// syncBuf is a buffer login writes to while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestTryLogin: askslack login against the playground, confirmed on its
// answer page signed in through the fake Slack as alice: the token kept
// asks as alice's agent, and the question names and mentions her.
func TestTryLogin(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // login keeps its token here
	t.Setenv("ASKSLACK_TOKEN", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := startTry(ctx, tryOptions{Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = run.wait() }()
	var intro bytes.Buffer
	run.printIntro(&intro)
	if !strings.Contains(intro.String(), "login --url "+run.URL) {
		t.Fatalf("the intro does not offer askslack login first:\n%s", intro.String())
	}

	out := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- login.Run([]string{"--url", run.URL, "--name", "alice-laptop", "--agents", "claude", "--no-browser"}, out, io.Discard)
	}()
	var code string
	for code == "" {
		if m := regexp.MustCompile(`enter the code   ([A-Z]{4}-[A-Z]{4})`).FindStringSubmatch(out.String()); m != nil {
			code = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("login ended: %v\n%s", err, out.String())
		case <-ctx.Done():
			t.Fatalf("no code:\n%s", out.String())
		case <-time.After(10 * time.Millisecond): // login writes from its own goroutine
		}
	}

	// A browser: the device page sends it to sign in, the fake Slack signs
	// alice in, and it comes back to the device page.
	jar, _ := cookiejar.New(nil)
	br := &http.Client{Jar: jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.Contains(r.URL.Path, "/openid/connect/authorize") && r.URL.Query().Get("fake_user") == "" {
			q := r.URL.Query()
			q.Set("fake_user", tryAlice.ID) // the person picker: alice
			r.URL.RawQuery = q.Encode()
		}
		return nil
	}}
	get := func(u string) string {
		resp, err := br.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	get(run.URL + "/app/login?next=" + url.QueryEscape("/app/device?code="+code))
	page := get(run.URL + "/app/device?code=" + code)
	if !strings.Contains(page, "alice-laptop") || !strings.Contains(page, `id="connect"`) {
		t.Fatalf("the device page:\n%s", page)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)[1]
	resp, err := br.PostForm(run.URL+"/app/device", url.Values{"csrf": {csrf}, "code": {code}, "action": {"connect"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-done; err != nil {
		t.Fatalf("login: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "asks as alice (U0ALICE)") {
		t.Fatalf("login printed:\n%s", out.String())
	}

	c := &hostapi.Client{BaseURL: run.URL, Token: cli.StoredToken(run.URL)}
	req := &waterfall.Request{CallID: "try-login", Agent: waterfall.Agent{ID: "claude-code"},
		Questions: []waterfall.Question{{ID: "q", Question: "Deploy?", Options: []waterfall.Option{{Label: "Yes"}, {Label: "No"}}}}}
	if _, err := c.Open(ctx, req); err != nil {
		t.Fatal(err)
	}
	msg, err := run.Fake.WaitMessage(ctx, func(m slackfake.Message) bool { return strings.Contains(string(m.Blocks), "ask/try-login/") })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(msg.Blocks), "alice-laptop@U0ALICE") || !strings.Contains(msg.Text, "<@U0ALICE>") {
		t.Fatalf("the question does not name and mention alice: %s %s", msg.Text, msg.Blocks)
	}
}
