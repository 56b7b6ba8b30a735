package main

// Upgrades (issue 44, docs/upgrading.md): today's binary beside the
// previous release's, built from this repository's own history, over one
// Redis and one fake Slack; and the stored schema marker's guard.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store/redisstore"
	"github.com/askslack/askslack/waterfall"
)

// previousRelease is the release a replica of today's build must run
// beside (docs/upgrading.md names the same commit). Move it forward when a
// release is cut.
const previousRelease = "fc987cc"

var prev struct {
	once sync.Once
	path string
	err  error
}

// errNoHistory: the checkout lacks the previous release's commit (a
// shallow clone).
var errNoHistory = errors.New("the repository's history is not here")

// previousBinary builds previousRelease once per test binary (without the
// race detector: it is the old code, not what this change tests) and
// returns its path. Without the history the test is skipped, or fails
// where CI=true: CI must not pass by skipping.
func previousBinary(t *testing.T) string {
	t.Helper()
	prev.once.Do(func() {
		prev.path, prev.err = buildRelease(previousRelease, filepath.Join(filepath.Dir(binPath), "prev"))
	})
	if errors.Is(prev.err, errNoHistory) && os.Getenv("CI") != "true" {
		t.Skip(prev.err)
	}
	if prev.err != nil {
		t.Fatal(prev.err)
	}
	return prev.path
}

func buildRelease(rev, dir string) (string, error) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("%w: git rev-parse: %v; the upgrade tests build release %s from git", errNoHistory, err, rev)
	}
	root := strings.TrimSpace(string(top))
	if err := exec.Command("git", "-C", root, "cat-file", "-e", rev+"^{commit}").Run(); err != nil {
		shallow, _ := exec.Command("git", "-C", root, "rev-parse", "--is-shallow-repository").Output()
		return "", fmt.Errorf("%w: commit %s (the previous release) is missing from %s (shallow clone: %s); "+
			"the upgrade tests build it from git: clone without --depth, or run git fetch --unshallow",
			errNoHistory, rev, root, strings.TrimSpace(string(shallow)))
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	var aerr, terr strings.Builder
	archive.Stderr, untar.Stderr = &aerr, &terr
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %v: %s", rev, err, aerr.String())
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("untar %s: %v: %s", rev, err, terr.String())
	}
	out := filepath.Join(dir, "askslack")
	build := exec.Command("go", "build", "-o", out, "./cmd/askslack")
	build.Dir = src
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building release %s: %v\n%s", rev, err, b)
	}
	return out, nil
}

// mixed drives one deployment whose bots are of either release.
type mixed struct {
	t    *testing.T
	ctx  context.Context
	d    *deployment
	old  string
	msgs map[string]slackfake.Message
	asks map[string]*asked
}

func newMixed(t *testing.T) *mixed {
	old := previousBinary(t)
	d := newDeployment(t, true)
	if d.redisURL == "" {
		t.Fatal("the upgrade tests need REDIS_URL") // newDeployment skipped unless it is set
	}
	return &mixed{t: t, ctx: testCtx(t), d: d, old: old, msgs: map[string]slackfake.Message{}, asks: map[string]*asked{}}
}

// start runs a bot of the previous release (old) or today's.
func (m *mixed) start(old bool) *bot {
	m.t.Helper()
	m.d.bin = ""
	if old {
		m.d.bin = m.old
	}
	return m.d.start(viaHTTP)
}

// replace stops b (SIGTERM, as a rolling update does) and starts a bot of
// the given release on its address: the pod behind the same Service.
func (m *mixed) replace(b *bot, old bool) *bot {
	m.t.Helper()
	b.stop()
	m.d.bin = ""
	if old {
		m.d.bin = m.old
	}
	return m.d.startAt(viaHTTP, b.addr)
}

// agent is an agent's client for the replica at b's address; it re-attaches
// for as long as a rolling update takes.
func agent(b *bot) *hostapi.Client {
	return &hostapi.Client{BaseURL: "http://" + b.addr, Reattach: time.Minute}
}

