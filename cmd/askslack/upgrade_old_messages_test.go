package main

// Old messages keep working (issue 44, item 3): a question the previous
// release posted, and the modals it opened, answered after the upgrade
// through today's release only; and golden files of the ids the previous
// release writes into messages and modals, which today's decoder must read.

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
	"github.com/slack-go/slack"
)

var updateUpgrade = flag.Bool("update-upgrade", false, "rewrite testdata/upgrade/<previous release>/*.json from the previous release's posts")

// shapeIDs is what a golden file keeps of one message or modal the
// previous release posted: the ids Slack echoes back to whichever
// replica receives the interaction, nothing that varies between runs.
type shapeIDs struct {
	Shape           string    `json:"shape"` // "message" or "modal"
	CallID          string    `json:"callId"`
	CallbackID      string    `json:"callback_id,omitempty"`
	PrivateMetadata string    `json:"private_metadata,omitempty"`
	Elements        []shapeEl `json:"elements"`
}

type shapeEl struct {
	BlockID  string `json:"block_id"`
	ActionID string `json:"action_id"`
	Type     string `json:"type"`
	Value    string `json:"value,omitempty"`
	Text     string `json:"text,omitempty"`
}

// Placeholders for what varies between runs: the message's ts, and the
// ids the fake Slack makes up for an element or block the bot left
// without one (Slack does the same).
const (
	goldenTS   = "1700000000.000100"
	goldenNone = "(set by Slack)"
)

var fakeMadeID = regexp.MustCompile(`^[A-Za-z0-9]{5}$`)

// collectIDs walks Block Kit JSON and lists every element with an
// action_id under the block that holds it.
func collectIDs(v any, block string, out *[]shapeEl) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collectIDs(e, block, out)
		}
	case map[string]any:
		if b, ok := x["block_id"].(string); ok {
			if fakeMadeID.MatchString(b) {
				b = goldenNone
			}
			block = b
		}
		if a, ok := x["action_id"].(string); ok {
			if fakeMadeID.MatchString(a) {
				a = goldenNone
			}
			el := shapeEl{BlockID: block, ActionID: a}
			el.Type, _ = x["type"].(string)
			el.Value, _ = x["value"].(string)
			if t, ok := x["text"].(map[string]any); ok {
				el.Text, _ = t["text"].(string)
			}
			*out = append(*out, el)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "state" {
				collectIDs(x[k], block, out)
			}
		}
	}
}

func messageIDs(t *testing.T, callID string, msg slackfake.Message) shapeIDs {
	t.Helper()
	var bs any
	if err := json.Unmarshal(msg.Blocks, &bs); err != nil {
		t.Fatalf("%s: blocks: %v", callID, err)
	}
	s := shapeIDs{Shape: "message", CallID: callID}
	collectIDs(bs, "", &s.Elements)
	return s
}

func modalIDs(t *testing.T, callID string, msg slackfake.Message, v slackfake.View) shapeIDs {
	t.Helper()
	var view struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		Blocks          any    `json:"blocks"`
	}
	if err := json.Unmarshal(v.JSON, &view); err != nil {
		t.Fatalf("%s: view: %v", callID, err)
	}
	s := shapeIDs{Shape: "modal", CallID: callID, CallbackID: view.CallbackID,
		PrivateMetadata: strings.ReplaceAll(view.PrivateMetadata, msg.TS, goldenTS)}
	collectIDs(view.Blocks, "", &s.Elements)
	return s
}

// golden compares s with testdata/upgrade/<previousRelease>/<name>.json,
// or writes it with -update-upgrade.
func golden(t *testing.T, name string, s shapeIDs) {
	t.Helper()
	got, _ := json.MarshalIndent(s, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "upgrade", previousRelease, name+".json")
	if *updateUpgrade {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with -update-upgrade)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("release %s posted other ids than %s records:\n%s", previousRelease, path, got)
	}
}

// via points the fake Slack's interactions at b.
func (m *mixed) via(b *bot) {
	m.d.fake.SetInteractionURL("http://" + b.addr + "/slack/interactions")
}

// press taps label on callID's message as alice, through whichever replica
// via last named.
func (m *mixed) press(callID, label string) {
	m.t.Helper()
	msg := m.msgs[callID]
	if resp, err := m.d.fake.ClickButton(m.ctx, alice, msg.Channel, msg.TS, label, slackfake.Delivery{}); err != nil || resp.Status != 200 {
		m.t.Fatalf("%q on %s: %+v %v", label, callID, resp, err)
	}
}

// submit submits alice's modal and wants it accepted (closed).
func (m *mixed) submit(v slackfake.View, values map[string][]string) {
	m.t.Helper()
	resp, err := m.d.fake.SubmitView(m.ctx, alice, v.ID, values, slackfake.Delivery{})
	if err != nil || resp.Status != 200 || strings.Contains(string(resp.Body), `"errors"`) {
		m.t.Fatalf("submitting %s: %+v %v", v.ID, resp, err)
	}
}

