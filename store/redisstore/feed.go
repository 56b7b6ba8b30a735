package redisstore

import (
	"strconv"
	"strings"

	"github.com/askslack/askslack/store"
)

// The Feed role (store/feed.go): the change hints every replica hears,
// read off the events channel (Store.listen) into the hub.

// hint hands one change-feed message to the hub: "a:<callId>|<version>"
// from a transition script, any other topic as it is, and the ask's and
// its session's hint in one message, "a:<callId>|<version>|<sessionId>",
// which transition scripts publish since the release after fc987cc (fc987cc
// reads it; its own scripts still send "a:…|<version>" and "s:<sessionId>",
// which this reads too, so a rolling update has no replica deaf to the
// other's hints).
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