// open asks a Yes/No question through b (blocking, in the background) and
// waits for its message.
func (m *mixed) open(b *bot, req *waterfall.Request) {
	m.t.Helper()
	m.asks[req.CallID] = askWith(m.ctx, agent(b), req)
	m.msgs[req.CallID] = waitPosted(m.t, m.ctx, m.d.fake, req.CallID)
}

// click taps label on callID's message, delivered to b.
func (m *mixed) click(b *bot, callID, label string) {
	m.t.Helper()
	msg := m.msgs[callID]
	m.d.fake.SetInteractionURL("http://" + b.addr + "/slack/interactions")
	resp, err := m.d.fake.ClickButton(m.ctx, alice, msg.Channel, msg.TS, label, slackfake.Delivery{})
	if err != nil {
		m.t.Fatalf("click %q on %s via %s: %v", label, callID, b.addr, err)
	}
	if resp.Status != 200 {
		m.t.Fatalf("click %q on %s via %s: HTTP %d %s", label, callID, b.addr, resp.Status, resp.Body)
	}
}

// answered waits for callID's agent to get label, and its message to end
// without controls.
func (m *mixed) answered(callID, label string) {
	m.t.Helper()
	res, err := m.asks[callID].wait(m.t)
	if err != nil {
		m.t.Fatalf("%s: agent got %v", callID, err)
	}
	if res.Pending || len(res.Answers) != 1 || len(res.Answers[0].Selected) != 1 || res.Answers[0].Selected[0] != label {
		m.t.Fatalf("%s: agent got %+v; want %q", callID, res, label)
	}
	m.ended(callID)
}

// ended waits until callID's message has no live controls.
func (m *mixed) ended(callID string) {
	m.t.Helper()
	msg := m.msgs[callID]
	waitMessage(m.t, m.ctx, m.d.fake, msg.Channel, msg.TS, callID+" without buttons", func(s slackfake.Message) bool {
		return !hasControls(s)
	})
}

// check is the end state: one message per ask (nothing doubled), none with
// live buttons (every ask here ended), no panic in any bot's logs.
func (m *mixed) check() {
	m.t.Helper()
	for id := range m.msgs {
		n := 0
		for _, s := range m.d.fake.Messages() {
			if strings.Contains(string(s.Blocks), "ask/"+id+"/") {
				n++
				if hasControls(s) {
					m.t.Errorf("%s: a message with live buttons on an ended ask", id)
				}
			}
		}
		if n != 1 {
			m.t.Errorf("%s: %d messages; want 1", id, n)
		}
	}
	for _, b := range m.d.bots {
		if logs := b.logs.String(); strings.Contains(logs, "panic") {
			m.t.Errorf("bot %s panicked:\n%s", b.addr, logs)
		}
	}
}

// lateAnswer has alice answer the continued callID through via, reads the
// queued message through reader and acknowledges it through acker.
func (m *mixed) lateAnswer(callID, session string, via, reader, acker *bot) {
	m.t.Helper()
	m.click(via, callID, "Yes")
	msgs, err := reader.client().Messages(m.ctx, session, 10*time.Second)
	if err != nil || len(msgs) != 1 || msgs[0].CallID != callID || msgs[0].Answers[0].Selected[0] != "Yes" {
		m.t.Fatalf("%s: session queue through %s: %+v %v; want the late answer once", callID, reader.addr, msgs, err)
	}
	// Admit, as today's hooks and MCP server acknowledge: they pass the
	// answer to the model only when this ack admitted it first.
	if first, err := acker.client().Admit(m.ctx, session, msgs[0].ID); err != nil || !first {
		m.t.Fatalf("%s: ack through %s: first=%v %v; want admitted first (else the agent never gets it)", callID, acker.addr, first, err)
	}
	for _, b := range []*bot{reader, acker} {
		st, err := b.client().Get(m.ctx, callID, 0)
		if err != nil || st.State != "settled" {
			m.t.Fatalf("%s through %s: %+v %v; want settled", callID, b.addr, st, err)
		}
		if left, _ := b.client().Messages(m.ctx, session, 0); len(left) != 0 {
			m.t.Fatalf("%s: %d messages still queued through %s after the ack", callID, len(left), b.addr)
		}
	}
	m.ended(callID)
}

