package slackbot

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

var brian = slackfake.User{ID: "U0BOB", Name: "brian"}

// reachBundle is a bot with a directory (the store) behind a signed HTTP
// handler for interactions, events and commands, observing its host.
type reachBundle struct {
	*postBundle
	metrics *recMetrics
}

func setupReach(t *testing.T, authz Authorizer) *reachBundle {
	t.Helper()
	r := &reachBundle{metrics: newRecMetrics()}
	r.postBundle = setupPost(t, slackfake.Options{SigningSecret: testSecret, Users: []slackfake.User{alice, brian}, TriggerTTL: time.Minute})
	api := slack.New("xoxb-test", slack.OptionAPIURL(r.fake.APIURL()))
	r.bot = New(api, r.host, Options{Channel: "C1", Mirror: r.mirror, Authorizer: authz, Metrics: r.metrics, Directory: r.st})
	r.host.Observe(r.bot)
	t.Cleanup(func() { _ = r.bot.Stop(context.Background()) })
	srv := httptest.NewServer(HTTPHandler(r.bot, testSecret, slog.Default()))
	t.Cleanup(srv.Close)
	r.fake.SetInteractionURL(srv.URL + "/slack/interactions")
	r.fake.SetEventsURL(srv.URL + "/slack/events")
	r.fake.SetCommandsURL(srv.URL + "/slack/commands")
	return r
}

// principals admits only an ask's principal (a Slack user id), like
// Allowlist with RequirePrincipal; an ask without one admits nobody.
type principals struct{}

func (principals) Allowed(_ context.Context, user string, req *waterfall.Request) (bool, string) {
	if req.Agent.Principal == user {
		return true, ""
	}
	return false, whyRefused
}

// forWhom is a one-question ask for principal.
func forWhom(callID, principal string) *waterfall.Request {
	req := yesNo(callID)
	req.Agent.Principal = principal
	req.Questions[0].Question = "Question " + callID + "?"
	return req
}

// postedAndRecorded starts an ask and waits until its message is posted
// and recorded in the store (answers by mention find it there).
func (r *reachBundle) postedAndRecorded(t *testing.T, req *waterfall.Request) slackfake.Message {
	t.Helper()
	_, cancel := r.askInBackground(req)
	t.Cleanup(cancel)
	return r.waitMessage(t, req.CallID, "posted and recorded", func(a *asktype.Ask, m slackfake.Message) bool {
		return a.Message.ID == m.TS && hasButtons(m)
	})
}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, verb, arg string }{
		{"", "help", ""}, {"  ", "help", ""}, {"help", "help", ""}, {"LIST", "list", ""},
		{"list everything", "list", "everything"}, {"status c1", "status", "c1"}, {"status", "status", ""},
		{"status  c1 extra", "status", "c1"}, {"delete c1", "help", ""}, {"\tstatus\nc1", "status", "c1"},
	} {
		if verb, arg := ParseCommand(tc.text); verb != tc.verb || arg != tc.arg {
			t.Errorf("ParseCommand(%q) = %q %q, want %q %q", tc.text, verb, arg, tc.verb, tc.arg)
		}
	}
}

