package main

// End-to-end harness: the real askslack binary, built once per test run,
// against the project's fake Slack and (when REDIS_URL is set) a real Redis.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/kit/testredis"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "askslack-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "askslack")
	args := []string{"build", "-o", binPath}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building askslack:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	testSecret  = "8f742231b10e8888abcd99yyyzzz85a5"
	testChannel = "C0QUESTIONS"
)

var (
	alice = slackfake.User{ID: "U0ALICE", Name: "alice", Email: "alice@example.com"}
	bob   = slackfake.User{ID: "U0BOB", Name: "bob", Email: "bob@example.com"}
	carol = slackfake.User{ID: "U0CAROL", Name: "carol", Email: "carol@example.com"}
)

// transport is how the bot receives interactions.
type transport string

const (
	viaHTTP   transport = "http"
	viaSocket transport = "socket"
)

// newFake starts a fake Slack for one test.
func newFake(t *testing.T) *slackfake.Server {
	t.Helper()
	f := slackfake.New(slackfake.Options{
		BotToken: "xoxb-test", AppToken: "xapp-test", SigningSecret: testSecret,
		Users:      []slackfake.User{alice, bob, carol},
		UserGroups: map[string][]string{"S0ONCALL": {bob.ID}},
	})
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// deployment is what several bot processes of one test share: the fake
// Slack and the store (a Redis key prefix, or nothing for memory).
type deployment struct {
	t        *testing.T
	fake     *slackfake.Server
	redisURL string
	prefix   string
	env      map[string]string
	// bin is the binary the next launch runs; "" is today's (binPath).
	// The upgrade tests set it to a previous release's build.
	bin string
	// bound maps a principal to the token of the agent caller bound to it
	// (bindPrincipals).
	bound map[string]string
	// bots are the bot processes launched, in order (dumpLogs).
	bots []*bot
}

// dumpLogs writes every launched bot's logs into dir (one file each), for
// a run whose failure needs them in full.
func (d *deployment) dumpLogs(dir string) {
	for i, b := range d.bots {
		name := filepath.Join(dir, fmt.Sprintf("%s-bot%d-%s.log", strings.ReplaceAll(d.t.Name(), "/", "_"), i, strings.ReplaceAll(b.addr, ":", "_")))
		if err := os.WriteFile(name, []byte(b.logs.String()), 0o644); err != nil {
			d.t.Log(err)
		}
	}
	d.t.Logf("bot logs written to %s", dir)
}

// bindPrincipals gives each principal an agent caller of its own, bound
// to it by ASKSLACK_CALLER_PRINCIPALS: only a principal the operator bound
// restricts who may answer (an agent naming one itself grants nothing).
// Asks for a principal go through clientFor.
func (d *deployment) bindPrincipals(principals ...string) {
	var tokens, binds []string
	d.bound = map[string]string{}
	for i, p := range principals {
		name, tok := fmt.Sprintf("agent-for-%d", i), fmt.Sprintf("token-for-principal-%04d", i)
		tokens, binds = append(tokens, name+":"+tok), append(binds, name+"="+p)
		d.bound[p] = tok
	}
	d.env["ASKSLACK_API_TOKENS"] = strings.Join(tokens, ",")
	d.env["ASKSLACK_CALLER_PRINCIPALS"] = strings.Join(binds, ",")
}

// clientFor is a client of b as the caller bound to principal.
func (d *deployment) clientFor(b *bot, principal string) *hostapi.Client {
	c := b.client()
	c.Token = d.bound[principal]
	if c.Token == "" {
		d.t.Fatalf("no caller is bound to %s (bindPrincipals)", principal)
	}
	return c
}

// newDeployment sets up a fake Slack and, with REDIS_URL set, a key prefix
// of the test's own. needRedis skips the test without Redis.
func newDeployment(t *testing.T, needRedis bool) *deployment {
	t.Helper()
	d := &deployment{t: t, fake: newFake(t), env: map[string]string{}}
	if os.Getenv("REDIS_URL") != "" {
		_, d.prefix = testredis.Client(t)
		d.redisURL = os.Getenv("REDIS_URL")
	} else if needRedis {
		t.Skip("REDIS_URL not set; this test needs a shared store")
	}
	return d
}

// bot is one running askslack process.
type bot struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	logs *syncBuffer
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// handedOut holds the ports freeAddr gave out in this process. The kernel
// hands a closed port out again, so two parallel tests could be given the
// same one, and one bot would fail to bind it (or, worse, a readiness
// probe would reach the other test's bot).
var handedOut = struct {
	sync.Mutex
	ports map[string]bool
}{ports: map[string]bool{}}

func freeAddr(t *testing.T) string {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		handedOut.Lock()
		taken := handedOut.ports[addr]
		handedOut.ports[addr] = true
		handedOut.Unlock()
		if !taken {
			return addr
		}
	}
}