// One replica of the previous release and one of today's over one Redis:
// asks created on either are answered through the other, and a timed ask's
// late answer is queued by one and acknowledged through the other.
func TestUpgradeMixedVersions(t *testing.T) {
	t.Parallel()
	m := newMixed(t)
	old, cur := m.start(true), m.start(false)

	// A blocking wait on one while the click lands on the other.
	m.open(old, oneQuestion("mix-old-new", "Yes", "No"))
	m.click(cur, "mix-old-new", "Yes")
	m.answered("mix-old-new", "Yes")
	m.open(cur, oneQuestion("mix-new-old", "Yes", "No"))
	m.click(old, "mix-new-old", "No")
	m.answered("mix-new-old", "No")

	// Timed on the old: continued at its deadline, answered late through
	// the new, read through the old, acknowledged through the new.
	req := timedQuestion("mix-timed-old", 2*time.Second, "Yes", "No")
	req.Agent.SessionID = "sess-mix-1"
	m.open(old, req)
	if res, err := m.asks[req.CallID].wait(t); err != nil || !res.Pending {
		t.Fatalf("timed ask on the old release: %+v %v; want pending", res, err)
	}
	m.lateAnswer(req.CallID, "sess-mix-1", cur, old, cur)

	// Timed on the new, continued before its deadline through the old
	// (fc987cc has the route: 8fcf7fb, the release before, answered 404),
	// answered late through the old, read through the new and
	// acknowledged through the old.
	req = timedQuestion("mix-timed-new", time.Hour, "Yes", "No")
	req.Agent.SessionID = "sess-mix-2"
	m.open(cur, req)
	if st, err := old.client().Continue(m.ctx, req.CallID); err != nil || st.State != "continued" {
		t.Fatalf("continue through the previous release: %+v %v", st, err)
	}
	if st, err := cur.client().Get(m.ctx, req.CallID, 0); err != nil || st.State != "continued" {
		t.Fatalf("after the old release continued it: %+v %v; want continued through today's", st, err)
	}
	if res, err := m.asks[req.CallID].wait(t); err != nil || !res.Pending {
		t.Fatalf("continued ask: %+v %v; want pending", res, err)
	}
	m.lateAnswer(req.CallID, "sess-mix-2", old, cur, old)
	m.check()
}

// The rolling update old,old → old,new → new,new with asks open the whole
// time, each replaced replica's blocking agents re-attaching to its
// successor, then a rollback new,new → old,new → old,old. Every ask is
// answered once, through whichever release serves the click.
func TestUpgradeRollingAndRollback(t *testing.T) {
	t.Parallel()
	m := newMixed(t)
	r1, r2 := m.start(true), m.start(true)
	q := oneQuestion
	m.open(r1, q("roll-1", "Yes", "No"))
	m.open(r2, q("roll-2", "Yes", "No"))
	m.open(r1, q("roll-3", "Yes", "No"))
	m.open(r2, q("roll-4", "Yes", "No"))
	timed := timedQuestion("roll-timed", 5*time.Second, "Yes", "No")
	timed.Agent.SessionID = "sess-roll"
	m.open(r1, timed)
	m.click(r2, "roll-1", "Yes")
	m.answered("roll-1", "Yes")

	// old, new: r1's agents (roll-3 and the timed wait) re-attach to today's.
	r1 = m.replace(r1, false)
	m.click(r1, "roll-2", "Yes")
	m.answered("roll-2", "Yes")
	m.open(r1, q("roll-5", "Yes", "No"))
	m.open(r2, q("roll-6", "Yes", "No"))
	m.click(r2, "roll-3", "No")
	m.answered("roll-3", "No")

	// new, new.
	r2 = m.replace(r2, false)
	m.click(r1, "roll-4", "Yes")
	m.answered("roll-4", "Yes")
	m.click(r2, "roll-6", "Yes")
	m.answered("roll-6", "Yes")
	m.open(r2, q("roll-7", "Yes", "No"))
	if res, err := m.asks["roll-timed"].wait(t); err != nil || !res.Pending {
		t.Fatalf("the timed ask across the update: %+v %v; want pending at its deadline", res, err)
	}

	// Rollback: old, new, with asks of today's open.
	r1 = m.replace(r1, true)
	m.click(r1, "roll-5", "Yes")
	m.answered("roll-5", "Yes")
	m.open(r1, q("roll-8", "Yes", "No"))
	m.lateAnswer("roll-timed", "sess-roll", r1, r2, r1)
	// old, old.
	r2 = m.replace(r2, true)
	m.click(r2, "roll-7", "No")
	m.answered("roll-7", "No")
	m.click(r1, "roll-8", "Yes")
	m.answered("roll-8", "Yes")
	m.check()
}

