package loadbench

import "strings"

// Stale buttons: "no answered question keeps its buttons". The fake
// remembers, per message, whether the last content it accepted (post or
// update) still has controls (an actions block), which ask it clicked on
// it, and which asks' agents got their answer; an answered ask whose
// message still has controls once updates have landed is a stale message.

// staleBook is the fake's record of messages and answers, guarded by
// Slack.mu.
type staleBook struct {
	live     map[string]bool   // ts → the last content has controls
	callOf   map[string]string // ts → the ask clicked on it
	answered map[string]bool   // call ids whose agent got the answer
}

// hasControls reports whether a message's blocks (compact JSON, as a
// form field) hold an actions block.
func hasControls(blocks string) bool { return strings.Contains(blocks, `"type":"actions"`) }

func (s *Slack) shown(ts, blocks string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.book.live == nil {
		s.book = staleBook{live: map[string]bool{}, callOf: map[string]string{}, answered: map[string]bool{}}
	}
	s.book.live[ts] = hasControls(blocks)
}

func (s *Slack) clickedOn(ts, callID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.book.callOf != nil {
		s.book.callOf[ts] = callID
	}
}

func (s *Slack) noteAnswered(callID string) {
	if s.book.answered != nil {
		s.book.answered[callID] = true
	}
}

// StaleButtons counts answered asks whose message still shows controls,
// out of the answered asks the fake clicked.
func (s *Slack) StaleButtons() (stale, answered int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ts, id := range s.book.callOf {
		if !s.book.answered[id] {
			continue
		}
		answered++
		if s.book.live[ts] {
			stale++
		}
	}
	return stale, answered
}

// ForgetMessages starts a new record (between rows).
func (s *Slack) ForgetMessages() {
	s.mu.Lock()
	s.book = staleBook{}
	s.mu.Unlock()
}
