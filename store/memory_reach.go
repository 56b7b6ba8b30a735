package store

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Active implements Reach.
func (m *Memory) Active(_ context.Context, limit int) ([]*asktype.Ask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*asktype.Ask
	for id := range m.asks {
		if a := m.get(id); a != nil && a.State.Active() {
			c := a.Ask
			out = append(out, &c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq > out[j].Seq })
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Once implements Reach.
func (m *Memory) Once(_ context.Context, key string, ttl time.Duration, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reach.once == nil {
		m.reach.once = map[string]time.Time{}
	}
	// Forget what expired, so the map stays as small as the traffic of ttl.
	maps.DeleteFunc(m.reach.once, func(_ string, until time.Time) bool { return !now.Before(until) })
	if _, seen := m.reach.once[key]; seen {
		return false, nil
	}
	m.reach.once[key] = now.Add(ttl)
	return true, nil
}

// Visit implements Reach.
func (m *Memory) Visit(_ context.Context, userID string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reach.visits == nil {
		m.reach.visits = map[string]time.Time{}
	}
	m.reach.visits[userID] = now
	return nil
}

// Visitors implements Reach.
func (m *Memory) Visitors(_ context.Context, since time.Time, limit int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	maps.DeleteFunc(m.reach.visits, func(_ string, at time.Time) bool { return at.Before(since) })
	users := slices.Collect(maps.Keys(m.reach.visits))
	sort.Slice(users, func(i, j int) bool {
		a, b := m.reach.visits[users[i]], m.reach.visits[users[j]]
		return a.After(b) || (a.Equal(b) && users[i] < users[j])
	})
	if len(users) > limit {
		users = users[:limit]
	}
	return users, nil
}

// Remember implements Reach.
func (m *Memory) Remember(_ context.Context, key, value string, ttl time.Duration, now time.Time) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k, ok := m.reach.kept[key]; ok && now.Before(k.until) {
		return k.value, nil
	}
	if value == "" {
		return "", nil
	}
	if m.reach.kept == nil {
		m.reach.kept = map[string]kept{}
	}
	maps.DeleteFunc(m.reach.kept, func(_ string, k kept) bool { return !now.Before(k.until) })
	m.reach.kept[key] = kept{value: value, until: now.Add(ttl)}
	return value, nil
}

// Forget implements Notes.
func (m *Memory) Forget(_ context.Context, key string, now time.Time) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.reach.kept[key]
	delete(m.reach.kept, key)
	if !ok || !now.Before(k.until) {
		return "", nil
	}
	return k.value, nil
}

// Put implements Reach.
func (m *Memory) Put(_ context.Context, key, value string, ttl time.Duration, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reach.kept == nil {
		m.reach.kept = map[string]kept{}
	}
	maps.DeleteFunc(m.reach.kept, func(_ string, k kept) bool { return !now.Before(k.until) })
	m.reach.kept[key] = kept{value: value, until: now.Add(ttl)}
	return nil
}