// start runs a bot process with the deployment's config over tr and waits
// until it is ready. The port freeAddr picked is free only until another
// process binds it (an outgoing connection may take it as its own port):
// a bot that could not bind it is started again on another.
func (d *deployment) start(tr transport) *bot {
	d.t.Helper()
	for range 3 {
		if b, err := d.launch(tr, freeAddr(d.t)); !errors.Is(err, errAddrInUse) {
			if err != nil {
				d.t.Fatal(err)
			}
			return b
		}
	}
	d.t.Fatal("three free ports in a row were taken before the bot could bind them")
	return nil
}

// startAt is start on a given address (a replica restarted where its
// clients expect it).
func (d *deployment) startAt(tr transport, addr string) *bot {
	d.t.Helper()
	b, err := d.launch(tr, addr)
	if err != nil {
		d.t.Fatal(err)
	}
	return b
}

// errAddrInUse: the bot exited because its address was taken.
var errAddrInUse = errors.New("bot address already in use")

// launch starts a bot on addr and waits until it is ready.
func (d *deployment) launch(tr transport, addr string) (*bot, error) {
	t := d.t
	t.Helper()
	b := &bot{t: t, addr: addr, logs: &syncBuffer{}, done: make(chan struct{})}
	d.bots = append(d.bots, b)
	env := map[string]string{
		"SLACK_BOT_TOKEN":    "xoxb-test",
		"SLACK_API_URL":      strings.TrimSuffix(d.fake.APIURL(), "/"), // the binary adds the slash
		"ASKSLACK_ADDR":      b.addr,
		"ASKSLACK_CHANNEL":   testChannel,
		"ASKSLACK_LOG_LEVEL": "debug",
		// The fake enforces no rate limits unless a test asks (then it
		// sets ASKSLACK_SLACK_PACING=true too, see ratelimit_test.go):
		// pacing at Slack's 1/s per channel would only slow tests down.
		"ASKSLACK_SLACK_PACING": "false",
	}
	if tr == viaSocket {
		env["SLACK_APP_TOKEN"] = "xapp-test"
	} else {
		env["SLACK_SIGNING_SECRET"] = testSecret
	}
	if d.redisURL != "" {
		env["REDIS_URL"] = d.redisURL
		env["ASKSLACK_REDIS_PREFIX"] = d.prefix
	}
	for k, v := range d.env {
		env[k] = v
	}
	bin := binPath
	if d.bin != "" {
		bin = d.bin
	}
	b.cmd = exec.Command(bin)
	b.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		b.cmd.Env = append(b.cmd.Env, k+"="+v)
	}
	b.cmd.Stdout, b.cmd.Stderr = b.logs, b.logs
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.err = b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		b.kill()
		if t.Failed() {
			t.Logf("bot %s logs:\n%s", b.addr, b.logs.String())
		}
	})
	if tr == viaHTTP {
		d.fake.SetInteractionURL("http://" + b.addr + "/slack/interactions")
		d.fake.SetEventsURL("http://" + b.addr + "/slack/events")
		d.fake.SetCommandsURL("http://" + b.addr + "/slack/commands")
	}
	if err := b.waitReady(); err != nil {
		return nil, err
	}
	return b, nil
}

// probe asks a bot whether it is ready; something else listening on its
// address (it could not bind it) may never answer.
var probe = &http.Client{Timeout: 2 * time.Second}

func (b *bot) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-b.done:
			if strings.Contains(b.logs.String(), "address already in use") {
				return fmt.Errorf("%w: %s", errAddrInUse, b.addr)
			}
			return fmt.Errorf("bot exited before it was ready: %v\n%s", b.err, b.logs.String())
		default:
		}
		resp, err := probe.Get("http://" + b.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond) // polling a child process for readiness; no signal to wait on
	}
	return fmt.Errorf("bot not ready within 30s:\n%s", b.logs.String())
}

