package main

// askslack login through the real binary: the device grant from the
// terminal, the answer page's Sign in with Slack (the fake's), the token
// kept in a fresh home directory and used by ask and hook with no
// ASKSLACK_TOKEN, App Home's Revoke holding on both replicas, and each
// hostile case.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/tokens"
	"github.com/askslack/askslack/webhook"
)

// machine is a fresh home directory: a terminal of its own, with no
// ASKSLACK_TOKEN, whose config directory askslack login writes to.
type machine struct {
	t    *testing.T
	home string
}

func newMachine(t *testing.T) *machine {
	return &machine{t: t, home: t.TempDir()}
}

func (m *machine) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + m.home, "XDG_CONFIG_HOME=" + filepath.Join(m.home, ".config")}
}

func (m *machine) credentials() string {
	return filepath.Join(m.home, ".config", "askslack", "credentials.json")
}

// run runs the binary on this machine and returns stdout, stderr, status.
func (m *machine) run(ctx context.Context, args ...string) (string, string, int) {
	m.t.Helper()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = m.env()
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		m.t.Fatalf("askslack %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), 0
}

// loginRun is a running askslack login.
type loginRun struct {
	t           *testing.T
	cmd         *exec.Cmd
	out, errb   *syncBuffer
	done        chan struct{}
	err         error
	verify, raw string // the page and the code it printed
}

var codeLine = regexp.MustCompile(`(?m)^  1\. open   (\S+)\n  2\. sign in with Slack and enter the code   ([A-Z]{4}-[A-Z]{4})$`)

// login starts askslack login on this machine and waits for the code it
// prints.
func (m *machine) login(ctx context.Context, base string, args ...string) *loginRun {
	m.t.Helper()
	l := &loginRun{t: m.t, out: &syncBuffer{}, errb: &syncBuffer{}, done: make(chan struct{})}
	l.cmd = exec.Command(binPath, append([]string{"login", "--url", base}, args...)...)
	l.cmd.Env = m.env()
	l.cmd.Stdout, l.cmd.Stderr = l.out, l.errb
	if err := l.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	go func() { l.err = l.cmd.Wait(); close(l.done) }()
	m.t.Cleanup(func() { _ = l.cmd.Process.Kill(); <-l.done })
	for {
		if g := codeLine.FindStringSubmatch(l.out.String()); g != nil {
			l.verify, l.raw = g[1], g[2]
			return l
		}
		select {
		case <-ctx.Done():
			m.t.Fatalf("askslack login printed no code:\n%s\n%s", l.out.String(), l.errb.String())
		case <-l.done:
			m.t.Fatalf("askslack login exited before printing a code: %v\n%s\n%s", l.err, l.out.String(), l.errb.String())
		case <-time.After(20 * time.Millisecond): // reading a child's stdout through a pipe
		}
	}
}

// wait returns login's stdout, stderr and exit status.
func (l *loginRun) wait() (string, string, int) {
	l.t.Helper()
	select {
	case <-l.done:
	case <-time.After(60 * time.Second):
		l.t.Fatalf("askslack login did not exit within 60s:\n%s\n%s", l.out.String(), l.errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(l.err, &ee) {
		code = ee.ExitCode()
	} else if l.err != nil {
		l.t.Fatal(l.err)
	}
	return l.out.String(), l.errb.String(), code
}

// device opens the device page for code, and confirms (action "connect"
// or "deny") when action is set, with the page's own CSRF token.
func (b *webBrowser) device(code, action string) webResult {
	b.t.Helper()
	page := b.do(http.MethodGet, "/app/device?code="+url.QueryEscape(code), nil)
	if action == "" || page.status != http.StatusOK {
		return page
	}
	m := webCSRF.FindStringSubmatch(page.body)
	if m == nil {
		b.t.Fatalf("no CSRF token on the device page: %s", page.body)
	}
	return b.do(http.MethodPost, "/app/device", url.Values{"csrf": {m[1]}, "code": {code}, "action": {action}})
}

// connect is the whole of askslack login on m as who, confirmed in a
// browser signed in as who; it returns login's output.
func (m *machine) connect(ctx context.Context, base string, who slackfake.User, name string) string {
	m.t.Helper()
	l := m.login(ctx, base, "--name", name, "--agents", "claude,codex")
	br := newWebBrowser(m.t, base)
	br.mustSignIn(who)
	if res := br.device(l.raw, "connect"); res.status != http.StatusOK || !strings.Contains(res.body, "Connected:") {
		m.t.Fatalf("confirming as %s: %d %s", who.Name, res.status, res.body)
	}
	out, errs, code := l.wait()
	if code != 0 {
		m.t.Fatalf("askslack login exited %d:\n%s\n%s", code, out, errs)
	}
	return out
}

// storedToken is the token askslack login kept on m for base.
func (m *machine) storedToken(base string) string {
	m.t.Helper()
	raw, err := os.ReadFile(m.credentials())
	if err != nil {
		m.t.Fatal(err)
	}
	var f struct {
		Bots map[string]struct{ Token, ID string } `json:"bots"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		m.t.Fatal(err)
	}
	return f.Bots[base].Token
}

// loginDeployment is a web deployment with a configured agent and operator
// token (so no loopback caller holds any role), the principal required.
func loginDeployment(t *testing.T, needRedis bool) (*deployment, string, string) {
	t.Helper()
	d, addr, base := webDeploymentAt(t, needRedis)
	d.env["ASKSLACK_API_TOKENS"] = "ci:" + aliceLaptop
	d.env["ASKSLACK_ADMIN_TOKENS"] = "ops:" + opsToken
	d.env["ASKSLACK_REQUIRE_PRINCIPAL"] = "true"
	return d, addr, base
}

// The flow as a person sees it, end to end: askslack login prints a page
// and a code; signed in with Slack, alice sees what connects and confirms;
// the token is kept (0600) and used by whoami, ask and the Claude Code
// hook with no ASKSLACK_TOKEN; its question names alice-laptop and alice,
// mentions her, and only she may answer it; the token never answers; the
// code cannot be used twice; connecting is in the audit trail.
func TestE2ELoginConnectsAnAgentAsItsOwner(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d, addr, base := loginDeployment(t, false)
	b := d.startAt(viaHTTP, addr)
	m := newMachine(t)

	l := m.login(ctx, base, "--name", "alice-laptop", "--agents", "claude,codex")
	if l.verify != base+"/app/device" || !strings.Contains(l.out.String(), "(or open "+base+"/app/device?code="+l.raw+")") {
		t.Fatalf("login printed:\n%s", l.out.String())
	}
	// Not signed in, the page says what it is for and sends to Slack.
	br := newWebBrowser(t, base)
	if p := br.device(l.raw, ""); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Connect an agent") || !strings.Contains(p.body, "Sign in with Slack") {
		t.Fatalf("the device page signed out: %d %s", p.status, p.body)
	}
	br.mustSignIn(alice)
	page := br.device(strings.ToLower(l.raw), "")
	for _, want := range []string{"alice-laptop", "claude, codex", "127.0.0.1", l.raw, `id="connect"`, `id="deny"`, "If you did not just run <code>askslack login</code>"} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("the device page lacks %q: %d %s", want, page.status, page.body)
		}
	}
	if p := br.do(http.MethodPost, "/app/device", url.Values{"code": {l.raw}, "action": {"connect"}}); p.status != http.StatusForbidden {
		t.Fatalf("a confirmation without the form's CSRF token: %d", p.status)
	}
	if res := br.device(l.raw, "connect"); res.status != http.StatusOK || !strings.Contains(res.body, "Connected: <strong>alice-laptop</strong> is your agent now") {
		t.Fatalf("confirming: %d %s", res.status, res.body)
	}
	out, errs, code := l.wait()
	if code != 0 || !strings.Contains(out, "Connected: alice-laptop asks as alice (U0ALICE), token at_") || !strings.Contains(out, m.credentials()) {
		t.Fatalf("askslack login exited %d:\n%s\n%s", code, out, errs)
	}
	t.Logf("askslack login printed:\n%s", out)
	fi, err := os.Stat(m.credentials())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	secret := m.storedToken(base)
	if !tokens.IsPersonal(secret) {
		t.Fatalf("stored token %q", secret)
	}
	if strings.Contains(b.logs.String(), secret) || strings.Contains(out, secret) {
		t.Fatal("the token is in the bot's logs or on the terminal")
	}

	// The replayed code: used, on the page and to anyone else.
	if res := br.device(l.raw, ""); res.status != http.StatusConflict || !strings.Contains(res.body, "was already used") {
		t.Fatalf("the code again: %d %s", res.status, res.body)
	}
	bb := newWebBrowser(t, base)
	bb.mustSignIn(bob)
	if res := bb.device(l.raw, ""); res.status != http.StatusConflict {
		t.Fatalf("the code by bob after alice used it: %d %s", res.status, res.body)
	}

	who, errs, code := m.run(ctx, "whoami", "--url", base)
	if code != 0 || !strings.Contains(who, "alice-laptop@U0ALICE at "+base+": agent, asking for U0ALICE") ||
		!strings.Contains(who, `"alice-laptop" of alice (U0ALICE) for claude, codex`) || !strings.Contains(who, "from "+m.credentials()) {
		t.Fatalf("whoami exited %d:\n%s\n%s", code, who, errs)
	}
	t.Logf("askslack whoami printed:\n%s", who)

	// The printed hook settings hold no secret; the hook, run as Claude
	// Code runs it, asks with the kept token.
	settings, errs, code := m.run(ctx, "hook", "claude", "--print-settings", "--url", base)
	if code != 0 || strings.Contains(settings, "askslack_pat_") || strings.Contains(settings, "ASKSLACK_TOKEN") || !strings.Contains(settings, "--url "+base) {
		t.Fatalf("--print-settings exited %d:\n%s\n%s", code, settings, errs)
	}
	h := startHookEnv(t, m.env(), base, hookInput(t, "claude_permission_bash.json"), "claude")
	msg := posted(t, ctx, d.fake)
	mustContain(t, "message", string(msg.Blocks), "alice-laptop@U0ALICE", "for U0ALICE")
	if !strings.Contains(msg.Text, "<@U0ALICE>") {
		t.Fatalf("the question does not mention its owner: %q", msg.Text)
	}
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "Allow", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, bob.ID, "Only <@U0ALICE>, on whose behalf the agent asks, may answer")
	click(t, ctx, d.fake, msg, "Allow")
	h.decided(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)

	// The token asks; it never answers, lists tokens, or names another
	// principal.
	c := b.client()
	c.Token = secret
	a := askWith(ctx, c, oneQuestion("login-1", "Yes", "No"))
	waitPosted(t, ctx, d.fake, "login-1")
	if _, err := c.Answer(ctx, "login-1", hostapi.AnswerBody{}); errCode(err) != "FORBIDDEN" {
		t.Fatalf("the personal token answering: %v", err)
	}
	if _, err := c.Tokens(ctx, ""); errCode(err) != "FORBIDDEN" {
		t.Fatalf("the personal token listing tokens: %v", err)
	}
	other := oneQuestion("login-2", "Yes")
	other.Agent.Principal = bob.ID
	if _, err := c.Ask(ctx, other); errCode(err) != "PRINCIPAL_MISMATCH" {
		t.Fatalf("the personal token asking for bob: %v", err)
	}
	msg = waitPosted(t, ctx, d.fake, "login-1")
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if res, err := a.wait(t); err != nil || res.Respondent.UserID != alice.ID {
		t.Fatalf("the ask: %+v %v", res, err)
	}
	es := trail(t, ctx, b)
	var connected *asktype.AuditEntry
	for i := range es {
		if es[i].Event == asktype.EventAgentConnected {
			connected = &es[i]
		}
	}
	if connected == nil || connected.Caller != "alice-laptop@U0ALICE" || connected.Respondent == nil || connected.Respondent.UserID != alice.ID ||
		!strings.Contains(connected.Detail, "asked for from 127.0.0.1") {
		t.Fatalf("the trail's connect entry: %+v", connected)
	}
}

// Hostile cases: a code confirmed by someone other than who started it (the
// token is theirs, asks as them, never answers), a person who may not
// connect (sees why; nothing is issued), guessed codes (limited), a denial,
// polling faster than the interval (slow_down), and a bot with the answer
// page off (login names what to configure).
func TestE2ELoginHostileCases(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	d, addr, base := loginDeployment(t, false)
	d.env["ASKSLACK_LOGIN_USERS"] = alice.ID + "," + bob.ID // mallory may answer, not connect
	b := d.startAt(viaHTTP, addr)

	// Phished: eve's terminal (here, another machine) gets bob to confirm.
	// The page showed bob what connects; the token is bob's, so it asks
	// as bob and can never answer.
	phished := newMachine(t)
	l := phished.login(ctx, base, "--name", "totally-bobs-laptop")
	bb := newWebBrowser(t, base)
	bb.mustSignIn(bob)
	page := bb.device(l.raw, "")
	if !strings.Contains(page.body, "totally-bobs-laptop") || !strings.Contains(page.body, "127.0.0.1") {
		t.Fatalf("the page does not show what connects: %s", page.body)
	}
	// mallory may answer but not connect: she sees why, no buttons.
	mb := newWebBrowser(t, base)
	mb.mustSignIn(mallory)
	if p := mb.device(l.raw, ""); p.status != http.StatusForbidden || !strings.Contains(p.body, "ASKSLACK_LOGIN_USERS") || strings.Contains(p.body, `id="connect"`) {
		t.Fatalf("mallory's device page: %d %s", p.status, p.body)
	}
	if res := bb.device(l.raw, "connect"); res.status != http.StatusOK {
		t.Fatalf("bob confirming: %d %s", res.status, res.body)
	}
	if out, errs, code := l.wait(); code != 0 || !strings.Contains(out, "asks as bob (U0BOB)") {
		t.Fatalf("the phished login: %d\n%s\n%s", code, out, errs)
	}
	c := b.client()
	c.Token = phished.storedToken(base)
	a := askWith(ctx, c, oneQuestion("phish-1", "Yes", "No"))
	msg := waitPosted(t, ctx, d.fake, "phish-1")
	mustContain(t, "message", string(msg.Blocks), "totally-bobs-laptop@U0BOB")
	if _, err := c.Answer(ctx, "phish-1", hostapi.AnswerBody{Answers: nil}); errCode(err) != "FORBIDDEN" {
		t.Fatalf("the phished token answering: %v", err)
	}
	// Bound to bob: alice's click is refused.
	if _, err := d.fake.ClickButton(ctx, alice, msg.Channel, msg.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "Only <@U0BOB>")
	if _, err := d.fake.ClickButton(ctx, bob, msg.Channel, msg.TS, "No", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.wait(t); err != nil {
		t.Fatal(err)
	}
	// The console: its admins (bob is a rule admin) see every connected
	// agent and revoke it; anyone else may not.
	con := bb.do(http.MethodGet, "/app/console", nil)
	id := regexp.MustCompile(`id="revoke-token-(at_[a-z2-7]+)"`).FindStringSubmatch(con.body)
	if con.status != http.StatusOK || id == nil || !strings.Contains(con.body, "totally-bobs-laptop") {
		t.Fatalf("the console's connected agents: %d %s", con.status, con.body)
	}
	if p := mb.do(http.MethodPost, "/app/console/tokens/"+id[1]+"/revoke", url.Values{"csrf": {mb.csrf()}}); p.status != http.StatusForbidden {
		t.Fatalf("mallory revoking from the console: %d", p.status)
	}
	if _, err := c.Whoami(ctx); err != nil {
		t.Fatalf("the token after mallory's try: %v", err)
	}
	if p := bb.do(http.MethodPost, "/app/console/tokens/"+id[1]+"/revoke", url.Values{"csrf": {bb.csrf()}}); p.status != http.StatusSeeOther {
		t.Fatalf("bob revoking from the console: %d %s", p.status, p.body)
	}
	if _, err := c.Whoami(ctx); errCode(err) != "UNAUTHORIZED" || !strings.Contains(err.Error(), "was revoked") {
		t.Fatalf("the token after the console's revoke: %v", err)
	}

	// Guessing: a wrong code says so; guessing on is limited, and then
	// even the right code is refused for a while.
	target := newMachine(t).login(ctx, base, "--name", "target")
	guess := newWebBrowser(t, base)
	guess.mustSignIn(alice)
	wrong := "BCDF-GHJK"
	if wrong == target.raw {
		wrong = "BCDF-GHJL"
	}
	if p := guess.device(wrong, ""); p.status != http.StatusNotFound || !strings.Contains(p.body, "No login is waiting for the code "+wrong) {
		t.Fatalf("a wrong code: %d %s", p.status, p.body)
	}
	limited := false
	for range 20 {
		if p := guess.device(wrong, ""); p.status == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("20 more guesses were not limited")
	}
	if p := guess.device(target.raw, ""); p.status != http.StatusTooManyRequests {
		t.Fatalf("the right code while limited: %d", p.status)
	}
	// Denied: the terminal is told.
	if res := bb.device(target.raw, "deny"); res.status != http.StatusOK || !strings.Contains(res.body, "Denied") {
		t.Fatalf("denying: %d %s", res.status, res.body)
	}
	if out, errs, code := target.wait(); code == 0 || !strings.Contains(errs, "denied in the browser") {
		t.Fatalf("the denied login: %d\n%s\n%s", code, out, errs)
	}

	// Polling faster than the interval: slow_down, from the real endpoint.
	fast := &hostapi.Client{BaseURL: base}
	auth, err := fast.StartLogin(ctx, "fast", nil)
	if err != nil {
		t.Fatal(err)
	}
	var de *hostapi.DeviceError
	if _, err := fast.PollLogin(ctx, auth.DeviceCode); !errors.As(err, &de) || de.Code != "authorization_pending" {
		t.Fatalf("first poll: %v", err)
	}
	if _, err := fast.PollLogin(ctx, auth.DeviceCode); !errors.As(err, &de) || de.Code != "slow_down" {
		t.Fatalf("a poll at once after: %v", err)
	}
	if _, err := fast.PollLogin(ctx, "made-up-device-code"); !errors.As(err, &de) || de.Code != "expired_token" {
		t.Fatalf("a made-up device code: %v", err)
	}

	// A bot with the answer page off: login says what to configure.
	off := newDeployment(t, false)
	ob := off.start(viaHTTP)
	_, errs, code := newMachine(t).run(ctx, "login", "--url", "http://"+ob.addr)
	if code == 0 || !strings.Contains(errs, "answer page is off") || !strings.Contains(errs, "ASKSLACK_WEB_URL, SLACK_CLIENT_ID and SLACK_CLIENT_SECRET") {
		t.Fatalf("login against a bot with the page off: %d %s", code, errs)
	}
	t.Logf("login against a bot with the page off:\n%s", errs)
}

// agentEvents are the verified webhook deliveries of agent events.
func (h *hookReceiver) agentEvent(t *testing.T, ctx context.Context, typ string) webhook.Body {
	t.Helper()
	for {
		for _, d := range h.verified() {
			if d.body.Type == typ {
				return d.body
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no signed %s reached the receiver", typ)
		case <-time.After(50 * time.Millisecond): // polling a receiver another process posts to
		}
	}
}

// from127002 is a client of base whose connections come from 127.0.0.2:
// another machine, as the bot sees it.
func from127002(base, token string) *hostapi.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext
	return &hostapi.Client{BaseURL: base, Token: token, HTTP: &http.Client{Transport: tr}}
}

// Two replicas over one Redis: a token connected on one works on both; a
// copy of the credentials file used from another address shows that
// address in App Home and /askslack agents; Revoke in App Home withdraws
// the token's open question and makes the next ask fail with the login
// hint on both replicas at once; connect, revoke and the use after it are
// in the audit trail and sent as webhooks; askslack logout revokes a token
// as itself.
func TestE2ELoginRevokedInAppHomeOnBothReplicas(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	rcv := newHookReceiver(t)
	d, addrA, base := loginDeployment(t, true)
	d.env["ASKSLACK_WEBHOOKS"] = "audit=" + rcv.srv.URL + "/hook"
	d.env["ASKSLACK_WEBHOOK_SECRET"] = hookSecret
	ra := d.startAt(viaHTTP, addrA)
	rb := d.start(viaHTTP) // Slack's requests go to b
	onB := "http://" + rb.addr

	m := newMachine(t)
	m.connect(ctx, base, alice, "alice-laptop")
	secret := m.storedToken(base)
	connected := rcv.agentEvent(t, ctx, webhook.AgentConnected)
	if connected.Caller != "alice-laptop@U0ALICE" || connected.Respondent == nil || connected.Respondent.UserID != alice.ID || strings.Contains(mustJSON(connected), secret) {
		t.Fatalf("agent.connected: %+v", connected)
	}

	// The stolen file: copied to another machine, used from 127.0.0.2.
	thief := from127002(onB, secret)
	if w, err := thief.Whoami(ctx); err != nil || w.Token == nil || w.Token.LastAddr != "127.0.0.2" {
		t.Fatalf("the copied token's whoami: %+v %v", w, err)
	}
	if _, err := d.fake.SendEvent(ctx, d.fake.HomeOpened(alice), "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	home := homeShows(t, ctx, d.fake, "Your connected agents")
	if !strings.Contains(home, "alice-laptop") || !strings.Contains(home, "from `127.0.0.2`") {
		t.Fatalf("App Home does not show the last use from 127.0.0.2: %s", home)
	}
	if _, err := d.fake.SendCommand(ctx, slackfake.Command{User: alice, Channel: testChannel, Command: "/askslack", Text: "agents"}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitEphemeral(t, ctx, d.fake, alice.ID, "1 connected agent")

	// An open question of the token, on a; a revoke from App Home, on b.
	asking := exec.CommandContext(ctx, binPath, "ask", "--url", "http://"+ra.addr, "--question", "Ship it?", "--option", "Yes", "--option", "No", "--call-id", "revoke-open")
	asking.Env = m.env()
	var askOut, askErr syncBuffer
	asking.Stdout, asking.Stderr = &askOut, &askErr
	if err := asking.Start(); err != nil {
		t.Fatal(err)
	}
	asked := make(chan error, 1)
	go func() { asked <- asking.Wait() }()
	open := waitPosted(t, ctx, d.fake, "revoke-open")
	mustContain(t, "message", string(open.Blocks), "alice-laptop@U0ALICE")

	if _, err := d.fake.SendEvent(ctx, d.fake.HomeOpened(alice), "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	homeShows(t, ctx, d.fake, "alice-laptop")
	if _, err := d.fake.ClickHome(ctx, alice, "agent/at_", "Revoke", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	homeShows(t, ctx, d.fake, "Revoked: it stops working at once")
	select {
	case err := <-asked:
		if err == nil || !strings.Contains(askErr.String(), "agent token that asked it was revoked") || !strings.Contains(askErr.String(), "askslack login") {
			t.Fatalf("the open ask ended with %v: %s", err, askErr.String())
		}
	case <-ctx.Done():
		t.Fatal("the open ask did not end when its token was revoked")
	}
	waitMessage(t, ctx, d.fake, open.Channel, open.TS, "withdrawn for the revoke", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), "token was revoked") && !hasControls(m)
	})
	// The next ask fails with the login hint on both replicas: through the
	// URL the token is kept for (a's), and on b with the token given.
	for _, at := range [][]string{{"--url", base}, {"--url", onB, "--token", secret}} {
		_, errs, code := m.run(ctx, append(append([]string{"ask"}, at...), "--question", "Again?", "--option", "Yes")...)
		if code == 0 || !strings.Contains(errs, "was revoked on") || !strings.Contains(errs, "askslack login") {
			t.Fatalf("an ask through %s after the revoke: %d %s", at, code, errs)
		}
	}
	if _, err := thief.Whoami(ctx); errCode(err) != "UNAUTHORIZED" {
		t.Fatalf("the copied token after the revoke: %v", err)
	}
	revoked := rcv.agentEvent(t, ctx, webhook.AgentRevoked)
	refused := rcv.agentEvent(t, ctx, webhook.AgentRefused)
	if revoked.Respondent == nil || revoked.Respondent.UserID != alice.ID || !strings.Contains(refused.Detail, "revoked, presented from 127.0.0.1") {
		t.Fatalf("agent.revoked %+v, agent.refused %+v", revoked, refused)
	}
	withdrawn := rcv.waitFor(t, ctx, webhook.AskWithdrawn, "revoke-open")
	if withdrawn.body.Reason != string(asktype.Revoked) {
		t.Fatalf("ask.withdrawn's reason: %+v", withdrawn.body)
	}
	es := trail(t, ctx, ra)
	for _, ev := range []string{asktype.EventAgentConnected, asktype.EventAgentRevoked, asktype.EventAgentRefused} {
		if has(es, "", ev) == nil {
			t.Fatalf("the trail has no %s entry", ev)
		}
	}
	if w := has(es, "revoke-open", asktype.EventWithdrawn); w == nil || w.Detail != "its agent token was revoked" {
		t.Fatalf("the withdrawn entry: %+v", w)
	}

	// askslack logout: a second machine's token revoked as itself.
	other := newMachine(t)
	other.connect(ctx, base, alice, "alice-desktop")
	out, errs, code := other.run(ctx, "logout", "--url", base)
	if code != 0 || !strings.Contains(out, "is revoked, and removed from") {
		t.Fatalf("logout: %d %s %s", code, out, errs)
	}
	if _, errs, code := other.run(ctx, "whoami", "--url", base); code == 0 || !strings.Contains(errs, "not logged in") {
		t.Fatalf("whoami after logout: %d %s", code, errs)
	}
	ops := ra.client()
	ops.Token = opsToken
	if live, err := ops.Tokens(ctx, alice.ID); err != nil || len(live) != 0 {
		t.Fatalf("alice's live tokens after both revokes: %+v %v", live, err)
	}
}

// homeShows waits for alice's Home tab to show substr and returns it.
func homeShows(t *testing.T, ctx context.Context, f *slackfake.Server, substr string) string {
	t.Helper()
	return waitHome(t, ctx, f, alice.ID, "showed "+substr, func(v string) bool { return strings.Contains(v, substr) })
}
