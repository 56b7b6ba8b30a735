package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/hostapi"
	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

// editableAsk is a tool permission from an API caller whose agent takes an
// edited command.
func editableAsk(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "deployer", SessionID: "s-" + callID},
		Questions: []waterfall.Question{{ID: waterfall.PermissionQuestionID, Header: "Bash", Question: "deployer wants to run a command. Allow it?",
			Options: []waterfall.Option{{Label: "Allow"}, {Label: "Deny"}}}},
		Permission: &waterfall.Permission{Tool: "Bash", Command: "kubectl delete ns staging", Repo: "infra",
			Editable: []waterfall.EditableField{{Name: "command", Label: "Command", Value: "kubectl delete ns staging", Of: waterfall.OfCommand}}}}
}

// TestE2EEditAndAllowRefusals: Edit & allow through the host API, for any
// caller. Nobody the gate does not admit can edit: carol (not allowed) is
// refused at the button and with a forged submission, the agent cannot
// answer with an edit, an answer surface cannot edit a field the ask does
// not list or edit into a Deny; alice's edit reaches the agent as
// answers[].edited and the audit trail holds the diff.
func TestE2EEditAndAllowRefusals(t *testing.T) {
	t.Parallel()
	d, b := trustDeployment(t, "ASKSLACK_QUORUM", "permission:Bash(kubectl apply *)=2")
	ctx := testCtx(t)
	askAsyncAs(t, b, bobLaptop, editableAsk("edit-1"))
	m := waitPosted(t, ctx, d.fake, "edit-1")
	mustContain(t, "the message", string(m.Blocks), "Edit & allow…")

	t.Run("carol, not allowed, gets no form", func(t *testing.T) {
		if _, err := d.fake.ClickButton(ctx, carol, m.Channel, m.TS, "Edit & allow…", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		waitEphemeral(t, ctx, d.fake, carol.ID, "")
		if vs := d.fake.OpenViews(carol.ID); len(vs) != 0 {
			t.Fatalf("carol got a form: %s", vs[0].JSON)
		}
	})
	t.Run("carol's forged submission is refused and audited", func(t *testing.T) {
		meta := blocks.Meta{CallID: "edit-1", Channel: m.Channel, TS: m.TS}
		payload := map[string]any{"type": "view_submission", "team": map[string]any{"id": "T0TEST"},
			"user": map[string]any{"id": carol.ID, "username": carol.Name},
			"view": map[string]any{"id": "V0FORGED", "type": "modal", "callback_id": blocks.CallbackEdit, "private_metadata": meta.Encode(),
				"state": map[string]any{"values": map[string]any{blocks.EditBlockID("edit-1", "command"): map[string]any{
					blocks.InputEdit: map[string]any{"type": "plain_text_input", "value": "kubectl delete ns production"}}}}}}
		resp, err := d.fake.Deliver(ctx, payload, slackfake.Delivery{})
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "the ack", string(resp.Body), `"response_action":"errors"`)
		if code, body := api(t, b, "GET", "/v1/asks/edit-1", opsToken, ""); !strings.Contains(body, `"state":"open"`) {
			t.Fatalf("after carol's forged edit: %d %s", code, body)
		}
		_, trail := api(t, b, "GET", "/v1/audit?callId=edit-1", opsToken, "")
		mustContain(t, "the audit trail", trail, `"event":"refused"`, carol.ID)
	})
	t.Run("the agent cannot answer its own gate with an edit", func(t *testing.T) {
		code, body := api(t, b, "POST", "/v1/asks/edit-1/answer", bobLaptop,
			`{"answers":[{"id":"permission","selected":["Allow"],"edited":{"command":"kubectl get ns"}}]}`)
		wantCode(t, "the agent's edit", code, body, 403, "FORBIDDEN")
	})
	t.Run("an answer surface edits only what the ask lists, and only into Allow", func(t *testing.T) {
		for _, body := range []string{
			`{"answers":[{"id":"permission","selected":["Allow"],"edited":{"env":"PROD=1"}}]}`,
			`{"answers":[{"id":"permission","selected":["Deny"],"edited":{"command":"ls"}}]}`,
		} {
			code, resp := api(t, b, "POST", "/v1/asks/edit-1/answer", consoleTok, body)
			wantCode(t, "console "+body, code, resp, 400, "BAD_ANSWER")
		}
	})
	t.Run("an edit into a call that needs two approvals is refused, the form kept open", func(t *testing.T) {
		if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Edit & allow…", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		view := waitView(t, ctx, d.fake, alice.ID, blocks.CallbackEdit)
		resp, err := d.fake.SubmitView(ctx, alice, view.ID, map[string][]string{
			blocks.EditBlockID("edit-1", "command"): {"kubectl apply -f prod.yaml"}}, slackfake.Delivery{})
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "the ack", string(resp.Body), `"response_action":"errors"`, "needs 2 approvals")
		if code, body := api(t, b, "GET", "/v1/asks/edit-1", opsToken, ""); !strings.Contains(body, `"state":"open"`) {
			t.Fatalf("after the refused edit: %d %s", code, body)
		}
		if _, err := d.fake.CloseView(ctx, alice, view.ID, slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("alice's edit reaches the agent and the trail", func(t *testing.T) {
		if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "Edit & allow…", slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		view := waitView(t, ctx, d.fake, alice.ID, blocks.CallbackEdit)
		if _, err := d.fake.SubmitView(ctx, alice, view.ID, map[string][]string{
			blocks.EditBlockID("edit-1", "command"): {"kubectl delete ns staging-old"}}, slackfake.Delivery{}); err != nil {
			t.Fatal(err)
		}
		code, body := api(t, b, "GET", "/v1/asks/edit-1?waitMs=20000", bobLaptop, "")
		var st hostapi.Status
		if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
			t.Fatalf("status: %d %v %s", code, err, body)
		}
		if len(st.Answers) != 1 || st.Answers[0].Edited["command"] != "kubectl delete ns staging-old" || st.Answers[0].Selected[0] != "Allow" {
			t.Fatalf("the agent got %s; want Allow with the edited command", body)
		}
		_, trail := api(t, b, "GET", "/v1/audit?callId=edit-1", opsToken, "")
		mustContain(t, "the audit trail", trail, `"event":"answered"`, `allowed with changes\ncommand (new value sha256:`,
			`):\n- kubectl delete ns staging\n+ kubectl delete ns staging-old`)
		done := waitMessage(t, ctx, d.fake, m.Channel, m.TS, "allowed with changes", func(m slackfake.Message) bool { return !hasControls(m) })
		mustContain(t, "the answered message", string(done.Blocks), "Allowed with changes by <@"+alice.ID+">")
	})
}
