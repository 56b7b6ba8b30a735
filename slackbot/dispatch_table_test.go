package slackbot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// outcome is what one click observably does.
type outcome int

const (
	settles   outcome = iota // the clicker's answer settles the ask
	queues                   // the late answer waits for the agent
	records                  // nothing: Slack keeps the choice for Submit
	refuses                  // the Authorizer's refusal; nothing changes
	already                  // "Already answered by @bob"; nothing changes
	onItsWay                 // "An answer is already on its way … by @bob"
	withdrawn                // "The agent withdrew this question"
	gone                     // "no longer available"; the message is marked expired
	goneQuiet                // inside a modal: nobody to tell, no message to mark
	opens                    // the kind's modal opens (or pages)
)

// metricFor is the interaction result each outcome is counted as.
var metricFor = map[outcome]string{
	settles: resultSettled, queues: resultQueued, records: resultRecorded, refuses: resultRefused,
	already: resultDuplicate, onItsWay: resultDuplicate, withdrawn: resultDuplicate,
	gone: resultInvalid, goneQuiet: resultInvalid, opens: resultOpened,
}

// The ask states a click can meet, in the columns of dispatchRows.
var askStates = []string{"open", "continued", "queued", "settled", "aborted", "missing"}

// clicker says whether the Authorizer admits alice.
type clicker string

const (
	allowed clicker = "allowed"
	refused clicker = "refused"
)

// dispatchRows is every action kind × who clicked × ask state; want lists
// the outcomes in the order of askStates (open, continued, queued, settled,
// aborted, missing). alice clicks; bob answered first in the queued and
// settled states.
var dispatchRows = []struct {
	kind string
	who  clicker
	want [6]outcome
}{
	{"pick", allowed, [6]outcome{settles, queues, onItsWay, already, withdrawn, gone}},
	{"pick", refused, [6]outcome{refuses, refuses, refuses, refuses, refuses, gone}},
	{"select", allowed, [6]outcome{settles, queues, onItsWay, already, withdrawn, gone}},
	{"select", refused, [6]outcome{refuses, refuses, refuses, refuses, refuses, gone}},
	{"select/batch", allowed, [6]outcome{records, records, records, records, records, gone}},
	{"select/batch", refused, [6]outcome{records, records, records, records, records, gone}},
	{"check", allowed, [6]outcome{records, records, records, records, records, gone}},
	{"check", refused, [6]outcome{records, records, records, records, records, gone}},
	{"submit", allowed, [6]outcome{settles, queues, onItsWay, already, withdrawn, gone}},
	{"submit", refused, [6]outcome{refuses, refuses, refuses, refuses, refuses, gone}},
	{"other", allowed, [6]outcome{opens, opens, opens, already, withdrawn, gone}},
	{"other", refused, [6]outcome{refuses, refuses, refuses, refuses, refuses, gone}},
	{"decline", allowed, [6]outcome{opens, opens, opens, already, withdrawn, gone}},
	{"decline", refused, [6]outcome{refuses, refuses, refuses, refuses, refuses, gone}},
	{"edit", allowed, [6]outcome{opens, opens, opens, already, withdrawn, gone}},
	{"edit", refused, [6]outcome{refuses, refuses, refuses, refuses, refuses, gone}},
	{"preview", allowed, [6]outcome{opens, opens, opens, opens, opens, gone}},
	{"preview", refused, [6]outcome{opens, opens, opens, opens, opens, gone}},
	{"fullplan", allowed, [6]outcome{opens, opens, opens, opens, opens, gone}},
	{"fullplan", refused, [6]outcome{opens, opens, opens, opens, opens, gone}},
	{"page", allowed, [6]outcome{opens, opens, opens, opens, opens, goneQuiet}},
	{"page", refused, [6]outcome{opens, opens, opens, opens, opens, goneQuiet}},
}

// kindCase says how alice uses one kind: on which question shape, which
// element of the message (by action_id), choosing what, and what a modal
// it opens looks like.
type kindCase struct {
	req      func(callID string) *waterfall.Request
	actionID string
	choose   string // option text for menus, radios and checkboxes
	tick     string // checkbox ticked in state.values (Submit)
	answer   string // the label alice's click answers with
	method   string // Slack method that shows the modal
	modal    string // text the modal's JSON contains
}