// settled waits for callID's agent and wants its answers as JSON.
func (m *mixed) settled(callID, want string) {
	m.t.Helper()
	res, err := m.asks[callID].wait(m.t)
	if err != nil || res.Pending || mustJSON(res.Answers) != want {
		m.t.Fatalf("%s: agent got %+v %v; want %s", callID, res, err, want)
	}
	m.ended(callID)
}

func oldEditableAsk(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "deployer"},
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Header: "Bash", Question: "deployer wants to run a command. Allow it?",
			Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: "kubectl delete ns staging", Repo: "infra",
			Editable: []waterfall.EditableField{{Name: "command", Label: "Command", Value: "kubectl delete ns staging", Of: waterfall.OfCommand}}}}
}

// Questions the previous release posted (buttons, "Other…", a plan to
// review, a permission with Edit & allow), some with a modal it opened,
// then the upgrade: the old replica is replaced by today's, and every
// answer goes through today's release only. Old modals submitted to
// today's, and today's modals opened from old messages, settle the ask
// and update the old message.
func TestUpgradeOldMessagesAnsweredThroughNew(t *testing.T) {
	t.Parallel()
	m := newMixed(t)
	old, cur := m.start(true), m.start(false)

	m.open(old, oneQuestion("oldmsg-btn", "Yes", "No"))
	m.open(old, oneQuestion("oldmsg-other", "Blue", "Green"))
	m.open(old, planRequest("oldmsg-plan"))
	m.open(old, oldEditableAsk("oldmsg-edit"))
	for id, want := range map[string]string{"oldmsg-other": "Other…", "oldmsg-plan": "Decline with feedback…", "oldmsg-edit": "Edit & allow…"} {
		if !strings.Contains(string(m.msgs[id].Blocks), want) {
			t.Fatalf("release %s's %s has no %q: %s", previousRelease, id, want, m.msgs[id].Blocks)
		}
	}

	// The old replica opens each modal, as a person would before the upgrade.
	m.via(old)
	m.press("oldmsg-other", "Other…")
	otherOld := waitView(t, m.ctx, m.d.fake, alice.ID, blocks.CallbackOther)
	m.press("oldmsg-plan", "Decline with feedback…")
	declineOld := waitView(t, m.ctx, m.d.fake, alice.ID, blocks.CallbackDecline)
	m.press("oldmsg-edit", "Edit & allow…")
	editOld := waitView(t, m.ctx, m.d.fake, alice.ID, blocks.CallbackEdit)

	golden(t, "message-buttons", messageIDs(t, "oldmsg-btn", m.msgs["oldmsg-btn"]))
	golden(t, "message-other", messageIDs(t, "oldmsg-other", m.msgs["oldmsg-other"]))
	golden(t, "message-plan", messageIDs(t, "oldmsg-plan", m.msgs["oldmsg-plan"]))
	golden(t, "message-edit", messageIDs(t, "oldmsg-edit", m.msgs["oldmsg-edit"]))
	golden(t, "modal-other", modalIDs(t, "oldmsg-other", m.msgs["oldmsg-other"], otherOld))
	golden(t, "modal-decline", modalIDs(t, "oldmsg-plan", m.msgs["oldmsg-plan"], declineOld))
	golden(t, "modal-edit", modalIDs(t, "oldmsg-edit", m.msgs["oldmsg-edit"], editOld))

	// The upgrade: the old replica's place is taken by today's (its agents
	// re-attach there); from here on only today's release runs.
	old = m.replace(old, false)

	// A button of the old message.
	m.click(old, "oldmsg-btn", "Yes")
	m.answered("oldmsg-btn", "Yes")

	// The old release's decline form, submitted to today's.
	m.via(cur)
	m.submit(declineOld, map[string][]string{blocks.TextBlockID("oldmsg-plan", 0): {"Backfill in batches of 1000."}})
	m.settled("oldmsg-plan", `[{"id":"plan","selected":[],"custom":"Backfill in batches of 1000."}]`)
	mustContain(t, "the declined plan", string(m.d.fake.Messages()[indexOf(t, m, "oldmsg-plan")].Blocks), "declined")

	// The old release's Edit & allow form, submitted to today's.
	m.via(old)
	m.submit(editOld, map[string][]string{blocks.EditBlockID("oldmsg-edit", "command"): {"kubectl delete ns staging-old"}})
	m.settled("oldmsg-edit", `[{"id":"permission","selected":["Allow"],"edited":{"command":"kubectl delete ns staging-old"}}]`)
	mustContain(t, "the edited allow", string(m.d.fake.Messages()[indexOf(t, m, "oldmsg-edit")].Blocks), "Allowed with changes by <@"+alice.ID+">")

	// "Other…" on the old message opens today's modal through today's
	// replica (the old one's form was dismissed), which settles it.
	if _, err := m.d.fake.CloseView(m.ctx, alice, otherOld.ID, slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	m.via(cur)
	m.press("oldmsg-other", "Other…")
	otherNew := waitView(t, m.ctx, m.d.fake, alice.ID, blocks.CallbackOther)
	if otherNew.ID == otherOld.ID {
		t.Fatal("the dismissed form came back")
	}
	m.submit(otherNew, map[string][]string{blocks.TextBlockID("oldmsg-other", 0): {"Teal, like the logo"}})
	m.settled("oldmsg-other", `[{"id":"q1","selected":[],"custom":"Teal, like the logo"}]`)
	mustContain(t, "the answered question", string(m.d.fake.Messages()[indexOf(t, m, "oldmsg-other")].Blocks), "Teal, like the logo")
	m.check()
}

// indexOf is the position of callID's message among the fake's messages.
func indexOf(t *testing.T, m *mixed, callID string) int {
	t.Helper()
	for i, s := range m.d.fake.Messages() {
		if s.TS == m.msgs[callID].TS && s.Channel == m.msgs[callID].Channel {
			return i
		}
	}
	t.Fatalf("no message of %s", callID)
	return -1
}

// Every id the previous release wrote into a message or a modal
// (testdata/upgrade/<release>/) is read by today's decoder: action and
// block ids decode to the ask, question and option they name; a modal's
// callback_id is one today's dispatch routes, its private_metadata parses
// to the ask, and its inputs sit where today's submission handler reads
// them. Runs without Redis or the old binary.
func TestUpgradeOldIDsDecode(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "upgrade", "*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no golden ids under testdata/upgrade")
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var s shapeIDs
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			switch s.Shape {
			case "message":
				decodeOldMessage(t, s)
			case "modal":
				decodeOldModal(t, s)
			default:
				t.Fatalf("unknown shape %q", s.Shape)
			}
		})
	}
}