func TestMentionText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"<@U0FAKEBOT> teal":              "teal",
		"  <@U0FAKEBOT|askslack>: teal":  "teal",
		"<@U0FAKEBOT>":                   "",
		"teal <@U0FAKEBOT>":              "teal <@U0FAKEBOT>",
		"<@U0FAKEBOT> <@U0BRIAN> agrees": "<@U0BRIAN> agrees",
		"<!channel> hi":                  "<!channel> hi",
	} {
		if got := MentionText(in); got != want {
			t.Errorf("MentionText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFromHome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		container, view string
		want            bool
	}{{"view", "home", true}, {"view", "modal", false}, {"message", "", false}, {"message", "home", false}} {
		ic := &slack.InteractionCallback{}
		ic.Container.Type, ic.View.Type = tc.container, slack.ViewType(tc.view)
		if got := fromHome(ic); got != tc.want {
			t.Errorf("fromHome(container %s, view %s) = %v", tc.container, tc.view, got)
		}
	}
}

// /slack/commands and /slack/events check Slack's signature like
// /slack/interactions: nothing unsigned, badly signed or stale gets in.
func TestCommandsAndEventsNeedSignatures(t *testing.T) {
	r := setupReach(t, Everyone{})
	ctx := testCtx(t)
	for name, d := range map[string]slackfake.Delivery{
		"unsigned": {Unsigned: true}, "bad": {BadSignature: true}, "stale": {Stale: true},
	} {
		d.Transport = slackfake.TransportHTTP
		res, err := r.fake.SendCommand(ctx, slackfake.Command{User: alice, Channel: "C1", Command: "/askslack", Text: "help"}, d)
		if err != nil || res.Status != http.StatusUnauthorized {
			t.Errorf("%s command: %+v %v, want 401", name, res, err)
		}
		rec, err := r.fake.SendEvent(ctx, r.fake.HomeOpened(alice), "", d)
		if err != nil || rec.Status != http.StatusUnauthorized {
			t.Errorf("%s event: %+v %v, want 401", name, rec, err)
		}
	}
	if len(r.fake.Ephemerals()) != 0 || len(r.fake.Calls("views.publish")) != 0 {
		t.Fatal("a refused request had an effect")
	}
	srv := httptest.NewServer(HTTPHandler(r.bot, testSecret, slog.Default()))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/slack/commands", "application/x-www-form-urlencoded", strings.NewReader(strings.Repeat("x", maxBody+1)))
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized command: %v %v", resp, err)
	}
	resp.Body.Close()
}

// What /askslack list and status tell each person: only the questions
// they may answer, and nothing at all about the others.
func TestCommandDecisions(t *testing.T) {
	r := setupReach(t, principals{})
	ctx := testCtx(t)
	r.postedAndRecorded(t, forWhom("for-alice", alice.ID))
	r.postedAndRecorded(t, forWhom("for-brian", brian.ID))
	for _, tc := range []struct {
		who       slackfake.User
		text      string
		want, not string
		inBlocks  bool
	}{
		{alice, "list", "Question for-alice?", "Question for-brian?", true},
		{brian, "list", "Question for-brian?", "Question for-alice?", true},
		{alice, "status for-alice", "`for-alice`: open", "", false},
		{alice, "status for-brian", textNoSuchCall, "open", false},
		{alice, "status nosuch", textNoSuchCall, "", false},
		{alice, "status", textStatusUsage, "", false},
		{brian, "what", "/askslack list", "", false},
	} {
		before := len(r.fake.Ephemerals())
		if _, err := r.fake.SendCommand(ctx, slackfake.Command{User: tc.who, Channel: "C1", Command: "/askslack", Text: tc.text}, slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := r.fake.WaitUntil(ctx, func() bool {
			if e := r.fake.Ephemerals(); len(e) > before {
				got = e[before].Text
				if tc.inBlocks {
					got = string(e[before].Blocks)
				}
				return true
			}
			return false
		}); err != nil {
			t.Fatalf("%s %q: no reply", tc.who.Name, tc.text)
		}
		if !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
			t.Errorf("%s %q → %s; want %q and not %q", tc.who.Name, tc.text, got, tc.want, tc.not)
		}
	}
}