var kindCases = map[string]kindCase{
	"pick":         {req: yesNo, actionID: "askslack.pick.1", answer: "No"},
	"select":       {req: sixWays, actionID: "askslack.select", choose: "Way 4", answer: "Way 4"},
	"select/batch": {req: twoQuestions, actionID: "askslack.select", choose: "Left"},
	"check":        {req: pickFiles, actionID: "askslack.check", choose: "b.go"},
	"submit":       {req: pickFiles, actionID: "askslack.submit", tick: "b.go", answer: "b.go"},
	"other":        {req: yesNo, actionID: "askslack.other", method: "views.open", modal: `"callback_id":"askslack.other"`},
	"decline":      {req: longPlan, actionID: "askslack.decline", method: "views.open", modal: `"callback_id":"askslack.decline"`},
	"edit":         {req: editableBash, actionID: "askslack.edit", method: "views.open", modal: `"callback_id":"askslack.edit"`},
	"preview":      {req: longPlan, actionID: "askslack.preview.0", method: "views.open", modal: `"text":"Preview"`},
	"fullplan":     {req: longPlan, actionID: "askslack.fullplan", method: "views.open", modal: `"text":"Full plan"`},
	"page":         {req: pagedPlan, actionID: "askslack.page.1", method: "views.update", modal: `"text":"Full plan (2/`},
}

// editableBash is a tool permission whose agent takes an edited command.
func editableBash(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: waterfall.PermissionQuestionID, Question: "Allow Bash?", Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: "rm -rf build", Editable: []waterfall.EditableField{{Name: "command", Value: "rm -rf build"}}}}
}

func sixWays(callID string) *waterfall.Request {
	q := waterfall.Question{ID: "way", Question: "Which way?"}
	for i := range 6 {
		q.Options = append(q.Options, waterfall.Option{Label: fmt.Sprintf("Way %d", i)})
	}
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{q}}
}

func twoQuestions(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{
		{ID: "side", Question: "Which side?", Options: []waterfall.Option{{Label: "Left"}, {Label: "Right"}}},
		{ID: "size", Question: "Which size?", Options: []waterfall.Option{{Label: "Small"}, {Label: "Large"}}},
	}}
}

// longPlan is a plan review whose plan is cut in the message and whose
// approve option has a preview.
func longPlan(callID string) *waterfall.Request {
	return planOf(callID, "## Migration\n"+strings.Repeat("1. **Step** with a long explanation of what happens.\n", 400))
}

// pagedPlan is a plan review whose plan takes two modal pages.
func pagedPlan(callID string) *waterfall.Request {
	return planOf(callID, strings.Repeat("<&> ", 10_000))
}

func planOf(callID, plan string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{
		ID: "plan", Question: "Approve the plan?", Detail: plan,
		Options: []waterfall.Option{{Label: "Approve", Preview: "```\n+------+\n| side |\n+------+\n```"}, {Label: "Reject"}},
		Intent:  &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Approve"},
	}}}
}

var bob = waterfall.Respondent{UserID: "U0BOB", UserName: "bob", Surface: waterfall.SurfaceSlack}

const whyRefused = "Only the on-call may answer (test)."

// refuseAll is an Authorizer that admits nobody.
type refuseAll struct{}

func (refuseAll) Allowed(context.Context, string, *waterfall.Request) (bool, string) {
	return false, whyRefused
}

// recMetrics records interaction results and wakes waiters on each.
type recMetrics struct {
	noMetrics
	mu      sync.Mutex
	results []string // "kind/result"
	changed chan struct{}
}

func newRecMetrics() *recMetrics { return &recMetrics{changed: make(chan struct{})} }

func (m *recMetrics) Interaction(kind, result string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.results = append(m.results, kind+"/"+result)
	close(m.changed)
	m.changed = make(chan struct{})
}

// wait returns the n-th recorded result (from 1) once there is one.
func (m *recMetrics) wait(ctx context.Context, n int) (string, error) {
	for {
		m.mu.Lock()
		if len(m.results) >= n {
			r := m.results[n-1]
			m.mu.Unlock()
			return r, nil
		}
		ch := m.changed
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for interaction #%d: %w", n, ctx.Err())
		case <-ch:
		}
	}
}

func (m *recMetrics) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.results)
}

// hiding makes the store forget every ask once gone is set, as retention
// running out does.
type hiding struct {
	store.Store
	gone *atomic.Bool
}

func (h *hiding) Get(ctx context.Context, callID string) (*asktype.Ask, error) {
	if h.gone.Load() {
		return nil, store.ErrNotFound
	}
	return h.Store.Get(ctx, callID)
}

