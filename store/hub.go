package store

import "sync"

// Hub fans change hints out to local subscribers; every store uses one, fed
// by its own change feed. Each subscriber channel has a buffer of one, so a
// burst of changes coalesces into one wake-up and a slow reader never blocks
// a publisher. The zero Hub is ready to use.
type Hub struct {
	mu      sync.Mutex
	subs    map[string]map[chan struct{}]struct{}
	watches map[string]*watch // by call id; see watch.go
	seen    map[string]int64  // newest versions noted, this generation
	seenOld map[string]int64  // and the one before
}

// Subscribe returns a channel woken on every hint of topic, and its stop.
func (h *Hub) Subscribe(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[string]map[chan struct{}]struct{})
	}
	if h.subs[topic] == nil {
		h.subs[topic] = make(map[chan struct{}]struct{})
	}
	h.subs[topic][ch] = struct{}{}
	h.watchAdd(topic)
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs[topic], ch)
			if len(h.subs[topic]) == 0 {
				delete(h.subs, topic)
			}
			h.watchDone(topic)
			h.mu.Unlock()
		})
	}
}

// Publish wakes every subscriber of topic.
func (h *Hub) Publish(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[topic] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// PublishAll wakes every subscriber, used after a lost connection to the
// change feed so nobody misses a change made meanwhile.
func (h *Hub) PublishAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.subs {
		for ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// AskTopic is the hint topic of one ask.
func AskTopic(callID string) string { return "a:" + callID }

// SessionTopic is the hint topic of any ask of a session.
func SessionTopic(sessionID string) string { return "s:" + sessionID }

// ReleasedTopic carries "a wait lease was released" hints.
const ReleasedTopic = "c:released"

// HandoffTopic carries "a stopping replica handed messages over" hints
// (Messages.Handoff). A release that does not know the topic ignores it,
// and finds the handed-over asks at its next sweep.
const HandoffTopic = "c:handoff"