// waitLog waits until the bot's logs contain substr; the child's stderr
// reaches the buffer through a pipe, a little after the HTTP reply.
func (b *bot) waitLog(ctx context.Context, substr string) {
	b.t.Helper()
	for !strings.Contains(b.logs.String(), substr) {
		select {
		case <-ctx.Done():
			b.t.Fatalf("the logs never said %q:\n%s", substr, b.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (b *bot) stop() {
	b.t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		b.t.Fatalf("bot did not stop within 30s after SIGTERM:\n%s", b.logs.String())
	}
}

// kill ends the process at once, as a crash would.
func (b *bot) kill() {
	_ = b.cmd.Process.Kill()
	<-b.done
}

func (b *bot) client() *hostapi.Client {
	return &hostapi.Client{BaseURL: "http://" + b.addr, Reattach: time.Second}
}

// asked runs a blocking ask in the background.
type asked struct {
	res  hostapi.AskResult
	err  error
	done chan struct{}
}

func (b *bot) askAsync(ctx context.Context, req *waterfall.Request) *asked {
	return askWith(ctx, b.client(), req)
}

func askWith(ctx context.Context, c *hostapi.Client, req *waterfall.Request) *asked {
	a := &asked{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.res, a.err = c.Ask(ctx, req)
	}()
	return a
}

func (a *asked) wait(t *testing.T) (hostapi.AskResult, error) {
	t.Helper()
	select {
	case <-a.done:
		return a.res, a.err
	case <-time.After(60 * time.Second):
		t.Fatal("the ask did not return within 60s")
		return hostapi.AskResult{}, nil
	}
}

// waitPosted waits for the question message of callID.
func waitPosted(t *testing.T, ctx context.Context, f *slackfake.Server, callID string) slackfake.Message {
	t.Helper()
	m, err := f.WaitMessage(ctx, func(m slackfake.Message) bool {
		return bytes.Contains(m.Blocks, []byte("ask/"+callID+"/"))
	})
	if err != nil {
		t.Fatalf("question %s never posted: %v", callID, err)
	}
	return m
}

// askAndTap asks a Yes/No question as callID through b, has alice tap Yes
// when it shows, and returns its message once the agent has the answer.
func askAndTap(t *testing.T, ctx context.Context, d *deployment, b *bot, callID string) slackfake.Message {
	t.Helper()
	a := b.askAsync(ctx, oneQuestion(callID, "Yes", "No"))
	msg := waitPosted(t, ctx, d.fake, callID)
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.wait(t); err != nil {
		t.Fatal(err)
	}
	return msg
}

// waitMessage waits until the stored message satisfies pred.
func waitMessage(t *testing.T, ctx context.Context, f *slackfake.Server, ch, ts string, what string, pred func(m slackfake.Message) bool) slackfake.Message {
	t.Helper()
	var got slackfake.Message
	err := f.WaitUntil(ctx, func() bool {
		m, ok := f.Message(ch, ts)
		got = m
		return ok && pred(m)
	})
	if err != nil {
		t.Fatalf("message never %s; last: text=%q blocks=%s", what, got.Text, got.Blocks)
	}
	return got
}

// waitEphemeral waits for an ephemeral message to user containing substr.
func waitEphemeral(t *testing.T, ctx context.Context, f *slackfake.Server, user, substr string) slackfake.Ephemeral {
	t.Helper()
	var got slackfake.Ephemeral
	err := f.WaitUntil(ctx, func() bool {
		for _, e := range f.Ephemerals() {
			if e.User == user && strings.Contains(e.Text, substr) {
				got = e
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no ephemeral to %s containing %q; have %+v", user, substr, f.Ephemerals())
	}
	return got
}

// waitView waits for a modal open for user whose JSON contains substr
// (a call id rides in private_metadata and block ids) and returns it.
func waitView(t *testing.T, ctx context.Context, f *slackfake.Server, user, substr string) slackfake.View {
	t.Helper()
	var v slackfake.View
	err := f.WaitUntil(ctx, func() bool {
		for _, x := range f.OpenViews(user) {
			if strings.Contains(string(x.JSON), substr) {
				v = x
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no modal open for %s containing %q", user, substr)
	}
	return v
}

func hasControls(m slackfake.Message) bool {
	return bytes.Contains(m.Blocks, []byte(`"actions"`)) || bytes.Contains(m.Blocks, []byte(`"button"`))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func oneQuestion(callID string, opts ...string) *waterfall.Request {
	q := waterfall.Question{ID: "q1", Question: "Deploy to production now?"}
	for _, o := range opts {
		q.Options = append(q.Options, waterfall.Option{Label: o})
	}
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "agent-1", SessionID: "sess-1"}, Questions: []waterfall.Question{q}}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// redisFor connects to the deployment's Redis (tests that poke at keys).
func redisFor(t *testing.T, d *deployment) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(d.redisURL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A bot whose address another process took is told apart from one that
// failed for another reason, so start can try again on another port, and
// freeAddr never hands this process's tests the same port twice.
func TestHarnessRetriesATakenAddress(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, false)
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer squatter.Close()
	if _, err := d.launch(viaHTTP, squatter.Addr().String()); !errors.Is(err, errAddrInUse) {
		t.Fatalf("launch on a taken address = %v; want errAddrInUse", err)
	}
	seen := map[string]bool{}
	for range 200 {
		a := freeAddr(t)
		if seen[a] {
			t.Fatalf("freeAddr gave %s twice", a)
		}
		seen[a] = true
	}
	d.start(viaHTTP)
}
