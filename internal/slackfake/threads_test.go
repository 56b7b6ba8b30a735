package slackfake

import (
	"testing"

	"github.com/slack-go/slack"
)

func TestThreadRepliesAndBroadcasts(t *testing.T) {
	_, api := setup(t, Options{Channels: []string{"C1"}})
	ctx := testCtx(t)
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("parent", false))
	if err != nil {
		t.Fatal(err)
	}
	meta := slack.MsgOptionMetadata(slack.SlackMetadata{EventType: "askslack_question", EventPayload: map[string]any{"callId": "c2"}})
	_, first, _ := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("first", false), slack.MsgOptionTS(parent), slack.MsgOptionBroadcast())
	_, second, _ := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("second", false), slack.MsgOptionTS(parent), meta)

	hist, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	var top []string
	for _, m := range hist.Messages {
		top = append(top, m.Text+"/"+m.SubType)
	}
	if len(top) != 2 || top[0] != "first/thread_broadcast" || top[1] != "parent/" {
		t.Fatalf("history = %v; want the broadcast reply and the parent, not the plain reply", top)
	}

	msgs, more, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, IncludeAllMetadata: true})
	if err != nil || more || len(msgs) != 3 {
		t.Fatalf("replies = %d messages, more %v, %v", len(msgs), more, err)
	}
	if msgs[0].Timestamp != parent || msgs[0].ReplyCount != 2 || msgs[1].Timestamp != first || msgs[2].Timestamp != second {
		t.Fatalf("replies out of order: %+v", msgs)
	}
	if msgs[2].Metadata.EventType != "askslack_question" || msgs[2].Metadata.EventPayload["callId"] != "c2" || msgs[2].ThreadTimestamp != parent {
		t.Fatalf("reply metadata = %+v, thread %q", msgs[2].Metadata, msgs[2].ThreadTimestamp)
	}
	page, more, cursor, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, Limit: 2})
	if err != nil || !more || len(page) != 2 {
		t.Fatalf("first page = %d, more %v, %v", len(page), more, err)
	}
	page, more, _, err = api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent, Limit: 2, Cursor: cursor})
	if err != nil || more || len(page) != 1 || page[0].Timestamp != second {
		t.Fatalf("second page = %+v, more %v, %v", page, more, err)
	}
	if _, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: "9.9"}); err == nil || err.Error() != "thread_not_found" {
		t.Fatalf("missing thread: %v", err)
	}
}
