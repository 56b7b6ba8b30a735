package slackbot

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/store"
	"github.com/askslack/askslack/waterfall"
)

// One thread per agent session (ASKSLACK_THREADS=session): the first
// question of a session posts a parent line ("claude is working on …")
// and every question of the session is a reply in its thread, the first
// also sent to the channel so people see the session start. The parent's
// ts is shared by every replica through the store (Remember: the first
// replica to record a parent wins; a replica that lost the race deletes
// the parent it posted), and cached here once known.

// Keeper is what session threads need from the store.
type Keeper interface {
	Remember(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error)
}

// threadTTL is how long a session's thread is remembered: a session that
// asks again after a week starts a new thread.
const threadTTL = store.DefaultRetention

// threadMeta is the metadata event type on a session's parent line.
const threadMeta = "askslack_session"

// threads caches the parent ts of each channel's session threads.
type threads struct {
	mu sync.Mutex
	m  map[string]string // threadKey → parent ts
}

func threadKey(channel, sessionID string) string { return "thread:" + channel + ":" + sessionID }

// threadOf returns the parent ts of a's session thread in channel, posting
// the parent line when the session has none yet (first reports that this
// call started the thread: its question is broadcast to the channel). ""
// when threads are off or a has no session.
func (s *Surface) threadOf(ctx context.Context, channel string, a *store.Ask, req *waterfall.Request) (ts string, first bool, err error) {
	if s.keeper == nil || a.SessionID == "" {
		return "", false, nil
	}
	key := threadKey(channel, a.SessionID)
	if ts, err := s.knownThread(ctx, key); ts != "" || err != nil {
		return ts, false, err
	}
	parent, err := s.postParent(ctx, channel, a.SessionID, req.Agent)
	if err != nil {
		return "", false, err
	}
	won, err := s.keeper.Remember(ctx, key, parent, threadTTL, s.now())
	if err != nil {
		// Unknown whether it was recorded: the question waits for a retry,
		// which will find the winner; this parent may stay as a bare line.
		return "", false, fmt.Errorf("slackbot: recording the session thread: %w", err)
	}
	if won != parent {
		// Another replica started the thread a moment earlier: use it.
		s.deleteMessage(ctx, channel, parent)
	}
	s.cacheThread(key, won)
	return won, won == parent, nil
}

// knownThread is the thread recorded for key, from the cache or the store.
func (s *Surface) knownThread(ctx context.Context, key string) (string, error) {
	s.threads.mu.Lock()
	ts := s.threads.m[key]
	if ts != "" && !s.cacheable(ts) {
		delete(s.threads.m, key)
		ts = ""
	}
	s.threads.mu.Unlock()
	if ts != "" {
		return ts, nil
	}
	ts, err := s.keeper.Remember(ctx, key, "", threadTTL, s.now())
	if err != nil {
		return "", fmt.Errorf("slackbot: reading the session thread: %w", err)
	}
	if ts != "" {
		s.cacheThread(key, ts)
	}
	return ts, nil
}

// threadCacheMargin: a cached thread is dropped this long before the store
// forgets it (threadTTL after its parent was posted), so that every replica
// asks the store again before one of them may start the session's next
// thread, and none keeps posting into the old one from its cache.
const threadCacheMargin = 24 * time.Hour

// cacheable reports whether the thread whose parent is ts is young enough
// to be kept in the cache; a parent ts is when it was posted.
func (s *Surface) cacheable(ts string) bool {
	secs, err := strconv.ParseFloat(ts, 64)
	return err == nil && s.now().Sub(time.Unix(int64(secs), 0)) < threadTTL-threadCacheMargin
}

func (s *Surface) cacheThread(key, ts string) {
	if !s.cacheable(ts) {
		return
	}
	s.threads.mu.Lock()
	defer s.threads.mu.Unlock()
	if s.threads.m == nil || len(s.threads.m) >= maxCachedThreads {
		s.threads.m = map[string]string{} // the store remembers; the cache only saves reads
	}
	s.threads.m[key] = ts
}

// maxCachedThreads bounds the cache of session threads.
const maxCachedThreads = 10000

// postParent posts a session's parent line.
func (s *Surface) postParent(ctx context.Context, channel, sessionID string, agent waterfall.Agent) (string, error) {
	msg := blocks.SessionThread(agent)
	opts := append(msgOptions(msg), slack.MsgOptionMetadata(slack.SlackMetadata{
		EventType: threadMeta, EventPayload: map[string]any{"sessionId": sessionID},
	}))
	var ts string
	err := call(ctx, s.metrics, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// deleteMessage removes a message the bot posted in vain; failing is only
// logged (a bare parent line misleads nobody).
func (s *Surface) deleteMessage(ctx context.Context, channel, ts string) {
	err := call(ctx, s.metrics, defaultRetry, "chat.delete", func(ctx context.Context) error {
		_, _, err := s.api.DeleteMessageContext(ctx, channel, ts)
		return err
	})
	if err != nil {
		s.log.Warn("deleting a duplicate session thread failed", "channel", channel, "ts", ts, "err", err)
	}
}

// findInThread looks for a's message among the replies of thread posted at
// or after since (less a minute for clock skew): Slack lists a thread
// oldest first, and a long session's thread has more than the pages read.
func (s *Surface) findInThread(ctx context.Context, channel, thread string, a *store.Ask, since time.Time) (store.MessageRef, bool, error) {
	p := &slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread, Limit: 200, IncludeAllMetadata: true,
		Oldest: slackTS(since.Add(-time.Minute))}
	for range historyPages {
		var msgs []slack.Message
		var more bool
		var next string
		err := call(ctx, s.metrics, defaultRetry, "conversations.replies", func(ctx context.Context) error {
			var err error
			msgs, more, next, err = s.api.GetConversationRepliesContext(ctx, p)
			return err
		})
		if err != nil {
			return store.MessageRef{}, false, err
		}
		if m, ok := carrying(msgs, a.CallID); ok {
			return store.MessageRef{Channel: channel, TS: m.Timestamp, Thread: thread}, true, nil
		}
		if !more || next == "" {
			break
		}
		p.Cursor = next
	}
	return store.MessageRef{}, false, nil
}

// carrying finds the question message of callID among msgs.
func carrying(msgs []slack.Message, callID string) (slack.Message, bool) {
	for _, m := range msgs {
		if m.Metadata.EventType == metaEvent && fmt.Sprint(m.Metadata.EventPayload["callId"]) == callID {
			return m, true
		}
	}
	return slack.Message{}, false
}
