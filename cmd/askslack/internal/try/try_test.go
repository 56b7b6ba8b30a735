package try

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	kitbrowser "github.com/askslack/askslack/internal/kit/browser"
)

var updateShots = flag.Bool("update", false, "rewrite the playground screenshots (testdata/try/*.png and docs/playground.png)")

// browser starts the test's headless Chromium (internal/kit/browser).
func browser(t *testing.T) context.Context { return kitbrowser.Start(t) }

// tryPage is a playground and the browser tab showing it.
type tryPage struct {
	t    *testing.T
	ctx  context.Context // the tab
	run  *tryRun
	logs *bytes.Buffer
}

func startTryPage(t *testing.T, tab context.Context) *tryPage {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	run, err := startTry(ctx, tryOptions{Addr: "127.0.0.1:0", Log: log})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := run.wait(); err != nil {
			t.Errorf("playground stopped with %v", err)
		}
		if t.Failed() {
			t.Logf("bot logs:\n%s", logs.String())
		}
	})
	return &tryPage{t: t, ctx: tab, run: run, logs: logs}
}

// do runs browser actions with a bound, failing the test on error.
func (p *tryPage) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v\npage text:\n%s", what, err, p.text())
	}
}

// until waits for a JavaScript condition on the page, re-checked on every
// DOM change (no sleeps).
func (p *tryPage) until(what, js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+js+")", chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		p.t.Fatalf("waiting until %s: %v\npage text:\n%s", what, err, p.text())
	}
}

func (p *tryPage) eval(js string, out any) {
	p.t.Helper()
	b, err := chromedp.Run(p.ctx, chromedp.Evaluate[json.RawMessage]("JSON.stringify("+js+")"))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", js, err)
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		p.t.Fatalf("evaluating %s: %s: %v", js, b, err)
	}
	if err := json.Unmarshal([]byte(s), out); err != nil {
		p.t.Fatalf("evaluating %s: %s: %v", js, s, err)
	}
}

func (p *tryPage) text() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText + "\n\nnot delivered: " + JSON.stringify(window.playgroundErrors) + "\nacts: " + JSON.stringify(window.playgroundActs)`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// js quotes a Go string for JavaScript.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// msgJS is the JavaScript for the message (in the open pane) whose text
// contains s.
func msgJS(s string) string {
	return `[...document.querySelectorAll("section.pane:not([hidden]) .msg[data-surface=message]")].reverse().find(m => m.textContent.includes(` + js(s) + `))`
}

// button is an XPath to the button labelled label in the message of the
// open pane whose text contains s.
func button(s, label string) chromedp.Search {
	return chromedp.Search(fmt.Sprintf(`//section[not(@hidden)]//div[@data-surface='message'][contains(., %s)]//button[normalize-space(.)=%s]`, xq(s), xq(label)))
}

// xq quotes a string for XPath.
func xq(s string) string {
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}

// ask posts an ask to the bot's host API: asynchronously (the question
// lives until answered), or blocking in the background when the result
// matters (its channel gets the answer).
func (p *tryPage) ask(body string, async bool) <-chan map[string]any {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.run.URL+"/v1/asks", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+p.run.Token)
	req.Header.Set("Content-Type", "application/json")
	if async {
		req.Header.Set("Prefer", "respond-async")
	}
	out := make(chan map[string]any, 1)
	send := func() error {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return fmt.Errorf("POST /v1/asks: %d %s", resp.StatusCode, b)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		out <- m
		return nil
	}
	if async {
		if err := send(); err != nil {
			p.t.Fatal(err)
		}
		return out
	}
	go func() {
		if err := send(); err != nil {
			out <- map[string]any{"error": err.Error()}
		}
	}()
	return out
}

// answer waits until the ask is settled and returns what the agent gets.
func (p *tryPage) answer(callID string) map[string]any {
	p.t.Helper()
	for range 30 {
		req, _ := http.NewRequest(http.MethodGet, p.run.URL+"/v1/asks/"+callID+"?waitMs=2000", nil)
		req.Header.Set("Authorization", "Bearer "+p.run.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			p.t.Fatal(err)
		}
		var m map[string]any
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil {
			p.t.Fatal(err)
		}
		if m["state"] == "settled" {
			return m
		}
	}
	p.t.Fatalf("ask %s was not answered", callID)
	return nil
}

