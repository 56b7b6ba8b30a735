package store

import (
	"context"
	"errors"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Tokens keeps the personal agent tokens people connect with askslack
// login (package tokens issues them): each one's record, found by the
// hash of its secret (the store never holds a secret). Every request that
// presents one reads it here, on whichever replica it lands, so a revoke
// holds on every replica from the moment RevokeToken returns
// (storetest/tokens.go).
type Tokens interface {
	// AddToken stores t, live from now: ErrTokenExists when a token with
	// its ID or its Hash is kept (live or not: an ID is never reused),
	// ErrTooManyTokens when its owner has MaxOwnerTokens live tokens.
	AddToken(ctx context.Context, t asktype.AgentToken, now time.Time) error
	// UseToken returns the token whose secret hashes to hash, live or
	// not (revoked and expired ones are kept until TokenKeep after they
	// expire), ErrNotFound when none is kept. A live token's use is
	// recorded in the same step: LastUsed becomes now and LastAddr addr
	// when the recorded use is a minute old or more, or from another
	// address; the token comes back as recorded after it.
	UseToken(ctx context.Context, hash, addr string, now time.Time) (asktype.AgentToken, error)
	// Token returns the token with id, live or not; ErrNotFound when none
	// is kept.
	Token(ctx context.Context, id string) (asktype.AgentToken, error)
	// LiveTokens returns the tokens live at now, of owner ("" for every
	// owner's), newest first.
	LiveTokens(ctx context.Context, owner string, now time.Time) ([]asktype.AgentToken, error)
	// RevokeToken ends a live token at now, recording by, and returns it
	// revoked; ErrNotFound when no token with id is live at now. Of
	// callers racing to revoke one token, one succeeds.
	RevokeToken(ctx context.Context, id, by string, now time.Time) (asktype.AgentToken, error)
}

// Token limits.
const (
	// MaxOwnerTokens caps one person's live tokens.
	MaxOwnerTokens = 100
	// MaxTokens caps the tokens kept, live or not.
	MaxTokens = 20_000
	// TokenKeep is how long a token is kept after it expires, so that
	// presenting it is told apart from presenting nonsense (and audited).
	TokenKeep = 30 * 24 * time.Hour
	// TouchEvery is how stale a token's recorded use may grow before a
	// use from the same address is recorded again.
	TouchEvery = time.Minute
)

// Token errors.
var (
	ErrTokenExists   = errors.New("store: a token with that id or secret exists")
	ErrTooManyTokens = errors.New("store: too many tokens")
)

// SortTokens orders tokens newest first (ties by id), as LiveTokens
// returns them.
func SortTokens(ts []asktype.AgentToken) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && tokenBefore(ts[j], ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

func tokenBefore(a, b asktype.AgentToken) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.After(b.Created)
	}
	return a.ID < b.ID
}
