package store

import (
	"context"
	"sort"

	"github.com/askslack/askslack/asktype"
)

// Memory's Sessions (sessions.go).

// Session implements Store.
func (m *Memory) Session(_ context.Context, sessionID string) ([]*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*asktype.Ask
	for id := range m.sessions[sessionID] {
		if a := m.get(id); a != nil && a.SessionID == sessionID {
			out = append(out, clone(&a.Ask))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// Replies implements Store.
func (m *Memory) Replies(_ context.Context, sessionID string) ([]*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*asktype.Ask
	for id := range m.active[sessionID] {
		if a := m.get(id); a != nil && a.SessionID == sessionID && a.State == asktype.Continued && a.Reply != nil {
			out = append(out, clone(&a.Ask))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ReplyAt.Equal(out[j].ReplyAt) {
			return out[i].ReplyAt.Before(out[j].ReplyAt)
		}
		return out[i].Seq < out[j].Seq
	})
	return out, nil
}