// state is the ask's state now.
func (p *tryPage) state(callID string) string {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.run.URL+"/v1/asks/"+callID, nil)
	req.Header.Set("Authorization", "Bearer "+p.run.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	s, _ := m["state"].(string)
	return s
}

// as picks who clicks, with the page's person picker.
func (p *tryPage) as(name string) {
	p.t.Helper()
	p.do("pick "+name, chromedp.Click(chromedp.CSS(`label.person[data-person="`+name+`"]`)))
	p.until(name+" is the person", `document.body.dataset.person === "U0`+strings.ToUpper(name)+`"`)
}

// shot takes a screenshot of the page: with -update it is written to
// path, else compared loosely with the one there.
func (p *tryPage) shot(path string) {
	p.t.Helper()
	b, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	if *updateShots {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			p.t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			p.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatalf("%v (run the test with -update to write the screenshots)", err)
	}
	if err := similar(want, b); err != nil {
		failed := filepath.Join(p.t.TempDir(), filepath.Base(path))
		_ = os.WriteFile(failed, b, 0o644)
		p.t.Errorf("screenshot %s: %v; this run's is %s (run with -update if the change is meant)", path, err, failed)
	}
}

// similar compares two screenshots loosely: the same size, and at most a
// tenth of a coarse grid of cells whose average colour moved noticeably
// (times, tokens and font hinting change a few; a changed layout moves many).
func similar(a, b []byte) error {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if ia.Bounds() != ib.Bounds() {
		return fmt.Errorf("size %v, want %v", ib.Bounds().Size(), ia.Bounds().Size())
	}
	const cell = 32
	r := ia.Bounds()
	cells, differ := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y += cell {
		for x := r.Min.X; x < r.Max.X; x += cell {
			c := image.Rect(x, y, min(x+cell, r.Max.X), min(y+cell, r.Max.Y))
			cells++
			if colourDistance(mean(ia, c), mean(ib, c)) > 24 {
				differ++
			}
		}
	}
	if differ*10 > cells {
		return fmt.Errorf("%d of %d cells differ", differ, cells)
	}
	return nil
}

func mean(img image.Image, r image.Rectangle) [3]float64 {
	var sum [3]float64
	n := 0.0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			sum[0] += float64(cr >> 8)
			sum[1] += float64(cg >> 8)
			sum[2] += float64(cb >> 8)
			n++
		}
	}
	return [3]float64{sum[0] / n, sum[1] / n, sum[2] / n}
}

func colourDistance(a, b [3]float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, abs(a[i]-b[i]))
	}
	return d
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// lockedWriter serialises writes to a buffer the test reads at the end.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}

