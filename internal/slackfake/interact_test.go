package slackfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

const secret = "8f742231b10e8888abcd99yyyzzz85a5"

// delivered is one interaction the test app received.
type delivered struct {
	ic      slack.InteractionCallback
	header  http.Header
	payload string // the raw payload JSON
	verify  error  // signature check failure, if any
}

// answerFunc is the test app's answer: HTTP status and body.
type answerFunc func(slack.InteractionCallback) (int, string)

// receiver starts a test app that verifies signatures like the bot must
// (slack.NewSecretsVerifier), parses with slack.InteractionCallbackParse, and
// answers with answer (nil: empty 200). It becomes the fake's interaction URL.
func receiver(t *testing.T, s *Server, answer answerFunc) chan delivered {
	t.Helper()
	got := make(chan delivered, 16)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d := delivered{header: r.Header.Clone()}
		sv, err := slack.NewSecretsVerifier(r.Header, secret)
		if err == nil {
			_, _ = sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			d.verify = err
			got <- d
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ic, err := slack.InteractionCallbackParse(r)
		if err != nil {
			t.Errorf("InteractionCallbackParse: %v", err)
			http.Error(w, "bad payload", http.StatusBadRequest)
			return
		}
		d.ic, d.payload = ic, r.PostForm.Get("payload")
		status, resp := http.StatusOK, ""
		if answer != nil {
			status, resp = answer(ic)
		}
		got <- d
		if resp != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, resp)
	}))
	t.Cleanup(hs.Close)
	s.SetInteractionURL(hs.URL)
	return got
}

