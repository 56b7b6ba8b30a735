package slackbot

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/slack-go/slack"
)

// used is every field of an interaction the dispatcher reads.
type used struct {
	Type                                   slack.InteractionType
	TriggerID, ResponseURL, UserID, UserNm string
	ChannelID, MessageTS                   string
	Container                              slack.Container
	Actions                                []*slack.BlockAction
	State                                  *slack.BlockActionStates
	ViewID, ViewCallback, ViewMeta, Hash   string
	ViewState                              *slack.ViewState
}

func usedOf(ic *slack.InteractionCallback) used {
	acts := ic.ActionCallback.BlockActions
	if len(acts) == 0 {
		acts = nil // empty or absent: the same to the dispatcher
	}
	return used{ic.Type, ic.TriggerID, ic.ResponseURL, ic.User.ID, userName(ic.User),
		ic.Channel.ID, ic.Message.Timestamp, ic.Container, acts, ic.BlockActionState,
		ic.View.ID, ic.View.CallbackID, ic.View.PrivateMetadata, ic.View.Hash, ic.View.State}
}

// checkLeanParse: wherever slack-go decodes a payload, the lean parser
// decodes it too, to the same fields.
func checkLeanParse(t *testing.T, payload []byte) {
	t.Helper()
	var full slack.InteractionCallback
	if err := json.Unmarshal(payload, &full); err != nil {
		return
	}
	lean, err := parseInteraction([]byte("payload=" + url.QueryEscape(string(payload))))
	if err != nil {
		t.Fatalf("lean parse failed where slack-go succeeded: %v", err)
	}
	if got, want := usedOf(lean), usedOf(&full); !reflect.DeepEqual(got, want) {
		t.Fatalf("lean parse differs from slack-go:\n got %+v\nwant %+v", got, want)
	}
}

// Slack's real payloads decode to the same fields as with slack-go.
func TestLeanParseMatchesSlackGo(t *testing.T) {
	paths, _ := filepath.Glob("../internal/slackfake/testdata/*.json") // Slack's documented samples
	n := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var probe struct{ Type string }
		if json.Unmarshal(b, &probe) != nil || probe.Type == "" {
			continue // not an interaction (Socket Mode frames)
		}
		n++
		t.Run(filepath.Base(p), func(t *testing.T) { checkLeanParse(t, b) })
	}
	if n < 3 {
		t.Fatalf("only %d payload samples found", n)
	}
	if _, err := parseInteraction([]byte("nopayload=1")); err == nil {
		t.Fatal("a body without a payload parsed")
	}
	if _, err := parseInteraction([]byte("payload=%7Bnot+json")); err == nil {
		t.Fatal("a payload that is not JSON parsed")
	}
}

// FuzzLeanParse: no payload slack-go decodes comes out different.
func FuzzLeanParse(f *testing.F) {
	for _, s := range []string{
		`{"type":"block_actions","user":{"id":"U1","name":"al"},"container":{"type":"message","channel_id":"C1","message_ts":"1.1"},"channel":{"id":"C1"},"message":{"ts":"1.1","blocks":[{"type":"divider"}]},"trigger_id":"t","actions":[{"type":"button","action_id":"askslack.pick.1","block_id":"ask/c1/0","value":"1"}]}`,
		`{"type":"view_submission","user":{"id":"U1"},"view":{"id":"V1","hash":"h","callback_id":"askslack.other","private_metadata":"{}","state":{"values":{"a":{"b":{"type":"plain_text_input","value":"x"}}}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) { checkLeanParse(t, payload) })
}

// BenchmarkParseInteraction: Slack's sample click, as the HTTP handler
// gets it, through slack-go and through the lean parser.
func BenchmarkParseInteraction(b *testing.B) {
	raw, err := os.ReadFile("../internal/slackfake/testdata/block_actions_button.json")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte("payload=" + url.QueryEscape(string(raw)))
	b.Run("slack-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			form, _ := url.ParseQuery(string(body))
			var ic slack.InteractionCallback
			if err := json.Unmarshal([]byte(form.Get("payload")), &ic); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lean", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseInteraction(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// formValue reads a form body as url.ParseQuery does, for the one field.
func TestFormValueMatchesParseQuery(t *testing.T) {
	for _, body := range []string{
		"payload=%7B%22a%22%3A1%7D", "token=x&payload=a+b%20c&payload=second", "pay%6Coad=escaped+key",
		"payload=", "payload", "other=1", "", "payload=%e2%9c%85%E2%9C%85", "a=1&&payload=after+empty+pair",
	} {
		want := ""
		if q, err := url.ParseQuery(body); err == nil {
			want = q.Get("payload")
		}
		got, err := formValue([]byte(body), "payload")
		if err != nil || string(got) != want {
			t.Errorf("formValue(%q) = %q, %v; ParseQuery says %q", body, got, err, want)
		}
	}
	for _, bad := range []string{"payload=%", "payload=%4", "payload=%zz", "payload=ok%2"} {
		if _, err := formValue([]byte(bad), "payload"); err == nil {
			t.Errorf("formValue(%q) accepted a broken escape", bad)
		}
	}
}