func (h *hiding) Current(ctx context.Context, callID string) (*asktype.Ask, error) {
	return h.Get(ctx, callID)
}

// dispatchBundle is setupDispatch with a bot of its own options.
type dispatchBundle struct {
	*postBundle
	metrics *recMetrics
	gone    atomic.Bool
}

func setupDispatchTable(t *testing.T, authz Authorizer) *dispatchBundle {
	t.Helper()
	d := &dispatchBundle{metrics: newRecMetrics()}
	// The table is about routing, not trigger expiry: a loaded machine under
	// the race detector may take longer than Slack's 3 s.
	fopts := slackfake.Options{SigningSecret: testSecret, Users: []slackfake.User{alice}, TriggerTTL: time.Minute}
	d.postBundle = setupPost(t, fopts,
		func(st store.Store) store.Store { return &hiding{Store: st, gone: &d.gone} })
	api := slack.New("xoxb-test", slack.OptionAPIURL(d.fake.APIURL()))
	d.bot = New(api, d.host, Options{Channel: "C1", Mirror: d.mirror, Authorizer: authz, Metrics: d.metrics})
	t.Cleanup(func() { _ = d.bot.Stop(context.Background()) })
	srv := httptest.NewServer(HTTPHandler(d.bot, testSecret, slog.Default()))
	t.Cleanup(srv.Close)
	d.fake.SetInteractionURL(srv.URL + "/slack/interactions")
	return d
}

// TestDispatchTable drives every action kind against every ask state, for
// an allowed and a refused clicker, through signed HTTP deliveries to the
// fake Slack, and checks what each click observably did: the ask after, the
// ephemeral alice got, the modal opened and the interaction counted.
func TestDispatchTable(t *testing.T) {
	t.Parallel()
	for _, row := range dispatchRows {
		for si, state := range askStates {
			want := row.want[si]
			t.Run(row.kind+"/"+state+"/"+string(row.who), func(t *testing.T) {
				var authz Authorizer = Everyone{}
				if row.who == refused {
					authz = refuseAll{}
				}
				d := setupDispatchTable(t, authz)
				d.runRow(t, kindCases[row.kind], state, want)
			})
		}
	}
}

func (d *dispatchBundle) runRow(t *testing.T, kc kindCase, state string, want outcome) {
	ctx := testCtx(t)
	msg := d.arrange(t, kc, state)
	var modal *slackfake.View
	if kc.method == "views.update" {
		modal = d.openDetail(t)
	}
	d.moveTo(t, kc, state)
	before, _ := d.stateOf(t)
	n, views, ephemerals := d.metrics.count(), len(d.viewCalls()), len(d.fake.Ephemerals())

	var payload map[string]any
	if modal != nil {
		payload = d.pageAction(t, *modal, kc.actionID)
	} else {
		payload = d.messageAction(t, msg, kc)
	}
	if resp, err := d.fake.Deliver(ctx, payload, slackfake.Delivery{}); err != nil || resp.Status != 200 {
		t.Fatalf("delivery: %+v %v", resp, err)
	}
	got, err := d.metrics.wait(ctx, n+1)
	if err != nil {
		t.Fatal(err)
	}
	_ = d.bot.Stop(ctx) // the click's ephemerals are queued by now: let them go out

	if w := "block_actions/" + metricFor[want]; got != w {
		t.Errorf("interaction counted %s, want %s", got, w)
	}
	d.checkState(t, kc, before, want)
	d.checkEphemeral(t, d.fake.Ephemerals()[ephemerals:], want)
	d.checkViews(t, kc, d.viewCalls()[views:], want)
	d.checkMessage(t, msg, want)
}

// arrange asks and returns the message as alice's client shows it while
// the ask is open (or, for the continued states, once the window closed).
func (d *dispatchBundle) arrange(t *testing.T, kc kindCase, state string) slackfake.Message {
	t.Helper()
	req := kc.req("c1")
	req.Agent.SessionID = "s1"
	if state != "continued" && state != "queued" {
		return d.posted(t, req)
	}
	req.TimeoutMs = ptr(1.0)
	if res, err := d.host.Ask(testCtx(t), req); err != nil || !res.Pending() {
		t.Fatalf("timed Ask = %+v, %v; want pending", res, err)
	}
	return d.waitMessage(t, "c1", "continued message", func(a *asktype.Ask, m slackfake.Message) bool {
		return a.State == asktype.Continued && a.Rendered >= a.Version && hasButtons(m)
	})
}

