package slackbot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/mirror"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// nopAPI answers every Web API call successfully without a network; the
// fuzz target exercises parsing and dispatch, not Slack.
type nopAPI struct{}

func (nopAPI) PostMessageContext(context.Context, string, ...slack.MsgOption) (string, string, error) {
	return "C1", "1700000000.000100", nil
}
func (nopAPI) UpdateMessageContext(context.Context, string, string, ...slack.MsgOption) (string, string, string, error) {
	return "C1", "1700000000.000100", "", nil
}
func (nopAPI) PostEphemeralContext(context.Context, string, string, ...slack.MsgOption) (string, error) {
	return "1700000000.000200", nil
}
func (nopAPI) OpenViewContext(context.Context, string, slack.ModalViewRequest) (*slack.ViewResponse, error) {
	return &slack.ViewResponse{}, nil
}
func (nopAPI) PushViewContext(context.Context, string, slack.ModalViewRequest) (*slack.ViewResponse, error) {
	return &slack.ViewResponse{}, nil
}
func (nopAPI) UpdateViewContext(context.Context, slack.ModalViewRequest, string, string, string) (*slack.ViewResponse, error) {
	return &slack.ViewResponse{}, nil
}
func (nopAPI) GetUserGroupMembersContext(context.Context, string, ...slack.GetUserGroupMembersOption) ([]string, error) {
	return nil, nil
}
func (nopAPI) GetUserByEmailContext(context.Context, string) (*slack.User, error) { return nil, nil }
func (nopAPI) OpenConversationContext(context.Context, *slack.OpenConversationParameters) (*slack.Channel, bool, bool, error) {
	return &slack.Channel{}, false, false, nil
}
func (nopAPI) GetConversationRepliesContext(context.Context, *slack.GetConversationRepliesParameters) ([]slack.Message, bool, string, error) {
	return nil, false, "", nil
}
func (nopAPI) DeleteMessageContext(context.Context, string, string) (string, string, error) {
	return "", "", nil
}
func (nopAPI) GetConversationHistoryContext(context.Context, *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error) {
	return &slack.GetConversationHistoryResponse{}, nil
}

