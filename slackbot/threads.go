package slackbot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/asktype"
	"github.com/askslack/askslack/blocks"
	"github.com/askslack/askslack/waterfall"
)

// One thread per agent session (ASKSLACK_THREADS=session): the first
// question of a session posts a parent line ("claude is working on …")
// and every question of the session is a reply in its thread, the first
// also sent to the channel so people see the session start. The parent's
// ts is shared by every replica through the store (Remember: the first
// replica to record a parent wins; a replica that lost the race deletes
// the parent it posted), and cached here once known.
//
// The store keeps, per channel and session, "<parent ts> <callId> <previous
// parent ts>": the question that started the thread (its every attempt is
// the one broadcast to the channel), and the thread before it (a question
// whose post went there just before the store forgot it is still found).

// ThreadBook is what session threads need from the store (store.Reach).
type ThreadBook interface {
	Remember(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error)
	Put(ctx context.Context, key, value string, ttl time.Duration, now time.Time) error
}

// threadTTL is how long a session's thread is remembered: a session that
// asks again after a week starts a new thread.
const threadTTL = 7 * 24 * time.Hour // the store keeps an ended ask as long (store.DefaultRetention)

// threadMeta is the metadata event type on a session's parent line.
const threadMeta = "askslack_session"

// threads caches the parent ts of each channel's session threads, and
// the parent lines this replica posted but could not use yet.
type threads struct {
	mu sync.Mutex
	m  map[string]string // threadKey → parent ts
	// pending are parents posted whose thread could not be recorded
	// (threadKey → ts): the next attempt records or deletes them.
	pending map[string]string
	// orphans are parents that lost the race and whose delete failed:
	// deleted again on the next post (channel → ts).
	orphans []asktype.MessageRef
}

// thread is what the store records of a session's thread.
type thread struct {
	ts      string // the parent line
	starter string // the callId whose question started it
	prev    string // the session's previous thread in the channel, if any
}

func (t thread) String() string { return strings.TrimSpace(t.ts + " " + t.starter + " " + t.prev) }

func parseThread(v string) thread {
	f := strings.Fields(v)
	var t thread
	if len(f) > 0 {
		t.ts = f[0]
	}
	if len(f) > 1 {
		t.starter = f[1]
	}
	if len(f) > 2 {
		t.prev = f[2]
	}
	return t
}

func threadKey(channel, sessionID string) string { return "thread:" + channel + ":" + sessionID }

// lastThreadKey keeps a session's latest thread in a channel a day longer
// than threadTTL, for the record of the thread that follows it.
func lastThreadKey(channel, sessionID string) string {
	return "lastthread:" + channel + ":" + sessionID
}

// threadOf returns the parent ts of a's session thread in channel, posting
// the parent line when the session has none yet (first reports that a's
// question starts the thread: it is broadcast to the channel, on whichever
// attempt). "" when threads are off or a has no session. A parent line an
// earlier attempt posted and could not record (its answer lost, the store
// failing) is used, not left bare beside another.
func (s *Surface) threadOf(ctx context.Context, channel string, a *waterfall.Record, req *waterfall.Request) (ts string, first bool, err error) {
	if s.keeper == nil || a.SessionID == "" {
		return "", false, nil
	}
	s.cleanOrphans(ctx)
	key := threadKey(channel, a.SessionID)
	known, err := s.knownThread(ctx, key)
	if err != nil {
		return "", false, err
	}
	if known.ts != "" {
		if p := s.takePending(key); p != "" && p != known.ts {
			s.deleteMessage(ctx, channel, p)
		}
		return known.ts, known.starter == a.CallID, nil
	}
	parent := s.takePending(key)
	if parent == "" && !a.PostAttempt.IsZero() {
		// An earlier attempt may have posted the parent and died, or lost
		// the answer, before recording it.
		if parent, err = s.findParent(ctx, channel, a.SessionID, a.Created); err != nil {
			return "", false, err
		}
	}
	if parent == "" {
		start := s.now()
		if parent, err = s.postParent(ctx, channel, a.SessionID, req.Agent); err != nil {
			if Permanent(err) {
				return "", false, err
			}
			// The answer may be all that was lost.
			if found, ferr := s.findParent(ctx, channel, a.SessionID, start); ferr != nil || found == "" {
				return "", false, err
			} else {
				parent = found
			}
		}
	}
	prev, err := s.keeper.Remember(ctx, lastThreadKey(channel, a.SessionID), "", threadTTL+threadCacheMargin, s.now())
	if err == nil {
		rec := thread{ts: parent, starter: a.CallID, prev: parseThread(prev).ts}
		var won string
		if won, err = s.keeper.Remember(ctx, key, rec.String(), threadTTL, s.now()); err == nil {
			known = parseThread(won)
		}
	}
	if err != nil {
		// Unknown whether it was recorded: the next attempt reads the
		// store, and records this parent or deletes it.
		s.setPending(key, parent)
		return "", false, fmt.Errorf("slackbot: recording the session thread: %w", err)
	}
	if known.ts != parent {
		// Another replica started the thread a moment earlier: use it.
		s.deleteMessage(ctx, channel, parent)
	} else if err := s.putLast(ctx, channel, a.SessionID, parent); err != nil {
		s.log.Warn("recording the session's latest thread failed", "channel", channel, "session", a.SessionID, "err", err)
	}
	s.cacheThread(key, known)
	return known.ts, known.starter == a.CallID, nil
}

// putLast records parent as the session's latest thread in channel.
func (s *Surface) putLast(ctx context.Context, channel, sessionID, parent string) error {
	return s.keeper.Put(ctx, lastThreadKey(channel, sessionID), parent, threadTTL+threadCacheMargin, s.now())
}

