package store

import (
	"context"
	"time"

	"github.com/askslack/askslack/asktype"
)

// memTokens is Memory's part of Tokens; guarded by Memory.mu.
type memTokens struct {
	byID   map[string]*asktype.AgentToken
	byHash map[string]string // hash → id
}

// prune drops the tokens kept past TokenKeep after their expiry.
func (t *memTokens) prune(now time.Time) {
	for id, x := range t.byID {
		if !now.Before(x.Expires.Add(TokenKeep)) {
			delete(t.byHash, x.Hash)
			delete(t.byID, id)
		}
	}
}

func (t *memTokens) init() {
	if t.byID == nil {
		t.byID, t.byHash = map[string]*asktype.AgentToken{}, map[string]string{}
	}
}

// AddToken implements Tokens.
func (m *Memory) AddToken(_ context.Context, t asktype.AgentToken, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens.init()
	m.tokens.prune(now)
	if _, ok := m.tokens.byID[t.ID]; ok {
		return ErrTokenExists
	}
	if _, ok := m.tokens.byHash[t.Hash]; ok {
		return ErrTokenExists
	}
	if len(m.tokens.byID) >= MaxTokens {
		return ErrTooManyTokens
	}
	live := 0
	for _, x := range m.tokens.byID {
		if x.Owner == t.Owner && x.Live(now) {
			live++
		}
	}
	if live >= MaxOwnerTokens {
		return ErrTooManyTokens
	}
	t.Kinds = append([]string(nil), t.Kinds...)
	t.Created, t.Expires = msTime(t.Created), msTime(t.Expires)
	t.LastUsed, t.LastAddr, t.Revoked, t.RevokedBy = time.Time{}, "", time.Time{}, ""
	m.tokens.byID[t.ID] = &t
	m.tokens.byHash[t.Hash] = t.ID
	return nil
}

func copyToken(t *asktype.AgentToken) asktype.AgentToken {
	c := *t
	c.Kinds = append([]string(nil), t.Kinds...)
	return c
}

// UseToken implements Tokens.
func (m *Memory) UseToken(_ context.Context, hash, addr string, now time.Time) (asktype.AgentToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens.init()
	m.tokens.prune(now)
	t, ok := m.tokens.byID[m.tokens.byHash[hash]]
	if !ok {
		return asktype.AgentToken{}, ErrNotFound
	}
	if t.Live(now) && (now.Sub(t.LastUsed) >= TouchEvery || t.LastAddr != addr) {
		t.LastUsed, t.LastAddr = msTime(now), addr
	}
	return copyToken(t), nil
}

// Token implements Tokens.
func (m *Memory) Token(_ context.Context, id string) (asktype.AgentToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens.init()
	m.tokens.prune(m.clock.Now())
	t, ok := m.tokens.byID[id]
	if !ok {
		return asktype.AgentToken{}, ErrNotFound
	}
	return copyToken(t), nil
}

// LiveTokens implements Tokens.
func (m *Memory) LiveTokens(_ context.Context, owner string, now time.Time) ([]asktype.AgentToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens.init()
	m.tokens.prune(now)
	out := []asktype.AgentToken{}
	for _, t := range m.tokens.byID {
		if (owner == "" || t.Owner == owner) && t.Live(now) {
			out = append(out, copyToken(t))
		}
	}
	SortTokens(out)
	return out, nil
}

// RevokeToken implements Tokens.
func (m *Memory) RevokeToken(_ context.Context, id, by string, now time.Time) (asktype.AgentToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens.init()
	m.tokens.prune(now)
	t, ok := m.tokens.byID[id]
	if !ok || !t.Live(now) {
		return asktype.AgentToken{}, ErrNotFound
	}
	t.Revoked, t.RevokedBy = msTime(now), by
	return copyToken(t), nil
}