// keysOf returns the keys of the JSON object at path (dot-separated) in raw.
func keysOf(t *testing.T, raw []byte, path string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Split(path, ".") {
		if p == "" {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			v = x[0]
		}
	}
	if a, ok := v.([]any); ok {
		v = a[0]
	}
	var keys []string
	for k := range v.(map[string]any) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sameShape checks that every key of the real sample at each path is in ours.
func sameShape(t *testing.T, sampleFile string, ours []byte, paths ...string) {
	t.Helper()
	sample, err := os.ReadFile(sampleFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		have := keysOf(t, ours, p)
		for _, k := range keysOf(t, sample, p) {
			if !slices.Contains(have, k) {
				t.Errorf("%s: key %q of the real payload is missing (have %v)", p, k, have)
			}
		}
	}
}

func post(t *testing.T, api *slack.Client, channel string, opts ...slack.MsgOption) string {
	t.Helper()
	_, ts, err := api.PostMessageContext(t.Context(), channel, append([]slack.MsgOption{slack.MsgOptionText("fallback", false)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestClickHTTP(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	ts := post(t, api, "D0ALICE", question())

	resp, err := s.ClickButton(ctx, alice, "D0ALICE", ts, "Approach A", Delivery{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || resp.Transport != TransportHTTP {
		t.Errorf("response %+v", resp)
	}
	d := <-got
	if d.verify != nil {
		t.Fatalf("signature: %v", d.verify)
	}
	ic := d.ic
	if ic.Type != slack.InteractionTypeBlockActions || ic.User.ID != "U0ALICE" || ic.User.Name != "alice" || ic.User.TeamID != "T0FAKE" ||
		ic.Team.ID != "T0FAKE" || ic.APIAppID != "A0FAKEAPP" || ic.Token != "fakeVerificationToken" {
		t.Errorf("who: %+v %+v", ic.User, ic.Team)
	}
	if ic.Container.Type != "message" || ic.Container.MessageTs != ts || ic.Container.ChannelID != "D0ALICE" || ic.Channel.ID != "D0ALICE" || ic.Channel.Name != "directmessage" {
		t.Errorf("where: %+v %+v", ic.Container, ic.Channel)
	}
	if ic.Message.Timestamp != ts || ic.Message.Text != "fallback" || ic.Message.BotID != "B0FAKEBOT" || len(ic.Message.Blocks.BlockSet) != 2 {
		t.Errorf("message: %+v", ic.Message)
	}
	if len(ic.ActionCallback.BlockActions) != 1 {
		t.Fatalf("actions %+v", ic.ActionCallback)
	}
	a := ic.ActionCallback.BlockActions[0]
	if a.ActionID != "answer" || a.BlockID != "q1" || a.Value != "a" || a.Text.Text != "Approach A" || a.Type != "button" || a.ActionTs == "" {
		t.Errorf("action %+v", a)
	}
	if !strings.HasPrefix(ic.ResponseURL, s.URL()+"/actions/T0FAKE/") || ic.TriggerID == "" {
		t.Errorf("response_url %q trigger %q", ic.ResponseURL, ic.TriggerID)
	}
	sameShape(t, "testdata/block_actions_button.json", []byte(d.payload),
		"", "user", "container", "team", "channel", "message", "actions")

	// The click's trigger opens a modal.
	if _, err := api.OpenViewContext(ctx, ic.TriggerID, modalRequest("Other answer")); err != nil {
		t.Errorf("views.open with the click's trigger: %v", err)
	}

	if _, err := s.ClickButton(ctx, alice, "D0ALICE", ts, "Approach C", Delivery{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("missing button: %v", err)
	}
	if _, err := s.ClickButton(ctx, alice, "D0ALICE", "1.000001", "Approach A", Delivery{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing message: %v", err)
	}
	if _, err := s.ClickButtonByAction(ctx, bob, "D0ALICE", ts, "answer_b", "b", Delivery{}); err != nil {
		t.Fatal(err)
	}
	if d := <-got; d.ic.User.ID != "U0BOB" || d.ic.ActionCallback.BlockActions[0].Value != "b" {
		t.Errorf("by action: %+v", d.ic.ActionCallback.BlockActions[0])
	}
}

func TestDeliveryVariants(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	ts := post(t, api, "C0Q", question())

	for _, tc := range []struct {
		name string
		d    Delivery
		want error
	}{
		{"unsigned", Delivery{Unsigned: true}, slack.ErrMissingHeaders},
		{"stale", Delivery{Stale: true}, slack.ErrExpiredTimestamp},
	} {
		resp, err := s.ClickButton(ctx, alice, "C0Q", ts, "Approach A", tc.d)
		if err != nil || resp.Status != http.StatusUnauthorized {
			t.Errorf("%s: %+v %v", tc.name, resp, err)
		}
		if d := <-got; !errors.Is(d.verify, tc.want) {
			t.Errorf("%s: verifier said %v, want %v", tc.name, d.verify, tc.want)
		}
	}
	resp, err := s.ClickButton(ctx, alice, "C0Q", ts, "Approach A", Delivery{BadSignature: true})
	if err != nil || resp.Status != http.StatusUnauthorized {
		t.Errorf("bad signature: %+v %v", resp, err)
	}
	if d := <-got; d.verify == nil || d.header.Get("X-Slack-Signature") == "" {
		t.Errorf("bad signature passed the verifier")
	}

	if _, err := s.ClickButton(ctx, alice, "C0Q", ts, "Approach A", Delivery{RetryNum: 2}); err != nil {
		t.Fatal(err)
	}
	if d := <-got; d.verify != nil || d.header.Get("X-Slack-Retry-Num") != "2" || d.header.Get("X-Slack-Retry-Reason") != "http_timeout" {
		t.Errorf("retry headers %v (%v)", d.header, d.verify)
	}
}

func TestSign(t *testing.T) {
	t.Parallel()
	// The official worked example (slack-platform.md §3).
	body := "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	want := "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	if got := Sign(secret, 1531420618, []byte(body)); got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestAckTimeoutHTTP(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret, AckTimeout: 50 * time.Millisecond})
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) })
	s.SetInteractionURL(hs.URL)
	ts := post(t, api, "C0Q", question())
	if _, err := s.ClickButton(testCtx(t), alice, "C0Q", ts, "Approach A", Delivery{}); !errors.Is(err, ErrAckTimeout) {
		t.Errorf("want ErrAckTimeout, got %v", err)
	}
}

func TestNoTransport(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{})
	ts := post(t, api, "C0Q", question())
	if _, err := s.ClickButton(testCtx(t), alice, "C0Q", ts, "Approach A", Delivery{}); !errors.Is(err, ErrNoTransport) {
		t.Errorf("want ErrNoTransport, got %v", err)
	}
}

// Two people click the same old message: the second click comes from a client
// that still shows the buttons.
func TestClickOldSnapshot(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	ts := post(t, api, "C0Q", question())
	before, _ := s.Message("C0Q", ts)

	if _, err := s.ClickButton(ctx, alice, "C0Q", ts, "Approach A", Delivery{}); err != nil {
		t.Fatal(err)
	}
	<-got
	_, _, _, err := api.UpdateMessageContext(ctx, "C0Q", ts, slack.MsgOptionText("Answered", false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(md("Answered by <@U0ALICE>: A"), nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClickButton(ctx, bob, "C0Q", ts, "Approach B", Delivery{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("click on a removed button: %v", err)
	}
	if _, err := s.ClickButtonIn(ctx, before, bob, "Approach B", Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.ic.User.ID != "U0BOB" || d.ic.ActionCallback.BlockActions[0].Value != "b" {
		t.Errorf("stale click %+v", d.ic.ActionCallback.BlockActions[0])
	}
	// The payload's message is the message as Slack has it now.
	if d.ic.Message.Text != "Answered" {
		t.Errorf("payload message %q", d.ic.Message.Text)
	}
}

func checkboxMessage() slack.MsgOption {
	opt := func(text string) *slack.OptionBlockObject { return slack.NewOptionBlockObject(text, pt(text), nil) }
	boxes := slack.NewCheckboxGroupsBlockElement("pick", opt("a.go"), opt("b.go"), opt("c.go"))
	boxes.InitialOptions = []*slack.OptionBlockObject{opt("b.go")}
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, pt("Choose"), "approach", opt("Approach A"), opt("Approach B"))
	over := slack.NewOverflowBlockElement("more", opt("Skip"), opt("Snooze"))
	return slack.MsgOptionBlocks(
		slack.NewSectionBlock(md("Which files?"), nil, nil),
		slack.NewActionBlock("files", boxes),
		slack.NewSectionBlock(md("Approach?"), nil, slack.NewAccessory(sel), slack.SectionBlockOptionBlockID("how")),
		slack.NewActionBlock("submit", slack.NewButtonBlockElement("submit", "go", pt("Submit")), over),
	)
}

func selectedValues(opts []slack.OptionBlockObject) []string {
	var out []string
	for _, o := range opts {
		out = append(out, o.Value)
	}
	return out
}

func TestSelectAndState(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	ts := post(t, api, "C0Q", checkboxMessage())

	// Untouched, the state carries the initial options.
	if _, err := s.ClickButton(ctx, bob, "C0Q", ts, "Submit", Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if v := d.ic.BlockActionState.Values["files"]["pick"]; v.Type != "checkboxes" || strings.Join(selectedValues(v.SelectedOptions), ",") != "b.go" {
		t.Errorf("initial checkbox state %+v", v)
	}
	if v := d.ic.BlockActionState.Values["how"]["approach"]; v.Type != "static_select" || v.SelectedOption.Value != "" {
		t.Errorf("initial select state %+v", v)
	}

	if _, err := s.Select(ctx, alice, "C0Q", ts, "pick", []string{"a.go", "c.go"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	d = <-got
	a := d.ic.ActionCallback.BlockActions[0]
	if a.Type != "checkboxes" || a.ActionID != "pick" || a.BlockID != "files" || strings.Join(selectedValues(a.SelectedOptions), ",") != "a.go,c.go" {
		t.Errorf("checkbox action %+v", a)
	}
	if v := d.ic.BlockActionState.Values["files"]["pick"]; strings.Join(selectedValues(v.SelectedOptions), ",") != "a.go,c.go" {
		t.Errorf("checkbox state %+v", v)
	}

	if _, err := s.ToggleCheckbox(ctx, alice, "C0Q", ts, "pick", "a.go", Delivery{}); err != nil {
		t.Fatal(err)
	}
	if d = <-got; strings.Join(selectedValues(d.ic.ActionCallback.BlockActions[0].SelectedOptions), ",") != "c.go" {
		t.Errorf("after untick: %+v", d.ic.ActionCallback.BlockActions[0])
	}

	// Select by block id (one element in the block) in a section accessory.
	if _, err := s.Select(ctx, alice, "C0Q", ts, "how", []string{"Approach B"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	d = <-got
	if a := d.ic.ActionCallback.BlockActions[0]; a.Type != "static_select" || a.SelectedOption.Value != "Approach B" {
		t.Errorf("select action %+v", a)
	}

	// Overflow: an action but no state.
	if _, err := s.Select(ctx, alice, "C0Q", ts, "more", []string{"Snooze"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	if d = <-got; d.ic.ActionCallback.BlockActions[0].SelectedOption.Value != "Snooze" {
		t.Errorf("overflow %+v", d.ic.ActionCallback.BlockActions[0])
	}

	// Submit carries each user's own state.
	if _, err := s.ClickButton(ctx, alice, "C0Q", ts, "Submit", Delivery{}); err != nil {
		t.Fatal(err)
	}
	d = <-got
	if v := d.ic.BlockActionState.Values["files"]["pick"]; strings.Join(selectedValues(v.SelectedOptions), ",") != "c.go" {
		t.Errorf("alice's submit state %+v", v)
	}
	if v := d.ic.BlockActionState.Values["how"]["approach"]; v.SelectedOption.Value != "Approach B" {
		t.Errorf("alice's submit state %+v", v)
	}
	if _, err := s.ClickButton(ctx, bob, "C0Q", ts, "Submit", Delivery{}); err != nil {
		t.Fatal(err)
	}
	if v := (<-got).ic.BlockActionState.Values["files"]["pick"]; strings.Join(selectedValues(v.SelectedOptions), ",") != "b.go" {
		t.Errorf("bob's state changed by alice: %+v", v)
	}

	if _, err := s.Select(ctx, alice, "C0Q", ts, "approach", []string{"Approach A", "Approach B"}, Delivery{}); !errors.Is(err, ErrClientValidation) {
		t.Errorf("two choices in a single select: %v", err)
	}
	if _, err := s.Select(ctx, alice, "C0Q", ts, "pick", []string{"z.go"}, Delivery{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("unknown option: %v", err)
	}
	if _, err := s.Select(ctx, alice, "C0Q", ts, "nope", nil, Delivery{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("unknown element: %v", err)
	}

	// After an update that drops an option, the remembered selection loses it.
	opt := func(text string) *slack.OptionBlockObject { return slack.NewOptionBlockObject(text, pt(text), nil) }
	_, _, _, err := api.UpdateMessageContext(ctx, "C0Q", ts, slack.MsgOptionText("fallback", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("files", slack.NewCheckboxGroupsBlockElement("pick", opt("a.go"), opt("b.go"))),
		slack.NewActionBlock("submit", slack.NewButtonBlockElement("submit", "go", pt("Submit"))),
	))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClickButton(ctx, alice, "C0Q", ts, "Submit", Delivery{}); err != nil {
		t.Fatal(err)
	}
	if v := (<-got).ic.BlockActionState.Values["files"]["pick"]; len(v.SelectedOptions) != 0 {
		t.Errorf("state after the option went away: %+v", v)
	}
}

func otherModal(notify bool) slack.ModalViewRequest {
	m := modalRequest("Other answer")
	m.NotifyOnClose = notify
	m.Blocks.BlockSet = append(m.Blocks.BlockSet,
		slack.NewInputBlock("files", pt("Files"), nil, slack.NewCheckboxGroupsBlockElement("pick",
			slack.NewOptionBlockObject("a", pt("a.go"), nil), slack.NewOptionBlockObject("b", pt("b.go"), nil))).WithOptional(true),
	)
	return m
}

// openModal clicks "Other…" and opens the modal with the click's trigger, as the bot does.
func openModal(t *testing.T, s *Server, api *slack.Client, got chan delivered, req slack.ModalViewRequest) string {
	t.Helper()
	ts := post(t, api, "C0Q", question())
	if _, err := s.ClickButton(testCtx(t), alice, "C0Q", ts, "Other…", Delivery{}); err != nil {
		t.Fatal(err)
	}
	v, err := api.OpenViewContext(testCtx(t), (<-got).ic.TriggerID, req)
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}

func TestSubmitView(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	answers := make(chan string, 8)
	got := receiver(t, s, func(ic slack.InteractionCallback) (int, string) {
		if ic.Type != slack.InteractionTypeViewSubmission {
			return 200, ""
		}
		return 200, <-answers
	})
	ctx := testCtx(t)
	id := openModal(t, s, api, got, otherModal(false))

	if _, err := s.SubmitView(ctx, alice, id, map[string][]string{}, Delivery{}); !errors.Is(err, ErrClientValidation) {
		t.Errorf("required input empty: %v", err)
	}
	if _, err := s.SubmitView(ctx, bob, id, map[string][]string{"answer": {"x"}}, Delivery{}); !errors.Is(err, ErrClientValidation) {
		t.Errorf("someone else's view: %v", err)
	}
	if _, err := s.SubmitView(ctx, alice, id, map[string][]string{"nope": {"x"}}, Delivery{}); !errors.Is(err, ErrNoControl) {
		t.Errorf("unknown block: %v", err)
	}

	answers <- `{"response_action":"errors","errors":{"answer":"Say a bit more"}}`
	resp, err := s.SubmitView(ctx, alice, id, map[string][]string{"answer": {"Use C"}, "files": {"b.go"}}, Delivery{})
	if err != nil || !strings.Contains(string(resp.Body), "Say a bit more") {
		t.Fatalf("errors answer: %+v %v", resp, err)
	}
	d := <-got
	ic := d.ic
	if ic.Type != slack.InteractionTypeViewSubmission || ic.View.ID != id || ic.View.CallbackID != "other_answer" || ic.View.PrivateMetadata != `{"q":"q1"}` || ic.View.Hash == "" || ic.User.ID != "U0ALICE" {
		t.Errorf("submission %+v", ic.View)
	}
	if v := ic.View.State.Values["answer"]["text"]; v.Type != "plain_text_input" || v.Value != "Use C" {
		t.Errorf("text state %+v", v)
	}
	if v := ic.View.State.Values["files"]["pick"]; strings.Join(selectedValues(v.SelectedOptions), ",") != "b" {
		t.Errorf("checkbox state %+v", v)
	}
	// (Not "team": the sample comes from an Enterprise Grid org, with enterprise_id/name.)
	sameShape(t, "testdata/view_submission.json", []byte(d.payload), "", "view", "user")
	if v, _ := s.View(id); v.Closed || v.Errors["answer"] != "Say a bit more" {
		t.Errorf("after errors: %+v", v)
	}

	answers <- `{"response_action":"errors","errors":{"nope":"x"}}`
	if _, err := s.SubmitView(ctx, alice, id, map[string][]string{"answer": {"Use C"}}, Delivery{}); !errors.Is(err, ErrBadViewResponse) {
		t.Errorf("errors for a non-input block: %v", err)
	}
	<-got
	answers <- `{"response_action":"update","view":{"type":"modal","title":{"type":"plain_text","text":"A title much too long to show"},"blocks":[]}}`
	if _, err := s.SubmitView(ctx, alice, id, map[string][]string{"answer": {"Use C"}}, Delivery{}); !errors.Is(err, ErrBadViewResponse) {
		t.Errorf("invalid update: %v", err)
	}
	<-got
	answers <- `{"response_action":"update","view":{"type":"modal","title":{"type":"plain_text","text":"Thanks"},"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"Sent."}}]}}`
	if _, err := s.SubmitView(ctx, alice, id, map[string][]string{"answer": {"Use C"}}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	<-got
	v, _ := s.View(id)
	if v.Closed || v.Updated != 1 || !strings.Contains(string(v.JSON), "Sent.") || v.Errors != nil {
		t.Errorf("after update: %+v", v)
	}

	// Plain ack closes the view.
	id2 := openModal(t, s, api, got, otherModal(false))
	answers <- ""
	if _, err := s.SubmitView(ctx, alice, id2, map[string][]string{"answer": {"Use D"}}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	<-got
	if v, _ := s.View(id2); !v.Closed {
		t.Error("view open after an empty ack")
	}
	if _, err := s.SubmitView(ctx, alice, id2, map[string][]string{"answer": {"again"}}, Delivery{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("submit of a closed view: %v", err)
	}

	// push, then clear closes the stack.
	id3 := openModal(t, s, api, got, otherModal(false))
	answers <- `{"response_action":"push","view":{"type":"modal","title":{"type":"plain_text","text":"Sure?"},"submit":{"type":"plain_text","text":"Yes"},"blocks":[{"type":"input","block_id":"why","label":{"type":"plain_text","text":"Why?"},"element":{"type":"plain_text_input","action_id":"t"}}]}}`
	if _, err := s.SubmitView(ctx, alice, id3, map[string][]string{"answer": {"Use E"}}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	<-got
	open := s.OpenViews("U0ALICE")
	top := open[len(open)-1]
	if top.PreviousID != id3 || top.RootID != id3 {
		t.Fatalf("pushed view %+v", top)
	}
	answers <- `{"response_action":"clear"}`
	if _, err := s.SubmitView(ctx, alice, top.ID, map[string][]string{"why": {"because"}}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	<-got
	for _, v := range s.Views() {
		if v.RootID == id3 && !v.Closed {
			t.Errorf("view %s open after clear", v.ID)
		}
	}
}

func TestCloseView(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)

	quiet := openModal(t, s, api, got, otherModal(false))
	resp, err := s.CloseView(ctx, alice, quiet, Delivery{})
	if err != nil || resp.Status != 0 {
		t.Errorf("close without notify_on_close: %+v %v", resp, err)
	}
	if v, _ := s.View(quiet); !v.Closed {
		t.Error("view still open")
	}

	loud := openModal(t, s, api, got, otherModal(true))
	if len(got) != 0 {
		t.Fatalf("view_closed sent without notify_on_close")
	}
	if _, err := s.CloseView(ctx, alice, loud, Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.ic.Type != slack.InteractionTypeViewClosed || d.ic.View.ID != loud || d.ic.IsCleared {
		t.Errorf("view_closed %+v", d.ic)
	}
	sameShape(t, "testdata/view_closed.json", []byte(d.payload), "", "view", "team", "user")
	if _, err := s.CloseView(ctx, alice, loud, Delivery{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("closing twice: %v", err)
	}
}

func TestResponseURL(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	ts := post(t, api, "C0Q", question())
	if _, err := s.ClickButton(ctx, bob, "C0Q", ts, "Approach A", Delivery{}); err != nil {
		t.Fatal(err)
	}
	u := (<-got).ic.ResponseURL

	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(u, slack.ResponseTypeEphemeral), slack.MsgOptionText("Only you can see this", false)); err != nil {
		t.Fatal(err)
	}
	if e := s.Ephemerals(); len(e) != 1 || e[0].User != "U0BOB" || e[0].Channel != "C0Q" {
		t.Errorf("ephemerals %+v", e)
	}
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(u), slack.MsgOptionText("Answered", false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(md("Answered: A"), nil, nil))); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Message("C0Q", ts); m.Text != "Answered" || m.Updated != 1 || !strings.Contains(string(m.Blocks), "Answered: A") {
		t.Errorf("replaced %+v", m)
	}
	long := slack.NewSectionBlock(md(strings.Repeat("x", 3001)), nil, nil)
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionReplaceOriginal(u), slack.MsgOptionText("x", false), slack.MsgOptionBlocks(long)); slackErr(err) != "invalid_blocks" {
		t.Errorf("invalid blocks: %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionDeleteOriginal(u)); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Message("C0Q", ts); ok {
		t.Error("message not deleted")
	}
	// Used 4 times; the 5th is the last.
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(u, slack.ResponseTypeInChannel), slack.MsgOptionText("fifth", false)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "", slack.MsgOptionResponseURL(u, slack.ResponseTypeInChannel), slack.MsgOptionText("sixth", false)); err == nil {
		t.Error("sixth use of a response_url succeeded")
	}
	if c := s.Calls("response_url"); len(c) != 6 {
		t.Errorf("recorded %d response_url calls", len(c))
	}
}

func TestControlAPI(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ts := post(t, api, "C0Q", question())

	r, err := http.Get(s.URL() + "/_fake/messages")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []struct{ Channel, TS, Text string }
	_ = json.NewDecoder(r.Body).Decode(&msgs)
	r.Body.Close()
	if len(msgs) != 1 || msgs[0].TS != ts {
		t.Errorf("messages %+v", msgs)
	}
	r, err = http.Post(s.URL()+"/_fake/click", "application/json",
		strings.NewReader(`{"channel":"C0Q","ts":"`+ts+`","user":"U0ALICE","button":"Approach B"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Transport string
		Status    int
		Error     string
	}
	_ = json.NewDecoder(r.Body).Decode(&out)
	r.Body.Close()
	if r.StatusCode != 200 || out.Status != 200 || out.Transport != "http" || out.Error != "" {
		t.Errorf("click: %d %+v", r.StatusCode, out)
	}
	if d := <-got; d.ic.User.Name != "alice" || d.ic.ActionCallback.BlockActions[0].Value != "b" {
		t.Errorf("delivered %+v", d.ic.ActionCallback.BlockActions[0])
	}
	r, err = http.Get(s.URL() + "/_fake/calls?method=chat.postMessage")
	if err != nil {
		t.Fatal(err)
	}
	var calls []struct{ Method string }
	_ = json.NewDecoder(r.Body).Decode(&calls)
	r.Body.Close()
	if len(calls) != 1 || calls[0].Method != "chat.postMessage" {
		t.Errorf("calls %+v", calls)
	}
}

func TestSelectOtherElements(t *testing.T) {
	t.Parallel()
	s, api := setup(t, Options{SigningSecret: secret})
	got := receiver(t, s, nil)
	ctx := testCtx(t)
	opt := func(text string) *slack.OptionBlockObject { return slack.NewOptionBlockObject(text, pt(text), nil) }
	radio := slack.NewRadioButtonsBlockElement("size", opt("small"), opt("large"))
	radio.InitialOption = opt("small")
	multi := slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, pt("Pick"), "many", opt("x"), opt("y"), opt("z"))
	multi = multi.WithMaxSelectedItems(2)
	who := slack.NewOptionsSelectBlockElement(slack.OptTypeUser, pt("Who"), "who")
	ts := post(t, api, "C0Q", slack.MsgOptionBlocks(
		slack.NewSectionBlock(md("Size?"), nil, slack.NewAccessory(radio), slack.SectionBlockOptionBlockID("b_size")),
		slack.NewActionBlock("b_more", multi, who),
	))

	if _, err := s.Select(ctx, alice, "C0Q", ts, "b_more", []string{"x"}, Delivery{}); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("block with two elements: %v", err)
	}
	if _, err := s.Select(ctx, alice, "C0Q", ts, "many", []string{"x", "y", "z"}, Delivery{}); !errors.Is(err, ErrClientValidation) {
		t.Errorf("over max_selected_items: %v", err)
	}
	if _, err := s.Select(ctx, alice, "C0Q", ts, "many", []string{"x", "z"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	if a := (<-got).ic.ActionCallback.BlockActions[0]; a.Type != "multi_static_select" || strings.Join(selectedValues(a.SelectedOptions), ",") != "x,z" {
		t.Errorf("multi select action %+v", a)
	}
	if _, err := s.Select(ctx, alice, "C0Q", ts, "who", []string{"U0BOB"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if a := d.ic.ActionCallback.BlockActions[0]; a.Type != "users_select" || a.SelectedUser != "U0BOB" {
		t.Errorf("users_select action %+v", a)
	}
	st := d.ic.BlockActionState.Values
	if st["b_size"]["size"].SelectedOption.Value != "small" || strings.Join(selectedValues(st["b_more"]["many"].SelectedOptions), ",") != "x,z" || st["b_more"]["who"].SelectedUser != "U0BOB" {
		t.Errorf("state %+v", st)
	}
	if _, err := s.Select(ctx, alice, "C0Q", ts, "size", []string{"large"}, Delivery{}); err != nil {
		t.Fatal(err)
	}
	if a := (<-got).ic.ActionCallback.BlockActions[0]; a.Type != "radio_buttons" || a.SelectedOption.Value != "large" {
		t.Errorf("radio action %+v", a)
	}
}