// A failing authorizer lists nothing (fail closed).
func TestListFailsClosed(t *testing.T) {
	r := setupReach(t, refuseAll{})
	ctx := testCtx(t)
	r.postedAndRecorded(t, forWhom("c1", alice.ID))
	if _, err := r.fake.SendCommand(ctx, slackfake.Command{User: alice, Channel: "C1", Command: "/askslack", Text: "list"}, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.WaitUntil(ctx, func() bool { return len(r.fake.Ephemerals()) == 1 }); err != nil {
		t.Fatal(err)
	}
	if e := r.fake.Ephemerals()[0]; !strings.Contains(e.Text, "No open questions") {
		t.Fatalf("list with a refusing authorizer: %+v", e)
	}
}

// Every way a mention can go: answered (once, even when redelivered),
// refused, or explained.
func TestMentionDecisions(t *testing.T) {
	r := setupReach(t, principals{})
	ctx := testCtx(t)
	m := r.postedAndRecorded(t, forWhom("m1", alice.ID))
	batch := twoQuestions("m2")
	batch.Agent.Principal = alice.ID
	mb := r.postedAndRecorded(t, batch)
	other := r.fake.AddMessage("C1", brian.ID, "lunch?")
	for _, tc := range []struct {
		name     string
		who      slackfake.User
		thread   string
		text     string
		reply    string // ephemeral to who, "" for none
		result   string
		answered bool
	}{
		{"refused", brian, m.TS, "No", whyRefused, "app_mention/refused", false},
		{"no thread", alice, "", "hi", textMentionNoThread, "app_mention/ignored", false},
		{"not a question", alice, other.TS, "hi", textMentionNotOpen, "app_mention/invalid", false},
		{"several questions", alice, mb.TS, "hi", textMentionBatch, "app_mention/invalid", false},
		{"empty", alice, m.TS, "", textMentionEmpty, "app_mention/invalid", false},
		{"answers", alice, m.TS, "teal", "", "app_mention/settled", true},
		{"after the answer", alice, m.TS, "red", textMentionNotOpen, "app_mention/invalid", true},
	} {
		n := r.metrics.count()
		before := len(r.fake.Ephemerals())
		_, ev := r.fake.Mention(tc.who, "C1", tc.thread, tc.text)
		rec, err := r.fake.SendEvent(ctx, ev, "", slackfake.Delivery{})
		if err != nil || rec.Status != http.StatusOK {
			t.Fatalf("%s: %+v %v", tc.name, rec, err)
		}
		got, err := r.metrics.wait(ctx, n+1)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.result {
			t.Errorf("%s: result %s, want %s", tc.name, got, tc.result)
		}
		if tc.reply != "" {
			if err := r.fake.WaitUntil(ctx, func() bool {
				for _, e := range r.fake.Ephemerals()[before:] {
					if e.User == tc.who.ID && strings.Contains(e.Text, tc.reply) {
						return true
					}
				}
				return false
			}); err != nil {
				t.Errorf("%s: no ephemeral %q", tc.name, tc.reply)
			}
		}
		a, _ := r.st.Get(ctx, "m1")
		if (a.State == asktype.Settled) != tc.answered {
			t.Errorf("%s: ask %s", tc.name, a.State)
		}
		if tc.name == "answers" {
			// Slack redelivers the same event: nothing happens twice.
			if _, err := r.fake.SendEvent(ctx, ev, rec.EventID, slackfake.Delivery{RetryNum: 1}); err != nil {
				t.Fatal(err)
			}
			if got, _ := r.metrics.wait(ctx, n+2); got != "app_mention/duplicate" {
				t.Errorf("redelivery: %s", got)
			}
		}
	}
}

// The Home tab follows its visitor's questions: a new question and an
// answer re-publish it without the person opening it again.
func TestHomeFollowsChanges(t *testing.T) {
	r := setupReach(t, principals{})
	ctx := testCtx(t)
	if _, err := r.fake.SendEvent(ctx, r.fake.HomeOpened(alice), "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	home := func(what string, pred func(string) bool) {
		t.Helper()
		if err := r.fake.WaitUntil(ctx, func() bool {
			v, ok := r.fake.Home(alice.ID)
			return ok && pred(string(v.JSON))
		}); err != nil {
			v, _ := r.fake.Home(alice.ID)
			t.Fatalf("Home tab never %s: %s", what, v.JSON)
		}
	}
	home("said how to connect an agent", func(v string) bool { return strings.Contains(v, "How to connect an agent") })
	r.postedAndRecorded(t, forWhom("h1", alice.ID))
	r.postedAndRecorded(t, forWhom("h2", brian.ID))
	home("showed h1", func(v string) bool { return strings.Contains(v, `"ask/h1/`) && !strings.Contains(v, `"ask/h2/`) })
	if _, err := r.fake.ClickHome(ctx, alice, "ask/h1/", "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	home("dropped h1 once answered", func(v string) bool { return !strings.Contains(v, `"ask/h1/`) })
	a, _ := r.st.Get(ctx, "h1")
	if a.State != asktype.Settled {
		t.Fatalf("an answer from Home left the ask %s", a.State)
	}
	s, _ := waterfall.DecodeSettlement(a)
	if s.Respondent.UserID != alice.ID || s.Respondent.MessageTS != a.Message.ID {
		t.Fatalf("respondent %+v; want alice at the question's message", s.Respondent)
	}
}

// "Other…" in the Home tab opens the modal with views.open (a Home tab is
// no modal stack to push onto), and its submission settles the ask.
func TestHomeOtherOpensAModal(t *testing.T) {
	r := setupReach(t, principals{})
	ctx := testCtx(t)
	r.postedAndRecorded(t, forWhom("o1", alice.ID))
	if _, err := r.fake.SendEvent(ctx, r.fake.HomeOpened(alice), "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.WaitUntil(ctx, func() bool {
		v, ok := r.fake.Home(alice.ID)
		return ok && strings.Contains(string(v.JSON), `"ask/o1/`)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.fake.ClickHome(ctx, alice, "ask/o1/", "Other…", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	call, err := r.fake.WaitFor(ctx, "views.open", nil)
	if err != nil || !call.OK() {
		t.Fatalf("views.open: %+v %v", call, err)
	}
	if len(r.fake.Calls("views.push")) != 0 {
		t.Fatal("pushed a modal onto the Home tab")
	}
	views := r.fake.OpenViews(alice.ID)
	if len(views) != 1 {
		t.Fatalf("open views %+v", views)
	}
	text := map[string][]string{blocks.TextBlockID("o1", 0): {"mauve"}}
	if _, err := r.fake.SubmitView(ctx, alice, views[0].ID, text, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	a, _ := r.st.Get(ctx, "o1")
	s, err := waterfall.DecodeSettlement(a)
	if err != nil || s.Answer.Answers[0].Custom != "mauve" || s.Respondent.MessageTS != a.Message.ID {
		t.Fatalf("settlement %+v %v", s, err)
	}
}

// A refused click goes to the audit trail; /askslack stats and the Home tab
// summarise the trail's answers.
func TestStatsAndRefusalsFromTheTrail(t *testing.T) {
	r := setupReach(t, principals{})
	ctx := testCtx(t)
	m := r.postedAndRecorded(t, forWhom("s1", alice.ID))
	if _, err := r.fake.ClickButton(ctx, brian, m.Channel, m.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	// The refusal is recorded before the clicker is told.
	if err := r.fake.WaitUntil(ctx, func() bool {
		for _, e := range r.fake.Ephemerals() {
			if e.User == brian.ID && e.Text == whyRefused {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal("brian was never told his click was refused")
	}
	es, _, _ := r.host.Audit(ctx, asktype.AuditQuery{CallID: "s1"})
	if ref := es[len(es)-1]; ref.Respondent == nil || ref.Respondent.UserID != brian.ID || ref.Detail != whyRefused {
		t.Fatalf("refused entry %+v", ref)
	}
	if _, err := r.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Yes", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	r.waitMessage(t, "s1", "answered", func(a *asktype.Ask, m slackfake.Message) bool { return a.State == asktype.Settled })

	reply := func(text string) string {
		t.Helper()
		before := len(r.fake.Ephemerals())
		if _, err := r.fake.SendCommand(ctx, slackfake.Command{User: brian, Channel: "C1", Command: "/askslack", Text: text}, slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := r.fake.WaitUntil(ctx, func() bool {
			if e := r.fake.Ephemerals(); len(e) > before {
				got = e[before].Text + string(e[before].Blocks)
				return true
			}
			return false
		}); err != nil {
			t.Fatalf("/askslack %s: no reply", text)
		}
		return got
	}
	got := reply("stats")
	for _, want := range []string{"last 7 days", "1 asked: 1 answered in the window, 0 late, 0 never", alice.ID} {
		if !strings.Contains(got, want) {
			t.Errorf("/askslack stats: %s; want %q", got, want)
		}
	}
	if got := reply("stats 24h"); !strings.Contains(got, "last 24 hours") {
		t.Errorf("/askslack stats 24h: %s", got)
	}
	if got := reply("stats forever"); !strings.Contains(got, textStatsUsage) {
		t.Errorf("/askslack stats forever: %s", got)
	}
	if _, err := r.fake.SendEvent(ctx, r.fake.HomeOpened(alice), "", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	if err := r.fake.WaitUntil(ctx, func() bool {
		v, ok := r.fake.Home(alice.ID)
		return ok && strings.Contains(string(v.JSON), "Your answers, last 7 days:* 1 answered (1 in the window, 0 late)")
	}); err != nil {
		v, _ := r.fake.Home(alice.ID)
		t.Fatalf("the Home tab does not summarise alice's answers: %s", v.JSON)
	}
}