// moveTo brings the ask from open (or continued) to state.
func (d *dispatchBundle) moveTo(t *testing.T, kc kindCase, state string) {
	t.Helper()
	ctx := testCtx(t)
	switch state {
	case "queued", "settled":
		req := kc.req("c1")
		ans := waterfall.Answer{}
		for qi, q := range req.Questions {
			it := waterfall.AnswerItem{ID: q.ID, Selected: []string{}}
			if qi == 0 {
				it.Selected = []string{q.Options[0].Label}
			}
			ans.Answers = append(ans.Answers, it)
		}
		if _, err := d.host.Answer(ctx, "c1", ans, bob); err != nil {
			t.Fatalf("bob's answer: %v", err)
		}
	case "aborted":
		if _, err := d.host.Abort(ctx, "c1"); err != nil {
			t.Fatal(err)
		}
	case "missing":
		d.gone.Store(true)
	}
	if got, _ := d.stateOf(t); got != state {
		t.Fatalf("arranged ask is %s, want %s", got, state)
	}
}

// stateOf names the ask's state ("queued": continued with a late answer
// waiting for the agent) and returns its answer, if any.
func (d *dispatchBundle) stateOf(t *testing.T) (string, *waterfall.Settlement) {
	t.Helper()
	a, err := d.st.Get(context.Background(), "c1")
	if err == store.ErrNotFound {
		return "missing", nil
	}
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case a.State == asktype.Settled:
		s, err := waterfall.DecodeSettlement(a)
		if err != nil {
			t.Fatal(err)
		}
		return "settled", &s
	case a.State == asktype.Continued && len(a.Reply) > 0:
		var m waterfall.SteeredMessage
		if err := json.Unmarshal(a.Reply, &m); err != nil {
			t.Fatal(err)
		}
		s := m.Settlement()
		return "queued", &s
	}
	return string(a.State), nil
}

func (d *dispatchBundle) checkState(t *testing.T, kc kindCase, before string, want outcome) {
	t.Helper()
	after, s := d.stateOf(t)
	switch want {
	case settles, queues:
		wantState := map[outcome]string{settles: "settled", queues: "queued"}[want]
		if after != wantState || s == nil || s.Respondent.UserID != alice.ID {
			t.Fatalf("ask is %s answered by %+v, want %s by alice", after, s, wantState)
		}
		if got := s.Answer.Answers[0].Selected; !slices.Equal(got, []string{kc.answer}) {
			t.Errorf("answer = %q, want [%s]", got, kc.answer)
		}
	default:
		if after != before {
			t.Errorf("ask went from %s to %s, want it unchanged", before, after)
		}
	}
}

func (d *dispatchBundle) checkEphemeral(t *testing.T, got []slackfake.Ephemeral, want outcome) {
	t.Helper()
	prefix := map[outcome]string{
		refuses:   whyRefused,
		already:   "Already answered by <@U0BOB>: ",
		onItsWay:  "An answer is already on its way to the agent by <@U0BOB>: ",
		withdrawn: "The agent withdrew this question",
		gone:      "This question is no longer available",
	}[want]
	if prefix == "" {
		if len(got) != 0 {
			t.Errorf("alice was told %+v, want nothing", got)
		}
		return
	}
	if len(got) != 1 || got[0].User != alice.ID || !strings.HasPrefix(got[0].Text, prefix) {
		t.Errorf("ephemerals %+v, want one to alice starting %q", got, prefix)
	}
}

func (d *dispatchBundle) viewCalls() []slackfake.Call {
	var out []slackfake.Call
	for _, c := range d.fake.Calls("") {
		if strings.HasPrefix(c.Method, "views.") {
			out = append(out, c)
		}
	}
	return out
}

func (d *dispatchBundle) checkViews(t *testing.T, kc kindCase, got []slackfake.Call, want outcome) {
	t.Helper()
	if want != opens {
		if len(got) != 0 {
			t.Errorf("%d views.* calls (%s), want none", len(got), got[0].Method)
		}
		return
	}
	if len(got) != 1 || got[0].Method != kc.method || !got[0].OK() {
		t.Fatalf("views calls %+v, want one successful %s", got, kc.method)
	}
	if v := got[0].Params["view"]; !strings.Contains(v, kc.modal) {
		t.Errorf("%s view has no %s: %.300s", kc.method, kc.modal, v)
	}
}