// TestTryBrowser drives `askslack try` in a real browser: the page shows
// what the bot posts to the fake Slack, live, and every click and modal
// goes through the bot's signed interaction path. One browser and one
// playground for every scenario, in order; each step waits on the page's
// DOM, never on time.
func TestTryBrowser(t *testing.T) {
	tab := browser(t)
	p := startTryPage(t, tab)
	p.do("load the page", chromedp.Navigate(p.run.URL+"/?person=U0ALICE#channel"))
	p.until("the page is live", `document.body.dataset.version && document.querySelector("#live.on")`)
	p.until("the channel is empty", `!document.querySelector("#pane-channel .empty").hidden`)
	p.shot("testdata/try/empty.png")

	// A plan review and a multi-select question, asked through the host
	// API, appear without a reload: the picture at the top of the README.
	plan := "## Plan\n1. Add a `billing_v2` table next to **billing**\n2. Backfill it in batches of 10,000 rows (<b>not</b> HTML & safe)\n" +
		"3. Switch reads, then writes, behind the `billing.v2` flag\n\n```sql\nALTER TABLE billing ADD COLUMN migrated_at timestamptz;\n```"
	p.ask(`{"callId":"try-plan","agent":{"id":"claude-code","sessionId":"s-plan","sourceTaskId":"billing · 5f0e2c1a"},
		"questions":[{"id":"plan","question":"Approve this plan to migrate the billing service?","detail":`+js(plan)+`,
		"options":[{"label":"Approve","description":"Start the migration"},{"label":"Revise","description":"Send the plan back"}],
		"intent":{"kind":"plan-review","approve":"Approve"}}]}`, true)
	// One after the other, so the picture is the same every time.
	p.until("the plan appears without a reload", msgJS("Approve this plan"))
	p.ask(`{"callId":"try-ci","agent":{"id":"codex","sessionId":"s-ci"},"questions":[{"id":"ci","header":"CI","question":"Which CI checks must pass before merging?","multiSelect":true,
		"options":[{"label":"lint","description":"gofmt and go vet"},{"label":"unit","description":"go test -race ./..."},{"label":"e2e","description":"the browser tests"}]}]}`, true)
	p.until("the multi-select appears", msgJS("Which CI checks"))
	p.until("the plan's Approve button is primary", msgJS("Approve this plan")+`.querySelector("button.style-primary")`)
	p.shot("../../../../docs/playground.png")

	t.Run("alice approves the plan; the agent gets it and the buttons go", func(t *testing.T) {
		p.t = t
		p.do("click Approve", chromedp.Click(button("Approve this plan", "Approve")))
		got := p.answer("try-plan")
		if s := fmt.Sprint(got["answers"], got["respondent"]); !strings.Contains(s, "Approve") || !strings.Contains(s, "U0ALICE") {
			t.Fatalf("the agent got %v", got)
		}
		p.until("the plan shows who answered and has no buttons", msgJS("Approve this plan")+` && !`+msgJS("Approve this plan")+`.querySelector("button") && `+msgJS("Approve this plan")+`.textContent.includes("@alice")`)
		p.shot("testdata/try/answered.png")
	})

	t.Run("Other… opens the modal; the typed answer reaches the agent", func(t *testing.T) {
		p.t = t
		p.ask(`{"callId":"try-colour","agent":{"id":"claude-code","sessionId":"s-colour"},"questions":[{"id":"c","question":"Which colour should the banner be?","options":[{"label":"Blue"},{"label":"Green"}]}]}`, true)
		p.until("the question appears", msgJS("Which colour"))
		p.do("click Other…", chromedp.Click(button("Which colour", "Other…")))
		p.until("the modal is open", `!document.getElementById("pane-modal").hidden && document.querySelector("#pane-modal .modal .el-text")`)
		p.do("type and submit",
			chromedp.SendKeys(chromedp.CSS("#pane-modal .el-text"), "teal, to match the logo"),
		)
		p.shot("testdata/try/other-modal.png")
		p.do("submit", chromedp.Click(chromedp.CSS(`#pane-modal button[data-act="submit"]`)))
		p.until("the modal closed", `document.getElementById("pane-modal").hidden`)
		if got := p.answer("try-colour"); !strings.Contains(fmt.Sprint(got["answers"], got["respondent"]), "teal, to match the logo") {
			t.Fatalf("the agent got %v", got)
		}
		p.until("the message shows the typed answer", msgJS("Which colour")+` && `+msgJS("Which colour")+`.textContent.includes("teal, to match the logo") && !`+msgJS("Which colour")+`.querySelector("button")`)
	})

	t.Run("mallory is refused with the ephemeral she would see", func(t *testing.T) {
		p.t = t
		p.ask(`{"callId":"try-migrate","agent":{"id":"claude-code","sessionId":"s-migrate"},"questions":[{"id":"m","question":"Run the database migration now?","options":[{"label":"Yes"},{"label":"No"}]}]}`, true)
		p.until("the question appears", msgJS("Run the database migration"))
		p.as("mallory")
		p.do("mallory clicks Yes", chromedp.Click(button("Run the database migration", "Yes")))
		p.until("mallory sees why, only to her", `[...document.querySelectorAll("#pane-channel .ephemeral")].some(e => e.textContent.includes("You are not on the list of people who may answer") && e.textContent.includes("Only visible to you"))`)
		if s := p.state("try-migrate"); s != "open" {
			t.Fatalf("after mallory's click the ask is %q, want open", s)
		}
		p.until("the buttons are still there", msgJS("Run the database migration")+`.querySelector("button")`)
		p.shot("testdata/try/refused.png")
		p.as("alice")
		p.until("alice does not see mallory's ephemeral", `!document.querySelector("#pane-channel .ephemeral")`)
	})

	t.Run("bob answers the multi-select from his Home tab", func(t *testing.T) {
		p.t = t
		p.as("bob")
		p.do("open Home", chromedp.Click(chromedp.CSS(`a.nav[data-pane="home"]`)))
		p.until("the Home tab lists the question with its checkboxes", `document.querySelector("#pane-home .home") && document.querySelector("#pane-home").textContent.includes("Which CI checks") && document.querySelector('#pane-home input[type=checkbox][value="1"]')`)
		for _, opt := range []string{"1", "2"} { // unit, e2e
			p.do("tick option "+opt, chromedp.Click(chromedp.CSS(`#pane-home input[type=checkbox][value="`+opt+`"]`)))
			// The box counts once Slack (the fake) holds the tick: the tab
			// re-renders with it from the state the next click carries.
			p.until("the tick is held", `document.querySelector('#pane-home input[type=checkbox][value="`+opt+`"]').hasAttribute("checked")`)
		}
		p.shot("testdata/try/home.png")
		p.do("submit", chromedp.Click(chromedp.Search(`//section[@id='pane-home']//button[normalize-space(.)='Submit']`)))
		got := p.answer("try-ci")
		s := fmt.Sprint(got["answers"], got["respondent"])
		if !strings.Contains(s, "unit") || !strings.Contains(s, "e2e") || strings.Contains(s, "lint") || !strings.Contains(s, "U0BOB") {
			t.Fatalf("the agent got %v", got)
		}
		p.until("the Home tab no longer lists it", `!document.querySelector("#pane-home").textContent.includes("Which CI checks")`)
		p.do("back to the channel", chromedp.Click(chromedp.CSS(`a.nav[data-pane="channel"]`)))
		p.until("the channel message shows bob's answer", msgJS("Which CI checks")+`.textContent.includes("@bob") && !`+msgJS("Which CI checks")+`.querySelector("button")`)
	})

	t.Run("a timed question counts down, then continues", func(t *testing.T) {
		p.t = t
		res := p.ask(`{"callId":"try-timed","agent":{"id":"claude-code","sessionId":"s-timed"},"timeoutMs":8000,"questions":[{"id":"t","question":"Ship the release notes now?","options":[{"label":"Yes"},{"label":"No"}]}]}`, false)
		p.until("the question shows its deadline and the time left", msgJS("Ship the release notes")+` && `+msgJS("Ship the release notes")+`.querySelector("time.m-date") && `+msgJS("Ship the release notes")+`.textContent.includes("left")`)
		var d struct {
			TS   int64  `json:"ts"`
			Text string `json:"text"`
		}
		p.eval(`(() => { const e = `+msgJS("Ship the release notes")+`.querySelector("time.m-date"); return {ts: Number(e.dataset.ts), text: e.textContent}; })()`, &d)
		zone, err := time.LoadLocation(kitbrowser.Zone)
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Unix(d.TS, 0).In(zone).Format("3:04 PM"); !strings.Contains(d.Text, want) {
			t.Fatalf("the deadline reads %q; in %s it is %s", d.Text, kitbrowser.Zone, want)
		}
		p.shot("testdata/try/timed.png")
		p.until("the question says the agent moved on", msgJS("Ship the release notes")+`.textContent.includes("moved on")`)
		if got := <-res; got["pending"] != true {
			t.Fatalf("the agent got %v, want pending", got)
		}
		p.until("late answers are still possible", msgJS("Ship the release notes")+`.querySelector("button")`)
	})
}

