package slackbot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/engine"
	"github.com/askslack/askslack/store"
)

// FuzzEventAndCommand feeds arbitrary Events API bodies and slash command
// texts through parsing and the bot: nothing may panic, a command's verb is
// always one it knows, help answers in the ack, and a mention's answer
// never starts with a mention of the bot.
func FuzzEventAndCommand(f *testing.F) {
	for _, s := range []string{
		`{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@UBOT> teal","ts":"2.2","channel":"C1","thread_ts":"1.1","event_ts":"2.2"}}`,
		`{"type":"event_callback","event_id":"Ev2","event":{"type":"app_home_opened","user":"U1","channel":"D1","tab":"home","event_ts":"3.3"}}`,
		`{"type":"event_callback","event_id":"Ev3","event":{"type":"app_home_opened","user":"U1","tab":"messages"}}`,
		`{"type":"event_callback","event":{"type":"app_mention","user":"","text":"","channel":"","thread_ts":"1.1"}}`,
		`{"type":"url_verification","challenge":"x"}`,
		`{"type":"event_callback","event":{"type":"message","text":"hi"}}`,
		`{"type":"event_callback","event":null}`,
		`[]`, ``,
	} {
		f.Add([]byte(s), "list")
	}
	f.Add([]byte(`{}`), "status c1")
	f.Add([]byte(`{}`), "  STATUS\tc1  x")
	f.Add([]byte(`{}`), strings.Repeat("status ", 100))
	b := reachFuzzBot(f)
	f.Fuzz(func(t *testing.T, body []byte, text string) {
		b.HandleEvent(context.Background(), body)
		verb, _ := ParseCommand(text)
		if verb != verbHelp && verb != verbList && verb != verbStatus {
			t.Fatalf("verb %q", verb)
		}
		if verb == verbHelp && b.HandleCommand(context.Background(), cmdText(text)) == nil {
			t.Fatal("help must answer in the ack")
		}
		if got := MentionText("<@UBOT> " + text); leadingMention.MatchString(got) && !leadingMention.MatchString(strings.TrimSpace(text)) {
			t.Fatalf("MentionText kept the bot's mention: %q", got)
		}
	})
}

// reachFuzzBot is a bot with a directory over a memory store holding one
// posted question, so mentions and listings reach real asks.
func reachFuzzBot(f *testing.F) *Bot {
	st := store.NewMemory(0, nil)
	host := engine.NewHost(st, nil, engine.HostOptions{})
	b := New(nopAPI{}, host, Options{Channel: "C1", Workers: 1, Directory: st})
	host.Observe(b)
	raw, _ := json.Marshal(yesNo("c1"))
	if _, _, err := st.Create(context.Background(), &asktype.Ask{CallID: "c1", Request: raw, Created: time.Now()}); err != nil {
		f.Fatal(err)
	}
	if _, err := st.SetMessage(context.Background(), "c1", asktype.MessageRef{Conversation: "C1", ID: "1.1"}); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = b.Stop(context.Background()) })
	return b
}

func cmdText(text string) slack.SlashCommand {
	return slack.SlashCommand{Command: "/askslack", Text: text, UserID: "U1", ChannelID: "C1"}
}
