package store

import (
	"context"
	"maps"
	"slices"
)

// PutInstall implements Installs.
func (m *Memory) PutInstall(_ context.Context, key string, sealed []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.installs == nil {
		m.installs = map[string][]byte{}
	}
	m.installs[key] = slices.Clone(sealed)
	return nil
}

// Install implements Installs.
func (m *Memory) Install(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.installs[key]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(v), nil
}

// DropInstall implements Installs.
func (m *Memory) DropInstall(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.installs[key]
	delete(m.installs, key)
	return ok, nil
}

// Installs implements Installs.
func (m *Memory) Installs(context.Context) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := maps.Clone(m.installs)
	for k, v := range out {
		out[k] = slices.Clone(v)
	}
	if out == nil {
		out = map[string][]byte{}
	}
	return out, nil
}