// fuzzBot is a bot over a memory store holding one ask of each shape, so
// decoded actions reach real questions.
func fuzzBot(t testing.TB) *Bot {
	st := store.NewMemory(0, nil)
	host := engine.NewHost(st, nil, engine.HostOptions{})
	m := mirror.New(st, NewSurface(nopAPI{}, SurfaceOptions{Channel: "C1"}), mirror.Options{Workers: 1})
	host.Observe(m)
	b := New(nopAPI{}, host, Options{Channel: "C1", Workers: 1, Mirror: m})
	reqs := []waterfall.Request{
		{CallID: "c1", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{ID: "q", Question: "?", Options: []waterfall.Option{{Label: "A"}, {Label: "B"}}}}},
		{CallID: "c2", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{
			{ID: "m", Question: "?", MultiSelect: true, Options: []waterfall.Option{{Label: "X"}, {Label: "Y"}}},
			{ID: "s", Question: "?", Options: []waterfall.Option{{Label: "P"}}},
		}},
		{CallID: "c3", Agent: waterfall.Agent{ID: "a"}, Questions: []waterfall.Question{{ID: "p", Question: "?", Detail: "plan",
			Options: []waterfall.Option{{Label: "Go"}, {Label: "No"}}, Intent: &waterfall.Intent{Kind: waterfall.IntentPlanReview, Approve: "Go"}}}},
	}
	for i := range reqs {
		raw, _ := json.Marshal(&reqs[i])
		if _, _, err := st.Create(context.Background(), &asktype.Ask{CallID: reqs[i].CallID, Request: raw, Created: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SetMessage(context.Background(), reqs[i].CallID, asktype.MessageRef{Conversation: "C1", ID: "1.1"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = b.Stop(context.Background())
		_ = m.Stop(context.Background())
	})
	return b
}

// FuzzInteraction feeds arbitrary interaction payloads (the JSON of the
// `payload` form field / Socket Mode envelope) through parsing and the
// dispatcher: nothing may panic, and a view_submission always gets an ack
// Slack accepts (nothing, or response_action errors).
func FuzzInteraction(f *testing.F) {
	samples, _ := filepath.Glob("../internal/slackfake/testdata/*.json") // Slack's documented samples
	local, _ := filepath.Glob("testdata/payloads/*.json")
	for _, p := range append(samples, local...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"type":"block_actions","user":{"id":"U1"},"container":{"type":"message","channel_id":"C1","message_ts":"1.1"},"trigger_id":"t","actions":[{"type":"button","action_id":"askslack.pick.1","block_id":"ask/c1/0","value":"1"}]}`,
		`{"type":"block_actions","user":{"id":"U1"},"container":{"type":"message","channel_id":"C1","message_ts":"1.1"},"actions":[{"type":"button","action_id":"askslack.submit","block_id":"ask/c2/-1/submit","value":"submit"}],"state":{"values":{"ask/c2/0":{"askslack.check":{"type":"checkboxes","selected_options":[{"value":"1"},{"value":"0"}]}},"ask/c2/1":{"askslack.select":{"type":"radio_buttons","selected_option":{"value":"0"}}}}}}`,
		`{"type":"block_actions","user":{"id":"U1"},"actions":[{"type":"static_select","action_id":"askslack.select","block_id":"ask/c1/0","selected_option":{"value":"9"}}]}`,
		`{"type":"view_submission","user":{"id":"U1"},"view":{"callback_id":"askslack.other","private_metadata":"{\"c\":\"c1\",\"q\":0}","state":{"values":{"ask/c1/0/text":{"askslack.text":{"type":"plain_text_input","value":"mine"}}}}}}`,
		`{"type":"view_submission","user":{"id":"U1"},"view":{"callback_id":"askslack.decline","private_metadata":"{\"c\":\"c3\",\"q\":0}","state":{"values":{"ask/c3/0/text":{"askslack.text":{"type":"plain_text_input","value":" "}}}}}}`,
		`{"type":"view_submission","user":{"id":"U1"},"view":{"callback_id":"askslack.other","private_metadata":"{\"c\":\"c2\",\"q\":-1}","state":{"values":{"ask/c2/0/choice":{"askslack.choices":{"type":"checkboxes","selected_options":[{"value":"1"}]}}}}}}`,
		`{"type":"view_closed","user":{"id":"U1"},"view":{"callback_id":"askslack.other"}}`,
		// Impossible ids: an ask-wide block (-1) on actions that need a question.
		`{"type":"block_actions","user":{"id":"U1"},"container":{"type":"message","channel_id":"C1","message_ts":"1.1"},"actions":[{"type":"button","action_id":"askslack.pick.0","block_id":"ask/c1/-1","value":"0"}]}`,
		`{"type":"block_actions","user":{"id":"U1"},"actions":[{"type":"static_select","action_id":"askslack.select","block_id":"ask/c1/-1","selected_option":{"value":"0"}}]}`,
		`{"type":"block_actions","user":{"id":"U1"},"actions":[{"type":"button","action_id":"askslack.decline","block_id":"ask/c3/-1","value":"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	b := fuzzBot(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		var ic slack.InteractionCallback
		if err := json.Unmarshal(payload, &ic); err != nil {
			return
		}
		ctx := context.Background()
		switch ic.Type {
		case slack.InteractionTypeBlockActions:
			b.blockActions(ctx, &ic) // synchronously, so a panic is this input's
		default:
			ack := b.Handle(ctx, &ic)
			if ack == nil {
				return
			}
			r, ok := ack.(*slack.ViewSubmissionResponse)
			if !ok || r.ResponseAction != slack.RAErrors || len(r.Errors) == 0 {
				t.Fatalf("ack %#v is not one Slack accepts", ack)
			}
			for k, v := range r.Errors {
				if len(k) > 255 || v == "" {
					t.Fatalf("bad field error %q: %q", k, v)
				}
			}
		}
	})
}
func (nopAPI) PublishViewContext(context.Context, slack.PublishViewContextRequest) (*slack.ViewResponse, error) {
	return &slack.ViewResponse{}, nil
}
func (nopAPI) GetPermalinkContext(context.Context, *slack.PermalinkParameters) (string, error) {
	return "", nil
}
func (nopAPI) AddReactionContext(context.Context, string, slack.ItemRef) error { return nil }