// checkMessage: a click on an ask that is gone marks its message expired.
func (d *dispatchBundle) checkMessage(t *testing.T, msg slackfake.Message, want outcome) {
	t.Helper()
	m, _ := d.fake.Message(msg.Channel, msg.TS)
	expired := strings.Contains(string(m.Blocks), "no longer open")
	if expired != (want == gone) {
		t.Errorf("message marked expired: %v, want %v", expired, want == gone)
	}
}

// openDetail opens the first page of the full plan, as alice, for a page
// action from inside it. Page 1 is ~250 kB, too slow to open within a
// trigger's 3 s on a loaded machine under the race detector, so the view
// opened holds only page 1's navigation block, as rendered (the fullplan
// rows open the real thing).
func (d *dispatchBundle) openDetail(t *testing.T) *slackfake.View {
	t.Helper()
	a, err := d.st.Get(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	v := d.bot.view(rec(t, a))
	page := blocks.DetailModal(v, 0)
	bs := page.Blocks.BlockSet
	page.Blocks.BlockSet = []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "Page 1, cut short", false, false), nil, nil), bs[len(bs)-1]}
	api := slack.New("xoxb-test", slack.OptionAPIURL(d.fake.APIURL()))
	if _, err := api.OpenView(d.fake.IssueTrigger(alice.ID), page); err != nil {
		t.Fatal(err)
	}
	views := d.fake.OpenViews(alice.ID)
	if len(views) != 1 {
		t.Fatalf("%d open views", len(views))
	}
	return &views[0]
}

// messageAction is the block_actions payload alice's client sends when she
// uses the element kc names in msg, a snapshot: Slack sends what the client
// shows, which may be older than the ask.
func (d *dispatchBundle) messageAction(t *testing.T, msg slackfake.Message, kc kindCase) map[string]any {
	t.Helper()
	blockID, el := findElement(t, msg.Blocks, kc.actionID)
	values := map[string]any{}
	if kc.tick != "" {
		cbID, cb := findElement(t, msg.Blocks, "askslack.check")
		values[cbID] = map[string]any{"askslack.check": map[string]any{"type": "checkboxes", "selected_options": []any{option(t, cb, kc.tick)}}}
	}
	return map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": alice.ID, "name": alice.Name},
		"container":  map[string]any{"type": "message", "channel_id": msg.Channel, "message_ts": msg.TS},
		"channel":    map[string]any{"id": msg.Channel},
		"message":    map[string]any{"type": "message", "ts": msg.TS, "text": msg.Text, "metadata": msg.Metadata},
		"trigger_id": d.fake.IssueTrigger(alice.ID),
		"state":      map[string]any{"values": values},
		"actions":    []any{actionOf(t, blockID, el, kc.choose)},
	}
}

// pageAction is the block_actions payload of a button inside view.
func (d *dispatchBundle) pageAction(t *testing.T, view slackfake.View, actionID string) map[string]any {
	t.Helper()
	var v struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(view.JSON, &v); err != nil {
		t.Fatal(err)
	}
	blockID, el := findElement(t, v.Blocks, actionID)
	return map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": alice.ID, "name": alice.Name},
		"container":  map[string]any{"type": "view", "view_id": view.ID},
		"view":       json.RawMessage(view.JSON),
		"trigger_id": d.fake.IssueTrigger(alice.ID),
		"actions":    []any{actionOf(t, blockID, el, "")},
	}
}

// findElement returns the first interactive element with actionID in a
// list of blocks, and its block's id.
func findElement(t *testing.T, raw json.RawMessage, actionID string) (string, map[string]any) {
	t.Helper()
	var bs []struct {
		BlockID   string           `json:"block_id"`
		Elements  []map[string]any `json:"elements"`
		Accessory map[string]any   `json:"accessory"`
		Element   map[string]any   `json:"element"`
	}
	if err := json.Unmarshal(raw, &bs); err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		for _, el := range append(b.Elements, b.Accessory, b.Element) {
			if el != nil && el["action_id"] == actionID {
				return b.BlockID, el
			}
		}
	}
	t.Fatalf("no element %s in %s", actionID, raw)
	return "", nil
}

