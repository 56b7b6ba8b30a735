package slackbot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// openEdit opens the Edit & allow form of editableBash("c1") for alice
// straight through the Web API, so a refused clicker has one to submit too
// (and a forger one the message never offered).
func (d *dispatchBundle) openEdit(t *testing.T, msg slackfake.Message) string {
	t.Helper()
	v := waterfall.View{CallID: "c1", Request: editableBash("c1")}
	modal := blocks.EditModal(v, blocks.Meta{CallID: "c1", Channel: msg.Channel, TS: msg.TS})
	api := slack.New("xoxb-test", slack.OptionAPIURL(d.fake.APIURL()))
	opened, err := api.OpenView(d.fake.IssueTrigger(alice.ID), modal)
	if err != nil {
		t.Fatal(err)
	}
	return opened.ID
}

func submitErrors(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var ack struct {
		Errors map[string]string `json:"errors"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &ack); err != nil {
			t.Fatalf("ack %s: %v", body, err)
		}
	}
	return ack.Errors
}

// TestEditSubmission: alice's Edit & allow settles Allow with only what
// she changed; someone not allowed is refused and nothing changes; a form
// naming a field the ask does not list, or an edit of an ask whose agent
// takes none, is refused with the form kept open.
func TestEditSubmission(t *testing.T) {
	t.Parallel()
	const field = "ask/c1/0/edit/command"
	for _, c := range []struct {
		name   string
		authz  Authorizer
		req    func(string) *waterfall.Request
		values map[string][]string
		said   string // under the field; "" settles
		forged bool   // delivered by hand: the fake's form lacks a field
	}{
		{"allowed", Everyone{}, editableBash, map[string][]string{field: {"rm -rf build/tmp"}}, "", false},
		{"refused", refuseAll{}, editableBash, map[string][]string{field: {"rm -rf /"}}, whyRefused, false},
		{"forged field", Everyone{}, editableBash, map[string][]string{field: {"ls"}, "ask/c1/0/edit/env": {"X=1"}}, textNotOffered, true},
		{"no fields", Everyone{}, func(id string) *waterfall.Request {
			r := editableBash(id)
			r.Permission.Editable = nil
			return r
		}, map[string][]string{field: {"ls"}}, textNoEdit, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := setupDispatchTable(t, c.authz)
			ctx := testCtx(t)
			msg := d.arrange(t, kindCase{req: c.req}, "open")
			viewID := d.openEdit(t, msg)
			resp, err := d.fake.SubmitView(ctx, alice, viewID, c.values, slackfake.Delivery{})
			if c.forged {
				// A field the form never had: only a forger sends it,
				// signed with a stolen secret.
				resp, err = d.fake.Deliver(ctx, forgedEdit(msg, c.values), slackfake.Delivery{})
			}
			if err != nil {
				t.Fatal(err)
			}
			errs := submitErrors(t, resp.Body)
			state, s := d.stateOf(t)
			if c.said != "" {
				if got := errs[field]; !strings.HasPrefix(got, c.said) {
					t.Fatalf("ack %s; want %q under the field", resp.Body, c.said)
				}
				if state == "settled" {
					t.Fatalf("refused edit settled the ask: %+v", s)
				}
				return
			}
			if len(errs) != 0 || state != "settled" {
				t.Fatalf("ack %s, ask %s; want it settled", resp.Body, state)
			}
			it := s.Item(waterfall.PermissionQuestionID)
			if len(it.Selected) != 1 || it.Selected[0] != "Allow" || len(it.Edited) != 1 || it.Edited["command"] != "rm -rf build/tmp" {
				t.Fatalf("settled with %+v, want Allow with the edited command", it)
			}
		})
	}
}

// forgedEdit is a view_submission of an Edit & allow form holding values.
func forgedEdit(msg slackfake.Message, values map[string][]string) map[string]any {
	state := map[string]any{}
	for block, v := range values {
		state[block] = map[string]any{blocks.InputEdit: map[string]any{"type": "plain_text_input", "value": v[0]}}
	}
	meta := blocks.Meta{CallID: "c1", Channel: msg.Channel, TS: msg.TS}
	return map[string]any{"type": "view_submission", "team": map[string]any{"id": "T0TEST"},
		"user": map[string]any{"id": alice.ID, "username": alice.Name},
		"view": map[string]any{"id": "V0FORGED", "type": "modal", "callback_id": blocks.CallbackEdit,
			"private_metadata": meta.Encode(), "state": map[string]any{"values": state}}}
}