func decodeOldMessage(t *testing.T, s shapeIDs) {
	n := 0
	for _, el := range s.Elements {
		if !strings.HasPrefix(el.ActionID, "askslack.") {
			continue
		}
		n++
		a, err := blocks.Decode(el.BlockID, el.ActionID, el.Value)
		if err != nil {
			t.Errorf("%s in %s: %v", el.ActionID, el.BlockID, err)
			continue
		}
		if a.CallID != s.CallID {
			t.Errorf("%s in %s names call %q; want %q", el.ActionID, el.BlockID, a.CallID, s.CallID)
		}
		if a.Kind.NeedsQuestion() && a.Question < 0 {
			t.Errorf("%s in %s: a %s without a question", el.ActionID, el.BlockID, a.Kind)
		}
		if a.Kind == blocks.KindPick && el.Value != "" {
			if oi, err := blocks.ParseOptionValue(el.Value); err != nil || oi != a.Option {
				t.Errorf("%s: value %q is option %d (%v); the action id says %d", el.ActionID, el.Value, oi, err, a.Option)
			}
		}
	}
	if n == 0 {
		t.Fatal("no askslack control in the message")
	}
}

func decodeOldModal(t *testing.T, s shapeIDs) {
	switch s.CallbackID {
	case blocks.CallbackOther, blocks.CallbackDecline, blocks.CallbackEdit:
	default:
		t.Fatalf("callback_id %q is not one today's dispatch routes", s.CallbackID)
	}
	meta, err := blocks.DecodeMeta(s.PrivateMetadata)
	if err != nil || meta.CallID != s.CallID {
		t.Fatalf("private_metadata %q: %+v %v; want call %s", s.PrivateMetadata, meta, err, s.CallID)
	}
	values := map[string]map[string]slack.BlockAction{}
	perm := &waterfall.Permission{}
	n := 0
	for _, el := range s.Elements {
		switch el.ActionID {
		case blocks.InputText:
			n++
			if want := blocks.TextBlockID(meta.CallID, max(meta.Question, 0)); el.BlockID != want {
				t.Errorf("text input in %s; today's code reads %s", el.BlockID, want)
			}
		case blocks.InputChoices:
			n++
			if want := blocks.ChoiceBlockID(meta.CallID, max(meta.Question, 0)); el.BlockID != want {
				t.Errorf("choices in %s; today's code reads %s", el.BlockID, want)
			}
		case blocks.InputEdit:
			n++
			name, ok := strings.CutPrefix(el.BlockID, blocks.EditBlockID(meta.CallID, ""))
			if !ok || name == "" {
				t.Errorf("edit input in %s; today's code reads %s<field>", el.BlockID, blocks.EditBlockID(meta.CallID, ""))
				continue
			}
			perm.Editable = append(perm.Editable, waterfall.EditableField{Name: name})
			values[el.BlockID] = map[string]slack.BlockAction{el.ActionID: {Value: "edited " + name}}
		}
	}
	if n == 0 {
		t.Fatal("no input today's code reads")
	}
	if s.CallbackID == blocks.CallbackEdit {
		got, ok := blocks.EditedValues(meta.CallID, perm, values)
		if !ok || len(got) != len(perm.Editable) {
			t.Fatalf("today's EditedValues reads %v (%v) from the old form", got, ok)
		}
	}
}