// actionOf is the action Slack reports for el: a button with its value; a
// choice of the option labelled choose in a menu, radios or checkboxes.
func actionOf(t *testing.T, blockID string, el map[string]any, choose string) map[string]any {
	t.Helper()
	typ, _ := el["type"].(string)
	a := map[string]any{"type": typ, "block_id": blockID, "action_id": el["action_id"], "action_ts": "1700000000.000100"}
	switch typ {
	case "button":
		a["value"], a["text"] = el["value"], el["text"]
	case "radio_buttons", "static_select":
		a["selected_option"] = option(t, el, choose)
	case "checkboxes", "multi_static_select":
		a["selected_options"] = []any{option(t, el, choose)}
	default:
		t.Fatalf("cannot use a %s", typ)
	}
	return a
}

func option(t *testing.T, el map[string]any, label string) any {
	t.Helper()
	opts, _ := el["options"].([]any)
	for _, o := range opts {
		text, _ := o.(map[string]any)["text"].(map[string]any)
		if text["text"] == label {
			return o
		}
	}
	t.Fatalf("no option %q in %v", label, el)
	return nil
}

// TestModalSubmissionTable submits an "Other…" modal's text against every
// ask state, for an allowed and a refused clicker: the answer settles or
// queues and the modal closes, or the modal keeps its text and says why.
func TestModalSubmissionTable(t *testing.T) {
	t.Parallel()
	rows := []struct {
		who  clicker
		want [6]outcome
	}{
		{allowed, [6]outcome{settles, queues, onItsWay, already, withdrawn, gone}},
		{refused, [6]outcome{refuses, refuses, refuses, refuses, refuses, gone}},
	}
	said := map[outcome]string{
		refuses: whyRefused, onItsWay: "An answer is already on its way to the agent by <@U0BOB>: Yes",
		already: "Already answered by <@U0BOB>: Yes", withdrawn: "The agent withdrew", gone: "This question is no longer available",
	}
	kc := kindCase{req: yesNo, answer: "mine"}
	for _, row := range rows {
		for si, state := range askStates {
			want := row.want[si]
			t.Run(state+"/"+string(row.who), func(t *testing.T) {
				var authz Authorizer = Everyone{}
				if row.who == refused {
					authz = refuseAll{}
				}
				d := setupDispatchTable(t, authz)
				ctx := testCtx(t)
				msg := d.arrange(t, kc, state)
				viewID := d.openOther(t, msg)
				d.moveTo(t, kc, state)
				before, _ := d.stateOf(t)
				resp, err := d.fake.SubmitView(ctx, alice, viewID, map[string][]string{"ask/c1/0/text": {"mine"}}, slackfake.Delivery{})
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := d.metrics.wait(ctx, 1); got != "view_submission/"+metricFor[want] {
					t.Errorf("interaction counted %s, want view_submission/%s", got, metricFor[want])
				}
				var ack struct {
					Errors map[string]string `json:"errors"`
				}
				if len(resp.Body) > 0 {
					if err := json.Unmarshal(resp.Body, &ack); err != nil {
						t.Fatalf("ack %s: %v", resp.Body, err)
					}
				}
				if w, got := said[want], ack.Errors["ask/c1/0/text"]; len(ack.Errors) > 1 || !strings.HasPrefix(got, w) || (w == "") != (got == "") {
					t.Errorf("ack %s; want the text input to say %q", resp.Body, w)
				}
				if want == settles || want == queues {
					after, s := d.stateOf(t)
					if s == nil || s.Respondent.UserID != alice.ID || s.Answer.Answers[0].Custom != "mine" {
						t.Errorf("ask %s answered %+v, want alice's text", after, s)
					}
					return
				}
				if after, _ := d.stateOf(t); after != before {
					t.Errorf("ask went from %s to %s", before, after)
				}
			})
		}
	}
}

// openOther opens the "Other…" modal of msg's question for alice straight
// through the Web API, so a refused clicker has one to submit too.
func (d *dispatchBundle) openOther(t *testing.T, msg slackfake.Message) string {
	t.Helper()
	a, err := d.st.Get(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	v := d.bot.view(rec(t, a))
	modal := blocks.OtherModal(v, 0, blocks.Meta{CallID: "c1", Question: 0, Channel: msg.Channel, TS: msg.TS})
	api := slack.New("xoxb-test", slack.OptionAPIURL(d.fake.APIURL()))
	opened, err := api.OpenView(d.fake.IssueTrigger(alice.ID), modal)
	if err != nil {
		t.Fatal(err)
	}
	return opened.ID
}
