package playground

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/internal/slackfake"
)

const testSecret = "playground-test-secret"

var (
	alice = slackfake.User{ID: "U0ALICE", Name: "alice"}
	bob   = slackfake.User{ID: "U0BOB", Name: "bob"}
)

// The page server follows the fake over server-sent events (a post, a
// refusal, an ephemeral only its person sees), and an action from the page
// reaches the app as the fake's signed block_actions for exactly the
// control used.
func TestServerFollowsTheFake(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got := make(chan slack.InteractionCallback, 4)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sv, err := slack.NewSecretsVerifier(r.Header, testSecret)
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			t.Errorf("unsigned delivery: %v", err)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ic, err := slack.InteractionCallbackParse(r)
		if err != nil {
			t.Errorf("parse: %v", err)
		}
		got <- ic
	}))
	defer app.Close()
	fake := slackfake.New(slackfake.Options{BotToken: "xoxb-t", SigningSecret: testSecret, InteractionURL: app.URL, Users: []slackfake.User{alice, bob}})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	api := slack.New("xoxb-t", slack.OptionAPIURL(fake.APIURL()))
	page := New(Options{Fake: fake, Channel: "C0Q", People: []Person{{User: alice, Allowed: true}, {User: bob}}})
	go page.Run(ctx)
	srv := httptest.NewServer(page)
	defer srv.Close()
	defer page.Close()

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/playground/events?person=alice", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	// next reads snapshots until one satisfies ok.
	next := func(what string, ok func(snapshot) bool) snapshot {
		t.Helper()
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			data, found := strings.CutPrefix(line, "data: ")
			if !found {
				continue
			}
			var s snapshot
			if err := json.Unmarshal([]byte(data), &s); err != nil {
				t.Fatal(err)
			}
			if ok(s) {
				return s
			}
		}
	}
	pane := func(s snapshot, name string) string {
		var b strings.Builder
		for _, it := range s.Panes[name] {
			b.WriteString(it.HTML)
		}
		return b.String()
	}
	next("the empty channel", func(s snapshot) bool { return s.Person == alice.ID && len(s.Panes["channel"]) == 0 })

	opt := func(text string) *slack.OptionBlockObject {
		return slack.NewOptionBlockObject(text, slack.NewTextBlockObject(slack.PlainTextType, text, false, false), nil)
	}
	_, ts, err := api.PostMessageContext(ctx, "C0Q", slack.MsgOptionText("Deploy?", false), slack.MsgOptionBlocks(
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*Deploy* &lt;now&gt;?", false, false), nil, nil),
		slack.NewActionBlock("q0", slack.NewCheckboxGroupsBlockElement("pick", opt("a.go"), opt("b.go")),
			slack.NewButtonBlockElement("other", "other", slack.NewTextBlockObject(slack.PlainTextType, "Other…", false, false))),
		slack.NewActionBlock("q1", slack.NewButtonBlockElement("other", "other", slack.NewTextBlockObject(slack.PlainTextType, "Other…", false, false))),
	))
	if err != nil {
		t.Fatal(err)
	}
	s := next("the message", func(s snapshot) bool { return strings.Contains(pane(s, "channel"), "Deploy") })
	if h := pane(s, "channel"); !strings.Contains(h, "<b>Deploy</b> &lt;now&gt;?") || !strings.Contains(h, `data-ts="`+ts+`"`) {
		t.Fatalf("the message renders as\n%s", h)
	}

	// Slack refuses a section over 3000 characters: the page says so, in red.
	_, _, err = api.PostMessageContext(ctx, "C0Q", slack.MsgOptionText("too long", false), slack.MsgOptionBlocks(
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("x", 3001), false, false), nil, nil)))
	if err == nil {
		t.Fatal("the fake took an invalid message")
	}
	s = next("the refusal", func(s snapshot) bool { return strings.Contains(pane(s, "channel"), "Slack refused chat.postMessage") })
	if h := pane(s, "channel"); !strings.Contains(h, `class="refused"`) || !strings.Contains(h, "invalid_blocks") || strings.Contains(h, "xxxxxxxxxx") {
		t.Fatalf("the refusal renders as\n%s", h)
	}

	// An ephemeral for bob is not alice's to see.
	if _, err := api.PostEphemeralContext(ctx, "C0Q", bob.ID, slack.MsgOptionText("only for bob", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PostEphemeralContext(ctx, "C0Q", alice.ID, slack.MsgOptionText("only for alice", false)); err != nil {
		t.Fatal(err)
	}
	s = next("alice's ephemeral", func(s snapshot) bool { return strings.Contains(pane(s, "channel"), "only for alice") })
	if strings.Contains(pane(s, "channel"), "only for bob") {
		t.Fatal("alice sees bob's ephemeral")
	}

	act := func(body string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/playground/act", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("act %s: %d %s", body, resp.StatusCode, b)
		}
	}
	// The second "Other…": same action id as the first, another block.
	act(`{"person":"alice","act":"button","surface":"message","channel":"C0Q","ts":"` + ts + `","blockId":"q1","actionId":"other"}`)
	ic := <-got
	if a := ic.ActionCallback.BlockActions; len(a) != 1 || a[0].BlockID != "q1" || a[0].ActionID != "other" || ic.User.ID != alice.ID {
		t.Fatalf("the app got %+v from %s", a, ic.User.ID)
	}
	// A tick: the whole selection by value, shown back once the fake holds it.
	act(`{"person":"alice","act":"checkboxes","surface":"message","channel":"C0Q","ts":"` + ts + `","blockId":"q0","actionId":"pick","values":["b.go"]}`)
	ic = <-got
	if a := ic.ActionCallback.BlockActions; len(a) != 1 || len(a[0].SelectedOptions) != 1 || a[0].SelectedOptions[0].Value != "b.go" {
		t.Fatalf("the tick arrived as %+v", a)
	}
	next("the tick", func(s snapshot) bool { return strings.Contains(pane(s, "channel"), `value="b.go" checked`) })

	// A control that is not there is refused, not guessed.
	resp2, err := http.Post(srv.URL+"/playground/act", "application/json", strings.NewReader(`{"person":"alice","act":"button","surface":"message","channel":"C0Q","ts":"`+ts+`","blockId":"q9","actionId":"other"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a missing button: %d", resp2.StatusCode)
	}
}
