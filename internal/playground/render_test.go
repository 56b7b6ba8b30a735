package playground

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.html")

var names = Names{Users: map[string]string{"U0BOB": "bob", "U0ALICE": "alice"}, Channels: map[string]string{"C0QUESTIONS": "agent-questions"}}

// Every golden of the blocks package renders in full: nothing refused or
// unknown, every control there with the ids the page sends back, Slack's
// escaping kept, and the HTML balanced. The HTML is kept as goldens too
// (testdata/golden/<case>/<file>.html, -update), reviewed as diffs.
func TestRenderBlocksGoldens(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../blocks/testdata/golden/*/*.json")
	if err != nil || len(files) < 40 {
		t.Fatalf("found %d goldens (%v)", len(files), err)
	}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var head struct {
				Type   string          `json:"type"`
				Text   string          `json:"text"`
				Blocks json.RawMessage `json:"blocks"`
			}
			if err := json.Unmarshal(raw, &head); err != nil {
				t.Fatal(err)
			}
			var out string
			if head.Type == "modal" {
				out = Modal(raw, Surface{Names: names})
			} else {
				out = Message(head.Text, head.Blocks, Surface{Names: names})
			}
			checkRendered(t, raw, out)
			golden(t, filepath.Join("testdata", "golden", name+".html"), out)
		})
	}
}

// checkRendered holds for any rendering of valid Block Kit JSON.
func checkRendered(t *testing.T, raw []byte, out string) {
	t.Helper()
	if strings.Contains(out, `class="refused`) {
		t.Fatalf("a valid golden rendered as refused or unsupported:\n%s", out)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	buttons, actions := 0, map[string]bool{}
	walk(doc, func(m map[string]any) {
		if m["type"] == "button" {
			buttons++
		}
		if id, ok := m["action_id"].(string); ok {
			actions[id] = true
		}
	})
	if got := strings.Count(out, `data-act="button"`); got != buttons {
		t.Errorf("%d buttons rendered, the JSON has %d", got, buttons)
	}
	for id := range actions {
		if !strings.Contains(out, `data-action-id="`+id+`"`) {
			t.Errorf("action %q is not rendered", id)
		}
	}
	// Slack's entities show as text, never as markup.
	if strings.Contains(string(raw), "&lt;not a tag&gt;") && !strings.Contains(out, "&lt;not a tag&gt;") {
		t.Errorf("escaped text lost its escaping")
	}
	if strings.Contains(out, "<not a tag>") || strings.Contains(out, "&amp;lt;") {
		t.Errorf("escaping is wrong (unescaped or doubled)")
	}
	if err := balanced(out); err != "" {
		t.Errorf("unbalanced HTML: %s", err)
	}
}

func walk(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, e := range x {
			walk(e, f)
		}
	case []any:
		for _, e := range x {
			walk(e, f)
		}
	}
}

var tagRe = regexp.MustCompile(`<(/?)([a-z0-9]+)[^>]*?(/?)>`)

var void = map[string]bool{"br": true, "hr": true, "input": true, "img": true}

// balanced reports the first tag that does not close in order.
func balanced(s string) string {
	var stack []string
	for _, m := range tagRe.FindAllStringSubmatch(s, -1) {
		closing, tag := m[1] == "/", m[2]
		switch {
		case void[tag]:
		case !closing:
			stack = append(stack, tag)
		case len(stack) == 0 || stack[len(stack)-1] != tag:
			return "</" + tag + "> does not close " + strings.Join(stack, ">")
		default:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return "unclosed " + strings.Join(stack, ">")
	}
	return ""
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got+"\n" {
		t.Errorf("%s differs from the golden (run with -update and review the diff):\n%s", path, got)
	}
}

// The Home tab blocks renders (a question with checkboxes, a summary
// line, dividers) renders in full, with the viewer's ticks.
func TestRenderHome(t *testing.T) {
	t.Parallel()
	req := &waterfall.Request{CallID: "h1", Agent: waterfall.Agent{ID: "codex"}, Questions: []waterfall.Question{{
		ID: "ci", Question: "Which CI checks?", MultiSelect: true,
		Options: []waterfall.Option{{Label: "lint"}, {Label: "unit"}, {Label: "e2e"}},
	}}}
	home := blocks.Home([]blocks.Item{{View: waterfall.View{CallID: "h1", Request: req}}}, false)
	raw, err := json.Marshal(home)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]any{"ask/h1/0": map[string]any{"askslack.check": map[string]any{"type": "checkboxes",
		"selected_options": []any{map[string]any{"value": "1"}}}}}
	out := Home(raw, Surface{Names: names, State: state})
	checkRendered(t, raw, out)
	if !strings.Contains(out, `value="1" checked`) || strings.Contains(out, `value="0" checked`) {
		t.Errorf("the viewer's tick is not shown:\n%s", out)
	}
	if !strings.Contains(out, `<hr class="b-divider">`) {
		t.Errorf("no divider:\n%s", out)
	}
}

// What Slack would refuse renders as the refusal, in red, never as a
// message: the playground cannot look better than Slack.
func TestRenderRefuses(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3001)
	cases := map[string]struct {
		html string
		want []string
	}{
		"section text over 3000": {Message("t", json.RawMessage(`[{"type":"section","text":{"type":"mrkdwn","text":"`+long+`"}}]`), Surface{}),
			[]string{`class="refused"`, "Slack would refuse this message", "/blocks/0/text/text"}},
		"no text, no blocks": {Message("", nil, Surface{}), []string{`class="refused"`, "no_text"}},
		"button without text": {Message("t", json.RawMessage(`[{"type":"actions","elements":[{"type":"button","action_id":"a"}]}]`), Surface{}),
			[]string{`class="refused"`}},
		"modal without title": {Modal(json.RawMessage(`{"type":"modal","blocks":[]}`), Surface{}), []string{`class="refused"`, "Slack would refuse this modal"}},
		"home with a submit":  {Home(json.RawMessage(`{"type":"home","submit":{"type":"plain_text","text":"Go"},"blocks":[]}`), Surface{}), []string{`class="refused"`, "no submit"}},
		"a block the page cannot show": {Message("t", json.RawMessage(`[{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"hi"}]}]}]`), Surface{}),
			[]string{`class="refused unsupported"`, "rich_text"}},
	}
	for name, c := range cases {
		for _, w := range c.want {
			if !strings.Contains(c.html, w) {
				t.Errorf("%s: %q missing in\n%s", name, w, c.html)
			}
		}
		if strings.Contains(c.html, "xxxxxxxxxx") || strings.Contains(c.html, "el-button") {
			t.Errorf("%s: the refused content is shown:\n%s", name, c.html)
		}
	}
}

func TestMrkdwn(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"*bold* and _it_ and ~gone~":                      "<b>bold</b> and <i>it</i> and <s>gone</s>",
		"snake_case_name stays":                           "snake_case_name stays",
		"2*3*4 stays":                                     "2*3*4 stays",
		"&lt;b&gt;not html&lt;/b&gt; &amp; co":            "&lt;b&gt;not html&lt;/b&gt; &amp; co",
		"<b>raw</b>":                                      "&lt;b&gt;raw&lt;/b&gt;",
		"`*code*` &lt;x&gt;":                              `<code class="m-code">*code*</code> &lt;x&gt;`,
		"```\n*pre* &amp;\n```":                           `<pre class="m-pre">*pre* &amp;</pre>`,
		"<https://example.com/a?b=1&amp;c=2|the *guide*>": `<a class="m-link" href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener">the <b>guide</b></a>`,
		"<javascript:alert(1)|x>":                         "&lt;javascript:alert(1)|x&gt;",
		"<@U0BOB> and <@U0NEW>":                           `<span class="m-mention" data-user="U0BOB">@bob</span> and <span class="m-mention" data-user="U0NEW">@U0NEW</span>`,
		"<#C0QUESTIONS>":                                  `<span class="m-channel">#agent-questions</span>`,
		"<!here> <!subteam^S1|@oncall>":                   `<span class="m-mention m-broadcast">@here</span> <span class="m-mention">@oncall</span>`,
		"<!date^1796119800^{date_short_pretty} at {time}|2026-12-01 10:10 UTC>": `<time class="m-date" data-ts="1796119800" data-format="{date_short_pretty} at {time}">2026-12-01 10:10 UTC</time>`,
		":white_check_mark: done :no_such_emoji:":                               `<span class="m-emoji" title=":white_check_mark:">✅</span> done :no_such_emoji:`,
		"&gt; quoted\n&gt; twice\nafter":                                        `<blockquote class="m-quote">quoted<br>twice</blockquote>after`,
		"line\nbreak":                                                           "line<br>break",
	} {
		if got := mrkdwn(in, names); got != want {
			t.Errorf("mrkdwn(%q)\n got %s\nwant %s", in, got, want)
		}
	}
}

// A markdown block (a plan review's plan) renders its standard Markdown —
// headings, tables, code — with mdhtml: everything in it escaped, the
// entities the bot writes outside code shown as their characters, code as
// written. Only messages may hold one.
func TestRenderMarkdownBlock(t *testing.T) {
	t.Parallel()
	md := "# Plan\n\n| step | owner |\n|---|:---:|\n| backfill | **alice** |\n\n" +
		"```go\nif a < b && c { f(\"&lt;\") }\n```\n\n" +
		"Ping &lt;!channel> &amp; `&lt;kept&gt;` <script>alert(1)</script> [x](javascript:alert(1))"
	raw, _ := json.Marshal([]map[string]any{{"type": "markdown", "block_id": "Ab1", "text": md}})
	out := Message("plan", raw, Surface{Names: names})
	if strings.Contains(out, `class="refused`) {
		t.Fatalf("refused or unsupported:\n%s", out)
	}
	for _, want := range []string{
		`<div class="b-markdown" data-block-id="Ab1"><h3>Plan</h3>`,
		"<th>step</th>\n<th class=\"center\">owner</th>",
		"<td>backfill</td>\n<td class=\"center\"><strong>alice</strong></td>",
		`<pre><code class="language-go">if a &lt; b &amp;&amp; c { f(&quot;&amp;lt;&quot;) }`,
		"<p>Ping &lt;!channel&gt; &amp; <code>&amp;lt;kept&amp;gt;</code> &lt;script&gt;alert(1)&lt;/script&gt; x</p>\n</div>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing in\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script") || strings.Contains(out, "javascript:") {
		t.Errorf("markup from the text got through:\n%s", out)
	}
	if err := balanced(out); err != "" {
		t.Errorf("unbalanced HTML: %s", err)
	}

	modal := Modal(json.RawMessage(`{"type":"modal","title":{"type":"plain_text","text":"Plan"},"blocks":[{"type":"markdown","text":"# x"}]}`), Surface{})
	if !strings.Contains(modal, `class="refused"`) || !strings.Contains(modal, "only allowed in messages") {
		t.Errorf("a markdown block in a modal is not refused:\n%s", modal)
	}
	home := Home(json.RawMessage(`{"type":"home","blocks":[{"type":"markdown","text":"# x"}]}`), Surface{})
	if !strings.Contains(home, `class="refused"`) {
		t.Errorf("a markdown block in a Home tab is not refused:\n%s", home)
	}

	// A plan review as the bot renders it, hostile plan and all.
	plan := "## Plan <!channel> <@U0BOB> <https://evil.example|docs> & more\n\n```sh\necho <!here>\n```\n" + strings.Repeat("- step <x>\n", 3000)
	msg := blocks.Render(waterfall.View{CallID: "p1", Phase: waterfall.PhaseOpen, Request: &waterfall.Request{CallID: "p1", Agent: waterfall.Agent{ID: "claude-code"},
		Questions: []waterfall.Question{{ID: "plan", Question: "Approve?", Detail: plan, Options: []waterfall.Option{{Label: "Approve"}, {Label: "Revise"}},
			Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"}}}}})
	raw, _ = json.Marshal(msg.Blocks)
	out = Message(msg.Text, raw, Surface{Names: names})
	checkRendered(t, raw, out)
	// Its text shows as written; a URL may link, showing itself (this one
	// does not: GFM links a bare URL only after a space, *, _, ~ or ().
	for _, want := range []string{"<h4>Plan &lt;!channel&gt; &lt;@U0BOB&gt; &lt;https://evil.example|docs&gt; &amp; more</h4>",
		"<li>step &lt;x&gt;</li>"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing in\n%.3000s", want, out)
		}
	}
	if strings.Contains(out, `class="m-mention`) || strings.Contains(out, ">docs</a>") {
		t.Errorf("the plan pings or hides a link:\n%.3000s", out)
	}
}