// A bot refuses to start against a store whose marker says a newer release
// wrote a shape it cannot read, and says which release and what to do.
func TestUpgradeRefusesANewerIncompatibleStore(t *testing.T) {
	t.Parallel()
	d := newDeployment(t, true)
	rdb := redisFor(t, d)
	key := d.prefix + ":schema"
	if err := rdb.HSet(testCtx(t), key, "version", redisstore.SchemaReads+1, "minReader", redisstore.SchemaReads+1, "release", "v99-future").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := d.launch(viaHTTP, freeAddr(t))
	if err == nil {
		t.Fatal("the bot started against a store a newer incompatible release wrote")
	}
	b := d.bots[len(d.bots)-1]
	var ee *exec.ExitError
	if !errors.As(b.err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v; want status 1", b.err)
	}
	logs := b.logs.String()
	for _, want := range []string{"release v99-future", "Run release v99-future or newer", "docs/upgrading.md"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, logs)
		}
	}
	if got := rdb.HGet(testCtx(t), key, "release").Val(); got != "v99-future" {
		t.Fatalf("the refused bot changed the marker: %q", got)
	}

	// A compatible newer marker (a rollback beside it) starts.
	if err := rdb.HSet(testCtx(t), key, "minReader", redisstore.SchemaVersion).Err(); err != nil {
		t.Fatal(err)
	}
	d.start(viaHTTP)
}

// The next release's writer, ASKSLACK_STORE_SCHEMA=2 (the stale index under
// its own hash tag), beside today's default: asks created on either are
// answered through the other; the previous release, which would not sweep
// that index, refuses the store from then on instead of running beside it.
func TestUpgradeSchema2WriterBesideTodaysReader(t *testing.T) {
	t.Parallel()
	m := newMixed(t)
	m.d.env = map[string]string{"ASKSLACK_STORE_SCHEMA": "2"}
	next := m.start(false)
	m.d.env = nil
	cur := m.start(false)

	m.open(next, oneQuestion("s2-next-cur", "Yes", "No"))
	m.click(cur, "s2-next-cur", "Yes")
	m.answered("s2-next-cur", "Yes")
	m.open(cur, oneQuestion("s2-cur-next", "Yes", "No"))
	m.click(next, "s2-cur-next", "No")
	m.answered("s2-cur-next", "No")
	m.check()

	m.d.bin = m.old
	if _, err := m.d.launch(viaHTTP, freeAddr(t)); err == nil {
		t.Fatal("the previous release started against a store of schema 2")
	}
	b := m.d.bots[len(m.d.bots)-1]
	var ee *exec.ExitError
	if !errors.As(b.err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("the previous release's exit = %v; want status 1", b.err)
	}
	if logs := b.logs.String(); !strings.Contains(logs, "docs/upgrading.md") {
		t.Errorf("the refusal does not point at docs/upgrading.md:\n%s", logs)
	}
}
