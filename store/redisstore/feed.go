package redisstore

import (
	"strconv"
	"strings"

	"github.com/askslack/askslack/store"
)

// The Feed role (store/feed.go): the change hints every replica hears,
// read off the events channel (Store.listen) into the hub.

// hint hands one change-feed message to the hub: "a:<callId>|<version>"
// from a transition script, any other topic as it is. It also reads the
// ask's and its session's hint in one message, "a:<callId>|<version>|<sessionId>",
// which a later release will publish instead of two (three PUBLISHes an ask,
// each forwarded to every node of a Cluster): replicas must read it before
// any replica sends it, so a rolling update to that release never has a
// replica deaf to the other's hints.
func (r *Store) hint(payload string) {
	if id, rest, ok := strings.Cut(payload, "|"); ok && strings.HasPrefix(id, "a:") {
		ver, session, both := strings.Cut(rest, "|")
		if n, err := strconv.ParseInt(ver, 10, 64); err == nil {
			r.hub.Announce(id[2:], n)
			if both && session != "" {
				r.hub.Publish(store.SessionTopic(session))
			}
			return
		}
	}
	r.hub.Publish(payload)
}

// Changes implements store.Store.
func (r *Store) Changes(callID string) (<-chan struct{}, func()) {
	return r.hub.Subscribe(store.AskTopic(callID))
}

// Heard implements store.Store.
func (r *Store) Heard(callID string) int64 { return r.hub.Heard(callID) }

// SessionChanges implements store.Store.
func (r *Store) SessionChanges(sessionID string) (<-chan struct{}, func()) {
	return r.hub.Subscribe(store.SessionTopic(sessionID))
}

// Released implements store.Store.
func (r *Store) Released() (<-chan struct{}, func()) { return r.hub.Subscribe(store.ReleasedTopic) }
