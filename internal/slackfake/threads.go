package slackfake

import (
	"sort"
	"strconv"
)

// Threads: conversations.replies, as Slack serves it.

func init() {
	apiMethods["conversations.replies"] = (*Server).conversationsReplies
}

// conversationsReplies lists a thread oldest first: its parent, then the
// replies after oldest (exclusive unless inclusive), in pages of limit
// (default 1000) that follow response_metadata.next_cursor. The parent
// carries reply_count; with include_all_metadata every message carries its
// metadata. A ts that is no message is thread_not_found.
func (s *Server) conversationsReplies(p map[string]string) reply {
	ch, ts := p["channel"], p["ts"]
	if !s.channelExistsLocked(ch) {
		return fail("channel_not_found")
	}
	parent, found := s.messages[msgKey{ch, ts}]
	if !found || parent.ThreadTS != "" {
		return fail("thread_not_found")
	}
	var replies []*Message
	for _, m := range s.messages {
		if m.Channel == ch && m.ThreadTS == ts {
			replies = append(replies, m)
		}
	}
	sort.Slice(replies, func(i, j int) bool { return tsAfter(replies[j].TS, replies[i].TS) })
	thread := append([]*Message{parent}, replies...)
	if o := p["oldest"]; o != "" {
		thread = filterAfter(thread, o, truthy(p["inclusive"]))
	}
	if c := p["cursor"]; c != "" {
		thread = filterAfter(thread, c, false) // the cursor is the last ts of the previous page
	}
	limit, err := strconv.Atoi(p["limit"])
	if err != nil || limit <= 0 || limit > 1000 {
		limit = 1000
	}
	return s.messagePage(thread, limit, truthy(p["include_all_metadata"]), func(m *Message, j map[string]any) {
		if m == parent {
			j["thread_ts"] = ts
			j["reply_count"] = len(replies)
		}
	})
}

// filterAfter keeps the messages after ts (or at it, with inclusive).
func filterAfter(ms []*Message, ts string, inclusive bool) []*Message {
	var out []*Message
	for _, m := range ms {
		if tsAfter(m.TS, ts) || (inclusive && m.TS == ts) {
			out = append(out, m)
		}
	}
	return out
}
