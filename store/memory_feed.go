package store

// Memory's Feed (feed.go): hints through the process's hub.

// Released implements Store.
func (m *Memory) Released() (<-chan struct{}, func()) { return m.hub.Subscribe(ReleasedTopic) }

// Changes implements Store.
func (m *Memory) Changes(callID string) (<-chan struct{}, func()) {
	return m.hub.Subscribe(AskTopic(callID))
}

// Heard implements Feed: in one process every change is heard as it is
// made (the hint is published in the same critical section).
func (m *Memory) Heard(callID string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a := m.get(callID); a != nil {
		return a.Version
	}
	return 0
}

// SessionChanges implements Store.
func (m *Memory) SessionChanges(sessionID string) (<-chan struct{}, func()) {
	return m.hub.Subscribe(SessionTopic(sessionID))
}