func (s *Surface) takePending(key string) string {
	s.threads.mu.Lock()
	defer s.threads.mu.Unlock()
	p := s.threads.pending[key]
	delete(s.threads.pending, key)
	return p
}

func (s *Surface) setPending(key, ts string) {
	s.threads.mu.Lock()
	defer s.threads.mu.Unlock()
	if s.threads.pending == nil {
		s.threads.pending = map[string]string{}
	}
	s.threads.pending[key] = ts
}

// findParent looks for a parent line of session in channel posted at or
// after since (less a minute for clock skew) that no thread was recorded
// for: "" when there is none.
func (s *Surface) findParent(ctx context.Context, channel, sessionID string, since time.Time) (string, error) {
	p := &slack.GetConversationHistoryParameters{ChannelID: channel, Oldest: slackTS(since.Add(-time.Minute)), Limit: 200, IncludeAllMetadata: true}
	for range historyPages {
		var res *slack.GetConversationHistoryResponse
		err := call(ctx, s.caller, defaultRetry, "conversations.history", func(ctx context.Context) error {
			var err error
			res, err = s.api.GetConversationHistoryContext(ctx, p)
			return err
		})
		if err != nil {
			return "", err
		}
		// Newest first: the last parent posted is the one to use.
		for _, m := range res.Messages {
			if m.Metadata.EventType == threadMeta && fmt.Sprint(m.Metadata.EventPayload["sessionId"]) == sessionID && m.ReplyCount == 0 {
				return m.Timestamp, nil
			}
		}
		if !res.HasMore || res.ResponseMetaData.NextCursor == "" {
			break
		}
		p.Cursor = res.ResponseMetaData.NextCursor
	}
	return "", nil
}

// cleanOrphans deletes again the parents whose delete failed.
func (s *Surface) cleanOrphans(ctx context.Context) {
	s.threads.mu.Lock()
	orphans := s.threads.orphans
	s.threads.orphans = nil
	s.threads.mu.Unlock()
	for _, o := range orphans {
		s.deleteMessage(ctx, o.Conversation, o.ID)
	}
}

// knownThread is the thread recorded for key, from the cache or the store.
func (s *Surface) knownThread(ctx context.Context, key string) (thread, error) {
	s.threads.mu.Lock()
	v := s.threads.m[key]
	t := parseThread(v)
	if v != "" && !s.cacheable(t.ts) {
		delete(s.threads.m, key)
		t = thread{}
	}
	s.threads.mu.Unlock()
	if t.ts != "" {
		return t, nil
	}
	v, err := s.keeper.Remember(ctx, key, "", threadTTL, s.now())
	if err != nil {
		return thread{}, fmt.Errorf("slackbot: reading the session thread: %w", err)
	}
	t = parseThread(v)
	if t.ts != "" {
		s.cacheThread(key, t)
	}
	return t, nil
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

func (s *Surface) cacheThread(key string, t thread) {
	if !s.cacheable(t.ts) {
		return
	}
	s.threads.mu.Lock()
	defer s.threads.mu.Unlock()
	if s.threads.m == nil || len(s.threads.m) >= maxCachedThreads {
		s.threads.m = map[string]string{} // the store remembers; the cache only saves reads
	}
	s.threads.m[key] = t.String()
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
	err := call(ctx, s.caller, postPolicy, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// deleteMessage removes a parent line the bot posted in vain. One whose
// delete failed for now is deleted again on the next post.
func (s *Surface) deleteMessage(ctx context.Context, channel, ts string) {
	err := call(ctx, s.caller, defaultRetry, "chat.delete", func(ctx context.Context) error {
		_, _, err := s.api.DeleteMessageContext(ctx, channel, ts)
		return err
	})
	if err == nil || Permanent(err) {
		if err != nil && SlackError(err) != "message_not_found" {
			s.log.Warn("deleting a duplicate session thread failed for good", "channel", channel, "ts", ts, "slackError", SlackError(err))
		}
		return
	}
	s.log.Warn("deleting a duplicate session thread failed; trying again on the next post", "channel", channel, "ts", ts, "err", err)
	s.threads.mu.Lock()
	defer s.threads.mu.Unlock()
	if len(s.threads.orphans) < maxCachedThreads {
		s.threads.orphans = append(s.threads.orphans, asktype.MessageRef{Conversation: channel, ID: ts})
	}
}

// findInThread looks for a's message among the replies of thread posted at
// or after since (less a minute for clock skew): Slack lists a thread
// oldest first, and a long session's thread has more than the pages read.
func (s *Surface) findInThread(ctx context.Context, channel, thread string, a *waterfall.Record, since time.Time) (asktype.MessageRef, bool, error) {
	p := &slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread, Limit: 200, IncludeAllMetadata: true,
		Oldest: slackTS(since.Add(-time.Minute))}
	for range historyPages {
		var msgs []slack.Message
		var more bool
		var next string
		err := call(ctx, s.caller, defaultRetry, "conversations.replies", func(ctx context.Context) error {
			var err error
			msgs, more, next, err = s.api.GetConversationRepliesContext(ctx, p)
			return err
		})
		if err != nil {
			return asktype.MessageRef{}, false, err
		}
		if m, ok := carrying(msgs, a.CallID); ok {
			return asktype.MessageRef{Surface: waterfall.SurfaceSlack, Conversation: channel, ID: m.Timestamp, Thread: thread}, true, nil
		}
		if !more || next == "" {
			break
		}
		p.Cursor = next
	}
	return asktype.MessageRef{}, false, nil
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