// Without a browser: with ASKSLACK_THREADS=session and
// ASKSLACK_DELIVERY=both, the page shows a session's questions in one
// thread (the first also in the channel) and their copies in alice's DMs
// only, and a click on a DM copy, delivered by the page, answers both.
func TestTryThreadsAndDMCopies(t *testing.T) {
	t.Setenv("ASKSLACK_THREADS", "session")
	t.Setenv("ASKSLACK_DELIVERY", "both")
	p := startTryPage(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p.ask(`{"callId":"th-1","agent":{"id":"claude","sessionId":"s-th"},"questions":[{"id":"a","question":"Which database?","options":[{"label":"Postgres"},{"label":"SQLite"}]}]}`, true)
	p.ask(`{"callId":"th-2","agent":{"id":"claude","sessionId":"s-th"},"questions":[{"id":"b","question":"Run the migration now?","options":[{"label":"Yes"},{"label":"No"}]}]}`, true)
	var snap struct {
		Panes map[string][]pageItem `json:"panes"`
	}
	read := func(person string) {
		t.Helper()
		resp, err := http.Get(p.run.URL + "/playground/state?person=" + person)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		snap.Panes = nil
		if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
			t.Fatal(err)
		}
	}
	// Both copies of both questions are posted (the fake's state), then the
	// page shows them.
	err := p.run.Fake.WaitUntil(ctx, func() bool {
		in := map[bool]int{}
		for _, m := range p.run.Fake.Messages() {
			if strings.Contains(m.Text, "Which database?") || strings.Contains(m.Text, "Run the migration now?") {
				in[m.Channel == tryChannel]++
			}
		}
		return in[true] >= 2 && in[false] >= 2 // the thread's two, and the two DM copies
	})
	if err != nil {
		t.Fatalf("waiting for the posts: %v; the fake holds %+v", err, p.run.Fake.Messages())
	}
	read("U0ALICE")
	channel := p.joined(snap.Panes["channel"])
	if !strings.Contains(channel, `<details class="thread"`) || !strings.Contains(channel, "2 replies") || !strings.Contains(channel, "Also sent to the channel") || !strings.Contains(channel, "replied to a thread") {
		t.Fatalf("the channel pane does not show the session's thread:\n%s", channel)
	}
	dm := p.joined(snap.Panes["dm"])
	if !strings.Contains(dm, "Which database?") || !strings.Contains(dm, "Run the migration now?") {
		t.Fatalf("alice's DM pane lacks the copies:\n%s", dm)
	}
	read("U0BOB")
	if len(snap.Panes["dm"]) != 0 {
		t.Fatalf("bob sees DM copies: %v", snap.Panes["dm"])
	}

	// alice answers the DM copy through the page, as a click would.
	dmID, _ := p.run.Fake.DM("U0ALICE")
	var copyTS, blockID string
	for _, m := range p.run.Fake.Messages() {
		if m.Channel == dmID && strings.Contains(m.Text, "Which database?") {
			copyTS = m.TS
			var bs []struct {
				BlockID  string `json:"block_id"`
				Elements []struct {
					ActionID string          `json:"action_id"`
					Text     json.RawMessage `json:"text"`
				} `json:"elements"`
			}
			_ = json.Unmarshal(m.Blocks, &bs)
			for _, b := range bs {
				for _, e := range b.Elements {
					if e.ActionID == "askslack.pick.1" {
						blockID = b.BlockID
					}
				}
			}
		}
	}
	body := fmt.Sprintf(`{"person":"U0ALICE","act":"button","surface":"message","channel":%q,"ts":%q,"blockId":%q,"actionId":"askslack.pick.1"}`, dmID, copyTS, blockID)
	resp, err := http.Post(p.run.URL+"/playground/act", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("act: %d %s", resp.StatusCode, b)
	}
	if got := p.answer("th-1"); !strings.Contains(fmt.Sprint(got["answers"]), "SQLite") {
		t.Fatalf("the agent got %v", got)
	}
	err = p.run.Fake.WaitUntil(ctx, func() bool {
		read("U0ALICE")
		// In the DM copy and in the thread (and again where the thread's
		// first reply was also sent to the channel).
		return strings.Contains(p.joined(snap.Panes["dm"]), "→ <b>SQLite</b>") && strings.Contains(p.joined(snap.Panes["channel"]), "→ <b>SQLite</b>")
	})
	if err != nil {
		t.Fatalf("both copies do not show the answer: %v\nchannel:\n%s\nDM:\n%s", err, p.joined(snap.Panes["channel"]), p.joined(snap.Panes["dm"]))
	}
}

// pageItem is one keyed piece of a pane, as /playground/state sends it.
type pageItem struct {
	K string `json:"k"`
	H string `json:"h"`
}

func (p *tryPage) joined(items []pageItem) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.H)
	}
	return b.String()
}
