package store

import "sync"

// hub fans change hints out to local subscribers. Each subscriber channel has
// a buffer of one, so a burst of changes coalesces into one wake-up and a
// slow reader never blocks a publisher.
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func (h *hub) subscribe(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[string]map[chan struct{}]struct{})
	}
	if h.subs[topic] == nil {
		h.subs[topic] = make(map[chan struct{}]struct{})
	}
	h.subs[topic][ch] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs[topic], ch)
			if len(h.subs[topic]) == 0 {
				delete(h.subs, topic)
			}
			h.mu.Unlock()
		})
	}
}

func (h *hub) publish(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[topic] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// publishAll wakes every subscriber, used after a lost connection to the
// change feed so nobody misses a change made meanwhile.
func (h *hub) publishAll() {
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

func askTopic(callID string) string        { return "a:" + callID }
func sessionTopic(sessionID string) string { return "s:" + sessionID }

// releasedTopic carries "a wait lease was released" hints.
const releasedTopic = "c:released"
